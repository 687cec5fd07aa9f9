#!/bin/bash
# One GPU's calibration and its comparison with PyTorch, as run on the H200 of 2026-11-27:
#   calibration/measure_one_gpu.sh GPU_TYPE [DIR]
# DIR (default ./calibration-out) holds sextant-calibrate and libfmt.so.9 where they were built
# on another machine and carried (calibration/README.md step 7); otherwise ./build's tool runs.
# Writes DIR/out/: env.txt (driver, libraries), calibrate.log, GPU_TYPE.measured.json, compare.md.
set -o pipefail
GPU=${1:?usage: measure_one_gpu.sh GPU_TYPE [DIR]}
DIR=$(realpath "${2:-calibration-out}")
OUT=${OUT:-$DIR/out}
mkdir -p "$OUT"
TOOL=$DIR/sextant-calibrate
[ -x "$TOOL" ] || TOOL=$PWD/build/src/measure/sextant-calibrate
# cuDNN and NCCL may come with PyTorch's wheels rather than the CUDA Toolkit (the device machine
# of 2026-11-27 had cuBLASLt in /usr/local/cuda and cuDNN 9.19 / NCCL 2.28 only in the wheels).
WHEELS=$(python3 -c "import glob,os,nvidia; print(':'.join(sorted(glob.glob(os.path.join(list(nvidia.__path__)[0], '*', 'lib')))))" 2>/dev/null)
export LD_LIBRARY_PATH=$DIR:/usr/local/cuda/lib64:$WHEELS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
{
    date -u
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,power.limit --format=csv
    python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'cudnn', torch.backends.cudnn.version())"
    ldd "$TOOL"
} >"$OUT/env.txt" 2>&1
stdbuf -oL -eL "$TOOL" --gpu "$GPU" --scenario scenarios/llama3-70b-h100.json --out "$OUT/$GPU.measured.json" 2>&1 |
    tee "$OUT/calibrate.log" | grep -v "^gemm"
[ -f "$OUT/$GPU.measured.json" ] || { echo "no profile written: nothing to compare" >&2; exit 2; }
PYTHONUNBUFFERED=1 python3 calibration/compare_torch.py "$OUT/$GPU.measured.json" --markdown 2>&1 |
    grep -v "UserWarning\|scaled_dot_product_attention(q" | tee "$OUT/compare.md"
