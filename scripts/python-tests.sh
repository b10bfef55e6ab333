#!/usr/bin/env bash
# The Python extension's tests (docs/interop.md, "From Python"): builds the example package
# (examples/python: cuprum kernels as a pyo3 extension) into an abi3 wheel with maturin, installs
# it into a virtual environment of its own (build-env/python), runs its pytest suite on cuprum's
# CPU device with NumPy and JAX (for CPU) (the torch and CuPy tests skip themselves without a GPU; on a GPU machine
# with torch or CuPy in that environment they run too), and audits the extension's shared library
# (`cuprum audit --deny-jit`: its kernels are precompiled, no NVRTC at first call).
#
# The wheel is built in the dev profile (what CI needs; `maturin build --release` for a wheel to
# ship) for CUPY_NVCC_GENERATE_CODE, by default sm_90 SASS + compute_90 PTX as scripts/test.sh
# (unset in a shipping build: cuprum-build's default targets). Cargo shares the workspace's target
# directory, so the dependencies `cargo test --workspace` built are reused. Not `--locked`:
# examples/python/Cargo.lock pins what it has, and a dependency the workspace's crates gain later
# is added to it here rather than failing the build (update the committed lock with
# `cargo update -w --manifest-path examples/python/Cargo.toml`).
# Extra arguments go to pytest as they are (e.g. -k softmax).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
start=$SECONDS

source scripts/cuda-env.sh
default_targets="arch=compute_90,code=[sm_90,compute_90]"
export CUPY_NVCC_GENERATE_CODE="${CUPY_NVCC_GENERATE_CODE:-$default_targets}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"

venv="$root/build-env/python"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check "maturin>=1.5,<2" "numpy>=1.22" pytest "jax[cpu]"
# test_jax.py skips without JAX (the GPU machine has none); here it must run.
"$venv/bin/python" -c "import jax" || { echo "python-tests.sh: jax did not install" >&2; exit 1; }
export VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH"
# pyo3's build script asks this interpreter for the Python version and ABI.
export PYO3_PYTHON="$venv/bin/python"

wheels="$root/build-env/python-wheels"
rm -rf "$wheels"
maturin build --profile dev --strip -m examples/python/Cargo.toml -o "$wheels"
wheel=$(ls "$wheels"/*.whl)
echo "wheel: $(basename "$wheel"), $(du -k "$wheel" | cut -f1) KiB"
python -m pip install -q --disable-pip-version-check --force-reinstall --no-deps "$wheel"
echo "built and installed in $((SECONDS - start)) s"

# The extension's shared library, as installed: every kernel it lists is precompiled for sm_90.
so=$(python -c 'import cuprum_example.cuprum_example as m, sys; sys.stdout.write(m.__file__)')
if [ "$CUPY_NVCC_GENERATE_CODE" = "$default_targets" ]; then
    cargo run -q --locked -p cuprum-cli -- audit --arch sm_90 --deny-jit "$so" | tail -n 2
fi

# Outside the source tree, so that the installed wheel is what is imported.
cd "$root/build-env"
CUPRUM_DEVICE=cpu python -m pytest -q -p no:cacheprovider "$root/examples/python/tests" "$@"
echo "python-tests.sh took $((SECONDS - start)) s"
