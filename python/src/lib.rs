//! Rust kernels written with cuprum as a Python extension module (pyo3): arguments from any
//! Python array, results that torch, CuPy and NumPy take without a copy, launches on the caller's
//! stream. `examples/python` is a complete package; docs/interop.md, "From Python", the guide.
//!
//! ```ignore
//! use cuprum_python::{Input, Tensor, launch};
//! use pyo3::prelude::*;
//!
//! #[pyfunction]
//! fn squared_diff(x: Input<f32>, y: Input<f32>) -> PyResult<Tensor> {
//!     launch(&[x.stream(), y.stream()], || Tensor::new(kernels::squared_diff::call(&*x, &*y)?))
//! }
//!
//! #[pymodule]
//! fn my_kernels(m: &Bound<'_, PyModule>) -> PyResult<()> {
//!     cuprum_python::register(m)?;
//!     m.add_function(wrap_pyfunction!(squared_diff, m)?)
//! }
//! ```
//!
//! - **Arguments** ([`Input<T>`], [`AnyInput`]; [`import`] underneath): a [`Tensor`], a plain torch
//!   tensor on a GPU (read through DLPack's C exchange API, or its attributes before torch 2.10:
//!   no capsule), an object
//!   with `__dlpack__` (torch, CuPy, JAX, NumPy >= 1.22 on the CPU device; called with the
//!   caller's stream and `max_version=(1, 0)`, then without `max_version` for older producers),
//!   or one with `__cuda_array_interface__` (versions 2 and 3; the producer's `stream` is waited
//!   for unless `CUPY_CUDA_ARRAY_INTERFACE_SYNC=0`), as a zero-copy [`Array<T>`](cuprum::Array)
//!   view that keeps the producer's memory alive. A wrong dtype is a `TypeError` naming the
//!   expected one, memory cuprum cannot take (device, strides) a `ValueError`.
//! - **Streams** ([`stream`]): torch's current stream for a torch tensor, CuPy's for a CuPy array,
//!   else the legacy default stream; [`launch`] makes it current, and no call synchronizes the
//!   device.
//! - **Results** ([`Tensor`]): `__dlpack__`, `__dlpack_device__`, `__cuda_array_interface__`,
//!   `shape`, `dtype` (a NumPy type string).
//! - **Errors** ([`CuprumError`], a `RuntimeError`): cuprum's errors and Rust panics in
//!   [`launch`], with their messages.
#![warn(missing_docs)]

mod any_array;
mod cai;
mod call;
mod capsule;
pub mod dtype;
mod error;
mod exchange;
mod import;
pub mod stream;
mod tensor;
mod torch;

pub use any_array::AnyArray;
pub use call::{AnyInput, Input, launch};
pub use error::{CuprumError, to_py_err};
pub use import::import;
pub use tensor::Tensor;

use pyo3::prelude::*;

/// Adds [`Tensor`], [`CuprumError`] and `stats()` to an extension module (call it in the `#[pymodule]`).
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // The first call usually follows the import at once, on a context torch or CuPy made (a fast
    // device open): prepare what first calls need now, in the background.
    cuprum::runtime::device::warm_up();
    m.add_class::<Tensor>()?;
    m.add_function(wrap_pyfunction!(stats, m)?)?;
    m.add("CuprumError", m.py().get_type::<CuprumError>())
}

/// What [`with_dtype!`] names; not API.
#[doc(hidden)]
pub mod __private {
    pub use cuprum::prelude::{Complex, bf16, f16, f8e4m3, f8e5m2};
    pub use cuprum::runtime::DType;
}

/// stats() -> dict: cuprum's kernel-lookup counters in this process (`cuprum::runtime::stats`):
/// `aot` (served by the embedded fat binaries), `loaded`, `memory`, `disk`, `nvrtc` (compiles),
/// `module_loads`, and the times `compile_s` and `module_load_s`. What a first call cost and
/// whether NVRTC ran. Also `torch_exchange_imports`: the torch tensors read through DLPack's C
/// exchange API (torch >= 2.10), the fast path of a call from torch.
#[pyfunction]
fn stats(py: Python<'_>) -> PyResult<Bound<'_, pyo3::types::PyDict>> {
    let s = cuprum::runtime::stats::snapshot();
    let d = pyo3::types::PyDict::new(py);
    d.set_item("aot", s.aot)?;
    d.set_item("loaded", s.loaded)?;
    d.set_item("memory", s.memory)?;
    d.set_item("disk", s.disk)?;
    d.set_item("nvrtc", s.nvrtc)?;
    d.set_item("compile_s", s.compile_time.as_secs_f64())?;
    d.set_item("module_loads", s.module_loads)?;
    d.set_item("module_load_s", s.module_load_time.as_secs_f64())?;
    d.set_item("torch_exchange_imports", torch::exchanged())?;
    Ok(d)
}
