#!/usr/bin/env bash
# On the GPU machine, from the repository root: the generated kernel in the harness, and variants
# of it made by the sed expressions given as arguments (one variant per argument).
d=benches/experiments/gemm_wgmma
mkdir -p /tmp/inc/cuprum && cp abi/include/cuprum/* /tmp/inc/cuprum/
cp compiler/tests/out/gemm_wgmma.cu /tmp/generated.base.cu
for v in "" "$@"; do
  echo "== variant: ${v:-none}"
  if [ -n "$v" ]; then sed -e "$v" /tmp/generated.base.cu > $d/generated.cu; else cp /tmp/generated.base.cu $d/generated.cu; fi
  /usr/local/cuda/bin/nvcc -O3 -std=c++17 -fmad=false -gencode arch=compute_90a,code=sm_90a -I /tmp/inc -o /tmp/gemm_gen $d/main_generated.cu -lcuda -lcublas -Xptxas -v 2>&1 | grep -E "registers|error|C75" | head -5
  /tmp/gemm_gen | grep -E "check|generated"
done
rm -f $d/generated.cu
