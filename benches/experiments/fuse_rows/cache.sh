#!/usr/bin/env bash
# On the GPU machine, from the repository root: bash benches/experiments/fuse_rows/cache.sh
set -e
d=benches/experiments/fuse_rows
/usr/local/cuda/bin/nvcc -O3 -std=c++17 -arch=sm_90 -I abi/include -o /tmp/fuse_cache $d/cache.cu -Xptxas -v 2>&1 | grep -A1 "cuprum_rawkernel_softmax'" | grep registers || true
/tmp/fuse_cache
