#!/bin/bash
# Here, with the Rust toolchain: writes the CUDA C that run.sh and cache.sh compile on the GPU
# machine (ignored by git, so the device call carries this folder:
# `carry: ["benches/experiments/fuse_rows"]`):
#   generated.cu  `cuprum emit benches/src/fused.rs`: the #[fuse] row kernels cache.cu times
#   variants.cu   `cuprum emit variants.rs`: the row-kernel shapes main.cu (run.sh) times
set -eu
cd "$(dirname "$0")"
root=$(cd ../../.. && pwd)
emit() { (cd "$root" && cargo run -q -p cuprum-cli -- emit "$1"); }
emit benches/src/fused.rs > generated.cu
emit benches/experiments/fuse_rows/variants.rs > variants.cu
echo "wrote generated.cu variants.cu (ignored by git: carry them to the device, carry [\"benches/experiments/fuse_rows\"]), then bash benches/experiments/fuse_rows/run.sh or cache.sh"
