//! Any Python array as a cuprum array, zero-copy: a [`Tensor`] of this module, a plain torch
//! tensor on a GPU (read through its attributes: [`torch`](crate::torch)), an object with
//! `__dlpack__` (torch, CuPy, JAX, NumPy >= 1.22 on the CPU device), or one with
//! `__cuda_array_interface__` (CuPy, Numba, torch; versions 2 and 3).

use cuprum::runtime::Device;
use cuprum::runtime::dlpack::ffi::{KDL_CPU, KDL_CUDA, KDL_CUDA_MANAGED};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::any_array::AnyArray;
use crate::error::to_py_err;
use crate::stream::{CallerStream, caller_stream, order_after, protocol_number};
use crate::tensor::Tensor;
use crate::{cai, capsule, torch};

/// `obj` as a cuprum array and the stream to launch on: `launch` when given (the call's stream,
/// chosen by an earlier argument on the same device), else the caller's current stream for `obj`
/// ([`caller_stream`]). The producer is told to order its pending work before that stream
/// (DLPack's `stream` argument) or that stream waits for the producer's (the CUDA Array
/// Interface's `stream`).
pub fn import(obj: &Bound<'_, PyAny>, launch: Option<&CallerStream>) -> PyResult<(AnyArray, CallerStream)> {
    let pick = |device: &Device| -> PyResult<CallerStream> {
        match launch {
            Some(c) if c.stream.device() == device => Ok(c.clone()),
            _ => caller_stream(obj, device),
        }
    };
    if let Ok(t) = obj.downcast::<Tensor>() {
        let t = t.get();
        let stream = match launch {
            Some(c) if c.stream.device() == t.array().device() => c.clone(),
            _ => t.caller_stream().clone(),
        };
        order_after(&stream.stream, &t.caller_stream().stream)?;
        let array = t.array().clone();
        return Ok((array, stream));
    }
    if let Some((array, device)) = torch::import(obj)? {
        // The tensor's pending work is on torch's current stream: launch there, or make the
        // call's stream (chosen by an earlier argument) wait for it.
        let py = obj.py();
        let own = match torch::current_stream(py, &device)? {
            Some(s) => s,
            None => caller_stream(obj, &device)?,
        };
        let stream = match launch {
            Some(c) if c.stream.device() == &device => {
                order_after(&c.stream, &own.stream)?;
                c.clone()
            }
            _ => own,
        };
        return Ok((array, stream));
    }
    if obj.hasattr(intern!(obj.py(), "__dlpack__"))? {
        let device = dlpack_device(obj)?;
        let stream = pick(&device)?;
        // The launch stream is the producer's own current stream (torch's, CuPy's) when this
        // argument chose it: the producer's pending work is already ordered before it, so ask
        // for no synchronization (-1), which spares torch about 10 us of stream objects and
        // events per argument; otherwise name the stream so the producer orders its work first.
        let own = launch.is_none_or(|c| c.stream.device() != &device) && stream.own;
        let number = if own { Some(-1i64) } else { protocol_number(&stream.stream).map(|n| n as i64) };
        let py = obj.py();
        let kwargs = PyDict::new(py);
        kwargs.set_item(intern!(py, "stream"), number)?;
        kwargs.set_item(intern!(py, "max_version"), (1, 0))?;
        let capsule = match obj.call_method(intern!(py, "__dlpack__"), (), Some(&kwargs)) {
            Ok(c) => c,
            Err(e) if e.is_instance_of::<PyTypeError>(py) => {
                // A producer of DLPack before 1.0 (NumPy < 2.1, torch < 2.4) has no max_version.
                let legacy = PyDict::new(py);
                legacy.set_item(intern!(py, "stream"), number)?;
                obj.call_method(intern!(py, "__dlpack__"), (), Some(&legacy))?
            }
            Err(e) => return Err(e),
        };
        return Ok((capsule::import(&capsule)?, stream));
    }
    if obj.hasattr("__cuda_array_interface__")? {
        let interface = cai::parse(&obj.getattr("__cuda_array_interface__")?)?;
        let device = cai::device_of(obj)?;
        let stream = pick(&device)?;
        let array = cai::import(obj, interface, &device, &stream.stream)?;
        return Ok((array, stream));
    }
    Err(PyTypeError::new_err(format!(
        "expected an array with __dlpack__ or __cuda_array_interface__ (a torch tensor, a CuPy, JAX or NumPy array), got {}",
        obj.get_type().name()?
    )))
}

/// The cuprum device of an object with `__dlpack__`, from its `__dlpack_device__()` (a CUDA GPU,
/// for device memory and managed memory, or the CPU); the CPU when it has no `__dlpack_device__`.
fn dlpack_device(obj: &Bound<'_, PyAny>) -> PyResult<Device> {
    let py = obj.py();
    if !obj.hasattr(intern!(py, "__dlpack_device__"))? {
        return Ok(Device::cpu());
    }
    let (kind, id): (i64, usize) = obj.call_method0(intern!(py, "__dlpack_device__"))?.extract()?;
    if kind == KDL_CPU as i64 {
        Ok(Device::cpu())
    } else if kind == KDL_CUDA as i64 || kind == KDL_CUDA_MANAGED as i64 {
        Device::get(id).map_err(to_py_err)
    } else {
        Err(PyValueError::new_err(format!(
            "the array is on DLPack device type {kind} (device {id}): cuprum takes CUDA device memory (type {}), managed memory (type {}) or host memory on its CPU device (type {})",
            KDL_CUDA as i64, KDL_CUDA_MANAGED as i64, KDL_CPU as i64
        )))
    }
}
