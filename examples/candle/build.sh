#!/usr/bin/env bash
# Builds the candle example in release: `bash build.sh` (extra arguments go to `cargo build
# --release`). The program is target/release/cuprum-candle-example (under $CARGO_TARGET_DIR when
# set).
#
# What candle's `cuda` feature needs at build time, and how this script provides it:
#   - nvcc (candle-kernels compiles its CUDA kernels with it, through cudaforge; cuprum-build
#     compiles the example's kernels): cuprum's scripts/cuda-env.sh, which uses a toolkit that is
#     there or installs the CUDA 13.0 compiler wheels once.
#   - the GPU's compute capability (candle-kernels asks nvidia-smi): CUDA_COMPUTE_CAP when set,
#     else nvidia-smi's answer, else 90 (H100/H200), so that it also builds on a machine without
#     a GPU.
#   - the CUDA libraries to link: candle asks cudarc for dynamic linking, so the program is linked
#     with libcuda, libnvrtc, libcublas, libcublasLt, libcurand and libcudart. A full toolkit has
#     them (libcuda as lib64/stubs/libcuda.so); the compiler wheels have only libnvrtc and
#     libcudart. For each one missing, this script makes a link stub (a library of empty
#     functions named as cudarc's bindings, with the real library's soname) in
#     $target/cuda-link-stubs: the program then loads the real libcuda.so.1, libcublas.so.13,
#     libcublasLt.so.13 and libcurand.so.10 on the GPU machine (LD_LIBRARY_PATH, README.md).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

export CUPRUM_CUDA_ENV_QUIET="${CUPRUM_CUDA_ENV_QUIET:-1}"
# shellcheck source=../../scripts/cuda-env.sh
source ../../scripts/cuda-env.sh

if [[ -z "${CUDA_COMPUTE_CAP:-}" ]]; then
    CUDA_COMPUTE_CAP="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '.' || true)"
fi
export CUDA_COMPUTE_CAP="${CUDA_COMPUTE_CAP:-90}"

target="${CARGO_TARGET_DIR:-$here/target}"
stubs="$target/cuda-link-stubs"
mkdir -p "$stubs"

# The cudarc sources cargo fetched (the version in Cargo.lock).
cargo fetch --quiet
cudarc_version="$(awk '/^name = "cudarc"/ { getline; gsub(/"/, "", $3); print $3 }' Cargo.lock)"
cudarc_src="$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"cudarc-$cudarc_version" | head -1)"

# A library the linker finds already: in the toolkit (lib64, lib, lib64/stubs) or the loader's cache.
found() {
    local lib="$1" d
    for d in "$CUDA_PATH/lib64" "$CUDA_PATH/lib" "$CUDA_PATH/lib64/stubs" "$CUDA_PATH/lib/stubs" "$CUDA_PATH"/targets/*/lib "$CUDA_PATH"/targets/*/lib/stubs; do
        if [[ -e "$d/lib$lib.so" ]]; then
            echo "$d"
            return 0
        fi
    done
    if /sbin/ldconfig -p 2>/dev/null | grep -qE "^[[:space:]]+lib$lib\.so "; then
        echo system
        return 0
    fi
    return 1
}

search=""
# name, soname, cudarc's bindings of it, what a stub's functions return (never called on the GPU
# machine, where the real library is loaded; if a stub is loaded: the driver's
# CUDA_ERROR_STUB_LIBRARY, cuBLAS's NOT_INITIALIZED, cuRAND's NOT_INITIALIZED).
for spec in "cuda libcuda.so.1 driver 34" "cublas libcublas.so.13 cublas 1" "cublasLt libcublasLt.so.13 cublaslt 1" "curand libcurand.so.10 curand 101"; do
    read -r lib soname module status <<<"$spec"
    if dir="$(found "$lib")"; then
        [[ "$dir" != system ]] && search="$search:$dir"
        continue
    fi
    if [[ ! -e "$stubs/lib$lib.so" ]]; then
        grep -oE '^pub unsafe fn [A-Za-z0-9_]+\(' "$cudarc_src/src/$module/sys/mod.rs" | sed -E "s/^pub unsafe fn ([A-Za-z0-9_]+)\\(/int \\1(void) { return $status; }/" | sort -u >"$stubs/$lib.c"
        cc -shared -fPIC -o "$stubs/lib$lib.so" -Wl,-soname,"$soname" "$stubs/$lib.c"
        echo "build.sh: no lib$lib.so to link with: made a link stub ($soname) in $stubs" >&2
    fi
    search="$search:$stubs"
done
# libnvrtc and libcudart: the toolkit's, also under their unversioned link names.
for lib in nvrtc cudart; do
    if dir="$(found "$lib")"; then
        [[ "$dir" != system ]] && search="$search:$dir"
        continue
    fi
    real="$(ls "$CUDA_PATH"/lib64/lib$lib.so.[0-9]* "$CUDA_PATH"/lib/lib$lib.so.[0-9]* 2>/dev/null | sort | head -1 || true)"
    if [[ -z "$real" ]]; then
        echo "build.sh: lib$lib.so.* is not in CUDA_PATH=$CUDA_PATH: install the CUDA toolkit" >&2
        exit 1
    fi
    ln -sf "$real" "$stubs/lib$lib.so"
    search="$search:$stubs"
done
# The C compiler that links Rust programs searches LIBRARY_PATH for -l libraries.
export LIBRARY_PATH="${search#:}${LIBRARY_PATH:+:$LIBRARY_PATH}"

cargo build --release "$@"
