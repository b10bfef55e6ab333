//! Precompiles the runtime's built-in kernels (`kernels/elementwise.rs`, `kernels/reductions.rs`:
//! the kernels of the array operators, functions and reductions) with cuprum-build, so that they
//! run from the embedded fat binaries. Knobs: `CUPY_NVCC_GENERATE_CODE`, `NVCC`, `CUDA_PATH`, ...
//! (docs/building.md).
//!
//! Also computes the digest of the embedded CUDA headers (part of every JIT cache key) with the
//! runtime's own code (`src/cache/key.rs`, compiled into this script too, with the sha2 crate),
//! so that `nvrtc::EMBEDDED_HEADERS_DIGEST` is a constant: rustc's const evaluator takes seconds
//! over the headers' 85 KB, and a run-time digest costs every process that JIT-compiles.

#[allow(dead_code)]
#[path = "src/cache/key.rs"]
mod key;

fn main() {
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    let digest = key::headers_digest(cuprum_abi::headers::HEADERS);
    std::fs::write(out.join("headers_digest.rs"), format!("{digest:?}\n"))
        .expect("write headers_digest.rs");
    println!("cargo:rerun-if-changed=src/cache/key.rs");
    // Machine code only: PTX doubles the built-ins' bytes (2.63 MB against 1.22 MB at sm_90 +
    // compute_90) to serve GPUs newer than the list, which NVRTC serves as well from the same
    // embedded source (docs/building.md, What the built-ins precompile).
    cuprum_build::Kernels::new()
        .dir("kernels")
        // The GPU tests' own reductions, compiled by NVRTC at first use as the tests mean.
        .not_precompiled("src/tests/reduction_gpu.rs")
        .machine_code_only()
        .compile();
    // The measured geometry of the tuned sites (`tuning/sm_XY.toml`, docs/tuning.md; `cuprum
    // tune` writes them), checked and embedded; without a file, each site's default.
    cuprum_build::Tuning::new().embed();
}
