//! Precompiles the extension's kernels (`src/kernels.rs`) into fat binaries that the shared
//! library embeds, so that the wheel runs them without a CUDA toolkit or NVRTC (the targets:
//! `CUPY_NVCC_GENERATE_CODE`, else cuprum-build's defaults; docs/building.md).
//!
//! One part per instance and launch variant (`Split::PerVariant`): a Python process's first call
//! of a kernel decompresses and loads only the entry point it runs (for `squared_diff`'s three
//! dtypes, a ninth of the kernel's machine code), for more nvcc runs at build time.
fn main() {
    cuprum_build::Kernels::new().file("src/kernels.rs").split(cuprum_build::Split::PerVariant).compile();
}
