//! Precompiles the examples' kernel files (`kernels/`) with cuprum-build, so that the examples run
//! from the embedded fat binaries (without nvcc, NVRTC compiles them at first use).
fn main() {
    cuprum_build::Kernels::new().dir("kernels").compile();
}
