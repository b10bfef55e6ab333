//! [`Tensor`]: a kernel's result as a Python object that torch, CuPy and NumPy take without a
//! copy (`__dlpack__`, `__dlpack_device__`, `__cuda_array_interface__`).

use cuprum::runtime::dlpack::ffi::{KDL_CPU, KDL_CUDA};
use cuprum::runtime::{Array, Scalar, Stream};
use pyo3::exceptions::{PyBufferError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::any_array::AnyArray;
use crate::call::current_call;
use crate::dtype::{python_name, typestr};
use crate::error::to_py_err;
use crate::stream::{CallerStream, foreign, order_after};
use crate::{cai, capsule};

/// A cuprum array handed to Python, and the stream it was produced on. Consumers take it
/// without a copy: `torch.from_dlpack(t)`, `cupy.from_dlpack(t)`, `cupy.asarray(t)` (the CUDA
/// Array Interface), `numpy.from_dlpack(t)` (on the CPU device). Each consumer's view keeps
/// the elements alive after the `Tensor` is gone.
#[pyclass(module = "cuprum", name = "Tensor", frozen)]
pub struct Tensor {
    array: AnyArray,
    stream: CallerStream,
}

impl Tensor {
    /// A result produced by work queued on the current stream of the array's device: inside
    /// [`launch`](crate::launch), the caller's stream.
    pub fn new<T: Scalar + Send + Sync + 'static>(array: Array<T>) -> cuprum::Result<Tensor> {
        Tensor::from_any(AnyArray::new(array))
    }

    /// As [`Tensor::new`], for an array of any dtype.
    pub fn from_any(array: AnyArray) -> cuprum::Result<Tensor> {
        let stream = match current_call() {
            Some(c) if c.stream.device() == array.device() => c,
            _ => CallerStream { stream: Stream::current_for(array.device())?, owner: None, own: false },
        };
        Ok(Tensor { array, stream })
    }

    /// The array (dtype erased).
    pub fn array(&self) -> &AnyArray {
        &self.array
    }

    /// The stream the array was produced on.
    pub fn caller_stream(&self) -> &CallerStream {
        &self.stream
    }

    /// `(device type, device id)` as DLPack numbers them.
    fn dl_device(&self) -> (i32, i32) {
        let d = self.array.device();
        if d.is_cpu() { (KDL_CPU, 0) } else { (KDL_CUDA, d.ordinal() as i32) }
    }
}

#[pymethods]
impl Tensor {
    /// The extent of each axis.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.array.shape())
    }

    /// The strides in bytes (NumPy's convention).
    #[getter]
    fn strides<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let size = (self.array.dtype().bits() / 8).max(1) as isize;
        PyTuple::new(py, self.array.strides().iter().map(|s| s * size))
    }

    /// The number of axes.
    #[getter]
    fn ndim(&self) -> usize {
        self.array.ndim()
    }

    /// The dtype as a NumPy type string (`<f4`, `|b1`, `<c8`; `bfloat16` has none and is named).
    #[getter]
    fn dtype(&self) -> &'static str {
        typestr(self.array.dtype()).unwrap_or("bfloat16")
    }

    /// The address of the first element.
    #[getter]
    fn data_ptr(&self) -> u64 {
        self.array.data_ptr()
    }

    fn __repr__(&self) -> String {
        let device = if self.array.device().is_cpu() { "cpu".to_string() } else { format!("cuda:{}", self.array.device().ordinal()) };
        format!("cuprum.Tensor(shape={:?}, dtype={}, device={device})", self.array.shape(), python_name(self.array.dtype()))
    }

    fn __len__(&self) -> PyResult<usize> {
        self.array.shape().first().copied().ok_or_else(|| pyo3::exceptions::PyTypeError::new_err("len() of a 0-d tensor"))
    }

    /// DLPack's device of the elements: `(2, ordinal)` on a GPU (kDLCUDA), `(1, 0)` on the CPU device.
    fn __dlpack_device__(&self) -> (i32, i32) {
        self.dl_device()
    }

    /// A DLPack capsule viewing the elements (the DLPack Python specification; the array API's
    /// `__dlpack__`). `stream`: the consumer's stream, which is made to wait for the work that
    /// produced the result (None: the legacy default stream; -1: no ordering); `max_version`
    /// `(1, x)` or higher gives a versioned capsule, else a legacy one; `dl_device` other than
    /// this device is refused (`BufferError`); `copy=True` exports a copy.
    #[pyo3(signature = (stream=None, *, max_version=None, dl_device=None, copy=None))]
    fn __dlpack__(
        &self,
        py: Python<'_>,
        stream: Option<i64>,
        max_version: Option<(u32, u32)>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Py<PyAny>> {
        if let Some(d) = dl_device
            && d != self.dl_device()
        {
            return Err(PyBufferError::new_err(format!(
                "__dlpack__: cannot export to DLPack device {d:?}; the tensor is on {:?} (copy it there with its consumer)",
                self.dl_device()
            )));
        }
        let device = self.array.device();
        if device.is_cpu() {
            if stream.is_some_and(|s| s != -1) {
                return Err(PyValueError::new_err("__dlpack__: stream must be None for an array on the CPU device"));
            }
        } else {
            match stream {
                Some(-1) => {}
                Some(0) => return Err(PyValueError::new_err("__dlpack__: stream 0 is disallowed (ambiguous); 1 is the legacy default stream")),
                Some(n) if n < -1 => return Err(PyValueError::new_err(format!("__dlpack__: stream {n} is not a stream"))),
                other => order_after(&foreign(device, other.unwrap_or(1) as u64)?, &self.stream.stream)?,
            }
        }
        let versioned = max_version.is_some_and(|(major, _)| major >= 1);
        if copy == Some(true) {
            let _on = self.stream.stream.use_scoped();
            let copied = self.array.copy().map_err(to_py_err)?;
            return capsule::export(py, &copied, versioned);
        }
        capsule::export(py, &self.array, versioned)
    }

    /// The CUDA Array Interface (version 3, with the producing stream;
    /// `CUPY_CUDA_ARRAY_INTERFACE_EXPORT_VERSION=2`: version 2, the stream synchronized first).
    /// An `AttributeError` on the CPU device.
    #[getter]
    fn __cuda_array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        cai::export(py, &self.array, &self.stream.stream)
    }
}

impl std::fmt::Debug for Tensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tensor({:?}, {:?})", self.array, self.stream)
    }
}
