#!/usr/bin/env bash
# The test command: sets up nvcc/libnvrtc (scripts/cuda-env.sh), then runs every test of the workspace.
# GPU tests are #[ignore = "needs a CUDA GPU"]; on a GPU machine run them too with
#   bash scripts/test.sh -- --include-ignored
# (with one GPU add `--skip two_gpus`: testsuite/tests/gpu_multi.rs's tests that need two GPUs;
# the NCCL tests need libnccl.so.2: CUPRUM_NCCL_PATH, docs/multi-gpu.md).
# Extra arguments go to `cargo test` as they are.
#
# The kernels of this repository (built-ins, examples, tests; each crate's build.rs compiles its own)
# are precompiled for CUPY_NVCC_GENERATE_CODE; unset here it defaults to sm_90 SASS + compute_90 PTX
# (the H200 the project measures on; other GPUs JIT the PTX, or NVRTC compiles at first use), because
# the default targets (sm_80, sm_90, sm_100 and compute_75 PTX) take about three times as long to
# build (docs/building.md, "The default targets").
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/cuda-env.sh
export CUPY_NVCC_GENERATE_CODE="${CUPY_NVCC_GENERATE_CODE:-arch=compute_90,code=[sm_90,compute_90]}"
exec cargo test --workspace "$@"
