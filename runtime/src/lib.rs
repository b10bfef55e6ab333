//! cuprum's runtime: the array type, devices, streams, the memory pool, kernel launches, the NVRTC
//! JIT and the kernel cache (docs/architecture.md), plus the host side of the kernel language (`lang`).
//!
//! Module ownership (one concept per file):
//! - `lang/`: the kernel language's host definitions (traits, intrinsics, `Raw`, views).
//! - `error`: the one error enum.
//! - `device`, `stream`, `memory`, `array/`: devices and contexts, streams and events, the pool, `Array<T>`.
//! - `nvrtc`, `module`, `launch`, `cache/`, `stats`: JIT, RawModule/RawKernel, launches, kernel cache.
//! - `bounds`: the host side of the index checks in kernels (the record each context's kernels
//!   report their first out-of-range index into, read at every synchronising call).
//! - `registry`, `reduction/`: generated kernels and their lookup; reduction launches, `ReductionKernel`,
//!   `ReductionCall` and the array reductions (`Reductions`).
//! - `kernels/` (outside `src/`): the built-in kernels, written with cuprum's own macros
//!   (`#[elementwise(crate = crate)]`) and precompiled by build.rs; `elementwise.rs` is a module of
//!   `array::ops`, `reductions.rs` of `reduction::array`. `__private` is what generated code names.

pub mod lang;

pub mod array;
pub mod audit;
pub mod bounds;
pub mod element;
pub mod device;
pub mod env;
pub mod error;
pub mod memory;
pub mod stream;

pub mod cache;
pub mod kernel;
pub mod launch;
pub mod module;
pub mod nvrtc;
pub mod elementwise;
mod inline_list;
pub mod reduction;
pub mod registry;
pub mod stats;

pub use array::{Array, IntoShape, Slice, where_};
pub use device::Device;
pub use element::{Element, ElemType, StructType};
pub use error::{Error, Result};
pub use memory::{DeviceBuffer, MemoryPool};
pub use stream::{Event, Stream, StreamGuard};
pub use kernel::{KernelAttributes, KernelFunction, RawKernel};
pub use launch::{ArgList, DevicePtr, DeviceRepr, Dim3, KernelArg, KernelArgs, LaunchConfig, SliceArg, ViewArg};
pub use module::{Global, RawModule};
pub use reduction::{ReductionCall, Reductions};

/// The contract with the code generator (dtypes, symbol names, launch variants, headers).
pub use cuprum_abi as abi;
pub use cuprum_abi::{DType, KernelKind};
pub use lang::traits::{Float, Int, Number, Real, Scalar};

/// What macro-generated code reaches the runtime through (`<crate>::__private`, aliased
/// `__cuprum` in each kernel's module; docs/architecture.md, The crates): the runtime's items,
/// [`ReductionCall`] among them, and `inventory`. The runtime's own kernels (`kernels/`) are
/// written `#[elementwise(crate = crate)]` and so name `crate::__private`; the facade re-exports
/// this module as `cuprum::__private`, the macros' default.
#[doc(hidden)]
pub mod __private {
    pub use crate::*;
    pub use inventory;
}
