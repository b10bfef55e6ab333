//! cuprum's errors and Rust panics as Python exceptions.
//!
//! A [`cuprum::Error`] becomes a `CuprumError` (a subclass of `RuntimeError`) carrying cuprum's
//! message; a panic inside [`launch`](crate::launch) becomes a `CuprumError` too, naming the panic's
//! message, instead of pyo3's `PanicException` (a `BaseException` that `except Exception` misses).

use std::any::Any;

use pyo3::PyErr;
use pyo3::exceptions::PyRuntimeError;

pyo3::create_exception!(
    cuprum,
    CuprumError,
    PyRuntimeError,
    "An error of cuprum (a launch, a device, an array operation) or a Rust panic in a kernel wrapper."
);

/// The Python exception for a cuprum error: a `CuprumError` with cuprum's message.
pub fn to_py_err(e: cuprum::Error) -> PyErr {
    CuprumError::new_err(e.to_string())
}

/// The Python exception for a caught Rust panic: a `CuprumError` naming the panic's message.
pub(crate) fn panic_to_py_err(payload: Box<dyn Any + Send>) -> PyErr {
    let message = if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    };
    CuprumError::new_err(format!("a Rust panic in a cuprum kernel wrapper: {message}"))
}
