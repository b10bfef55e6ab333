//! Precompiles the example's kernel file (`kernels/ops.rs`) with cuprum-build, so that the program
//! runs them from embedded fat binaries (no NVRTC at run time). `CUPY_NVCC_GENERATE_CODE` picks
//! the targets (cuprum-build's default otherwise; docs/building.md).
fn main() {
    cuprum_build::Kernels::new().dir("kernels").compile();
}
