//! `cuprum_example`: cuprum kernels (src/kernels.rs) as a Python extension module. Each function
//! takes any Python array (torch, CuPy, JAX, NumPy on the CPU device) without a copy, launches on
//! the caller's current stream, and returns a `cuprum.Tensor` that torch, CuPy and NumPy take
//! without a copy (README.md; docs/interop.md, "From Python").

mod kernels;

use cuprum::prelude::f16;
use cuprum::runtime::{DType, LaunchConfig};
use cuprum_python::dtype::python_name;
use cuprum_python::{AnyInput, Input, Tensor, launch, with_dtype};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

/// A `TypeError` for a dtype a function does not take.
fn unsupported(function: &str, expected: &str, got: DType) -> PyErr {
    PyTypeError::new_err(format!("{function}: expected {expected} arrays, got {}", python_name(got)))
}

/// squared_diff(x, y) -> Tensor: (x - y) ** 2 element by element, broadcasting x against y
/// (float16, float32 or float64, both of one dtype).
#[pyfunction]
fn squared_diff(x: AnyInput, y: AnyInput) -> PyResult<Tensor> {
    macro_rules! run {
        ($t:ty) => {{
            let (a, b) = (x.array::<$t>()?, y.array::<$t>()?);
            launch(&[x.stream(), y.stream()], || Tensor::new(kernels::squared_diff::call(&a, &b)?))
        }};
    }
    match x.dtype() {
        DType::F16 => run!(f16),
        DType::F32 => run!(f32),
        DType::F64 => run!(f64),
        d => Err(unsupported("squared_diff", "float16, float32 or float64", d)),
    }
}

/// l2norm(x, axis=None) -> Tensor: the L2 norm of a float32 array along `axis` (all axes when
/// None), as float64.
#[pyfunction]
#[pyo3(signature = (x, axis=None))]
fn l2norm(x: Input<f32>, axis: Option<isize>) -> PyResult<Tensor> {
    launch(&[x.stream()], || {
        let call = kernels::l2norm::call(&*x);
        let call = match axis {
            Some(a) => call.axis(a),
            None => call,
        };
        Tensor::new(call.run()?)
    })
}

/// softmax(x) -> Tensor: the softmax of each row of a 2-d float32 or float64 array, fused into
/// one kernel.
#[pyfunction]
fn softmax(x: AnyInput) -> PyResult<Tensor> {
    x.expect_ndim("softmax", 2)?;
    macro_rules! run {
        ($t:ty) => {{
            let a = x.array::<$t>()?;
            launch(&[x.stream()], || Tensor::new(kernels::softmax::call(&a)?))
        }};
    }
    match x.dtype() {
        DType::F32 => run!(f32),
        DType::F64 => run!(f64),
        d => Err(unsupported("softmax", "float32 or float64", d)),
    }
}

/// axpy(a, x, y) -> None: y += a * x in place (a raw kernel writing into the caller's float32
/// array; both contiguous, of one length).
#[pyfunction]
fn axpy(a: f32, x: Input<f32>, mut y: Input<f32>) -> PyResult<()> {
    if x.shape() != y.shape() {
        return Err(PyValueError::new_err(format!("axpy: x has shape {:?}, y {:?}: they must match", x.shape(), y.shape())));
    }
    let config = LaunchConfig::for_elements(y.len(), 256);
    let streams = [y.stream().clone(), x.stream().clone()];
    launch(&[&streams[0], &streams[1]], || kernels::axpy::launch(&config, a, &x, &mut y))
}

/// copy(x) -> Tensor: a C-contiguous copy of an array of any dtype (cuprum's built-in copy
/// kernel).
#[pyfunction]
fn copy(x: AnyInput) -> PyResult<Tensor> {
    with_dtype!(x.dtype(), |T| {
        let a = x.array::<T>()?;
        launch(&[x.stream()], || Tensor::new(a.copy()?))
    })
}

/// view(x) -> Tensor: the same elements as a cuprum Tensor, no kernel and no copy (what an
/// argument becomes and a result is, end to end).
#[pyfunction]
fn view(x: AnyInput) -> PyResult<Tensor> {
    launch(&[x.stream()], || Tensor::from_any(x.any_array().clone()))
}

/// _panic(message): panics in Rust inside a kernel wrapper (the tests check that Python gets a
/// `CuprumError`, not an abort).
#[pyfunction]
fn _panic(message: String) -> PyResult<()> {
    launch(&[], || -> cuprum::runtime::Result<()> { panic!("{message}") })
}

/// The extension module.
#[pymodule]
fn cuprum_example(m: &Bound<'_, PyModule>) -> PyResult<()> {
    cuprum_python::register(m)?;
    m.add_function(wrap_pyfunction!(squared_diff, m)?)?;
    m.add_function(wrap_pyfunction!(l2norm, m)?)?;
    m.add_function(wrap_pyfunction!(softmax, m)?)?;
    m.add_function(wrap_pyfunction!(axpy, m)?)?;
    m.add_function(wrap_pyfunction!(copy, m)?)?;
    m.add_function(wrap_pyfunction!(view, m)?)?;
    m.add_function(wrap_pyfunction!(_panic, m)?)?;
    Ok(())
}
