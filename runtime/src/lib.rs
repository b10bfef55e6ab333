//! cuprum's runtime: the array type, devices, streams, the memory pool, kernel launches, the NVRTC
//! JIT and the kernel cache (docs/architecture.md), plus the host side of the kernel language (`lang`).
//!
//! Module ownership (one concept per file; each module imports only modules listed above it):
//! - `sync`, `stats`, `inline_list`, `elem_type`, `error`, `env`: the poison-ignoring locks,
//!   counters, a small-vector, the element type descriptor, the one error enum, environment
//!   variables.
//! - `bounds`: the record each device's kernels report their first out-of-range index into,
//!   read at every synchronising call (docs/runtime.md, Index checks).
//! - `fault`: a device's record of the fault that lost its context (held by `device`, so above it).
//! - `device`, `stream`, `memory/`: devices and contexts, streams and events, the pool.
//! - `repr`, `element`, `lang/`: plain data for parameters, what arrays hold, the kernel
//!   language's host definitions (traits, intrinsics, `Raw`, views).
//! - `cache/`, `nvrtc`, `module/`, `function`: the kernel cache, the JIT, loaded modules
//!   (`RawModule`, `Global`, image checks), a kernel loaded on one device.
//! - `array/`: `Array<T>` (shape, layout, transfers).
//! - `launch/`: configuration, typed arguments, the one parameter buffer (`ArgList`), the erased
//!   operands and signatures, `launch()`.
//! - `kernel`: `RawKernel`; `registry/`: the unit table, `Kernel` (with its signature), which
//!   layer served what; `rawkernel`: the checks of `#[rawkernel]` launch functions.
//! - `elementwise/`, `reduction/`: the erased launches, `ElementwiseKernel`, `ReductionKernel`,
//!   `ReductionCall`, the array reductions (`Reductions`).
//! - `ops`: the array operators and functions on the built-in elementwise kernels; `audit`.
//! - `kernels/` (outside `src/`): the built-in kernels, written with cuprum's own macros
//!   (`#[elementwise(crate = crate)]`) and precompiled by build.rs; `elementwise.rs` is a module of
//!   `ops`, `reductions.rs` of `reduction::array`. `__private` is what generated code names.

#![warn(missing_docs)]

mod sync;
mod inline_list;
pub mod stats;
pub mod elem_type;
pub mod error;
pub mod env;
mod capture;
pub mod bounds;

mod fault;

pub mod device;
pub mod stream;
pub mod memory;

pub mod repr;
pub mod element;
pub mod lang;

pub mod cache;
pub mod nvrtc;
pub mod module;
pub mod function;

pub mod array;

pub mod launch;
pub mod kernel;
pub mod registry;
pub mod rawkernel;
pub mod fuse;

pub mod elementwise;
pub mod reduction;
pub mod graph;

pub mod ops;
pub mod audit;
pub mod testing;

/// The random source of the unit tests: the integration tests' (`tests/support`), shared with them.
#[cfg(test)]
#[path = "../tests/support/mod.rs"]
mod test_support;

pub use array::{Array, IntoShape, Slice};
/// The `ndarray` crate the interop takes and returns (`Array::to_ndarray`, `Array::from_ndarray`,
/// `TryFrom`): use it as `cuprum::ndarray` to get the same version.
pub use ndarray;
pub use ops::where_;
pub use device::Device;
pub use element::{Element, ElemType, StructType};
pub use error::{Error, Fault, Result};
pub use memory::{DeviceBuffer, MemoryPool};
pub use stream::{Event, Stream, StreamGuard};
pub use graph::Graph;
pub use function::{KernelAttributes, KernelFunction};
pub use kernel::RawKernel;
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
