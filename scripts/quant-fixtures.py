#!/usr/bin/env python3
"""Writes the block fixtures of engine-core's QuantFixturesTest with llama.cpp's gguf-py, an independent decoder.

For each ggml type goss-gpu decodes, random blocks (every byte random, then the F16 scales and mins set to a mix of
ordinary, zero, negative, subnormal and the largest finite values) go to TYPE.blocks, and gguf-py's dequantization of
them to TYPE.f32 (little-endian float32). Run once, with gguf-py from a llama.cpp checkout on the path:

    PYTHONPATH=llama.cpp/gguf-py python3 scripts/quant-fixtures.py engine-core/src/test/resources/quant-fixtures
"""
import sys
from pathlib import Path

import numpy as np
from gguf import GGML_QUANT_SIZES, GGMLQuantizationType as T, quants

# byte offsets of each block's F16 fields (ggml-common.h)
F16_FIELDS = {
    "Q4_0": [0], "Q4_1": [0, 2], "Q5_0": [0], "Q5_1": [0, 2], "Q8_0": [0],
    "Q2_K": [80, 82], "Q3_K": [108], "Q4_K": [0, 2], "Q5_K": [0, 2], "Q6_K": [208],
    "IQ4_NL": [0], "IQ4_XS": [0], "MXFP4": [],
}
# F16 bit patterns: ordinary weights' scales, zero, negative, smallest subnormal, smallest normal, largest finite
EXTREMES = [0x0000, 0x8000, 0x0001, 0x0400, 0x7BFF, 0xFBFF, 0x3C00, 0xBC00]


def main(out: Path) -> None:
    rng = np.random.default_rng(20250805)
    out.mkdir(parents=True, exist_ok=True)
    for name, fields in F16_FIELDS.items():
        qtype = T[name]
        block_size, type_size = GGML_QUANT_SIZES[qtype]
        n_blocks = 8 if block_size == 256 else 32
        blocks = rng.integers(0, 256, size=(n_blocks, type_size), dtype=np.uint8)
        for b in range(n_blocks):
            for i, at in enumerate(fields):
                if b < len(EXTREMES):
                    bits = EXTREMES[(b + i) % len(EXTREMES)]
                else:  # an ordinary scale: |d| in [2^-14, 2^-4), either sign
                    bits = int(rng.integers(0x0400, 0x2C00)) | (int(rng.integers(0, 2)) << 15)
                blocks[b, at:at + 2] = np.frombuffer(np.uint16(bits).tobytes(), dtype=np.uint8)
            if name == "MXFP4" and blocks[b, 0] == 255:
                blocks[b, 0] = 254  # 255 is NaN in E8M0
        values = quants.dequantize(blocks.reshape(-1), qtype).astype("<f4")
        assert values.size == n_blocks * block_size
        (out / f"{name}.blocks").write_bytes(blocks.tobytes())
        (out / f"{name}.f32").write_bytes(values.tobytes())
        print(f"{name}: {n_blocks} blocks, {values.size} values, {np.count_nonzero(~np.isfinite(values))} non-finite")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
