# shellcheck shell=bash
# Sourced by llama-cuda-build.sh and llama-cuda-bench.sh.
#   llama_cublas_dir    prints the folder of the nvidia-cublas cu13 wheel (nvidia/cu13, holding include/ and
#                       lib/libcublas.so.13) installed in python3's site-packages, or nothing. The device image
#                       has the wheel (PyTorch's); on the dev machine set CUBLAS_DIR to a `pip install --target`.
llama_cublas_dir() {
  python3 - <<'PY' 2>/dev/null || true
import glob, site, sys
paths = sys.path + site.getsitepackages() + [site.getusersitepackages()]
for p in paths:
    for d in glob.glob(p + "/nvidia/cu13") + glob.glob(p + "/nvidia/cublas"):
        if glob.glob(d + "/lib/libcublas.so*"):
            print(d); raise SystemExit
PY
}
