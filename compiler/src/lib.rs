//! cuprum's kernel compiler: Rust kernel functions -> typed IR -> CUDA C.
//!
//! A normal library (no proc-macro) shared by the attribute macros, the build crate, the runtime
//! and the `cuprum` command. The pipeline, one module per phase with one entry point each:
//!
//! ```text
//! syn AST --front::lower_*--> ir::Module --typeck::check--> Types --valid::check--> (ok)
//!         --back::cuda::write_module--> CUDA C translation unit
//! ```
//!
//! The phases share one [`diag::Diagnostics`] and each keeps going after an error (a rejected
//! construct becomes `ExprKind::Error` / `Ty::Error`, accepted silently later), so every mistake
//! of a file is reported in one run; the back end runs only on a clean result.
//!
//! What the generated code and the runtime must agree on (dtypes, symbol names, headers, unit
//! options, the entry-point templates) is the `cuprum-abi` crate; [`dtype`], [`mangle`] and
//! [`headers`] are its modules, re-exported here under their old paths.

//!
//! The API is the pipeline's entry points ([`compile_file`], [`compile_source`],
//! [`compile_source_with_lines`], [`check_item`]),
//! the attribute macros' expansion ([`expand`]), the diagnostics ([`diag`]) and the generated unit
//! ([`back`]). The phases' own modules (the IR, the type checker, the validator, the fusion
//! planner, the language's vocabulary) are public only for cuprum's crates and tests and are
//! hidden from the documentation: they are not a stable API.
#![warn(missing_docs)]

pub mod back;
#[doc(hidden)]
pub mod bounds;
pub mod diag;
pub mod expand;
pub mod front;
#[doc(hidden)]
pub mod fuse;
#[doc(hidden)]
pub mod ir;
#[doc(hidden)]
pub mod lang;
#[doc(hidden)]
pub mod layout;
#[doc(hidden)]
pub mod typeck;
#[doc(hidden)]
pub mod valid;

pub use cuprum_abi as abi;
pub use cuprum_abi::{dtype, headers, mangle};

mod pipeline;

pub use pipeline::{check_item, compile_file, compile_source, compile_source_with_lines, CompiledFile};
