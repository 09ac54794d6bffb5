"""OpenAI's original/ layout: config.json and one model.safetensors (dense tensors BF16, experts MXFP4 as U8
`.blocks` [E, rows, cols/32, 16] and `.scales` [E, rows, cols/32]). Reads and writes it with torch alone.

The safetensors format: an 8-byte little-endian header length, a JSON header naming each tensor's dtype, shape and
byte range (padded with spaces to a multiple of 8), then the tensors' bytes, little-endian, row-major.
"""
import json
import os
import struct

import torch

import mxfp4

_DTYPES = {"BF16": torch.bfloat16, "U8": torch.uint8, "F32": torch.float32}
_NAMES = {v: k for k, v in _DTYPES.items()}


def _bytes(t):
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    return t.numpy().tobytes()


def write_safetensors(path, tensors):
    """tensors: {name: torch tensor (bfloat16, uint8 or float32)}, written in the given order."""
    header, offset, blobs = {"__metadata__": {"format": "pt"}}, 0, []
    for name, t in tensors.items():
        b = _bytes(t)
        header[name] = {"dtype": _NAMES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(b)]}
        offset += len(b)
        blobs.append(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        dt = _DTYPES[info["dtype"]]
        raw = bytearray(data[a:b])
        if dt == torch.bfloat16:
            t = torch.frombuffer(raw, dtype=torch.int16).view(torch.bfloat16)
        else:
            t = torch.frombuffer(raw, dtype=dt)
        out[name] = t.reshape(info["shape"]).clone()
    return out


def original_tensors(state, config, vocab_ids):
    """The training model's state dict (compact vocabulary `vocab_ids`, index 0 = unseen) as original/ tensors."""
    V, H = config["vocab_size"], config["hidden_size"]
    ids = torch.tensor(vocab_ids, dtype=torch.long)

    def full(rows):  # compact rows 1.. scattered to their token ids, every other row zero
        w = torch.zeros(V, H)
        w[ids] = rows[1:]
        return w

    def bf(t):
        return t.float().to(torch.bfloat16)

    out = {"embedding.weight": bf(full(state["embedding.weight"]))}
    for l in range(config["num_hidden_layers"]):
        a, m, p = f"attn.{l}.", f"mlp.{l}.", f"block.{l}."
        out[p + "attn.norm.scale"] = bf(state[a + "norm.scale"])
        out[p + "attn.qkv.weight"] = bf(state[a + "qkv.weight"])
        out[p + "attn.qkv.bias"] = bf(state[a + "qkv.bias"])
        out[p + "attn.sinks"] = bf(state[a + "sinks"])
        out[p + "attn.out.weight"] = bf(state[a + "out.weight"])
        out[p + "attn.out.bias"] = bf(state[a + "out.bias"])
        out[p + "mlp.norm.scale"] = bf(state[m + "norm.scale"])
        out[p + "mlp.gate.weight"] = bf(state[m + "gate.weight"])
        out[p + "mlp.gate.bias"] = bf(state[m + "gate.bias"])
        out[p + "mlp.mlp1_weight.blocks"], out[p + "mlp.mlp1_weight.scales"] = mxfp4.pack(state[m + "mlp1_weight"])
        out[p + "mlp.mlp1_bias"] = bf(state[m + "mlp1_bias"])
        out[p + "mlp.mlp2_weight.blocks"], out[p + "mlp.mlp2_weight.scales"] = mxfp4.pack(state[m + "mlp2_weight"])
        out[p + "mlp.mlp2_bias"] = bf(state[m + "mlp2_bias"])
    out["norm.scale"] = bf(state["norm.scale"])
    out["unembedding.weight"] = bf(full(state["unembedding.weight"]))
    return out


def training_state(tensors, config):
    """original/ tensors as a state dict of model.Transformer over the full vocabulary (experts decoded to float)."""
    s = {"embedding.weight": tensors["embedding.weight"].float(), "unembedding.weight": tensors["unembedding.weight"].float(),
         "norm.scale": tensors["norm.scale"].float()}
    for l in range(config["num_hidden_layers"]):
        a, m, p = f"attn.{l}.", f"mlp.{l}.", f"block.{l}."
        for k in ["norm.scale", "qkv.weight", "qkv.bias", "sinks", "out.weight", "out.bias"]:
            s[a + k] = tensors[p + "attn." + k].float()
        for k in ["norm.scale", "gate.weight", "gate.bias", "mlp1_bias", "mlp2_bias"]:
            s[m + k] = tensors[p + "mlp." + k].float()
        for k in ["mlp1_weight", "mlp2_weight"]:
            s[m + k] = mxfp4.unpack(tensors[p + f"mlp.{k}.blocks"], tensors[p + f"mlp.{k}.scales"])
    return s


def write_original(folder, state, config, vocab_ids):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    write_safetensors(os.path.join(folder, "model.safetensors"), original_tensors(state, config, vocab_ids))


def read_original(folder):
    with open(os.path.join(folder, "config.json")) as f:
        config = json.load(f)
    return config, read_safetensors(os.path.join(folder, "model.safetensors"))
