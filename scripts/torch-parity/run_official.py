"""Logits of OpenAI's official gpt-oss torch reference, written like `goss-gpu logits` (float32 LE, positions x vocab).

Needs torch, safetensors and numpy, and a checkout of github.com/openai/gpt-oss on PYTHONPATH (its code is not
part of this project). The official model runs in bfloat16; `--dtype f32` converts its parameters to float32
first, which is the precision goss-gpu's reference backend computes in.

    PYTHONPATH=~/src/gpt-oss python run_official.py MODEL_DIR 1,2,3 out.f32 --dtype f32
"""
import argparse

import numpy as np
import torch
from gpt_oss.torch.model import Transformer

p = argparse.ArgumentParser()
p.add_argument("model", help="an original/-layout folder (config.json + *.safetensors)")
p.add_argument("tokens", help="comma-separated token ids")
p.add_argument("out", help="output file: float32 little-endian, positions x vocab")
p.add_argument("--dtype", choices=["bf16", "f32"], default="f32")
a = p.parse_args()

model = Transformer.from_checkpoint(a.model, device="cpu")
if a.dtype == "f32":
    model = model.float()
with torch.inference_mode():
    logits = model(torch.tensor([int(t) for t in a.tokens.split(",")], dtype=torch.int64)).float().numpy()
logits.astype("<f4").tofile(a.out)
print(f"{a.out}: {logits.shape[0]} positions x {logits.shape[1]} logits ({a.dtype})")
