//! Precompiles the benchmark's kernel files (the precompiled first-call rows need fat binaries), and
//! the SGEMM example's kernel that the SGEMM row times.
fn main() {
    cuprum_build::Kernels::new()
        .file("src/kernels.rs")
        .file("src/many_kernels.rs")
        .file("src/fused.rs")
        .file("../examples/kernels/sgemm.rs")
        .file("../examples/kernels/gemm_bf16.rs")
        .file("../examples/kernels/attention.rs")
        .file("src/grid_kernels.rs")
        // Their rows time kernels compiled at run time, through the registry.
        .not_precompiled("src/reduction.rs")
        .not_precompiled("src/elementwise.rs")
        .compile();
    // The wgmma GEMM (bf16, FP8) and FlashAttention-3 rows' kernels: sm_90a only, when
    // CUPY_NVCC_GENERATE_CODE names targets (docs/building.md, "Architecture-specific targets").
    let mut hopper = cuprum_build::Kernels::new();
    hopper.file("../examples/kernels_sm90a/gemm_wgmma.rs");
    hopper.file("../examples/kernels_sm90a/gemm_fp8.rs");
    hopper.file("../examples/kernels_sm90a/attention_wgmma.rs");
    if std::env::var_os("CUPY_NVCC_GENERATE_CODE").is_some() {
        hopper.env("CUPY_NVCC_GENERATE_CODE", "arch=compute_90a,code=sm_90a");
    }
    hopper.compile();
    // The examples' tuning files (the wgmma GEMM's grid, whose launch examples/gemm_wgmma_lib.rs
    // the bench includes; docs/tuning.md), so that the bench launches what the example does.
    cuprum_build::Tuning::new().dir("../examples/tuning").embed();
}
