#!/usr/bin/env bash
# The test command: sets up nvcc/libnvrtc (scripts/cuda-env.sh), then runs every test of the workspace.
# GPU tests are #[ignore = "needs a CUDA GPU"]; on a GPU machine run them too with
#   bash scripts/test.sh -- --include-ignored
# Extra arguments go to `cargo test` as they are.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/cuda-env.sh
exec cargo test --workspace "$@"
