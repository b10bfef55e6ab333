#!/usr/bin/env bash
# On the GPU machine, from the repository root: the generated kernel and the variants of
# variants.py (given as arguments) in the harness of main_generated.cu, and the hand-written one.
d=benches/experiments/gemm_wgmma
mkdir -p /tmp/inc/cuprum && cp abi/include/cuprum/* /tmp/inc/cuprum/
nv=/usr/local/cuda/bin/nvcc
$nv -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -I /tmp/inc -DGROUP=8 -o /tmp/proto $d/main.cu -lcuda -lcublas 2>/dev/null
echo "== hand-written"; /tmp/proto | grep -E "ours" | head -2
for v in base "$@"; do
  if [ "$v" = base ] || [ "$v" = fmad ]; then cp compiler/tests/out/gemm_wgmma.cu $d/generated.cu; else python3 $d/variants.py compiler/tests/out/gemm_wgmma.cu $d/generated.cu "$v"; fi
  fmad=-fmad=false; [ "$v" = fmad ] && { python3 $d/variants.py compiler/tests/out/gemm_wgmma.cu $d/generated.cu stores2; fmad=; }
  $nv -O3 -std=c++17 $fmad -gencode arch=compute_90a,code=sm_90a -I /tmp/inc -o /tmp/gen_$v $d/main_generated.cu -lcuda -lcublas 2>/dev/null
  echo "== generated, $v"; /tmp/gen_$v | grep -E "check|ours" | head -3
done
rm -f $d/generated.cu
