//! cuprum-build: compiles kernel files ahead of time, from `build.rs`.
//!
//! For each kernel file it runs the compiler crate (the same CUDA C as `cuprum emit`), writes the
//! translation unit under `OUT_DIR/cuprum/`, and runs nvcc into a fat binary
//! `OUT_DIR/cuprum/<id>.fatbin` (see [`cuprum_abi::mangle::fatbin_file`]) that the kernel
//! macros embed with `include_bytes!`. Without nvcc the build still succeeds, with one warning, and
//! every kernel is compiled by NVRTC at first use.
//!
//! ```no_run
//! // build.rs
//! fn main() {
//!     cuprum_build::Kernels::new()
//!         .file("src/kernels.rs")
//!         .dir("kernels") // every `.rs` file under it, recursively
//!         .compile();
//! }
//! ```
//!
//! The knobs are CuPy's build variables (module [`mod@env`]): `CUPY_NVCC_GENERATE_CODE` (the targets,
//! module [`targets`]), `NVCC`, `CUDA_PATH`, `CUPY_NUM_BUILD_JOBS`, `CUPY_NUM_NVCC_THREADS`; and
//! cuprum's own: `CUPRUM_FATBIN_CACHE` (where fat binaries are shared between `OUT_DIR`s, module
//! [`cache`]), `CUPRUM_BUILD_VERBOSE` (one summary line per build as a warning), `CUPRUM_NVCC_COMPRESS` and
//! `CUPRUM_LINEINFO` (`1`: `#line` directives and `-lineinfo`, for profilers and debuggers;
//! docs/debugging.md).
//! `docs/building.md` is the user guide.
//!
//! A kernel file with mistakes is skipped with one warning (the kernels' attributes report the
//! mistakes as rustc errors at their tokens). The package's `src/` is searched for kernel files
//! that no builder lists, each named in a warning with the `.file(..)` line to add
//! ([`Kernels::scan`] searches more folders, [`Kernels::not_precompiled`] silences one file).
//!
//! [`Tuning`] embeds the package's tuning files (`tuning/sm_XY.toml`: the launch configuration
//! each tuned site measured best, docs/tuning.md), checked at build time.
//!
//! Each unit's outcome is also written to `OUT_DIR/cuprum/<id>.build` (format:
//! [`build_info_format`]), which the macros embed next to the fat binary.

#![warn(missing_docs)]

// The example is a whole build.rs, `fn main` included.
#![allow(clippy::needless_doctest_main)]

// The modules bottom-up: each imports only modules above it. The error and the report; the
// environment, the targets, compression, nvcc and the shared cache; the files written to
// `OUT_DIR`; the search for kernel files no builder lists; the plan of a build (which parts,
// which targets), their compilation, and the builder that runs them; the embedding of the tuning
// files (docs/tuning.md).
mod error;
mod report;
pub mod env;
pub mod targets;
pub mod compress;
pub mod nvcc;
pub mod cache;
mod outputs;
mod unlisted;
mod plan;
mod compile;
mod builder;
mod tuning;

pub use builder::Kernels;
pub use tuning::{Tuning, TuningReport, GENERATED as TUNING_GENERATED};
pub use cuprum_abi::parts::Split;
pub use error::Error;
pub use outputs::build_info as build_info_format;
pub use report::{FileReport, Report, Status, LONG_NVCC};
