//! Precompiles cuprum's built-in kernels (`kernels/`) with cuprum-build, and, in a checkout of the
//! repository, the kernel files of the examples and tests, so that they run from the embedded fat
//! binaries too. Knobs: `CUPY_NVCC_GENERATE_CODE`, `NVCC`, `CUDA_PATH`, ... (docs/building.md).

use std::path::Path;

fn main() {
    let mut kernels = cuprum_build::Kernels::new();
    kernels.dir("kernels");
    // Present in the repository, not in a published package.
    if Path::new("examples/kernels").is_dir() {
        kernels.dir("examples/kernels");
    }
    for file in [
        "tests/rawkernel_kernels.rs",
        "tests/semantics_kernels.rs",
        "tests/elementwise_kernels.rs",
        "tests/reduction_kernels.rs",
        "tests/struct_kernels.rs",
    ] {
        if Path::new(file).is_file() {
            kernels.file(file);
        }
    }
    kernels.compile();
}
