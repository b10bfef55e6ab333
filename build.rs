//! Precompiles cuprum's built-in kernels (`kernels/`) with cuprum-build, so that they run from the
//! embedded fat binaries. The examples (`examples/`, cuprum-examples) and the end-to-end tests
//! (`testsuite/`, cuprum-testsuite) are crates of their own that build their kernels in their own
//! build.rs. Knobs: `CUPY_NVCC_GENERATE_CODE`, `NVCC`, `CUDA_PATH`, ... (docs/building.md).

fn main() {
    cuprum_build::Kernels::new().dir("kernels").compile();
}
