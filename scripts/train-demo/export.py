"""Writes the trained model (train.py's trained.pt) as an original/ folder: config.json and model.safetensors, dense
weights in bfloat16, experts in MXFP4, the embedding and unembedding rows of tokens the data never used all zero.

    python3 export.py WORK/trained.pt OUT_DIR
"""
import sys

import torch

from checkpoint import write_original

ckpt = torch.load(sys.argv[1])
write_original(sys.argv[2], ckpt["state"], ckpt["config"], ckpt["vocab"])
print(f"{sys.argv[2]}: {len(ckpt['vocab'])} tokens with rows, trained {ckpt['steps']} steps (seed {ckpt['seed']}) in "
      f"{ckpt['wall_s']:.0f} s wall, {ckpt['cpu_s']:.0f} s CPU")
