#!/bin/bash
# Here, with the Rust toolchain: writes the kernels run.sh times on the GPU machine, each the
# CUDA C `cuprum emit` makes of examples/kernels/gemm_bf16.rs (ignored by git, so the device call
# carries this folder: `carry: ["benches/experiments/gemm_bf16"]`):
#   kernel_example.cu         the example as it is: ldmatrix_*_unchecked and cp_async_unchecked
#   kernel_checked_copies.cu  checked cp_async (the GPU: 236 TFLOP/s at 8192^3, against 400)
#   kernel_checked.cu         every tensor operation checked (194)
#   kernel_wide_pf*.cu        gemm_bf16_wide_pf (128 x 256 tile, 8 warps, dynamic shared
#                             memory, fragments a k-step ahead) with k-steps (BK) of 32, 64 or
#                             128, other depths, other launch groupings (_g8, _g32) and with or
#                             without the store4 epilogue (_st4: on; the others off)
# Before the checks noted their violation for the function's return (cuprum::oob_later), a
# branch per check made the all-checked kernel 154.
# The first line of a kernel_wide*.cu (`// harness: -D...`) gives run.sh the kernel's name,
# block, tile and dynamic shared bytes. `bash gen.sh --commit` also copies the kernel_wide*.cu
# and kernel_example.cu (as kernel_square.cu, gemm_bf16 itself: the baseline) to variants/
# (ignored by git like the others; carry the folder): cd benches/experiments/gemm_bf16 && bash
# run.sh variants/kernel_*.cu. Session 26 on an H200 at 8192^3: square 406 TFLOP/s, wide_pf 396,
# wide_pf_k64 454 (s4 454, g8 455, g32 452, st4 485, s4_st4 485), wide_pf_k128 466 (st4 486);
# cuBLAS 759-765. (The same tile without the fragments a k-step ahead, gemm_bf16_wide, measured
# 335-390 and was removed.)
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
# wide NAME BK STAGES [WGROUP [STORE4]]: gemm_bf16_wide_pf with that k-step, pipeline depth
# (its cp_async_wait::<N>() become STAGES - 2), launch grouping (WGROUP tile rows down, default
# the file's) and epilogue (STORE4: true, the lane pairs' store4, or false, scalar stores).
wide() {
    local name=$1 bk=$2 stages=$3 kernel=gemm_bf16_wide_pf group=${4:-} store4=${5:-false}
    sed -e "s/^pub const WBK: u32 = .*;/pub const WBK: u32 = $bk;/" \
        -e "s/^const WSTAGES: u32 = .*;/const WSTAGES: u32 = $stages;/" \
        -e "s/^const WKSTEPS: u32 = .*;/const WKSTEPS: u32 = $((bk / 16));/" \
        -e "s/^const WA_COPIES: u32 = .*;/const WA_COPIES: u32 = $((128 * bk / 2048));/" \
        -e "s/^const WB_COPIES: u32 = .*;/const WB_COPIES: u32 = $((256 * bk / 2048));/" \
        -e "s/^const WSWZ_DIV: u32 = .*;/const WSWZ_DIV: u32 = $((bk < 64 ? 64 / bk : 1));/" \
        -e "s/^const WSWZ_MOD: u32 = .*;/const WSWZ_MOD: u32 = $((bk < 64 ? bk / 8 : 8));/" \
        -e "${group:+s/^const WGROUP: u32 = .*;/const WGROUP: u32 = $group;/}" \
        -e "${store4:+s/^const WSTORE4: bool = .*;/const WSTORE4: bool = $store4;/}" \
        -e "/^pub fn gemm_bf16_wide_pf/,\$ s/cp_async_wait::<[0-9]*>()/cp_async_wait::<$((stages - 2))>()/" \
        "$src" > "$tmp/$name.rs"
    local smem=$((stages * (128 + 256) * bk * 2))
    {
        echo "// harness: -DKERNEL=cuprum_rawkernel_$kernel -DTHREADS=256 -DTM=128 -DTN=256 -DSMEM=$smem"
        emit "$tmp/$name.rs"
    } > "kernel_$name.cu"
}
wide wide_pf 32 4
wide wide_pf_k64 64 3
# Session 26, second round: a fourth stage at BK 64 (192 KiB), the launch grouped 8 or 32 tile
# rows down, and the store4 epilogue.
wide wide_pf_k64_s4 64 4
wide wide_pf_k64_g8 64 3 8
wide wide_pf_k64_g32 64 3 32
wide wide_pf_k64_st4 64 3 "" true
wide wide_pf_k64_s4_st4 64 4 "" true
# k-steps of 128 in two stages (192 KiB): the same copy lead as k64 in three (7 k-steps of 16),
# half the barriers.
wide wide_pf_k128 128 2
wide wide_pf_k128_st4 128 2 "" true
rm -r "$tmp"
if [ "${1:-}" = --commit ]; then
    mkdir -p variants
    cp kernel_wide*.cu variants/
    cp kernel_example.cu variants/kernel_square.cu
fi
echo "wrote kernel_example.cu kernel_checked_copies.cu kernel_checked.cu kernel_wide*.cu (ignored by git: carry them to the device, run: carry [\"benches/experiments/gemm_bf16\"]), then bash benches/experiments/gemm_bf16/run.sh"
