//! The kernel language on the CPU device (docs/cpu.md, "Raw kernels on the CPU"): what the host
//! copy of a `#[rawkernel]` (and of a `#[device]` function) calls in place of the prelude.
//!
//! The macros write, next to a kernel's CUDA code, a copy of its function in which slice and
//! view parameters are [`Slice`] and [`View`] handles, every `a[i]` of one is [`Load::load`] and
//! every `a[i] = v` [`Store::store`], and every intrinsic is this module's function of the same
//! name: these read the CUDA thread the host thread runs now (the private `context` module), and
//! `sync_threads()`, `sync_warp()`, the shuffles and the warp's tensor operations suspend it so that the grid runner
//! (`cpu::grid`) can run the other threads of its block or warp up to the same point.

mod atomics;
mod collective;
pub(crate) mod context;
mod hopper;
mod local;
mod memory;
mod tensor;
mod threads;
mod warp;

pub use atomics::*;
pub use collective::*;
pub use hopper::*;
#[doc(hidden)]
pub use context::{InFunction, in_function};
pub use local::{LocalIndex, local_get, local_slot};
/// The error functions read no thread state: the prelude's own.
pub use crate::lang::special::{erf, erfc, erfcinv, erfinv, normcdf, normcdfinv};
pub use memory::{Load, Slice, Store, View, dynamic_shared, load4, shared_array, store4};
pub(crate) use memory::{atomic_width, zero};
pub use tensor::*;
pub use threads::*;
pub use warp::*;

/// `Complex::new(re, im)`.
pub use num_complex::Complex;
