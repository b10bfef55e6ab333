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
}
