//! Streams and events, with CuPy v10's rules (seed 001):
//!
//! - A stream belongs to the device it was created on.
//! - The current stream is kept **per device** and per thread. Making a stream current changes
//!   only its own device's entry; after switching devices, the other device's current stream
//!   (or its null stream) is used, never a stream of another device.
//! - [`Stream::use_scoped`] restores, on drop, the stream that was current for that device when
//!   the guard was made, whatever was made current in between (CuPy v10's `with stream:`).
//! - A stream shared between threads stays alive while it is current anywhere (it is reference
//!   counted; a thread's current stream holds a reference).
//! - Without a current stream, a device uses its null stream: the legacy default stream, or the
//!   per-thread default stream when `CUPY_CUDA_PER_THREAD_DEFAULT_STREAM=1`.

use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use cudarc::driver::result::stream::StreamKind as RawKind;
use cudarc::driver::sys::{self, CUevent_flags};
use cudarc::driver::{CudaEvent, CudaStream, result};

use crate::device::Device;
use crate::env;
use crate::error::{Error, Result};

/// Which kind of stream a [`Stream`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamKind {
    /// The legacy default (null) stream of the device.
    Legacy,
    /// The per-thread default stream of the device.
    PerThread,
    /// A created stream that synchronizes with the legacy default stream (CuPy's default).
    Blocking,
    /// A created stream that does not synchronize with the legacy default stream.
    NonBlocking,
}

/// Destroys a blocking stream created by [`Stream::new`] when the last [`Stream`] clone is gone.
struct OwnedHandle {
    raw: Arc<CudaStream>,
    device: Device,
}

impl Drop for OwnedHandle {
    fn drop(&mut self) {
        if Arc::strong_count(&self.raw) > 1 {
            // Someone still holds the raw handle through `Stream::raw()`: leaking the stream is
            // better than leaving them a destroyed handle.
            log::debug!("cuprum: stream still referenced through raw(); not destroying it");
            return;
        }
        if self.device.bind_to_thread().is_ok() {
            // SAFETY: the handle was created by `cuStreamCreate` in `Stream::new`, is destroyed
            // only here, and no other reference to it remains (strong count checked above).
            // Work still pending on it completes before the driver releases it.
            let _ = unsafe { result::stream::destroy(self.raw.cu_stream()) };
        }
    }
}

/// A CUDA stream on one device. Cheap to clone (clones refer to the same stream).
#[derive(Clone)]
pub struct Stream {
    raw: Arc<CudaStream>,
    device: Device,
    kind: StreamKind,
    _owner: Option<Arc<OwnedHandle>>,
}

thread_local! {
    /// The current stream of each device for this thread, indexed by ordinal.
    static CURRENT_STREAMS: RefCell<Vec<Option<Stream>>> = const { RefCell::new(Vec::new()) };
}

/// The null streams (legacy, per-thread) of each opened device, made once: what
/// [`Stream::current_ref`] lends. A device lives for the rest of the process, so do they.
fn null_streams(device: &'static Device) -> Result<&'static [Stream; 2]> {
    static NULLS: std::sync::OnceLock<Box<[std::sync::OnceLock<[Stream; 2]>]>> = std::sync::OnceLock::new();
    let count = crate::device::driver_device_count()?;
    let slots = NULLS.get_or_init(|| (0..count).map(|_| std::sync::OnceLock::new()).collect());
    let slot = slots.get(device.ordinal()).ok_or(Error::InvalidDevice { ordinal: device.ordinal(), count })?;
    Ok(slot.get_or_init(|| [Stream::legacy(device), Stream::per_thread(device)]))
}

fn set_current_entry(ordinal: usize, s: Option<Stream>) -> Option<Stream> {
    CURRENT_STREAMS.with(|c| {
        let mut v = c.borrow_mut();
        if v.len() <= ordinal {
            v.resize(ordinal + 1, None);
        }
        std::mem::replace(&mut v[ordinal], s)
    })
}

impl Stream {
    /// Creates a new stream on `device` that synchronizes with the legacy default stream, like
    /// CuPy's `cupy.cuda.Stream()`.
    pub fn new(device: &Device) -> Result<Stream> {
        device.bind_to_thread()?;
        let handle =
            result::stream::create(RawKind::Default).map_err(device.driver_fn("cuStreamCreate"))?;
        // SAFETY: `handle` is a live stream of this device's context, created just above; it is
        // destroyed only by `OwnedHandle::drop`, after every `Stream` clone (each holding the
        // owner) is gone and no raw clone is left.
        let raw = unsafe { device.context().wrap_borrowed_stream(handle) };
        let owner = Arc::new(OwnedHandle {
            raw: raw.clone(),
            device: device.clone(),
        });
        Ok(Stream {
            raw,
            device: device.clone(),
            kind: StreamKind::Blocking,
            _owner: Some(owner),
        })
    }

    /// Creates a new stream on `device` that does not synchronize with the legacy default
    /// stream (CuPy's `Stream(non_blocking=True)`).
    pub fn new_non_blocking(device: &Device) -> Result<Stream> {
        device.check_alive()?;
        let raw = device
            .context()
            .new_stream()
            .map_err(device.driver_fn("cuStreamCreate"))?;
        Ok(Stream {
            raw,
            device: device.clone(),
            kind: StreamKind::NonBlocking,
            _owner: None,
        })
    }

    /// The device's null stream: the legacy default stream, or the per-thread default stream
    /// when `CUPY_CUDA_PER_THREAD_DEFAULT_STREAM=1` (read once per process).
    pub fn null(device: &Device) -> Result<Stream> {
        if env::per_thread_default_stream()? {
            Ok(Stream::per_thread(device))
        } else {
            Ok(Stream::legacy(device))
        }
    }

    /// The device's legacy default stream, whatever the environment says.
    pub fn legacy(device: &Device) -> Stream {
        Stream {
            raw: device.inner().legacy_stream.clone(),
            device: device.clone(),
            kind: StreamKind::Legacy,
            _owner: None,
        }
    }

    /// The device's per-thread default stream, whatever the environment says.
    pub fn per_thread(device: &Device) -> Stream {
        Stream {
            raw: device.inner().per_thread_stream.clone(),
            device: device.clone(),
            kind: StreamKind::PerThread,
            _owner: None,
        }
    }

    /// The current stream of this thread's current device.
    pub fn current() -> Result<Stream> {
        Stream::current_for(Device::get_static(Device::current_ordinal())?)
    }

    /// [`Stream::current_for`] borrowed when it is the device's null stream (a thread that set
    /// no stream): what a launch needs, without the reference counts of a clone.
    pub(crate) fn current_ref(device: &'static Device) -> Result<Cow<'static, Stream>> {
        let ordinal = device.ordinal();
        let found = CURRENT_STREAMS.with(|c| c.borrow().get(ordinal).cloned().flatten());
        if let Some(s) = found {
            return Ok(Cow::Owned(s));
        }
        let per_thread = env::per_thread_default_stream()?;
        Ok(Cow::Borrowed(&null_streams(device)?[per_thread as usize]))
    }

    /// The current stream of `device` for this thread (its null stream when none was set).
    pub fn current_for(device: &Device) -> Result<Stream> {
        let ordinal = device.ordinal();
        let found = CURRENT_STREAMS.with(|c| c.borrow().get(ordinal).cloned().flatten());
        match found {
            Some(s) => Ok(s),
            None => Stream::null(device),
        }
    }

    /// Makes this stream the current stream of its device for this thread (CuPy's
    /// `stream.use()`); not undone automatically.
    pub fn set_current(&self) {
        set_current_entry(self.device.ordinal(), Some(self.clone()));
    }

    /// Makes this stream current for its device until the guard is dropped; the guard then
    /// restores the stream that was current for that device before (CuPy's `with stream:`).
    pub fn use_scoped(&self) -> StreamGuard {
        let ordinal = self.device.ordinal();
        let previous = set_current_entry(ordinal, Some(self.clone()));
        StreamGuard {
            ordinal,
            previous,
            _not_send: PhantomData,
        }
    }

    /// Blocks until all work queued on the stream has finished. Reports the first out-of-range
    /// index of a kernel on this device since the last report ([`Error::IndexOutOfBounds`]).
    pub fn synchronize(&self) -> Result<()> {
        self.device.check_alive()?;
        self.raw
            .synchronize()
            .map_err(self.device.driver_fn("cuStreamSynchronize"))?;
        crate::bounds::check(self.device.ordinal())
    }

    /// True when all work queued so far has finished (does not block).
    pub fn is_done(&self) -> Result<bool> {
        self.device.bind_to_thread()?;
        // SAFETY: the stream handle is alive (we hold a reference).
        match unsafe { sys::cuStreamQuery(self.raw.cu_stream()) } {
            sys::CUresult::CUDA_SUCCESS => Ok(true),
            sys::CUresult::CUDA_ERROR_NOT_READY => Ok(false),
            e => Err(self
                .device
                .driver_error("cuStreamQuery", cudarc::driver::DriverError(e))),
        }
    }

    /// Makes later work on this stream wait for `event` (without blocking the host).
    pub fn wait_event(&self, event: &Event) -> Result<()> {
        self.device.check_alive()?;
        self.raw
            .wait(&event.raw)
            .map_err(self.device.driver_fn("cuStreamWaitEvent"))
    }

    /// The cudarc stream (for launches). Keep this `Stream` alive while the handle is in use.
    pub fn raw(&self) -> &Arc<CudaStream> {
        &self.raw
    }

    /// The raw `CUstream` handle.
    pub fn handle(&self) -> sys::CUstream {
        self.raw.cu_stream()
    }

    /// The device the stream belongs to.
    pub fn device(&self) -> &Device {
        &self.device
    }

    pub fn kind(&self) -> StreamKind {
        self.kind
    }

    /// True for the legacy or per-thread default stream.
    pub fn is_null(&self) -> bool {
        matches!(self.kind, StreamKind::Legacy | StreamKind::PerThread)
    }

    /// A key identifying the stream within its device: its handle value, and for the
    /// per-thread default stream (one handle value, a different stream per thread) a
    /// per-thread number with the top bit set.
    pub(crate) fn key(&self) -> usize {
        if self.kind == StreamKind::PerThread {
            static NEXT: AtomicUsize = AtomicUsize::new(0);
            thread_local! {
                static THREAD_KEY: usize = NEXT.fetch_add(1, Ordering::Relaxed) | (1 << (usize::BITS - 1));
            }
            THREAD_KEY.with(|k| *k)
        } else {
            self.raw.cu_stream() as usize
        }
    }
}

impl PartialEq for Stream {
    fn eq(&self, other: &Self) -> bool {
        self.device == other.device && self.raw.cu_stream() == other.raw.cu_stream()
    }
}

impl Eq for Stream {}

impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Stream({:?}, device {}, {:p})",
            self.kind,
            self.device.ordinal(),
            self.raw.cu_stream()
        )
    }
}

/// Restores the previous current stream of a device when dropped (see [`Stream::use_scoped`]).
#[must_use = "the previous stream is restored when the guard is dropped"]
pub struct StreamGuard {
    ordinal: usize,
    previous: Option<Stream>,
    _not_send: PhantomData<*const ()>,
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        set_current_entry(self.ordinal, self.previous.take());
    }
}

/// A CUDA event (with timing enabled) on one device.
pub struct Event {
    raw: CudaEvent,
    device: Device,
}

impl Event {
    /// A new event with timing enabled, not yet recorded.
    pub fn new(device: &Device) -> Result<Event> {
        device.check_alive()?;
        let raw = device
            .context()
            .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(device.driver_fn("cuEventCreate"))?;
        Ok(Event {
            raw,
            device: device.clone(),
        })
    }

    /// A new event recorded on `stream` now.
    pub fn record(stream: &Stream) -> Result<Event> {
        let e = Event::new(stream.device())?;
        e.record_on(stream)?;
        Ok(e)
    }

    /// Records the work queued on `stream` so far into this event.
    pub fn record_on(&self, stream: &Stream) -> Result<()> {
        if stream.device() != &self.device {
            return Err(Error::DeviceMismatch {
                context: "Event::record_on".into(),
                expected: self.device.ordinal(),
                found: stream.device().ordinal(),
            });
        }
        self.device.check_alive()?;
        self.raw
            .record(stream.raw())
            .map_err(self.device.driver_fn("cuEventRecord"))
    }

    /// Blocks until the recorded work has finished. Reports the first out-of-range index of a
    /// kernel on this device since the last report ([`Error::IndexOutOfBounds`]).
    pub fn synchronize(&self) -> Result<()> {
        self.device.check_alive()?;
        self.raw
            .synchronize()
            .map_err(self.device.driver_fn("cuEventSynchronize"))?;
        crate::bounds::check(self.device.ordinal())
    }

    /// True when the recorded work has finished (does not block).
    pub fn is_done(&self) -> Result<bool> {
        self.device.bind_to_thread()?;
        self.raw
            .try_is_complete()
            .map_err(self.device.driver_fn("cuEventQuery"))
    }

    /// Milliseconds between two recorded events (waits for both).
    pub fn elapsed_ms(start: &Event, end: &Event) -> Result<f32> {
        start.device.check_alive()?;
        start
            .raw
            .elapsed_ms(&end.raw)
            .map_err(start.device.driver_fn("cuEventElapsedTime"))
    }

    pub fn device(&self) -> &Device {
        &self.device
    }

    pub fn raw(&self) -> &CudaEvent {
        &self.raw
    }
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Event(device {}, {:p})",
            self.device.ordinal(),
            self.raw.cu_event()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn current_stream_without_gpu_is_an_error() {
        if Device::count().is_err() {
            let e = Stream::current().unwrap_err();
            assert!(e.is_no_gpu(), "{e}");
        }
    }
}
