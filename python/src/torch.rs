//! A torch tensor on a CUDA device as a cuprum array, without the DLPack exchange's capsule
//! (`__dlpack__` costs about 3 us per argument): through DLPack's C exchange API where torch
//! publishes it ([`exchange`](crate::exchange), torch >= 2.10: one C call and two attribute reads),
//! else through torch's own attributes (`data_ptr()`, `shape`, `stride()`, `dtype`, ...: about a
//! microsecond) (docs/interop.md, "What it costs"). The view keeps the tensor object, and so its
//! storage, alive, as the CUDA Array Interface's consumers do.
//!
//! Only plain tensors take this path: the exact types `torch.Tensor` and `torch.nn.Parameter`, in
//! the strided layout, on a CUDA device, not requiring a gradient and not empty. Anything else
//! (subclasses with `__torch_function__`, CPU tensors, sparse layouts, tensors that require a
//! gradient, which torch's own `__dlpack__` refuses) returns `None` and goes through DLPack, so
//! that torch gives its own answer. A plain tensor with a pending negation or conjugation (on any
//! device) is refused with a `ValueError`: its memory does not hold its values, and torch's
//! `__dlpack__` would export that memory as it is.

use cuprum::runtime::array::shape::c_strides;
use cuprum::runtime::dlpack::{self, ffi::KDL_CUDA};
use cuprum::runtime::{Array, DType, Device};
use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyType};

use crate::any_array::AnyArray;
use crate::error::to_py_err;
use crate::exchange::ExchangeApi;
use crate::stream::{CallerStream, foreign, torch_current};

/// torch's objects the check compares by identity, read once torch is imported.
struct Torch {
    tensor: Py<PyType>,
    parameter: Py<PyType>,
    strided: Py<PyAny>,
    dtypes: Vec<(Py<PyAny>, DType)>,
    /// `torch.Tensor.__dlpack_c_exchange_api__`'s table (torch >= 2.10), and its capsule.
    api: Option<&'static ExchangeApi>,
    _capsule: Option<Py<PyAny>>,
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
    let tensor = module.getattr("Tensor")?;
    // SAFETY: torch's `torch.Tensor.__dlpack_c_exchange_api__` is a DLPack 1.2 table, a static of
    // libtorch_python; `Torch` keeps its capsule for the process.
    let (api, capsule) = unsafe { ExchangeApi::of_type(&tensor) }.unzip();
    let t = Torch {
        tensor: tensor.downcast_into::<PyType>()?.unbind(),
        parameter: module.getattr("nn")?.getattr("Parameter")?.downcast_into::<PyType>()?.unbind(),
        strided: module.getattr("strided")?.unbind(),
        dtypes,
        api,
        _capsule: capsule,
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
    if let Some(api) = torch.api {
        return import_exchanged(obj, api);
    }
    if obj.getattr(intern!(py, "requires_grad"))?.is_truthy()? {
        return Ok(None);
    }
    let dtype_obj = obj.getattr(intern!(py, "dtype"))?;
    let Some(dtype) = torch.dtypes.iter().find(|(d, _)| dtype_obj.is(d.bind(py))).map(|(_, t)| *t) else {
        return Ok(None);
    };
    refuse_lazy_bits(obj, dtype)?;
    if !obj.getattr(intern!(py, "is_cuda"))?.is_truthy()? || !obj.getattr(intern!(py, "layout"))?.is(torch.strided.bind(py)) {
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

/// A `ValueError` for a tensor whose memory does not hold its values: torch's pending negation
/// (`torch._neg_view`, `x.conj().imag`) or conjugation (`x.conj()`), which torch resolves only
/// when it computes. torch's own `__dlpack__` exports such memory as it is (the negation is
/// lost; measured with torch 2.11), so no path may read it.
fn refuse_lazy_bits(obj: &Bound<'_, PyAny>, dtype: DType) -> PyResult<()> {
    let py = obj.py();
    if obj.call_method0(intern!(py, "is_neg"))?.is_truthy()? {
        return Err(PyValueError::new_err(
            "the torch tensor has a pending negation (torch's neg bit: a `_neg_view` or `x.conj().imag`), which its memory does not hold: pass `x.resolve_neg()`",
        ));
    }
    if dtype.is_complex() && obj.call_method0(intern!(py, "is_conj"))?.is_truthy()? {
        return Err(PyValueError::new_err(
            "the torch tensor has a pending conjugation (torch's conj bit: `x.conj()`), which its memory does not hold: pass `x.resolve_conj()`",
        ));
    }
    Ok(())
}

/// Tensors [`import_exchanged`] read (for `stats()`: which path a torch tensor took).
static EXCHANGED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many torch tensors were read through the C exchange API in this process.
pub(crate) fn exchanged() -> u64 {
    EXCHANGED.load(std::sync::atomic::Ordering::Relaxed)
}

/// [`import`] through the C exchange API: the `DLTensor` in one C call; the two properties it
/// does not carry (a gradient, a pending negation or conjugation) read as attributes.
fn import_exchanged(obj: &Bound<'_, PyAny>, api: &ExchangeApi) -> PyResult<Option<(AnyArray, Device)>> {
    let py = obj.py();
    if obj.getattr(intern!(py, "requires_grad"))?.is_truthy()? {
        return Ok(None);
    }
    // SAFETY: `obj` is a `torch.Tensor` or `torch.nn.Parameter` (checked by the caller), the
    // type whose table `api` is.
    let Some(t) = (unsafe { api.dltensor(obj) }) else {
        return Ok(None);
    };
    let Ok(dtype) = dlpack::dtype_of(&t) else {
        return Ok(None);
    };
    refuse_lazy_bits(obj, dtype)?;
    if t.device.device_type != KDL_CUDA || t.device.device_id < 0 || t.ndim < 0 || (t.ndim > 0 && t.shape.is_null()) {
        return Ok(None);
    }
    let ndim = t.ndim as usize;
    // SAFETY: the producer filled `t` from `obj`, which is alive and bound (the GIL is held,
    // nothing ran since): `shape` holds `ndim` extents and `strides`, when not null, `ndim`
    // strides in elements (checked not null above for `ndim > 0`).
    let (shape, strides) = unsafe {
        let shape: &[i64] = if ndim == 0 { &[] } else { std::slice::from_raw_parts(t.shape, ndim) };
        let strides: Option<&[i64]> = (!t.strides.is_null() && ndim > 0).then(|| std::slice::from_raw_parts(t.strides, ndim));
        (shape, strides)
    };
    if shape.iter().any(|&e| e <= 0) {
        return Ok(None);
    }
    let shape: Vec<usize> = shape.iter().map(|&e| e as usize).collect();
    let strides: Vec<isize> = match strides {
        Some(s) => s.iter().map(|&s| s as isize).collect(),
        // DLPack's null strides: C order.
        None => c_strides(&shape),
    };
    let ptr = t.data as u64 + t.byte_offset;
    let device = Device::get(t.device.device_id as usize).map_err(to_py_err)?;
    let keep: Box<dyn std::any::Any + Send + Sync> = Box::new(obj.clone().unbind());
    let array = crate::with_dtype!(dtype, |T| {
        // SAFETY: a strided CUDA tensor of torch, as its DLTensor describes it: `shape` and
        // `strides` elements of `dtype` from `data + byte_offset` in device `device_id`'s
        // memory; its storage is owned by the tensor, which `keep` holds until the last view is
        // dropped.
        unsafe { Array::<T>::from_raw_parts(ptr, shape, strides, &device, keep) }.map(AnyArray::new)
    });
    let array = array.map_err(to_py_err)?;
    EXCHANGED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Ok(Some((array, device)))
}

/// torch's current stream on `device` (a CUDA device): through the C exchange API where torch
/// has it, else [`torch_current`]'s Python call; `None` when torch is not imported or has
/// neither.
pub(crate) fn current_stream(py: Python<'_>, device: &Device) -> PyResult<Option<CallerStream>> {
    if let Some(api) = torch(py)?.and_then(|t| t.api)
        && let Some(handle) = api.current_cuda_stream(py, device.ordinal())
    {
        return Ok(Some(CallerStream { stream: foreign(device, handle)?, owner: None, own: true }));
    }
    torch_current(py, device)
}
