//! cuprum's runtime: the array type, devices, streams, the memory pool, kernel launches, the NVRTC
//! JIT and the kernel cache (docs/architecture.md), plus the host side of the kernel language (`lang`).
//!
//! Module ownership (one concept per file):
//! - `lang/`: the kernel language's host definitions (traits, intrinsics, `Raw`, views).
//! - `error`: the one error enum.
//! - `device`, `stream`, `memory`, `array/`: devices and contexts, streams and events, the pool, `Array<T>`.
//! - `nvrtc`, `module`, `launch`, `cache/`, `stats`: JIT, RawModule/RawKernel, launches, kernel cache.
//! - `registry`, `reduction/`: generated kernels and their lookup; reduction launches and `ReductionKernel`.

pub mod lang;

pub mod array;
pub mod audit;
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

/// The contract with the code generator (dtypes, symbol names, launch variants, headers).
pub use cuprum_abi as abi;
pub use cuprum_abi::{DType, KernelKind};
pub use lang::traits::{Float, Int, Number, Real, Scalar};
