//! Precompiles the examples' kernel files (`kernels/`) with cuprum-build, so that the examples run
//! from the embedded fat binaries (without nvcc, NVRTC compiles them at first use). The files of
//! `kernels_sm90a/` use Hopper's warpgroup instructions, which only the arch-specific target
//! sm_90a has: when `CUPY_NVCC_GENERATE_CODE` names targets, they are built for sm_90a instead (unset,
//! cuprum-build's default gives them sm_90a; docs/building.md, "Architecture-specific targets").
//! It also embeds the examples' tuning files (`tuning/`, docs/tuning.md).
fn main() {
    cuprum_build::Kernels::new().dir("kernels").compile();
    let mut hopper = cuprum_build::Kernels::new();
    hopper.dir("kernels_sm90a");
    if std::env::var_os("CUPY_NVCC_GENERATE_CODE").is_some() {
        hopper.env("CUPY_NVCC_GENERATE_CODE", "arch=compute_90a,code=sm_90a");
    }
    hopper.compile();
    // The tuned launch sites' measured choices (`tuning/sm_XY.toml`, docs/tuning.md: the wgmma
    // GEMM's grid, written by `gemm_wgmma -- --tune`), checked and embedded.
    cuprum_build::Tuning::new().embed();
}
