"""Logits of the training model's forward pass (model.py) on an exported original/ folder, written as `goss-gpu logits`
writes them (float32 little-endian, positions x vocabulary), to compare with the engine's backends:

    python3 logits.py MODEL_DIR 1,2,3 out.f32
    python3 ../torch-parity/compare.py 201088 out.f32 /tmp/reference/logits.f32 /tmp/cpu/logits.f32
"""
import sys

import torch

from checkpoint import read_original, training_state
from model import Config, Transformer

config, tensors = read_original(sys.argv[1])
model = Transformer(Config(**config), config["vocab_size"])
model.load_state_dict(training_state(tensors, config))
tokens = torch.tensor([[int(t) for t in sys.argv[2].split(",")]])
with torch.no_grad():
    logits = model.logits(model.hidden(tokens))[0]
logits.numpy().astype("<f4").tofile(sys.argv[3])
print(f"{sys.argv[3]}: {logits.shape[0]} positions x {logits.shape[1]} logits")
