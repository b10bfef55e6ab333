// The crate's front page is the README (the facade packages it). Its Rust blocks are not doctests
// (`not(doctest)`): testsuite/tests/doc_snippets.rs compiles them as the files of a crate, with
// the rest of docs/.
//
// Kernel files import `prelude`; generated code reaches the runtime only through the hidden
// `__private` module. The facade holds no code of its own: the attribute macros (`cuprum-macros`)
// and re-exports of the runtime (`cuprum-runtime`), whose built-in kernels (the array operators,
// functions and reductions) it builds itself (docs/architecture.md, The crates).
#![cfg_attr(not(doctest), doc = include_str!("../README.md"))]
#![warn(missing_docs)]
// The README's blocks with a `fn main` are a crate's build.rs and src/main.rs, not doctests.
#![allow(clippy::needless_doctest_main)]

pub use cuprum_macros::{device, elementwise, fuse, rawkernel, reduction};
pub use cuprum_runtime as runtime;
/// The types most programs name, at the root (the rest is under [`runtime`]).
pub use cuprum_runtime::{Array, Device, Error, Graph, LaunchConfig, RawKernel, RawModule, Result, Stream, Swizzle, TensorMap};
/// The `ndarray` version of the interop (`Array::to_ndarray`, `from_ndarray`, `TryFrom`).
pub use cuprum_runtime::ndarray;
/// What the running program embeds and how each kernel will reach the GPU:
/// `println!("{}", cuprum::audit::report(device.as_ref()))` (see `docs/runtime.md`).
pub use cuprum_runtime::audit;

/// The array reductions (`x.sum()`, `x.mean()`, ...; the runtime's `reduction::array`).
pub use cuprum_runtime::reduction::array as reductions;
pub use cuprum_runtime::ReductionCall;

/// Everything a kernel file needs: the attribute macros, the numeric traits, the GPU intrinsics.
pub mod prelude {
    pub use crate::{device, elementwise, fuse, rawkernel, reduction};
    pub use crate::reductions::Reductions;
    pub use cuprum_runtime::prelude::*;
}

/// Generated code names `::cuprum::__private` (the macros' default `crate = ::cuprum`): the
/// runtime's `__private`, the one path to its internals (not API; docs/architecture.md, The
/// crates).
#[doc(hidden)]
pub use cuprum_runtime::__private;

/// The hooks the workspace's own tests use beyond `__private` (the runtime's `__workspace`: the
/// unit table's parts, the signatures, the tensor-core helpers' rounding); not API and not for
/// generated code.
#[doc(hidden)]
pub use cuprum_runtime::__workspace;
