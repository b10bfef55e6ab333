#!/bin/bash
# Here, with the Rust toolchain: writes the kernels run.sh times on the GPU machine, each the
# CUDA C `cuprum emit` makes of examples/kernels/gemm_bf16.rs (ignored by git, so the device call
# carries this folder: `carry: ["benches/experiments/gemm_bf16"]`):
#   kernel_example.cu         the example as it is: ldmatrix_*_unchecked and cp_async_unchecked
#   kernel_checked_copies.cu  checked cp_async (the GPU: 236 TFLOP/s at 8192^3, against 400)
#   kernel_checked.cu         every tensor operation checked (194)
# Before the checks noted their violation for the function's return (cuprum::oob_later), a
# branch per check made the all-checked kernel 154.
set -eu
cd "$(dirname "$0")"
root=$(cd ../../.. && pwd)
src=$root/examples/kernels/gemm_bf16.rs
emit() { (cd "$root" && cargo run -q -p cuprum-cli -- emit "$1"); }
emit "$src" > kernel_example.cu
tmp=$(mktemp -d)
sed -e 's/cp_async_unchecked(/cp_async(/g' "$src" > "$tmp/copies.rs"
emit "$tmp/copies.rs" > kernel_checked_copies.cu
sed -e 's/_unchecked(/(/g' "$src" > "$tmp/all.rs"
emit "$tmp/all.rs" > kernel_checked.cu
rm -r "$tmp"
echo "wrote kernel_example.cu kernel_checked_copies.cu kernel_checked.cu (ignored by git: carry them to the device, run: carry [\"benches/experiments/gemm_bf16\"]), then bash benches/experiments/gemm_bf16/run.sh"
