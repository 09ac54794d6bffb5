#!/usr/bin/env bash
# Writes engine-core's llama-quantize fixtures (LlamaQuantizeFixturesTest): a random-weight model with K-quant-sized
# rows (--preset quant), quantized by llama.cpp's own llama-quantize into the file types people download (experts kept
# MXFP4 as the published files do), and, for every tensor of each, the SHA-256 of gguf-py's float32 dequantization
# (zeros as +0).
# Run once from the repository root, with a built llama.cpp:
#   LLAMA_QUANTIZE=llama.cpp/build/bin/llama-quantize PYTHONPATH=llama.cpp/gguf-py scripts/llama-quantize-fixtures.sh
set -euo pipefail
out=engine-tests/src/test/resources/llama-quantize
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
"${JAVA:-java}" -jar cli/target/goss-gpu.jar make-test-model --format gguf --preset quant --dense-type F32 --seed 7 --out "$tmp/source.gguf"
for ftype in Q4_K_M Q6_K Q5_0 Q2_K; do
  "$LLAMA_QUANTIZE" --tensor-type ffn_gate_exps=mxfp4 --tensor-type ffn_up_exps=mxfp4 --tensor-type ffn_down_exps=mxfp4 \
    "$tmp/source.gguf" "$out/quant-$ftype.gguf" "$ftype" > "$tmp/$ftype.log" 2>&1 || { cat "$tmp/$ftype.log"; exit 1; }
done
python3 - "$out" <<'PY'
import hashlib, json, sys
from pathlib import Path
import numpy as np
from gguf import GGUFReader, quants
out = Path(sys.argv[1])
result = {}
for f in sorted(out.glob("quant-*.gguf")):
    tensors = {}
    for t in GGUFReader(f).tensors:
        # + 0 turns -0 into +0: zeros hash alike whatever sign a decoder gives them
        values = (quants.dequantize(np.asarray(t.data), t.tensor_type).astype(np.float32) + np.float32(0)).astype("<f4")
        tensors[t.name] = {"type": t.tensor_type.name, "sha256": hashlib.sha256(values.tobytes()).hexdigest()}
    result[f.name] = tensors
(out / "gguf-py-sha256.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
print({k: sorted({t["type"] for t in v.values()}) for k, v in result.items()})
PY
