//! Precompiles the extension's kernels (`src/kernels.rs`) into fat binaries that the shared
//! library embeds, so that the wheel runs them without a CUDA toolkit or NVRTC (the targets:
//! `CUPY_NVCC_GENERATE_CODE`, else cuprum-build's defaults; docs/building.md).
fn main() {
    cuprum_build::Kernels::new().file("src/kernels.rs").compile();
}
