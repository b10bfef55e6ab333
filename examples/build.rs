//! Precompiles the examples' kernel files (`kernels/`) with cuprum-build, so that the examples run
//! from the embedded fat binaries (without nvcc, NVRTC compiles them at first use). The files of
//! `kernels_sm90a/` use Hopper's warpgroup instructions, which only the arch-specific target
//! sm_90a has: they are built for it whatever `CUPY_NVCC_GENERATE_CODE` asks (docs/building.md,
//! "Architecture-specific targets").
fn main() {
    cuprum_build::Kernels::new().dir("kernels").compile();
    cuprum_build::Kernels::new().dir("kernels_sm90a").env("CUPY_NVCC_GENERATE_CODE", "arch=compute_90a,code=sm_90a").compile();
}
