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
//! - The CPU device's streams and events have no CUDA handle: work queued on the CPU is done
//!   before the call that queues it returns, so every CPU stream is always idle, and an event
//!   records the time it was recorded at (docs/cpu.md).

use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use cudarc::driver::result::stream::StreamKind as RawKind;
use cudarc::driver::sys::{self, CUevent_flags};
use cudarc::driver::{CudaEvent, CudaStream, result};

use crate::device::{Backend, Device};
use crate::env;
use crate::error::{Error, Result};
use crate::sync;

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
            log::debug!(target: "cuprum::stream", "stream still referenced through raw(); not destroying it");
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

/// A stream on one device: a CUDA stream, or a stream of the CPU device. Cheap to clone (clones
/// refer to the same stream).
#[derive(Clone)]
pub struct Stream {
    queue: Queue,
    device: Device,
    kind: StreamKind,
    _owner: Option<Arc<OwnedHandle>>,
    /// Another library's stream (`Stream::from_raw`), which it may destroy once cuprum's use
    /// is over: the memory pool never touches its handle after a free (docs/interop.md).
    foreign: bool,
}

/// What a stream queues work on.
#[derive(Clone)]
enum Queue {
    Cuda(Arc<CudaStream>),
    /// A CPU stream, by a number unique in the process (its identity: the null streams are 0
    /// and 2, the handles CUDA gives them).
    Host(usize),
}

impl Queue {
    /// The identity of the stream on its device.
    fn id(&self) -> usize {
        match self {
            Queue::Cuda(raw) => raw.cu_stream() as usize,
            Queue::Host(id) => *id,
        }
    }
}

/// The next CPU stream's number (odd numbers above 2: never a null stream's).
fn next_host_stream() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(3);
    NEXT.fetch_add(2, Ordering::Relaxed)
}

thread_local! {
    /// The current stream of each device for this thread: (ordinal, stream), at most one per
    /// device (the CPU's ordinal is `usize::MAX`, so not an index).
    static CURRENT_STREAMS: RefCell<Vec<(usize, Stream)>> = const { RefCell::new(Vec::new()) };
}

/// The null streams (legacy, per-thread) of each opened device, made once: what
/// [`Stream::current_ref`] lends. A device lives for the rest of the process, so do they.
fn null_streams(device: &'static Device) -> Result<&'static [Stream; 2]> {
    static NULLS: std::sync::OnceLock<Box<[std::sync::OnceLock<[Stream; 2]>]>> = std::sync::OnceLock::new();
    static CPU: std::sync::OnceLock<[Stream; 2]> = std::sync::OnceLock::new();
    if device.is_cpu() {
        return Ok(CPU.get_or_init(|| [Stream::legacy(device), Stream::per_thread(device)]));
    }
    let count = crate::driver::driver_device_count()?;
    let slots = NULLS.get_or_init(|| (0..count).map(|_| std::sync::OnceLock::new()).collect());
    let slot = slots.get(device.ordinal()).ok_or(Error::InvalidDevice { ordinal: device.ordinal(), count })?;
    Ok(slot.get_or_init(|| [Stream::legacy(device), Stream::per_thread(device)]))
}

fn set_current_entry(ordinal: usize, s: Option<Stream>) -> Option<Stream> {
    CURRENT_STREAMS.with(|c| {
        let mut v = c.borrow_mut();
        let at = v.iter().position(|(o, _)| *o == ordinal);
        let previous = at.map(|k| v.swap_remove(k).1);
        if let Some(s) = s {
            v.push((ordinal, s));
        }
        previous
    })
}

/// The stream this thread made current for device `ordinal`, if any.
fn current_entry(ordinal: usize) -> Option<Stream> {
    CURRENT_STREAMS.with(|c| c.borrow().iter().find(|(o, _)| *o == ordinal).map(|(_, s)| s.clone()))
}

impl Stream {
    /// Creates a new stream on `device` that synchronizes with the legacy default stream, like
    /// CuPy's `cupy.cuda.Stream()`.
    pub fn new(device: &Device) -> Result<Stream> {
        if device.is_cpu() {
            return Ok(Stream::host(device, StreamKind::Blocking, next_host_stream()));
        }
        device.bind_to_thread()?;
        let ctx = device.cuda_context("a CUDA stream")?;
        let handle =
            result::stream::create(RawKind::Default).map_err(device.driver_fn("cuStreamCreate"))?;
        // SAFETY: `handle` is a live stream of this device's context, created just above; it is
        // destroyed only by `OwnedHandle::drop`, after every `Stream` clone (each holding the
        // owner) is gone and no raw clone is left.
        let raw = unsafe { ctx.wrap_borrowed_stream(handle) };
        let owner = Arc::new(OwnedHandle {
            raw: raw.clone(),
            device: device.clone(),
        });
        Ok(Stream {
            queue: Queue::Cuda(raw),
            device: device.clone(),
            kind: StreamKind::Blocking,
            _owner: Some(owner),
            foreign: false,
        })
    }

    /// A stream of the CPU device.
    fn host(device: &Device, kind: StreamKind, id: usize) -> Stream {
        Stream {
            queue: Queue::Host(id),
            device: device.clone(),
            kind,
            _owner: None,
            foreign: false,
        }
    }

    /// Creates a new stream on `device` that does not synchronize with the legacy default
    /// stream (CuPy's `Stream(non_blocking=True)`).
    pub fn new_non_blocking(device: &Device) -> Result<Stream> {
        if device.is_cpu() {
            return Ok(Stream::host(device, StreamKind::NonBlocking, next_host_stream()));
        }
        device.check_alive()?;
        let raw = device
            .cuda_context("a CUDA stream")?
            .new_stream()
            .map_err(device.driver_fn("cuStreamCreate"))?;
        Ok(Stream {
            queue: Queue::Cuda(raw),
            device: device.clone(),
            kind: StreamKind::NonBlocking,
            _owner: None,
            foreign: false,
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
        match device.backend() {
            Backend::Cuda { legacy_stream, .. } => Stream {
                queue: Queue::Cuda(legacy_stream.clone()),
                device: device.clone(),
                kind: StreamKind::Legacy,
                _owner: None,
                foreign: false,
            },
            Backend::Cpu => Stream::host(device, StreamKind::Legacy, 0),
        }
    }

    /// The device's per-thread default stream, whatever the environment says.
    pub fn per_thread(device: &Device) -> Stream {
        match device.backend() {
            Backend::Cuda { per_thread_stream, .. } => Stream {
                queue: Queue::Cuda(per_thread_stream.clone()),
                device: device.clone(),
                kind: StreamKind::PerThread,
                _owner: None,
                foreign: false,
            },
            Backend::Cpu => Stream::host(device, StreamKind::PerThread, 2),
        }
    }

    /// A stream another library created (PyTorch's, CuPy's, cudarc's), by its `CUstream`
    /// handle: cuprum launches, records events and captures graphs on it like on its own, and
    /// never destroys it. `0` and `1` (`CU_STREAM_LEGACY`) are the legacy default stream, `2`
    /// (`CU_STREAM_PER_THREAD`) the per-thread one (on the CPU device only these three are
    /// accepted, as its null streams). An error, with nothing kept, for a handle the driver
    /// does not know or a stream of another device's context.
    ///
    /// ```no_run
    /// # use cuprum_runtime::{Array, Device, Stream};
    /// # let torch_stream: u64 = 0; // e.g. `torch.cuda.current_stream().cuda_stream` from Python
    /// let gpu = Device::get(0)?;
    /// // SAFETY: the other library keeps its stream alive while cuprum uses it.
    /// let s = unsafe { Stream::from_raw(&gpu, torch_stream) }?;
    /// let _current = s.use_scoped(); // launches below go on the other library's stream
    /// let y = (&Array::from_vec(vec![1.0f32; 1024])? * 2.0f32)?;
    /// assert_eq!(s.as_raw(), torch_stream);
    /// # Ok::<(), cuprum_runtime::Error>(())
    /// ```
    ///
    /// # Safety
    ///
    /// `handle` must be a stream that stays alive (not destroyed by its owner) for as long as
    /// the returned [`Stream`] or any clone of it, or any array allocated on it, is in use.
    pub unsafe fn from_raw(device: &Device, handle: u64) -> Result<Stream> {
        match handle {
            0 | 1 => return Ok(Stream::legacy(device)),
            2 => return Ok(Stream::per_thread(device)),
            _ if device.is_cpu() => {
                return Err(Error::Unsupported {
                    what: format!(
                        "the CUDA stream {handle:#x} on the CPU device (which has no CUDA streams; give 0, 1 or 2 for its default streams)"
                    ),
                });
            }
            _ => {}
        }
        device.bind_to_thread()?;
        let ctx = device.cuda_context("a foreign CUDA stream")?;
        let cu = handle as sys::CUstream;
        let mut owner: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: `cu` is a stream handle by the caller's contract; the driver only reads it
        // and writes the context handle into `owner`.
        unsafe { sys::cuStreamGetCtx(cu, &mut owner) }.result().map_err(device.driver_fn("cuStreamGetCtx"))?;
        if owner != ctx.cu_ctx() {
            return Err(Error::Unsupported {
                what: format!(
                    "the CUDA stream {handle:#x}, which belongs to another context than device {}'s primary context (use a stream of that device)",
                    device.ordinal()
                ),
            });
        }
        let mut flags: std::ffi::c_uint = 0;
        // SAFETY: as above; the driver writes the stream's creation flags into `flags`.
        unsafe { sys::cuStreamGetFlags(cu, &mut flags) }.result().map_err(device.driver_fn("cuStreamGetFlags"))?;
        let kind = if flags & sys::CUstream_flags::CU_STREAM_NON_BLOCKING as std::ffi::c_uint != 0 {
            StreamKind::NonBlocking
        } else {
            StreamKind::Blocking
        };
        // SAFETY: `cu` is a live stream of this device's context (checked above), kept alive by
        // its owner as long as this stream is used (the caller's contract); it is borrowed, so
        // neither cudarc nor cuprum destroys it.
        let raw = unsafe { ctx.wrap_borrowed_stream(cu) };
        Ok(Stream { queue: Queue::Cuda(raw), device: device.clone(), kind, _owner: None, foreign: true })
    }

    /// Whether another library owns the stream ([`Stream::from_raw`] of a created stream).
    pub fn is_foreign(&self) -> bool {
        self.foreign
    }

    /// The stream's `CUstream` handle as an integer, for another library (PyTorch's
    /// `torch.cuda.ExternalStream`, CuPy's `ExternalStream`, DLPack's and the CUDA Array
    /// Interface's `stream`): 0 for the legacy default stream, 2 for the per-thread one; on the
    /// CPU device the null streams' numbers (0, 2) and the others' identities, which no CUDA
    /// library can use.
    pub fn as_raw(&self) -> u64 {
        match &self.queue {
            Queue::Cuda(raw) => raw.cu_stream() as u64,
            Queue::Host(id) => *id as u64,
        }
    }

    /// The current stream of this thread's current device.
    pub fn current() -> Result<Stream> {
        Stream::current_for(Device::get_static(Device::current_ordinal())?)
    }

    /// [`Stream::current_for`] borrowed when it is the device's null stream (a thread that set
    /// no stream): what a launch needs, without the reference counts of a clone.
    pub(crate) fn current_ref(device: &'static Device) -> Result<Cow<'static, Stream>> {
        if let Some(s) = current_entry(device.ordinal()) {
            return Ok(Cow::Owned(s));
        }
        let per_thread = env::per_thread_default_stream()?;
        Ok(Cow::Borrowed(&null_streams(device)?[per_thread as usize]))
    }

    /// The current stream of `device` for this thread (its null stream when none was set).
    pub fn current_for(device: &Device) -> Result<Stream> {
        match current_entry(device.ordinal()) {
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
        self.wait_quietly()?;
        crate::bounds::check(self.device.ordinal())
    }

    /// Blocks until all work queued on the stream has finished, like [`Stream::synchronize`], but
    /// leaves a recorded out-of-range index for the next synchronising call: for the runtime's
    /// own set-up work, which must not report (and so swallow) a violation of the user's kernels.
    pub(crate) fn wait_quietly(&self) -> Result<()> {
        self.device.check_alive()?;
        if let Queue::Cuda(raw) = &self.queue {
            raw.synchronize().map_err(self.device.driver_fn("cuStreamSynchronize"))?;
        }
        Ok(())
    }

    /// `Err` when `what` (a copy or memset queued on this stream) cannot be recorded: this
    /// thread is recording a graph, or another thread records this stream (`crate::capture`).
    pub(crate) fn refuse_if_recording(&self, what: &str) -> Result<()> {
        crate::capture::refuse(what)?;
        crate::capture::refuse_foreign(what, || self.is_recorded())
    }

    /// Whether a graph capture is recording this stream (`crate::capture`); a failing query
    /// counts as recording, so that the caller refuses rather than risks it.
    pub(crate) fn is_recorded(&self) -> bool {
        let Queue::Cuda(raw) = &self.queue else {
            return false;
        };
        let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
        // SAFETY: the stream handle is alive (we hold a reference); `status` is a place for the
        // answer.
        let r = unsafe { sys::cuStreamIsCapturing(raw.cu_stream(), &mut status) };
        r != sys::CUresult::CUDA_SUCCESS || status != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE
    }

    /// True when all work queued so far has finished (does not block).
    pub fn is_done(&self) -> Result<bool> {
        let Queue::Cuda(raw) = &self.queue else {
            return Ok(true);
        };
        self.device.bind_to_thread()?;
        // SAFETY: the stream handle is alive (we hold a reference).
        match unsafe { sys::cuStreamQuery(raw.cu_stream()) } {
            sys::CUresult::CUDA_SUCCESS => Ok(true),
            sys::CUresult::CUDA_ERROR_NOT_READY => Ok(false),
            e => Err(self
                .device
                .driver_error("cuStreamQuery", cudarc::driver::DriverError(e))),
        }
    }

    /// Makes later work on this stream wait for `event` (without blocking the host).
    pub fn wait_event(&self, event: &Event) -> Result<()> {
        if event.device != self.device {
            return Err(Error::DeviceMismatch {
                context: "Stream::wait_event (the event's device)".into(),
                expected: self.device.ordinal(),
                found: event.device.ordinal(),
            });
        }
        self.device.check_alive()?;
        match (&self.queue, &event.raw) {
            (Queue::Cuda(raw), Some(ev)) => raw.wait(ev).map_err(self.device.driver_fn("cuStreamWaitEvent")),
            // The CPU's work is done when it is queued: nothing to wait for.
            _ => Ok(()),
        }
    }

    /// The cudarc stream (for launches); an error for a stream of the CPU device. Keep this
    /// `Stream` alive while the handle is in use.
    pub fn raw(&self) -> Result<&Arc<CudaStream>> {
        match &self.queue {
            Queue::Cuda(raw) => Ok(raw),
            Queue::Host(_) => Err(Error::Unsupported {
                what: "the CUDA stream of a stream of the CPU device, which has none".into(),
            }),
        }
    }

    /// The raw `CUstream` handle; null for a stream of the CPU device (which no CUDA call
    /// receives: the CPU device's buffers are host memory).
    pub fn handle(&self) -> sys::CUstream {
        match &self.queue {
            Queue::Cuda(raw) => raw.cu_stream(),
            Queue::Host(_) => std::ptr::null_mut(),
        }
    }

    /// The device the stream belongs to.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// Which kind of stream it is.
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
            self.queue.id()
        }
    }
}

impl PartialEq for Stream {
    fn eq(&self, other: &Self) -> bool {
        self.device == other.device && self.queue.id() == other.queue.id()
    }
}

impl Eq for Stream {}

impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Stream({:?}, device {}, {:#x})",
            self.kind,
            self.device.ordinal(),
            self.queue.id()
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

/// An event (with timing enabled) on one device: a CUDA event, or on the CPU device the time it
/// was recorded at.
pub struct Event {
    /// `None` on the CPU device.
    raw: Option<CudaEvent>,
    /// When it was recorded (the CPU device).
    at: std::sync::Mutex<Option<std::time::Instant>>,
    device: Device,
}

impl Event {
    /// A new event with timing enabled, not yet recorded.
    pub fn new(device: &Device) -> Result<Event> {
        device.check_alive()?;
        let raw = if device.is_cpu() {
            None
        } else {
            Some(
                device
                    .cuda_context("a CUDA event")?
                    .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                    .map_err(device.driver_fn("cuEventCreate"))?,
            )
        };
        Ok(Event {
            raw,
            at: std::sync::Mutex::new(None),
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
        match &self.raw {
            Some(raw) => raw.record(stream.raw()?).map_err(self.device.driver_fn("cuEventRecord")),
            None => {
                *sync::lock(&self.at) = Some(std::time::Instant::now());
                Ok(())
            }
        }
    }

    /// Blocks until the recorded work has finished. Reports the first out-of-range index of a
    /// kernel on this device since the last report ([`Error::IndexOutOfBounds`]).
    pub fn synchronize(&self) -> Result<()> {
        self.device.check_alive()?;
        if let Some(raw) = &self.raw {
            raw.synchronize().map_err(self.device.driver_fn("cuEventSynchronize"))?;
        }
        crate::bounds::check(self.device.ordinal())
    }

    /// True when the recorded work has finished (does not block).
    pub fn is_done(&self) -> Result<bool> {
        let Some(raw) = &self.raw else {
            return Ok(true);
        };
        self.device.bind_to_thread()?;
        raw.try_is_complete().map_err(self.device.driver_fn("cuEventQuery"))
    }

    /// Milliseconds between two recorded events (waits for both).
    pub fn elapsed_ms(start: &Event, end: &Event) -> Result<f32> {
        if start.device != end.device {
            return Err(Error::DeviceMismatch {
                context: "Event::elapsed_ms (the end event's device)".into(),
                expected: start.device.ordinal(),
                found: end.device.ordinal(),
            });
        }
        start.device.check_alive()?;
        match (&start.raw, &end.raw) {
            (Some(a), Some(b)) => a.elapsed_ms(b).map_err(start.device.driver_fn("cuEventElapsedTime")),
            _ => {
                let at = |e: &Event| *sync::lock(&e.at);
                match (at(start), at(end)) {
                    (Some(a), Some(b)) => Ok(if b >= a {
                        (b - a).as_secs_f64() as f32 * 1e3
                    } else {
                        -((a - b).as_secs_f64() as f32 * 1e3)
                    }),
                    _ => Err(Error::Unsupported {
                        what: "the time between events of the CPU device that were not both recorded (record them with `record_on` first)".into(),
                    }),
                }
            }
        }
    }

    /// The device the event belongs to.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The cudarc event; an error for an event of the CPU device.
    pub fn raw(&self) -> Result<&CudaEvent> {
        self.raw.as_ref().ok_or_else(|| Error::Unsupported {
            what: "the CUDA event of an event of the CPU device, which has none".into(),
        })
    }
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.raw {
            Some(raw) => write!(f, "Event(device {}, {:p})", self.device.ordinal(), raw.cu_event()),
            None => write!(f, "Event(cpu)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_and_events_of_the_cpu_device() {
        let cpu = Device::cpu();
        let null = Stream::null(&cpu).unwrap();
        assert!(null.is_null() && null.is_done().unwrap());
        null.synchronize().unwrap();
        assert!(null.raw().is_err() && null.handle().is_null());
        let (a, b) = (Stream::new(&cpu).unwrap(), Stream::new_non_blocking(&cpu).unwrap());
        assert!(a != b && a != null && a == a.clone());
        assert_eq!(Stream::current_for(&cpu).unwrap(), null);
        {
            let _g = a.use_scoped();
            assert_eq!(Stream::current_for(&cpu).unwrap(), a);
            b.set_current();
            assert_eq!(Stream::current_for(&cpu).unwrap(), b);
        }
        assert_eq!(Stream::current_for(&cpu).unwrap(), null);
        let start = Event::record(&a).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let end = Event::record(&b).unwrap();
        end.synchronize().unwrap();
        a.wait_event(&end).unwrap();
        assert!(end.is_done().unwrap());
        let ms = Event::elapsed_ms(&start, &end).unwrap();
        assert!((1.5..1000.0).contains(&ms), "{ms}");
        assert!(Event::elapsed_ms(&start, &Event::new(&cpu).unwrap()).is_err());
    }

    #[test]
    fn current_stream_without_gpu_is_an_error() {
        if Device::count().is_err() {
            let e = Stream::current().unwrap_err();
            assert!(e.is_no_gpu(), "{e}");
        }
    }
}
