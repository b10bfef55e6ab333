#!/bin/bash
# On the GPU machine: compile each kernel*.cu here (written by gen.sh: cuprum emit output of the
# example and its variants; variants/ holds committed copies) with the harness against
# abi/include, run them, and time cuBLAS through torch. A kernel file whose first line is
# `// harness: -D...` passes those flags (kernel name, threads, tile, dynamic shared bytes).
# Usage: bash run.sh [kernel files...] (default: every kernel*.cu here).
set -u
cd "$(dirname "$0")"
export PATH=/usr/local/cuda/bin:$PATH
for k in ${@:-kernel*.cu}; do
    k=${k#benches/experiments/gemm_bf16/}
    cp "$k" kernel.cu
    flags=$(sed -n '1s|^// harness: ||p' "$k")
    nvcc -O3 -std=c++17 -arch=sm_90 -I ../../../abi/include -Xptxas -v $flags -o harness harness.cu 2>&1 | grep -E "error|registers" | head -3
    echo "== $k $flags"; ./harness
done
python3 - <<'PY'
import torch
for n in (8192, 4096):
    a = torch.randn(n, n, device='cuda', dtype=torch.bfloat16); b = torch.randn(n, n, device='cuda', dtype=torch.bfloat16)
    for _ in range(3): torch.matmul(a, b)
    s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True); ts = []
    for _ in range(10):
        s.record(); torch.matmul(a, b); e.record(); e.synchronize(); ts.append(s.elapsed_time(e))
    t = sorted(ts)[5]; print(f"cuBLAS (torch.matmul) bf16 {n}^3: {t:.3f} ms, {2*n**3/t/1e9:.1f} TFLOP/s")
PY
