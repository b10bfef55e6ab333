//! cuprum's runtime: the array type, devices, streams, the memory pool, kernel launches, the NVRTC
//! JIT and the kernel cache (docs/architecture.md), plus the host side of the kernel language
//! ([`prelude`]).
//!
//! The public API is what users may use: the types at the root, [`prelude`], and the modules
//! [`array`](mod@array), [`audit`], [`cache`], [`device`], [`elementwise`], [`reduction`],
//! [`nvrtc`], [`stats`] and [`testing`]. Everything else is private or `pub(crate)`; what
//! macro-generated code needs is re-exported under the hidden `__private` module only
//! (docs/architecture.md, The crates), and the tests of the internals are this crate's unit tests
//! (`src/tests/`).
//!
//! Module ownership (one concept per file). The order of the `mod` declarations below is the
//! order of the layers: each module imports only itself and modules declared before it
//! (`tests/layers.rs` fails on any other import; docs/architecture.md, The runtime's layers):
//! - `sync`, `inline_list`, `stats`, `elem_type`, `dim3`, `error`, `env`, `capture`: the
//!   poison-ignoring locks, a small-vector, counters, the element type descriptor, `Dim3`, the
//!   one error enum, environment variables, graph capture state.
//! - `driver`: the guarded driver probe and `CPU_ORDINAL`; `bounds`: the record each device's
//!   kernels report their first out-of-range index into, read at every synchronising call
//!   (docs/runtime.md, Index checks); `fault`: a device's record of the fault that lost its
//!   context (held by `device`, so below it).
//! - `device`, `stream`, `memory/`: devices and contexts, streams and events, the pool.
//! - `repr`, `element`, `scalar/`: plain data for parameters, what arrays hold, the numeric
//!   traits and the host's arithmetic as the GPU does it (`kernel_ops`).
//! - `cache/`, `nvrtc/`, `module/`, `function`: the kernel cache, the JIT, loaded modules
//!   (`RawModule`, `Global`, image checks), a kernel loaded on one device.
//! - `array/`: `Array<T>` (shape, layout, transfers); `tensor_map`: `TensorMap`, a 2-D array
//!   described for TMA copies (Hopper), and its kernel parameter; `lang/`: the kernel language's
//!   host definitions (intrinsics, `Raw`, views, the prelude, which names `TensorMap`; the CPU
//!   device's versions are `cpu::lang`).
//! - `launch/`: configuration, typed arguments, the one parameter buffer (`ArgList`), the erased
//!   operands and signatures, NVTX ranges, `launch()`.
//! - `cpu/`: the CPU device: its elementwise and reduction loops (`HostEntry`, `ElementLoop`,
//!   `ReduceLoop`), the grids of raw kernels, its kernel language (`cpu::lang`), and the CPU side
//!   of the erased launches.
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
mod elem_type;
mod dim3;
mod error;
mod env;
mod capture;
mod driver;
mod bounds;

mod fault;

pub mod device;
mod stream;
mod memory;

mod repr;
mod element;
mod scalar;

pub mod cache;
pub mod nvrtc;
mod module;
mod function;

pub mod array;
mod tensor_map;
mod lang;

mod launch;
mod cpu;
mod kernel;
mod registry;
mod rawkernel;
mod fuse;

pub mod elementwise;
pub mod reduction;
mod graph;

mod ops;
pub mod audit;
pub mod testing;

/// The random source of the unit tests: the integration tests' (`tests/support`), shared with them.
#[cfg(test)]
#[path = "../tests/support/mod.rs"]
mod test_support;

/// The tests of the runtime's internals that were integration tests (`src/tests/`).
#[cfg(test)]
mod tests;

/// The helpers shared with the integration tests (`tests/structs`) name the crate
/// `cuprum_runtime`, as those tests do.
#[cfg(test)]
extern crate self as cuprum_runtime;

pub use array::{Array, IntoShape, Slice};
pub use tensor_map::{Swizzle, TensorMap, TensorMapParam};
/// The `ndarray` crate the interop takes and returns (`Array::to_ndarray`, `Array::from_ndarray`,
/// `TryFrom`): use it as `cuprum::ndarray` to get the same version.
pub use ndarray;
pub use ops::where_;
pub use device::{Device, DeviceGuard};
pub use element::{Element, ElemType, StructType};
pub use error::{Error, Fault, Result};
pub use memory::{DeviceBuffer, MemoryPool};
pub use stream::{Event, Stream, StreamGuard, StreamKind};
pub use graph::Graph;
pub use function::{CoResidency, KernelAttributes, KernelFunction, LaunchLimits};
pub use kernel::RawKernel;
pub use dim3::Dim3;
pub use launch::{ArgList, DevicePtr, DeviceRepr, KernelArg, KernelArgs, LaunchConfig, SliceArg, ViewArg};
pub use module::{Global, RawModule};
pub use reduction::{ReductionCall, Reductions};
pub use lang::prelude;

/// The contract with the code generator (dtypes, symbol names, launch variants, headers).
pub use cuprum_abi as abi;
pub use cuprum_abi::{DType, KernelKind};
pub use scalar::traits::{Float, Int, Number, Real, Scalar};

/// What macro-generated code reaches the runtime through (`<crate>::__private`, aliased
/// `__cuprum` in each kernel's module; docs/architecture.md, The crates): the runtime's public
/// items, [`ReductionCall`] among them, `inventory`, and the internal modules the generated code
/// (and the workspace's benchmark and command line) name: the unit table and kernels
/// (`registry`), the launch vocabulary (`launch`: operands, signatures, the CPU device's loops and
/// grids, `launch::launch`), the checks of `#[rawkernel]` launch functions (`rawkernel`), the row
/// plan of `#[fuse]` (`fuse`), the kernel language's host definitions (`lang`), the erased
/// elementwise and reduction launches and their planners, the kernel cache's layers, NVRTC and
/// the environment. None of it is API: it changes with the code generator. The runtime's own
/// kernels (`kernels/`) are written `#[elementwise(crate = crate)]` and so name
/// `crate::__private`; the facade re-exports this module as `cuprum::__private`, the macros'
/// default.
#[doc(hidden)]
pub mod __private {
    pub use crate::*;
    pub use inventory;

    /// The unit table, `Kernel`, which layer served what.
    pub mod registry {
        pub use crate::registry::*;
    }

    /// Operands, signatures, the parameter buffer, and `launch()`.
    pub mod launch {
        pub use crate::launch::*;
    }

    /// The CPU device: its loops, grids and kernel language.
    pub mod cpu {
        pub use crate::cpu::*;
    }

    /// The checks of `#[rawkernel]` launch functions.
    pub mod rawkernel {
        pub use crate::rawkernel::*;
    }

    /// The row plan of a row-wise `#[fuse]` kernel.
    pub mod fuse {
        pub use crate::fuse::*;
    }

    /// The kernel language's host definitions and the operators of host bodies.
    pub mod lang {
        pub use crate::lang::*;
    }

    /// The environment variables the runtime reads (`cuprum info` lists them).
    pub mod env {
        pub use crate::env::*;
    }

    /// The erased elementwise launch.
    pub mod elementwise {
        pub use crate::elementwise::*;
        pub use crate::elementwise::launch::{broadcast_shape, host_work_only, launch, launch_unchecked, output_stream, staged_launch};
        pub use crate::launch::operand::{Arg, ArrayArg};
        pub use crate::launch::signature::{Param, ParamType, Role};
    }

    /// The erased reduction launch.
    pub mod reduction {
        pub use crate::reduction::*;
        pub use crate::reduction::launch::{Options, host_work_only, launch, launch_unchecked, output_shape, staged_launch};
        pub use crate::launch::operand::ArrayArg;
        pub use crate::launch::signature::ReductionSignature;
    }

    /// Compiling with NVRTC directly (the benchmark's ceilings).
    pub mod nvrtc {
        pub use crate::nvrtc::*;
        pub use crate::nvrtc::program::{Compiled, Program, compile, effective_options};
    }

    /// The kernel cache's layers (the command line's tests write entries through them).
    pub mod cache {
        pub use crate::cache::*;
        pub use crate::cache::kernel_cache::KernelCache;
        pub use crate::cache::entry::{CompiledImage, ImageKind};
        pub use crate::cache::key::KeyInputs;
    }
}
