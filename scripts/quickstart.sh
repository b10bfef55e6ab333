#!/usr/bin/env bash
# The main job on a fresh machine: set up nvcc/libnvrtc, then build and run the quickstart example.
# Kernels are precompiled for CUPY_NVCC_GENERATE_CODE (default here: sm_90 + compute_90 PTX; see
# scripts/test.sh and docs/building.md).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/cuda-env.sh
export CUPY_NVCC_GENERATE_CODE="${CUPY_NVCC_GENERATE_CODE:-arch=compute_90,code=[sm_90,compute_90]}"
exec cargo run --release -p cuprum-examples --example quickstart "$@"
