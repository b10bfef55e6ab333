//! The CUDA Array Interface (versions 2 and 3, Numba's specification; CuPy's
//! "Interoperability"): reading a producer's `__cuda_array_interface__` as a cuprum array, and
//! writing a result's.
//!
//! Environment (as CuPy): `CUPY_CUDA_ARRAY_INTERFACE_SYNC=0` makes a consumer ignore the
//! producer's `stream` (default 1: the launch stream waits for it);
//! `CUPY_CUDA_ARRAY_INTERFACE_EXPORT_VERSION=2` exports version 2, without a `stream` (default
//! 3). A version-2 export has no stream to hand over, so the result's stream is synchronized
//! first (that stream only, not the device).

use cuprum::runtime::{Array, DType, Device, Stream};
use pyo3::exceptions::{PyAttributeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::any_array::AnyArray;
use crate::dtype::{from_typestr, python_name, typestr};
use crate::error::to_py_err;
use crate::stream::{foreign, order_after, protocol_number};

/// Whether a consumer orders its launch after the producer's `stream`
/// (`CUPY_CUDA_ARRAY_INTERFACE_SYNC`, default 1).
fn sync_on_import() -> bool {
    std::env::var("CUPY_CUDA_ARRAY_INTERFACE_SYNC").map_or(true, |v| v.trim() != "0")
}

/// The version a result exports (`CUPY_CUDA_ARRAY_INTERFACE_EXPORT_VERSION`, 2 or 3, default 3).
fn export_version() -> PyResult<u32> {
    match std::env::var("CUPY_CUDA_ARRAY_INTERFACE_EXPORT_VERSION") {
        Err(_) => Ok(3),
        Ok(v) => match v.trim() {
            "" | "3" => Ok(3),
            "2" => Ok(2),
            other => Err(PyValueError::new_err(format!(
                "CUPY_CUDA_ARRAY_INTERFACE_EXPORT_VERSION={other}: cuprum exports version 2 or 3 of the CUDA Array Interface"
            ))),
        },
    }
}

/// The CUDA device of an object that has a `__cuda_array_interface__` (which does not name
/// one): `obj.device.index` (torch) or `obj.device.id` (CuPy, Numba), else the current device.
pub(crate) fn device_of(obj: &Bound<'_, PyAny>) -> PyResult<Device> {
    let ordinal = match obj.getattr("device") {
        Ok(d) => match d.getattr("index").or_else(|_| d.getattr("id")) {
            Ok(i) if !i.is_none() => Some(i.extract::<usize>()?),
            _ => None,
        },
        Err(_) => None,
    };
    let device = match ordinal {
        Some(o) => Device::get(o),
        None => Device::current(),
    }
    .map_err(to_py_err)?;
    if device.is_cpu() {
        return Err(PyValueError::new_err(
            "an object with __cuda_array_interface__ (CUDA memory) cannot be used on cuprum's CPU device (CUPRUM_DEVICE=cpu); pass a host array with __dlpack__ (NumPy) instead",
        ));
    }
    Ok(device)
}

/// What a producer's `__cuda_array_interface__` describes, read and checked before anything is
/// taken.
pub(crate) struct Interface {
    dtype: DType,
    shape: Vec<usize>,
    /// In elements.
    strides: Vec<isize>,
    ptr: u64,
    /// The producer's stream (version 3, not None), by its protocol number.
    stream: Option<u64>,
}

/// Reads `obj.__cuda_array_interface__`: `TypeError` for a dtype cuprum does not have,
/// `ValueError` for what it cannot take (a mask, strides that are not whole elements, stream 0).
pub(crate) fn parse(interface: &Bound<'_, PyAny>) -> PyResult<Interface> {
    let d = interface.downcast::<PyDict>().map_err(|_| PyTypeError::new_err("__cuda_array_interface__ is not a dict"))?;
    let get = |k: &str| -> PyResult<Bound<'_, PyAny>> {
        d.get_item(k)?.ok_or_else(|| PyValueError::new_err(format!("__cuda_array_interface__ has no '{k}'")))
    };
    let version: u32 = get("version")?.extract()?;
    let typestr_s: String = get("typestr")?.extract()?;
    let dtype = from_typestr(&typestr_s).ok_or_else(|| {
        PyTypeError::new_err(format!("__cuda_array_interface__ typestr '{typestr_s}' is no dtype cuprum has (little-endian bool, integers, float16/32/64, complex64/128)"))
    })?;
    let shape: Vec<usize> = get("shape")?.extract()?;
    let (ptr, _read_only): (u64, bool) = get("data")?.extract()?;
    if d.get_item("mask")?.is_some_and(|m| !m.is_none()) {
        return Err(PyValueError::new_err("__cuda_array_interface__ with a mask: cuprum takes unmasked arrays only"));
    }
    let itemsize = (dtype.bits() / 8).max(1) as isize;
    let strides: Vec<isize> = match d.get_item("strides")? {
        Some(s) if !s.is_none() => {
            let bytes: Vec<isize> = s.extract()?;
            if bytes.len() != shape.len() {
                return Err(PyValueError::new_err(format!("__cuda_array_interface__: {} strides for {} axes", bytes.len(), shape.len())));
            }
            bytes
                .iter()
                .map(|&b| {
                    if b % itemsize == 0 {
                        Ok(b / itemsize)
                    } else {
                        Err(PyValueError::new_err(format!(
                            "__cuda_array_interface__: a stride of {b} bytes is not a multiple of the {itemsize}-byte {} element; copy the array first",
                            python_name(dtype)
                        )))
                    }
                })
                .collect::<PyResult<_>>()?
        }
        _ => {
            let mut s = vec![1isize; shape.len()];
            for i in (0..shape.len().saturating_sub(1)).rev() {
                s[i] = s[i + 1] * shape[i + 1].max(1) as isize;
            }
            s
        }
    };
    let stream = match d.get_item("stream")? {
        Some(s) if version >= 3 && !s.is_none() => {
            let number: u64 = s.extract()?;
            if number == 0 {
                return Err(PyValueError::new_err("__cuda_array_interface__: stream 0 is disallowed (ambiguous); 1 is the legacy default stream"));
            }
            Some(number)
        }
        _ => None,
    };
    Ok(Interface { dtype, shape, strides, ptr, stream })
}

/// A cuprum view of the memory an [`Interface`] of `obj` describes (zero-copy; `obj` is kept
/// alive by the view) on `device` ([`device_of`]). With the producer's `stream` given (and
/// `CUPY_CUDA_ARRAY_INTERFACE_SYNC` not 0), `launch` waits for that stream first.
pub(crate) fn import(obj: &Bound<'_, PyAny>, interface: Interface, device: &Device, launch: &Stream) -> PyResult<AnyArray> {
    let Interface { dtype, shape, strides, ptr, stream } = interface;
    if let Some(number) = stream
        && sync_on_import()
    {
        order_after(launch, &foreign(device, number)?)?;
    }
    let keep: Box<dyn std::any::Any + Send + Sync> = Box::new(obj.clone().unbind());
    crate::with_dtype!(dtype, |T| {
        // SAFETY: the interface describes `shape`/`strides` elements of `dtype` at `ptr` in
        // `device`'s memory, owned by `obj`, which `keep` holds until the last view is dropped.
        unsafe { Array::<T>::from_raw_parts(ptr, shape, strides, device, keep) }
            .map(AnyArray::new)
            .map_err(|e| PyValueError::new_err(format!("cannot take this array: {e}")))
    })
}

/// The `__cuda_array_interface__` dict of `array` produced on `stream` (version 3 with `stream`,
/// or 2 after synchronizing `stream`: [the module doc](self)). An `AttributeError` on the CPU device
/// (so that `hasattr` is false and consumers use DLPack) and for bfloat16, which has no type string.
pub(crate) fn export<'py>(py: Python<'py>, array: &AnyArray, stream: &Stream) -> PyResult<Bound<'py, PyDict>> {
    if array.device().is_cpu() {
        return Err(PyAttributeError::new_err("__cuda_array_interface__: this array is on cuprum's CPU device; use __dlpack__ (numpy.from_dlpack)"));
    }
    let ts = typestr(array.dtype())
        .ok_or_else(|| PyAttributeError::new_err("__cuda_array_interface__: bfloat16 has no type string; use __dlpack__ (torch.from_dlpack)"))?;
    let version = export_version()?;
    let d = PyDict::new(py);
    d.set_item("shape", PyTuple::new(py, array.shape())?)?;
    d.set_item("typestr", ts)?;
    d.set_item("data", (array.data_ptr(), false))?;
    d.set_item("version", version)?;
    let itemsize = (array.dtype().bits() / 8).max(1) as isize;
    if array.is_c_contiguous() {
        d.set_item("strides", py.None())?;
    } else {
        let bytes: Vec<isize> = array.strides().iter().map(|s| s * itemsize).collect();
        d.set_item("strides", PyTuple::new(py, bytes)?)?;
    }
    if version >= 3 {
        d.set_item("stream", protocol_number(stream))?;
    } else {
        stream.synchronize().map_err(to_py_err)?;
    }
    Ok(d)
}
