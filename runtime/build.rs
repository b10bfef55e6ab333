//! Precompiles the runtime's built-in kernels (`kernels/elementwise.rs`, `kernels/reductions.rs`:
//! the kernels of the array operators, functions and reductions) with cuprum-build, so that they
//! run from the embedded fat binaries. Knobs: `CUPY_NVCC_GENERATE_CODE`, `NVCC`, `CUDA_PATH`, ...
//! (docs/building.md).

fn main() {
    cuprum_build::Kernels::new().dir("kernels").compile();
}
