//! Precompiles the benchmark's kernel files (the precompiled first-call rows need fat binaries), and
//! the SGEMM example's kernel that the SGEMM row times.
fn main() {
    cuprum_build::Kernels::new()
        .file("src/kernels.rs")
        .file("src/many_kernels.rs")
        .file("src/fused.rs")
        .file("../examples/kernels/sgemm.rs")
        .file("../examples/kernels/gemm_bf16.rs")
        .file("src/grid_kernels.rs")
        .compile();
    // The wgmma GEMM row's kernel: sm_90a only (docs/building.md, "Architecture-specific targets").
    cuprum_build::Kernels::new()
        .file("../examples/kernels_sm90a/gemm_wgmma.rs")
        .env("CUPY_NVCC_GENERATE_CODE", "arch=compute_90a,code=sm_90a")
        .compile();
}
