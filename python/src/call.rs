//! A kernel wrapper's arguments ([`Input`], [`AnyInput`]) and its launch ([`launch`]): on the
//! caller's stream, with cuprum's errors and Rust panics as Python exceptions.

use std::cell::RefCell;
use std::ops::{Deref, DerefMut};
use std::panic::{AssertUnwindSafe, catch_unwind};

use cuprum::runtime::{Array, DType, Scalar};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::any_array::AnyArray;
use crate::error::{panic_to_py_err, to_py_err};
use crate::import::import;
use crate::stream::{CallerStream, order_after};

/// An argument of dtype `T` from any Python array ([`import`](crate::import)): a zero-copy view,
/// and the caller's stream for it. Dereferences to the [`Array<T>`]. A `TypeError` names the
/// expected dtype when the array has another one.
pub struct Input<T: Scalar> {
    array: Array<T>,
    stream: CallerStream,
}

impl<T: Scalar + 'static> Input<T> {
    /// The array (a view of the caller's memory).
    pub fn array(&self) -> &Array<T> {
        &self.array
    }

    /// The caller's stream for this argument (what [`launch`] runs on).
    pub fn stream(&self) -> &CallerStream {
        &self.stream
    }

    /// A `ValueError` naming `name` unless the array has `ndim` axes.
    pub fn expect_ndim(&self, name: &str, ndim: usize) -> PyResult<()> {
        expect_ndim(name, self.array.shape(), ndim)
    }
}

impl<T: Scalar> Deref for Input<T> {
    type Target = Array<T>;
    fn deref(&self) -> &Array<T> {
        &self.array
    }
}

impl<T: Scalar> DerefMut for Input<T> {
    fn deref_mut(&mut self) -> &mut Array<T> {
        &mut self.array
    }
}

impl<T: Scalar> std::fmt::Debug for Input<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Input({:?}, {:?})", self.array, self.stream)
    }
}

impl<'py, T: Scalar + Send + Sync + 'static> FromPyObject<'py> for Input<T> {
    fn extract_bound(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        let (array, stream) = import(obj, None)?;
        Ok(Input { array: array.typed::<T>()?, stream })
    }
}

/// An argument of any dtype from any Python array: dispatch on [`dtype`](Self::dtype) with
/// [`with_dtype!`](crate::with_dtype), then take the typed view with [`array`](Self::array).
#[derive(Debug)]
pub struct AnyInput {
    array: AnyArray,
    stream: CallerStream,
}

impl AnyInput {
    /// The dtype of the elements.
    pub fn dtype(&self) -> DType {
        self.array.dtype()
    }

    /// The array, dtype erased.
    pub fn any_array(&self) -> &AnyArray {
        &self.array
    }

    /// The array as `Array<T>` (a view); a `TypeError` naming both dtypes if it is not of `T`.
    pub fn array<T: Scalar + 'static>(&self) -> PyResult<Array<T>> {
        self.array.typed::<T>()
    }

    /// The caller's stream for this argument.
    pub fn stream(&self) -> &CallerStream {
        &self.stream
    }

    /// A `ValueError` naming `name` unless the array has `ndim` axes.
    pub fn expect_ndim(&self, name: &str, ndim: usize) -> PyResult<()> {
        expect_ndim(name, self.array.shape(), ndim)
    }
}

impl<'py> FromPyObject<'py> for AnyInput {
    fn extract_bound(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        let (array, stream) = import(obj, None)?;
        Ok(AnyInput { array, stream })
    }
}

fn expect_ndim(name: &str, shape: &[usize], ndim: usize) -> PyResult<()> {
    if shape.len() == ndim {
        return Ok(());
    }
    Err(PyValueError::new_err(format!("{name}: expected an array of {ndim} dimensions, got shape {shape:?} ({} dimensions)", shape.len())))
}

thread_local! {
    /// The caller's stream of the [`launch`] running on this thread (for [`Tensor::new`](crate::Tensor::new)).
    static CALL: RefCell<Vec<CallerStream>> = const { RefCell::new(Vec::new()) };
}

/// The caller's stream of the innermost [`launch`] on this thread, if any.
pub(crate) fn current_call() -> Option<CallerStream> {
    CALL.with(|c| c.borrow().last().cloned())
}

/// Pops the launch's entry of [`CALL`] when the launch ends (also by a panic).
struct CallEntry;

impl Drop for CallEntry {
    fn drop(&mut self) {
        CALL.with(|c| c.borrow_mut().pop());
    }
}

/// Runs `f` (a kernel wrapper's body: launches, a result) on the caller's stream, the first of
/// `streams` (each argument's [`Input::stream`]); that stream first waits for the others where
/// they differ (arguments from two libraries). Its device and stream are current while `f` runs,
/// so launches without a stream argument go there, and [`Tensor::new`](crate::Tensor::new)
/// results remember it. There is no device-wide synchronization: the caller's framework orders its
/// later work on that stream after the kernels. A [`cuprum::Error`] becomes a `CuprumError`, and so
/// does a Rust panic inside `f` (with its message).
pub fn launch<R>(streams: &[&CallerStream], f: impl FnOnce() -> cuprum::Result<R>) -> PyResult<R> {
    let Some(first) = streams.first() else {
        return catch(f);
    };
    for other in &streams[1..] {
        if other.stream.device() != first.stream.device() {
            return Err(PyValueError::new_err(format!(
                "the arguments are on two devices ({} and {}): move them to one first",
                device_name(first),
                device_name(other)
            )));
        }
        order_after(&first.stream, &other.stream)?;
    }
    let _device = first.stream.device().use_scoped().map_err(to_py_err)?;
    let _stream = first.stream.use_scoped();
    CALL.with(|c| c.borrow_mut().push((*first).clone()));
    let _entry = CallEntry;
    catch(f)
}

fn device_name(s: &CallerStream) -> String {
    if s.stream.device().is_cpu() { "the CPU".to_string() } else { format!("GPU {}", s.stream.device().ordinal()) }
}

fn catch<R>(f: impl FnOnce() -> cuprum::Result<R>) -> PyResult<R> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r.map_err(to_py_err),
        Err(payload) => Err(panic_to_py_err(payload)),
    }
}
