#!/usr/bin/env bash
# On the GPU machine, from the repository root: bash benches/experiments/gemm_wgmma/run.sh [sizes]
d=benches/experiments/gemm_wgmma
mkdir -p /tmp/inc/cuprum && cp abi/include/cuprum/* /tmp/inc/cuprum/
for cfg in "-DGROUP=8 -DSTCS=1" "-DGROUP=8 -DSTCS_SCALAR=1" "-DGROUP=8"; do
  /usr/local/cuda/bin/nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -I /tmp/inc $cfg -o /tmp/gemm_wgmma $d/main.cu -lcuda -lcublas -Xptxas -v 2>&1 | grep -E "registers|error|warning" | head -20
  /tmp/gemm_wgmma "$@"
done
