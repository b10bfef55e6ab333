//! A torch tensor on a CUDA device as a cuprum array read through torch's own attributes
//! (`data_ptr()`, `shape`, `stride()`, `dtype`), without the DLPack exchange: `__dlpack__` and its
//! capsule cost about 3 us per argument, these reads about half a microsecond (docs/interop.md,
//! "What it costs"). The view keeps the tensor object, and so its storage, alive, as the CUDA Array
//! Interface's consumers do.
//!
//! Only plain tensors take this path: the exact types `torch.Tensor` and `torch.nn.Parameter`, in
//! the strided layout, on a CUDA device, with no pending conjugation or negation, not requiring a
//! gradient and not empty. Anything else (subclasses with `__torch_function__`, CPU tensors,
//! sparse layouts, tensors that require a gradient, which torch's own `__dlpack__` refuses)
//! returns `None` and goes through DLPack, so that torch gives its own answer.

use cuprum::runtime::{Array, DType, Device};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyType};

use crate::any_array::AnyArray;
use crate::error::to_py_err;

/// torch's objects the check compares by identity, read once torch is imported.
struct Torch {
    tensor: Py<PyType>,
    parameter: Py<PyType>,
    strided: Py<PyAny>,
    dtypes: Vec<(Py<PyAny>, DType)>,
}

/// The [`Torch`] objects when the process has imported torch (`None` before: this module never
/// imports torch itself).
fn torch(py: Python<'_>) -> PyResult<Option<&Torch>> {
    static TORCH: PyOnceLock<Torch> = PyOnceLock::new();
    static MODULES: PyOnceLock<Py<PyDict>> = PyOnceLock::new();
    if let Some(t) = TORCH.get(py) {
        return Ok(Some(t));
    }
    let modules = MODULES.get_or_try_init(py, || -> PyResult<Py<PyDict>> {
        Ok(py.import("sys")?.getattr("modules")?.downcast_into::<PyDict>()?.unbind())
    })?;
    let Some(module) = modules.bind(py).get_item("torch")? else {
        return Ok(None);
    };
    let names = [
        ("bool", DType::Bool),
        ("int8", DType::I8),
        ("int16", DType::I16),
        ("int32", DType::I32),
        ("int64", DType::I64),
        ("uint8", DType::U8),
        ("uint16", DType::U16),
        ("uint32", DType::U32),
        ("uint64", DType::U64),
        ("float16", DType::F16),
        ("bfloat16", DType::BF16),
        ("float32", DType::F32),
        ("float64", DType::F64),
        ("complex64", DType::C32),
        ("complex128", DType::C64),
        ("float8_e4m3fn", DType::F8E4M3),
        ("float8_e5m2", DType::F8E5M2),
    ];
    let mut dtypes = Vec::new();
    for (name, dtype) in names {
        // torch before 2.3 has no uint16/32/64: those tensors then go through DLPack.
        if let Ok(d) = module.getattr(name) {
            dtypes.push((d.unbind(), dtype));
        }
    }
    let t = Torch {
        tensor: module.getattr("Tensor")?.downcast_into::<PyType>()?.unbind(),
        parameter: module.getattr("nn")?.getattr("Parameter")?.downcast_into::<PyType>()?.unbind(),
        strided: module.getattr("strided")?.unbind(),
        dtypes,
    };
    Ok(Some(TORCH.get_or_init(py, || t)))
}

/// `obj` as a cuprum view when it is a plain torch tensor on a CUDA device ([the module
/// doc](self)), with its device; `None` for anything else.
pub(crate) fn import(obj: &Bound<'_, PyAny>) -> PyResult<Option<(AnyArray, Device)>> {
    let py = obj.py();
    let Some(torch) = torch(py)? else {
        return Ok(None);
    };
    let ty = obj.get_type();
    if !(ty.is(torch.tensor.bind(py)) || ty.is(torch.parameter.bind(py))) {
        return Ok(None);
    }
    if !obj.getattr(intern!(py, "is_cuda"))?.is_truthy()?
        || !obj.getattr(intern!(py, "layout"))?.is(torch.strided.bind(py))
        || obj.getattr(intern!(py, "requires_grad"))?.is_truthy()?
    {
        return Ok(None);
    }
    let dtype_obj = obj.getattr(intern!(py, "dtype"))?;
    let Some(dtype) = torch.dtypes.iter().find(|(d, _)| dtype_obj.is(d.bind(py))).map(|(_, t)| *t) else {
        return Ok(None);
    };
    if obj.call_method0(intern!(py, "is_neg"))?.is_truthy()?
        || (dtype.is_complex() && obj.call_method0(intern!(py, "is_conj"))?.is_truthy()?)
    {
        return Ok(None);
    }
    let shape: Vec<usize> = obj.getattr(intern!(py, "shape"))?.extract()?;
    if shape.contains(&0) {
        return Ok(None);
    }
    let strides: Vec<isize> = obj.call_method0(intern!(py, "stride"))?.extract()?;
    let ptr: u64 = obj.call_method0(intern!(py, "data_ptr"))?.extract()?;
    let ordinal: usize = obj.call_method0(intern!(py, "get_device"))?.extract()?;
    let device = Device::get(ordinal).map_err(to_py_err)?;
    let keep: Box<dyn std::any::Any + Send + Sync> = Box::new(obj.clone().unbind());
    let array = crate::with_dtype!(dtype, |T| {
        // SAFETY: a strided CUDA tensor of torch describes `shape`/`strides` elements of `dtype`
        // from `data_ptr()` (storage offset included) in device `ordinal`'s memory; its storage
        // is owned by the tensor, which `keep` holds until the last view is dropped.
        unsafe { Array::<T>::from_raw_parts(ptr, shape, strides, &device, keep) }.map(AnyArray::new)
    });
    Ok(Some((array.map_err(to_py_err)?, device)))
}
