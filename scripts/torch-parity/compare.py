"""Compares goss-gpu logits dumps with the official reference's: worst difference relative to each position's
largest |logit|, and how often the argmax agrees.

    python compare.py VOCAB official.f32 DIR1/logits.f32 [DIR2/logits.f32 ...]
"""
import sys

import numpy as np

vocab = int(sys.argv[1])
ref = np.fromfile(sys.argv[2], "<f4").reshape(-1, vocab)
scale = np.abs(ref).max(axis=1)
worst = 0.0
for path in sys.argv[3:]:
    ours = np.fromfile(path, "<f4").reshape(-1, vocab)
    rel = np.abs(ours - ref).max(axis=1) / scale
    agree = np.mean(ours.argmax(axis=1) == ref.argmax(axis=1)) * 100
    worst = max(worst, rel.max())
    print(f"{path}: max relative error {rel.max():.2e} at position {rel.argmax()}, argmax agrees at {agree:.0f}% of positions")
sys.exit(0 if worst <= 1e-4 else 1)
