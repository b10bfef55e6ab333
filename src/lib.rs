//! cuprum: GPU kernels written in Rust, compiled ahead of time to CUDA, with a CuPy-style runtime.
//!
//! See the README and `docs/` for the kernel language and the runtime. Kernel files import
//! [`prelude`]; generated code reaches the runtime only through the hidden `__private` module.

pub use cuprum_macros::{device, elementwise, rawkernel, reduction};
pub use cuprum_runtime as runtime;
/// What the running program embeds and how each kernel will reach the GPU:
/// `println!("{}", cuprum::audit::report(device.as_ref()))` (see `docs/runtime.md`).
pub use cuprum_runtime::audit;

mod reduction_call;
pub mod reductions;
pub use reduction_call::ReductionCall;

/// Everything a kernel file needs: the attribute macros, the numeric traits, the GPU intrinsics.
pub mod prelude {
    pub use crate::{device, elementwise, rawkernel, reduction};
    pub use crate::reductions::Reductions;
    pub use cuprum_runtime::lang::prelude::*;
}

mod elementwise_ops;

// Generated code names `::cuprum::__private`, also inside this crate (the built-in kernels).
extern crate self as cuprum;

#[doc(hidden)]
pub mod __private {
    pub use crate::ReductionCall;
    pub use cuprum_runtime::*;
    pub use inventory;
}
