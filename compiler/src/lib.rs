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
//! options, the entry-point templates) is the `cuprum-abi` crate, which this crate's users name
//! directly (`cuprum_abi::dtype`, `cuprum_abi::mangle`, ...).
//!
//! The API is the pipeline's entry points ([`compile_file`], [`compile_source`],
//! [`compile_source_with_lines`], [`check_item`]),
//! the attribute macros' expansion ([`expand`]), the diagnostics ([`diag`]) and the generated unit
//! ([`back`]). The phases' own modules (the IR, the type checker, the validator, the fusion
//! planner, the language's vocabulary) are public only for cuprum's crates and tests and are
//! hidden from the documentation: they are not a stable API.
#![warn(missing_docs)]

// The modules bottom-up: each may import only the modules above it in this list (the order is
// a contract that tests/layers.rs enforces).
//
// - `diag`: the diagnostics every phase reports to;
// - `attr_kind`: which attribute marks an item;
// - `lang`: the kernel language's vocabulary (intrinsics, methods, bounds);
// - `ir`: the IR, which holds `lang`'s variants; `layout`: the C layout of its types;
// - `fuse`: `#[fuse]`'s desugaring to a kernel of another kind, before the front end;
// - `front`, `typeck`, `valid`: the phases, each on the one before's output;
// - `bounds`: which index checks a kernel needs (on the typed IR); `back`: the CUDA writer;
// - `signature`: a kernel's host signature (each parameter's `Role`), read from its typed IR;
// - `checked`: an item as the macros' check returns it (`Checked`: IR, types, attribute, signature);
// - `pipeline`: the phases' entry points; `expand`: the attribute macros' expansion.
pub mod diag;
mod attr_kind;
#[doc(hidden)]
pub mod lang;
#[doc(hidden)]
pub mod ir;
#[doc(hidden)]
pub mod layout;
#[doc(hidden)]
pub mod fuse;
pub mod front;
#[doc(hidden)]
pub mod typeck;
#[doc(hidden)]
pub mod valid;
#[doc(hidden)]
pub mod bounds;
pub mod back;
mod signature;
mod checked;
mod pipeline;
pub mod expand;

pub use attr_kind::AttrKind;

pub use pipeline::{check_item, compile_file, compile_source, compile_source_with_lines, CompiledFile};
