#!/usr/bin/env bash
# Checks the `nvtx` feature on a GPU machine with Nsight Compute: a program built with it shows
# each kernel under its Rust name, and ncu's NVTX filter selects launches by that name; the same
# program built without it has no ranges. Usage (binaries built beforehand, e.g. with
#   cargo build --release -p cuprum-examples --example quickstart --features cuprum/nvtx):
#   bash scripts/nvtx-check.sh WITH_NVTX_BINARY WITHOUT_NVTX_BINARY
# Run on an H100 (ncu 2025.3.1) with examples/quickstart: 4 kernels renamed by their ranges; by hand,
# `squared_diff_kernel::<f32>/...`, `sum_squares/...`, `squared_diff_ew::<f32> [s32]/...`, and the
# filter `regex:squared_diff.*/` profiled 2 of the 4 launches (0 without the feature).
set -euo pipefail
with=$1 without=$2
ncu=${NCU:-$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu | head -n1)}
profiled() { "$ncu" --nvtx --nvtx-include "$1" --metrics gpu__time_duration.sum "$2" 2>&1 | grep -c '^==PROF== Profiling' || true; }
renamed=$("$ncu" --nvtx --print-nvtx-rename kernel --metrics gpu__time_duration.sum "$with" 2>&1 | grep -cE '^  [a-z_0-9]+(::<[^>]*>)?( \[[a-z0-9]+\])?/cuprum_' || true)
a=$(profiled 'regex:squared_diff.*/' "$with")
b=$(profiled 'regex:squared_diff.*/' "$without")
echo "kernels renamed by their NVTX range: $renamed; profiled by the range filter: $a with the feature, $b without"
[ "$renamed" -gt 0 ] && [ "$a" -gt 0 ] && [ "$b" = 0 ]
