#!/usr/bin/env bash
# On the GPU machine, from the repository root: the hand-written kernel (main.cu, GROUP=8) and the
# generated one (main_generated.cu) side by side, with their SASS instruction mix around HGMMA.
d=benches/experiments/gemm_wgmma
mkdir -p /tmp/inc/cuprum && cp abi/include/cuprum/* /tmp/inc/cuprum/
cp compiler/tests/out/gemm_wgmma.cu $d/generated.cu
nv=/usr/local/cuda/bin/nvcc
$nv -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -I /tmp/inc -DGROUP=8 -o /tmp/proto $d/main.cu -lcuda -lcublas
$nv -O3 -std=c++17 -fmad=false -gencode arch=compute_90a,code=sm_90a -I /tmp/inc -o /tmp/gen $d/main_generated.cu -lcuda -lcublas
for b in proto gen; do
  echo "== $b"; /tmp/$b | grep -E "check|ours" | head -3
  /usr/local/cuda/bin/cuobjdump -sass /tmp/$b > /tmp/$b.sass
  for i in HGMMA WARPGROUP.ARRIVE WARPGROUP.DEPBAR "SYNCS" "BAR.SYNC" CALL STL LDL "STG" SHFL BRA; do printf "%s=%s " "$i" "$(grep -c "$i" /tmp/$b.sass)"; done; echo
done
rm -f $d/generated.cu
