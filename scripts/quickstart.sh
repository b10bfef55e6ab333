#!/usr/bin/env bash
# The main job on a fresh machine: set up nvcc/libnvrtc, then build and run the quickstart example.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/cuda-env.sh
exec cargo run --release --example quickstart "$@"
