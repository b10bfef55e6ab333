//! The stream a call from Python launches on, and the stream numbers of the two protocols.
//!
//! A kernel called from Python runs on the caller's current stream: torch's
//! (`torch.cuda.current_stream(device)`) for a torch tensor, CuPy's
//! (`cupy.cuda.get_current_stream()`) for a CuPy array, else the device's legacy default stream.
//! That stream is handed to `__dlpack__(stream=...)` so that the producer orders its pending
//! work before it, and the result remembers it so that a consumer is ordered after it.
//!
//! Stream numbers (DLPack's `stream` argument, the CUDA Array Interface's `stream` field): 1 is
//! the legacy default stream, 2 the per-thread default stream, any other value a `CUstream`; 0
//! is not used (ambiguous).

use std::sync::Arc;

use cuprum::runtime::{Device, Event, Stream};
use pyo3::exceptions::PyTypeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

use crate::error::to_py_err;

/// A stream a call from Python launches on, and the Python object that owns it (a
/// `torch.cuda.Stream` or `cupy.cuda.Stream`), kept so that the handle outlives its uses.
#[derive(Clone)]
pub struct CallerStream {
    /// The stream, wrapped with [`Stream::from_raw`] when another library owns it.
    pub stream: Stream,
    /// The Python object owning the stream, if any.
    pub owner: Option<Arc<Py<PyAny>>>,
    /// Whether this is the current stream of the library that made the argument (torch's for a
    /// torch tensor): that library's pending work on the argument is then already ordered
    /// before launches on it.
    pub own: bool,
}

impl std::fmt::Debug for CallerStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CallerStream({:#x} on device {})", self.stream.as_raw(), self.stream.device().ordinal())
    }
}

/// The caller's current stream for an argument `obj` whose data is on `device`: on a GPU,
/// torch's current stream for a torch tensor, CuPy's for a CuPy array, else the legacy default
/// stream; on the CPU device, its current stream.
pub fn caller_stream(obj: &Bound<'_, PyAny>, device: &Device) -> PyResult<CallerStream> {
    let py = obj.py();
    if device.is_cpu() {
        let stream = Stream::current_for(device).map_err(to_py_err)?;
        return Ok(CallerStream { stream, owner: None, own: false });
    }
    let module: String = obj.get_type().getattr(intern!(py, "__module__"))?.extract().unwrap_or_default();
    let torch = module == "torch" || module.starts_with("torch.");
    if torch && let Some(s) = torch_current(py, device)? {
        return Ok(s);
    }
    let owner = if torch {
        let torch = py.import("torch")?;
        Some(torch.getattr(intern!(py, "cuda"))?.call_method1(intern!(py, "current_stream"), (device.ordinal(),))?)
    } else if module == "cupy" || module.starts_with("cupy.") || module.starts_with("cupy_backends") {
        let cuda = py.import("cupy")?.getattr("cuda")?;
        match cuda.call_method1("get_current_stream", (device.ordinal(),)) {
            Ok(s) => Some(s),
            Err(e) if e.is_instance_of::<PyTypeError>(py) => Some(cuda.call_method0("get_current_stream")?),
            Err(e) => return Err(e),
        }
    } else {
        None
    };
    let handle = match &owner {
        Some(s) if s.hasattr(intern!(py, "cuda_stream"))? => s.getattr(intern!(py, "cuda_stream"))?.extract::<u64>()?,
        Some(s) => s.getattr(intern!(py, "ptr"))?.extract::<u64>()?,
        None => 0,
    };
    let stream = foreign(device, handle)?;
    let own = owner.is_some();
    Ok(CallerStream { stream, owner: owner.map(|o| Arc::new(o.unbind())), own })
}

/// torch's current stream on `device` as a raw handle, without building a `torch.cuda.Stream`
/// (what Triton's launcher calls: cheaper by a few microseconds); `None` when this torch has no
/// `torch._C._cuda_getCurrentRawStream`. torch's own streams (the default ones and its pool's)
/// live for the process; an `ExternalStream` is its owner's, whose `torch.cuda.Stream` object
/// never kept it alive either.
pub(crate) fn torch_current(py: Python<'_>, device: &Device) -> PyResult<Option<CallerStream>> {
    static RAW_STREAM: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let Ok(f) = RAW_STREAM.import(py, "torch._C", "_cuda_getCurrentRawStream") else {
        return Ok(None);
    };
    let handle: u64 = f.call1((device.ordinal(),))?.extract()?;
    Ok(Some(CallerStream { stream: foreign(device, handle)?, owner: None, own: true }))
}

/// A stream another library owns, by its protocol number or handle (0 and 1: the legacy default
/// stream, 2: the per-thread default stream, else a `CUstream` of `device`'s context).
pub(crate) fn foreign(device: &Device, number: u64) -> PyResult<Stream> {
    let raw = if number == 1 { 0 } else { number };
    // SAFETY: `raw` is the legacy or per-thread default stream (never destroyed) or a stream a
    // Python library gave us for this device: its owner object is kept alive with every
    // `CallerStream` and result that holds the wrapper (`CallerStream::owner`); for a number
    // received through a protocol, the protocol makes the caller keep its stream alive for the
    // duration of the call that uses it.
    unsafe { Stream::from_raw(device, raw) }.map_err(to_py_err)
}

/// The protocol number of `stream` (`None` on the CPU device): 1 for the legacy default stream,
/// 2 for the per-thread default stream, else its handle.
pub fn protocol_number(stream: &Stream) -> Option<u64> {
    if stream.device().is_cpu() {
        return None;
    }
    match stream.as_raw() {
        0 | 1 => Some(1),
        h => Some(h),
    }
}

/// Makes `consumer` wait for the work queued on `producer` so far (an event; nothing when they
/// are the same stream or on the CPU device, where work is done when it is queued).
pub(crate) fn order_after(consumer: &Stream, producer: &Stream) -> PyResult<()> {
    if consumer.device().is_cpu() || protocol_number(consumer) == protocol_number(producer) {
        return Ok(());
    }
    let event = Event::record(producer).map_err(to_py_err)?;
    consumer.wait_event(&event).map_err(to_py_err)
}
