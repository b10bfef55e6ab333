//! cuprum's runtime: the array type, devices, streams, the memory pool, kernel launches, the NVRTC
//! JIT and the kernel cache (docs/architecture.md), plus the host side of the kernel language
//! ([`prelude`]).
//!
//! The public API is what users may use: the types at the root, [`prelude`], and the modules
//! [`array`](mod@array), [`audit`], [`cache`], [`device`], [`elementwise`], [`reduction`],
//! [`nccl`], [`nvrtc`], [`stats`], [`testing`] and [`tuning`]. Everything else is private or `pub(crate)`; what
//! macro-generated code needs is re-exported, item by item, under the hidden `__private` module
//! only, and what the workspace's benchmarks, command line and tests use beyond it under the
//! hidden `__workspace` (docs/architecture.md, The crates); the tests of the internals are this
//! crate's unit tests (`src/tests/`).
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
//! - `device`, `stream`, `memory/`: devices and contexts, streams and events, the pool;
//!   `tuning/`: tuned launch sites, their embedded tuning files and the tuner (docs/tuning.md).
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
//! - `raw_kernel`: `RawKernel`; `registry/`: the unit table, `Kernel` (with its signature), which
//!   layer served what; `rawkernel`: the checks of `#[rawkernel]` launch functions.
//! - `elementwise/`, `reduction/`: the erased launches, `ElementwiseKernel`, `ReductionKernel`,
//!   `ReductionCall`, the array reductions (`Reductions`).
//! - `ops/`: the array operators and functions on the built-in elementwise kernels (one file per
//!   concept); `random`: the counter-based generator (`Generator`); `linalg/`: the matrix products
//!   (`matmul`, `dot`, ...: cuBLAS on a GPU, matrixmultiply on the CPU device); `nccl/`: NCCL's
//!   collectives on arrays (`Communicator`, `group`; libnccl loaded at run time); `audit`.
//! - `kernels/` (outside `src/`): the built-in kernels, written with cuprum's own macros
//!   (`#[elementwise(crate = crate)]`) and precompiled by build.rs; `elementwise.rs`, `math.rs`,
//!   `logic.rs` and `bitwise.rs` are modules of `ops`, `random.rs` of `random`, `reductions.rs`
//!   of `reduction::array`, `matmul.rs` of `linalg::integer`. `__private` is what generated
//!   code names.

#![warn(missing_docs)]

mod sync;
mod inline_list;
pub mod stats;
mod elem_type;
mod dim3;
mod error;
mod env;
mod capture;
mod culib;
mod driver;
mod bounds;

mod fault;

pub mod device;
mod stream;
mod memory;
mod graph;
pub mod tuning;

mod repr;
mod element;
mod scalar;

pub mod cache;
pub mod nvrtc;
mod module;
mod function;

pub mod array;
pub mod dlpack;
mod tensor_map;
mod lang;

mod launch;
mod cpu;
mod raw_kernel;
mod registry;
mod rawkernel;
mod fuse;

pub mod elementwise;
pub mod reduction;

mod ops;
pub mod random;
mod take;
mod scan;
mod counting;
mod search;
mod nonzero;
mod sort;
mod unique;
mod linalg;
pub mod nccl;
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
pub use search::Side;
pub use unique::Unique;
pub use device::{Device, DeviceGuard};
pub use element::{Element, ElemType, StructType};
pub use error::{Error, Fault, Result};
pub use memory::{DeviceBuffer, MemoryPool};
pub use stream::{Event, Stream, StreamGuard, StreamKind};
pub use graph::Graph;
pub use function::{CoResidency, KernelAttributes, KernelFunction, LaunchLimits};
pub use raw_kernel::RawKernel;
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
/// `__cuprum` in each kernel's module; docs/architecture.md, The crates): the one list of the
/// items the code generator (`compiler/src/expand/`) emits, by name, as cxx's `private` module
/// lists what its generated code names. None of it is API: it changes with the code generator.
/// Two modules are re-exported whole because generated code names their items by the kernel
/// language's own names: `cpu::lang` (every intrinsic and memory handle of the CPU device, by
/// the intrinsic's name) and `lang::kernel_ops` (each operator of a host body, by its trait
/// method's name). The runtime's own kernels (`kernels/`) are written
/// `#[elementwise(crate = crate)]` and so name `crate::__private`; the facade re-exports this
/// module as `cuprum::__private`, the macros' default. What the workspace's benchmarks, command
/// line and tests use beyond this is [`__workspace`].
#[doc(hidden)]
pub mod __private {
    pub use crate::{
        Array, DType, DeviceRepr, ElemType, Element, LaunchConfig, Number, Real, ReductionCall, Result, Scalar, Stream,
        StructType, TensorMap,
    };
    pub use inventory;

    /// The CPU device's ordinal (a `#[rawkernel]`'s launch picks its device).
    pub mod device {
        pub use crate::device::CPU_ORDINAL;
    }

    /// The unit table and each kernel's record in it.
    pub mod registry {
        pub use crate::registry::{Kernel, KernelEntry, KernelUnit, UnitEntry, UnitRef};
    }

    /// The launch of a `#[rawkernel]` on a GPU, the signatures kernels are generated with and the
    /// erased operands.
    pub mod launch {
        pub use crate::launch::{launch, launch_cooperative};

        /// A kernel's signature.
        pub mod signature {
            pub use crate::launch::signature::{Param, ParamType, ReductionSignature, Role, Signature};
        }

        /// The erased operands.
        pub mod operand {
            pub use crate::launch::operand::{Arg, ArrayArg};
        }
    }

    /// The CPU device: the loops host entries run on, the grids of raw kernels, and its kernel
    /// language (whole: named by intrinsic).
    pub mod cpu {
        pub use crate::cpu::lang;
        pub use crate::cpu::{Element, ElementLoop, HostEntry, ReduceLoop, Run};

        /// The grids of raw kernels on the CPU device.
        pub mod grid {
            pub use crate::cpu::grid::{BlockRun, Grid, co_residency};
        }
    }

    /// The checks and argument conversions of `#[rawkernel]` launch functions (on the CPU device,
    /// `cpu::args`).
    pub mod rawkernel {
        pub use crate::cpu::args::{cpu_slice, cpu_tensor_map, cpu_view};
        pub use crate::rawkernel::{byte_span, check_read_only, launch_device, slice_arg, tensor_map_arg, view_arg};
    }

    /// The row plan of a row-wise `#[fuse]` kernel.
    pub mod fuse {
        pub use crate::fuse::{RowPlan, contiguous};
    }

    /// The kernel language's host definitions that host bodies name: the operators (whole: named
    /// by operator), the index of the running element, the scalar types and `Raw`.
    pub mod lang {
        pub use crate::lang::kernel_ops;

        /// The element index a host body's `index()` reads.
        pub mod intrinsics {
            pub use crate::lang::intrinsics::{with_elementwise_index, with_reduce_index};
        }

        /// The scalar types that are not primitive.
        pub mod prelude {
            pub use crate::lang::prelude::{Complex, bf16, f16, f8e4m3, f8e5m2};
        }

        /// `raw` arguments.
        pub mod views {
            pub use crate::lang::views::Raw;
        }
    }

    /// The erased elementwise launch.
    pub mod elementwise {
        pub use crate::elementwise::launch::{broadcast_shape, launch, output_stream};
        pub use crate::elementwise::{Input, Options};
        pub use crate::launch::operand::{Arg, ArrayArg};
    }
}

/// The hooks the workspace's own crates use beyond [`__private`]: the benchmarks (`benches/`:
/// the erased launches in stages, NVRTC directly, the unit table's `served`), the command line
/// (`cli/`: the environment variables it lists, the cache's layers its tests write entries
/// through) and the tests (`runtime/tests/`, `testsuite/tests/`). Not for generated code, and
/// not API; the facade re-exports it as `cuprum::__workspace`.
#[doc(hidden)]
pub mod __workspace {
    /// The environment variables the runtime reads (`cuprum info` lists them).
    pub mod env {
        pub use crate::env::*;
    }

    /// The unit table, which layer served what, and the parts of embedded units.
    pub mod registry {
        pub use crate::registry::{Kernel, KernelUnit, ReductionSignature, Served, Signature, UnitRef, part, served};
    }

    /// The raw launch and the signatures.
    pub mod launch {
        pub use crate::launch::launch;

        /// A kernel's signature.
        pub mod signature {
            pub use crate::launch::signature::{Param, ParamType, ReductionSignature, Role, Signature};
        }
    }

    /// The erased elementwise launch, whole and in stages (`staged_launch`, `host_work_only`),
    /// with the public `elementwise` items.
    pub mod elementwise {
        pub use crate::elementwise::launch::{broadcast_shape, host_work_only, launch, launch_unchecked, output_stream, staged_launch};
        pub use crate::elementwise::*;
        pub use crate::launch::operand::{Arg, ArrayArg};
        pub use crate::launch::signature::{Param, ParamType, Role};
    }

    /// The erased reduction launch, whole and in stages, with the public `reduction` items.
    pub mod reduction {
        pub use crate::launch::operand::ArrayArg;
        pub use crate::launch::signature::ReductionSignature;
        pub use crate::reduction::launch::{Options, host_work_only, launch, launch_unchecked, output_shape, staged_launch};
        pub use crate::reduction::*;
    }

    /// The row plan of a row-wise `#[fuse]` kernel.
    pub mod fuse {
        pub use crate::fuse::RowPlan;
    }

    /// The tensor-core helpers' host rounding.
    pub mod lang {
        /// `round_tf32`.
        pub mod tensor {
            pub use crate::lang::tensor::round_tf32;
        }
    }

    /// Compiling with NVRTC directly (the benchmark's ceilings), with the public `nvrtc` items.
    pub mod nvrtc {
        pub use crate::nvrtc::program::{Compiled, Program, compile, effective_options, embedded_headers_digest};
        pub use crate::nvrtc::*;
    }

    /// The kernel cache's layers (the command line's tests write entries through them), with the
    /// public `cache` items.
    pub mod cache {
        pub use crate::cache::disk::{DiskCache, Lookup};
        pub use crate::cache::entry::{CompiledImage, ImageKind};
        pub use crate::cache::kernel_cache::KernelCache;
        pub use crate::cache::key::{CacheKey, KeyInputs, headers_digest};
        pub use crate::cache::*;
    }
}
