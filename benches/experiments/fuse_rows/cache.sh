#!/usr/bin/env bash
# First, here: bash benches/experiments/fuse_rows/gen.sh (emits generated.cu; carry the folder). Then
# on the GPU machine, from the repository root: bash benches/experiments/fuse_rows/cache.sh
# Times cache.cu over generated.cu and over every other generated_*.cu here (variants of the
# generator emitted side by side).
set -e
d=benches/experiments/fuse_rows
for f in $d/generated*.cu; do
    echo "== $(basename $f)"
    /usr/local/cuda/bin/nvcc -O3 -std=c++17 -arch=sm_90 -I abi/include -I $d -DGENERATED="\"$(basename $f)\"" -o /tmp/fuse_cache $d/cache.cu -Xptxas -v 2>&1 | grep -A3 -E "entry function 'cuprum_rawkernel_(softmax|layer_norm)'" | grep -E "registers|spill" || true
    /tmp/fuse_cache 8192
    /tmp/fuse_cache 4096
done
