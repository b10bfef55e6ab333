#!/usr/bin/env bash
# The generated kernel and the variants of variants.py (given as arguments) in the harness of
# main_generated.cu, and the hand-written one (main.cu). Here, first:
#   cargo run -p cuprum-cli -- emit --lines examples/kernels_sm90a/gemm_wgmma.rs > benches/experiments/gemm_wgmma/gemm_wgmma.cu
# (ignored by git: carry it), then on the GPU machine, from the repository root:
#   bash benches/experiments/gemm_wgmma/run_variants.sh [VARIANT ...]
d=benches/experiments/gemm_wgmma
gen=$d/gemm_wgmma.cu
mkdir -p /tmp/inc/cuprum && cp abi/include/cuprum/* /tmp/inc/cuprum/
nv=/usr/local/cuda/bin/nvcc
$nv -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -I /tmp/inc -DGROUP=8 -o /tmp/proto $d/main.cu -lcuda -lcublas 2>/dev/null
echo "== hand-written"; /tmp/proto | grep -E "ours" | head -2
for v in base "$@"; do
  if [ "$v" = base ] || [ "$v" = fmad ]; then cp $gen $d/generated.cu; else python3 $d/variants.py $gen $d/generated.cu "$v"; fi
  fmad=-fmad=false; [ "$v" = fmad ] && { python3 $d/variants.py $gen $d/generated.cu stores2; fmad=; }
  $nv -O3 -std=c++17 $fmad -gencode arch=compute_90a,code=sm_90a -I /tmp/inc -o /tmp/gen_$v $d/main_generated.cu -lcuda -lcublas 2>/dev/null
  echo "== generated, $v"; /tmp/gen_$v | grep -E "check|ours" | head -3
done
rm -f $d/generated.cu
