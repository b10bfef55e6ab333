# shellcheck shell=bash
# Source this file from bash: `source scripts/cuda-env.sh`. It makes `nvcc` and `libnvrtc` available.
#
# Order of preference:
#   1. A CUDA toolkit that is already there: `$CUDA_PATH/bin/nvcc`, else `nvcc` on PATH, else
#      /usr/local/cuda/bin/nvcc. Used as is.
#   2. Otherwise the CUDA 13.0 compiler from PyPI wheels, installed once into a virtual environment at
#      `<repo>/build-env/cuda` (git-ignored). Later `source`s see the stamp file and only export
#      (a few milliseconds). Changing the pins below reinstalls; `rm -rf build-env/cuda` does too.
#
# Exports CUDA_PATH (toolkit root), PATH (+ $CUDA_PATH/bin) and LD_LIBRARY_PATH (+ the folder of
# libnvrtc.so.13). cudarc's dynamic loading dlopen()s the names `libnvrtc.so`, ..., `libnvrtc.so.13`
# in turn, so LD_LIBRARY_PATH is what lets it find the wheel's library. Prints one line on stderr
# saying which nvcc and libnvrtc are used (CUPRUM_CUDA_ENV_QUIET=1 silences it). PYTHON picks the
# interpreter for the venv (default python3).
#
# Findings about the wheels (checked on Debian 12, gcc 12.2, Python 3.11, no GPU, 2025-11):
#   - Everything lands in one tree, site-packages/nvidia/cu13/: bin/ (nvcc, ptxas, cudafe++, fatbinary,
#     nvlink, bin2c, crt/link.stub), nvvm/bin/cicc + nvvm/libdevice (from nvidia-nvvm), include/ and
#     include/crt/ (nvidia-cuda-crt, nvidia-cuda-runtime), include/cccl/ (nvidia-cuda-cccl), lib/
#     (libnvrtc.so.13, libnvrtc-builtins.so.13.0, libcudart.so.13, libnvvm.so.4). About 515 MB.
#   - bin/nvcc.profile uses TOP=$(_HERE_)/.., so nvcc finds cicc, libdevice, include/ and
#     `-isystem include/cccl` on its own: CUDA_PATH=.../nvidia/cu13 is a valid toolkit root and no
#     extra variable is needed. `nvcc -arch=sm_90 -cubin` and `-fatbin -gencode arch=compute_80,
#     code=sm_80 -gencode arch=compute_90,code=sm_90` both work; nvcc lists compute_75 ... compute_121.
#   - nvidia-cuda-cccl IS needed: without it cuda_fp16.h, cuda_bf16.h and cooperative_groups.h fail
#     with "nv/target: No such file or directory". 13.0.85 is the CCCL of CUDA 13.0 update 2.
#   - Host compiler: nvcc uses the `g++` on PATH; gcc 12 is supported, no flag needed. With a gcc
#     newer than nvcc supports, export NVCC_PREPEND_FLAGS='-allow-unsupported-compiler' or pick an
#     older one with NVCC_CCBIN=g++-NN.
#   - NVRTC 13.0 (nvrtcVersion = 13.0) loads from lib/ via LD_LIBRARY_PATH and compiles for sm_75 ...
#     sm_121. It has NO built-in CUDA headers: `#include <cuda_fp16.h>` (also cuda_bf16.h,
#     cuComplex.h) fails with "no directories in search list" unless --include-path=$CUDA_PATH/include
#     and $CUDA_PATH/include/cccl are given; `<cstdint>` is never available (use
#     <cuda/std/cstdint> with those paths, or plain C types). Code for NVRTC that must work with only
#     libnvrtc present (no toolkit headers) must include only cuprum's own headers.

# Runs in the caller's shell: no `set -e`, no `exit`; every failure path `return`s non-zero.
__cuprum_cuda_env() {
    local root
    root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)" || return 1

    local pins="nvidia-cuda-nvcc==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-nvvm==13.0.88 nvidia-cuda-nvrtc==13.0.88 nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85"
    local nvcc="" cuda_root="" nvrtc_dir="" d

    # 1. A toolkit that is already there.
    if [[ -n "${CUDA_PATH:-}" && -x "$CUDA_PATH/bin/nvcc" ]]; then
        nvcc="$CUDA_PATH/bin/nvcc"
    elif command -v nvcc >/dev/null 2>&1; then
        nvcc="$(command -v nvcc)"
    elif [[ -x /usr/local/cuda/bin/nvcc ]]; then
        nvcc=/usr/local/cuda/bin/nvcc
    fi

    if [[ -n "$nvcc" ]]; then
        nvcc="$(readlink -f "$nvcc")"
        cuda_root="$(cd "$(dirname "$nvcc")/.." && pwd)"
        for d in "$cuda_root/lib64" "$cuda_root/lib" "$cuda_root"/targets/*/lib; do
            if compgen -G "$d/libnvrtc.so*" >/dev/null; then nvrtc_dir="$d"; break; fi
        done
    else
        # 2. The pinned PyPI wheels in build-env/cuda.
        local venv="$root/build-env/cuda"
        local stamp="$venv/.cuprum-installed"
        if [[ "$(cat "$stamp" 2>/dev/null)" != "$pins" ]]; then
            mkdir -p "$root/build-env" || return 1
            (
                # One installer at a time (two shells sourcing at once): the second waits, then skips.
                if command -v flock >/dev/null 2>&1; then
                    exec 9>"$root/build-env/.cuda.lock" && flock 9
                fi
                [[ "$(cat "$stamp" 2>/dev/null)" == "$pins" ]] && exit 0
                echo "cuda-env: installing the CUDA 13.0 compiler wheels into $venv (once)" >&2
                start=$SECONDS
                py="${PYTHON:-python3}"
                rm -rf "$venv"
                if "$py" -m venv "$venv" 2>/dev/null; then
                    # shellcheck disable=SC2086
                    "$venv/bin/python" -m pip install --quiet --no-input $pins || exit 1
                else
                    # No venv module (Debian without python3-venv): a plain --target folder of the same shape.
                    site="$venv/lib/python$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')/site-packages"
                    mkdir -p "$site" || exit 1
                    # shellcheck disable=SC2086
                    "$py" -m pip install --quiet --no-input --target "$site" $pins || exit 1
                fi
                # Smoke test once: nvcc with the host compiler and the fp16 header (needs cccl).
                cu13="$(compgen -G "$venv/lib/python3*/site-packages/nvidia/cu13" | head -n1)"
                tmp="$(mktemp -d)" || exit 1
                printf '#include <cuda_fp16.h>\n__global__ void k(__half *p) { p[0] = __float2half(1.0f); }\n' >"$tmp/k.cu"
                if ! "$cu13/bin/nvcc" -arch=sm_90 -cubin -o "$tmp/k.cubin" "$tmp/k.cu"; then
                    rm -rf "$tmp"
                    echo "cuda-env: error: the installed nvcc cannot compile a test kernel (see above)." >&2
                    echo "cuda-env: if it rejects the host compiler, set NVCC_CCBIN or NVCC_PREPEND_FLAGS=-allow-unsupported-compiler" >&2
                    exit 1
                fi
                rm -rf "$tmp"
                echo "$pins" >"$stamp"
                echo "cuda-env: installed and checked in $((SECONDS - start)) s" >&2
            ) || { echo "cuda-env: error: installing the CUDA wheels failed (see above)" >&2; return 1; }
        fi
        local cu13
        cu13="$(compgen -G "$venv/lib/python3*/site-packages/nvidia/cu13" | head -n1)"
        if [[ -z "$cu13" || ! -x "$cu13/bin/nvcc" ]]; then
            echo "cuda-env: error: no nvcc under $venv; run rm -rf $venv and source again" >&2
            return 1
        fi
        nvcc="$cu13/bin/nvcc"
        cuda_root="$cu13"
        nvrtc_dir="$cu13/lib"
    fi

    export CUDA_PATH="$cuda_root"
    case ":$PATH:" in *":$cuda_root/bin:"*) ;; *) export PATH="$cuda_root/bin:$PATH" ;; esac

    local nvrtc_lib=""
    if [[ -n "$nvrtc_dir" ]]; then
        case ":${LD_LIBRARY_PATH:-}:" in
            *":$nvrtc_dir:"*) ;;
            *) export LD_LIBRARY_PATH="$nvrtc_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ;;
        esac
        nvrtc_lib="$(compgen -G "$nvrtc_dir/libnvrtc.so*" | grep -v -e builtins -e '\.alt\.' | sort | tail -n1)"
    else
        # A distribution toolkit (nvcc in /usr/bin): the loader's cache may know libnvrtc.
        nvrtc_lib="$(/sbin/ldconfig -p 2>/dev/null | sed -n 's/.*libnvrtc\.so[.0-9]* .*=> //p' | head -n1)"
    fi

    if [[ "${CUPRUM_CUDA_ENV_QUIET:-}" != 1 ]]; then
        local ver
        ver="$("$nvcc" --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')"
        echo "cuda-env: nvcc ${ver:-?} at $nvcc; libnvrtc at ${nvrtc_lib:-<not found: NVRTC tests will fail>}" >&2
    fi
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
    echo "cuda-env: source this script instead of running it: source ${BASH_SOURCE[0]}" >&2
    exit 1
fi
# Called in a `||` list so that a caller's `set -e` cannot abort half-way; the status is returned.
__cuprum_cuda_env || { unset -f __cuprum_cuda_env; return 1; }
unset -f __cuprum_cuda_env
