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

/// The user guide, one page per topic: the documents of the repository's `docs/` folder, shown
/// here by `cargo doc` and docs.rs (only in documentation builds: the pages hold no items, and
/// their Rust blocks are compiled by the testsuite's `doc_snippets` test, not as doctests).
/// Paths like `docs/cpu.md` in the pages name the page of that file here (`guide::cpu`).
#[cfg(all(doc, not(doctest)))]
#[allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags, rustdoc::bare_urls, rustdoc::invalid_rust_codeblocks)]
pub mod guide {
    #[doc = include_str!("../docs/kernel-language.md")]
    pub mod kernel_language {}
    #[doc = include_str!("../docs/semantics.md")]
    pub mod semantics {}
    #[doc = include_str!("../docs/elementwise.md")]
    pub mod elementwise {}
    #[doc = include_str!("../docs/reduction.md")]
    pub mod reduction {}
    #[doc = include_str!("../docs/fusion.md")]
    pub mod fusion {}
    #[doc = include_str!("../docs/runtime.md")]
    pub mod runtime {}
    #[doc = include_str!("../docs/graphs.md")]
    pub mod graphs {}
    #[doc = include_str!("../docs/interop.md")]
    pub mod interop {}
    #[doc = include_str!("../docs/cpu.md")]
    pub mod cpu {}
    #[doc = include_str!("../docs/multi-gpu.md")]
    pub mod multi_gpu {}
    #[doc = include_str!("../docs/building.md")]
    pub mod building {}
    #[doc = include_str!("../docs/tuning.md")]
    pub mod tuning {}
    #[doc = include_str!("../docs/environment.md")]
    pub mod environment {}
    #[doc = include_str!("../docs/debugging.md")]
    pub mod debugging {}
    #[doc = include_str!("../docs/audit.md")]
    pub mod audit {}
    #[doc = include_str!("../docs/architecture.md")]
    pub mod architecture {}
    #[doc = include_str!("../docs/development.md")]
    pub mod development {}
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
