//! Precompiles the kernel files of the end-to-end tests (`tests/*_kernels.rs`) with cuprum-build,
//! so that the tests run their kernels from the embedded fat binaries (the `aot` layer) as a
//! program would. Knobs: `CUPY_NVCC_GENERATE_CODE`, `NVCC`, `CUDA_PATH`, ... (docs/building.md).
//! Also writes the Rust blocks of README.md and docs/ as modules for `tests/doc_snippets.rs`.

mod doc_snippets;

fn main() {
    doc_snippets::generate();
    cuprum_build::Kernels::new()
        .file("tests/rawkernel_kernels.rs")
        .file("tests/semantics_kernels.rs")
        .file("tests/elementwise_kernels.rs")
        .file("tests/reduction_kernels.rs")
        .file("tests/struct_kernels.rs")
        .file("tests/bounds_kernels.rs")
        .file("tests/fuse_kernels.rs")
        .file("tests/print_kernels.rs")
        .file("tests/warp_kernels.rs")
        .file("tests/special_kernels.rs")
        // The snapshot files of the compiler's tests whose kernels the tests here run (no copies).
        .file("../compiler/tests/in/tensor_cores.rs")
        .file("../compiler/tests/in/tensor_dynamic_shared.rs")
        .file("../compiler/tests/in/grid_sync.rs")
        // Every intrinsic called once (tests/every_intrinsic.rs checks that none is missing).
        .file("kernels/every_intrinsic.rs")
        .compile();
    // Hopper's warpgroup instructions exist only on the arch-specific target sm_90a: these files
    // are built for it when CUPY_NVCC_GENERATE_CODE names targets (unset, the default gives their
    // wgmma kernels sm_90a; docs/building.md, "Architecture-specific targets").
    let mut hopper = cuprum_build::Kernels::new();
    hopper
        .file("../compiler/tests/in/hopper.rs")
        .file("../examples/kernels_sm90a/gemm_wgmma.rs")
        .file("../examples/kernels_sm90a/gemm_fp8.rs")
        .file("kernels/every_intrinsic_sm90a.rs");
    if std::env::var_os("CUPY_NVCC_GENERATE_CODE").is_some() {
        hopper.env("CUPY_NVCC_GENERATE_CODE", "arch=compute_90a,code=sm_90a");
    }
    hopper.compile();
}
