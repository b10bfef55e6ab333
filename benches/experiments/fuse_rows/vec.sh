#!/usr/bin/env bash
# On the GPU machine, from the repository root: bash benches/experiments/fuse_rows/vec.sh
set -e
d=benches/experiments/fuse_rows
/usr/local/cuda/bin/nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/fuse_vec $d/vec.cu
/tmp/fuse_vec
