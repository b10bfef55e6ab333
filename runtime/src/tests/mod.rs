//! The runtime's tests that reach its internals: the unit table and `Kernel`, the planners, the
//! erased launches, the kernel cache's layers, NVRTC. They were integration tests under
//! `runtime/tests/`; the runtime's public API is what users may use (docs/architecture.md, The
//! crates), so the tests of what lies behind it are the crate's own. `runtime/tests/` keeps the
//! tests of the public API (`gpu_array.rs`, `gpu_stream_memory.rs`, `gpu_fault.rs`,
//! `cpu_device.rs`), `elementwise_gpu.rs` (through `__private`: it counts launch variants with the
//! process-wide counters, which the GPU tests here would move while it counts), and the helpers
//! both share (`support/`, `structs/`, `images/`). Tests that read `stats` or set environment
//! variables do it in a child process (this binary re-run with `--exact tests::FILE::child_entry`).
//!
//! GPU tests are `#[ignore = "needs a CUDA GPU"]`: `cargo test -p cuprum-runtime --lib tests --
//! --include-ignored` on a GPU machine.

/// `support::Rng` for `structs` (which the integration tests include too).
use crate::test_support as support;

#[path = "../../tests/images/mod.rs"]
mod images;
#[path = "../../tests/structs/mod.rs"]
mod structs;

mod audit_gpu;
mod cache;
mod cpu_kernels;
mod elementwise_nvrtc;
mod elementwise_plan;
mod gpu_hopper;
mod gpu_images;
mod gpu_rawkernel;
mod gpu_struct_elements;
mod image_fuzz;
mod nvrtc_features;
mod reduction_gpu;
mod reduction_nvrtc;
mod reduction_plan;
mod struct_elements;
