//! The device memory pool: one per device, stream ordered, like CuPy's `MemoryPool`.
//!
//! - Sizes are rounded up to multiples of 512 bytes ([`ROUNDING`]); a 400-byte array uses a
//!   512-byte block, as in CuPy (`used_bytes() == 512`).
//! - A dropped [`DeviceBuffer`] goes back to the pool (`used_bytes` falls, `total_bytes` does
//!   not). The pool works like CuPy's arena (`memory/arena.rs` keeps the books, as plain integers):
//!   a request takes the smallest cached free chunk that is large enough (best fit) and splits
//!   off the rest as a free chunk of the same driver allocation; a freed chunk merges with its
//!   free neighbours in the same allocation on the same stream. Only when nothing fits does the
//!   pool call `cuMemAlloc`, for exactly the rounded size. Small requests (at most 1 MiB) and
//!   large ones are served from separate allocations, as in PyTorch's caching allocator: a small
//!   request never splits a large allocation, so a few long-lived small arrays cannot keep
//!   gigabytes from `free_all_blocks`.
//! - Stream order: a chunk freed on stream S is reused on S at once (stream order protects it);
//!   an allocation on another stream T takes it only after making T wait on an event recorded on
//!   S, so T's work cannot touch the chunk before S's pending work on it is done. The host never
//!   blocks for this. A stream's own chunks are preferred to other streams'; another thread's
//!   per-thread default stream cannot be waited on from here, so its chunks are not taken. A
//!   chunk freed on a foreign stream (`Stream::from_raw`) is ordered by an event recorded at
//!   the free instead (`memory/freed_on.rs`): its owner may destroy that stream afterwards.
//! - [`MemoryPool::free_all_blocks`] returns to the driver every allocation with no live chunk;
//!   a partly used allocation stays, with its free chunks cached (as in CuPy).
//! - A limit (`CUPY_GPU_MEMORY_LIMIT` read when the pool is first used, or
//!   [`MemoryPool::set_limit`]) caps the bytes the pool holds; going past it, or the driver
//!   running out of memory, is [`Error::OutOfMemory`] after the pool has released its entirely
//!   free allocations and retried once.
//!
//! A buffer belongs to the stream it was allocated on. If you use it on another stream, make
//! sure that work is finished (or ordered before the allocating stream) before dropping it, as
//! with CuPy.
//!
//! Not done: CuPy's size bins for small requests (a `BTreeMap` by size does the best fit), and
//! its `malloc_async` pool (`cuMemAllocAsync`).
//!
//! The CPU device has no pool: a buffer on it is a host allocation of its own (64-byte aligned,
//! zeroed), freed when the buffer is dropped, and every host access to it (the copies here,
//! kernels run by the host) holds the buffer's lock, shared to read and exclusive to write, so
//! that arrays sharing it from several threads never race (docs/cpu.md).

mod arena;
mod freed_on;
mod peer;

use std::fmt;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use cudarc::driver::DriverError;
use cudarc::driver::result;
use cudarc::driver::sys::CUresult;

use crate::device::Device;
use crate::env;
use crate::error::{Error, Result};
use crate::stream::{Stream, StreamKind};
use crate::sync;

use arena::{Arena, Released};
use freed_on::FreedOn;

/// Allocation granularity in bytes.
pub const ROUNDING: usize = 512;

/// The pool's size for a request of `bytes` (a multiple of [`ROUNDING`]); `None` on overflow.
pub fn rounded_size(bytes: usize) -> Option<usize> {
    bytes
        .checked_add(ROUNDING - 1)
        .map(|b| b / ROUNDING * ROUNDING)
}

struct PoolInner {
    device: Device,
    arena: Mutex<Arena<FreedOn>>,
    /// The event of each foreign stream's frees, by the stream's pool key (`FreedOn::Foreign`).
    foreign_frees: Mutex<std::collections::HashMap<usize, Arc<cudarc::driver::CudaEvent>>>,
    /// Bytes held from the driver, plus those reserved for a `cuMemAlloc` in flight: the
    /// arena's `held` is this minus the reservations. Kept apart so that the limit check is
    /// one atomic step without the lock.
    held: AtomicUsize,
    /// Limit in bytes; `usize::MAX` when unlimited.
    limit: AtomicUsize,
}

impl PoolInner {
    /// What a chunk freed now on the foreign stream `stream` (pool key `key`) is ordered after:
    /// the key's event, re-recorded on the stream (alive now: an array on it is being dropped).
    /// If that fails, the device is waited for and the event left as it was (its last record,
    /// or none: complete).
    fn foreign_free(&self, key: usize, stream: &Stream) -> FreedOn {
        let mut events = sync::lock(&self.foreign_frees);
        let event = match events.get(&key) {
            Some(e) => Some(e.clone()),
            None => self.device.cuda_context("a pool event").ok().and_then(|c| c.new_event(None).ok()).map(Arc::new),
        };
        let recorded = match (&event, stream.raw()) {
            (Some(e), Ok(raw)) => e.record(raw).is_ok(),
            _ => false,
        };
        if !recorded {
            log::warn!(target: "cuprum::memory", "recording the free of a chunk on a foreign stream failed; waiting for the device");
            let _ = wait_device(&self.device);
        }
        match event {
            Some(e) => {
                events.insert(key, e.clone());
                FreedOn::Foreign { event: e, kind: stream.kind() }
            }
            // No event could be made: the device was waited for, so the legacy stream (which
            // is never destroyed) orders the chunk as well as any.
            None => FreedOn::Stream(Stream::legacy(&self.device)),
        }
    }
}

/// The memory pool of one device. Cheap to clone; all clones are the same pool.
#[derive(Clone)]
pub struct MemoryPool {
    inner: Arc<PoolInner>,
}

impl MemoryPool {
    /// The pool of `device` (created on first use; `CUPY_GPU_MEMORY_LIMIT` is read then).
    pub fn for_device(device: &Device) -> Result<MemoryPool> {
        if device.is_cpu() {
            return Err(Error::Unsupported {
                what: "a memory pool of the CPU device: its arrays are host allocations of their own (docs/cpu.md)".into(),
            });
        }
        static POOLS: Mutex<Vec<Option<MemoryPool>>> = Mutex::new(Vec::new());
        let mut pools = sync::lock(&POOLS);
        let i = device.ordinal();
        if pools.len() <= i {
            pools.resize(i + 1, None);
        }
        if let Some(p) = &pools[i] {
            return Ok(p.clone());
        }
        let limit = env::gpu_memory_limit()?
            .resolve(device.total_memory())
            .unwrap_or(usize::MAX);
        let pool = MemoryPool {
            inner: Arc::new(PoolInner {
                device: device.clone(),
                arena: Mutex::new(Arena::new()),
                foreign_frees: Mutex::new(std::collections::HashMap::new()),
                held: AtomicUsize::new(0),
                limit: AtomicUsize::new(limit),
            }),
        };
        pools[i] = Some(pool.clone());
        Ok(pool)
    }

    /// The pool of this thread's current device.
    pub fn current() -> Result<MemoryPool> {
        MemoryPool::for_device(&Device::current()?)
    }

    /// The device whose memory the pool manages.
    pub fn device(&self) -> &Device {
        &self.inner.device
    }

    /// Bytes in live buffers (rounded sizes).
    pub fn used_bytes(&self) -> usize {
        sync::lock(&self.inner.arena).used()
    }

    /// Bytes the pool holds from the driver: live buffers plus cached free chunks.
    pub fn total_bytes(&self) -> usize {
        self.inner.held.load(Ordering::Relaxed)
    }

    /// Bytes in cached free chunks.
    pub fn free_bytes(&self) -> usize {
        sync::lock(&self.inner.arena).free_bytes()
    }

    /// Number of cached free chunks (a split or merged chunk counts once).
    pub fn n_free_blocks(&self) -> usize {
        sync::lock(&self.inner.arena).free_chunks()
    }

    /// The limit in bytes, `None` when unlimited.
    pub fn limit(&self) -> Option<usize> {
        match self.inner.limit.load(Ordering::Relaxed) {
            usize::MAX => None,
            l => Some(l),
        }
    }

    /// Sets (`Some(bytes)`) or removes (`None`, or `Some(0)`) the limit, overriding
    /// `CUPY_GPU_MEMORY_LIMIT`. Already allocated memory is not affected.
    pub fn set_limit(&self, limit: Option<usize>) {
        let l = match limit {
            None | Some(0) => usize::MAX,
            Some(l) => l,
        };
        self.inner.limit.store(l, Ordering::Relaxed);
    }

    /// Sets the limit to a fraction (0..=1) of the device's total memory.
    pub fn set_limit_fraction(&self, fraction: f64) -> Result<()> {
        if !(0.0..=1.0).contains(&fraction) {
            return Err(Error::Unsupported {
                what: format!("memory limit fraction {fraction}: use a value in 0..=1"),
            });
        }
        let bytes = (fraction * self.inner.device.total_memory() as f64) as usize;
        self.set_limit(Some(bytes));
        Ok(())
    }

    /// Returns to the driver every allocation with no live buffer in it. Free chunks of partly
    /// used allocations stay cached (live buffers are untouched).
    pub fn free_all_blocks(&self) -> Result<()> {
        let released = sync::lock(&self.inner.arena).release();
        self.release(released)
    }

    fn release(&self, released: Released<FreedOn>) -> Result<()> {
        if released.allocations.is_empty() {
            return Ok(());
        }
        let inner = &self.inner;
        // Work queued before the chunks were freed may still use them. (Another thread's
        // per-thread default stream can only be waited for through the whole device.)
        let idle = inner.device.bind_to_thread().and_then(|()| {
            if released
                .streams
                .iter()
                .any(|s| s.kind() == StreamKind::PerThread)
            {
                wait_device(&inner.device)
            } else {
                released.streams.iter().try_for_each(FreedOn::wait)
            }
        });
        let mut first_err = idle.err();
        // After a failed wait the allocations are leaked rather than freed under pending work.
        let may_free = first_err.is_none();
        for (base, size) in released.allocations {
            if may_free {
                // SAFETY: `base` came from `cuMemAlloc` in this pool; the arena has just removed
                // the allocation, which had no live chunk (so no buffer points into it), and
                // every stream its free chunks were on is idle.
                if let Err(e) = unsafe { result::free_sync(base) } {
                    first_err.get_or_insert(inner.device.driver_error("cuMemFree", e));
                }
            }
            inner.held.fetch_sub(size, Ordering::Relaxed);
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Allocates `bytes` for use on `stream` (which must belong to this pool's device).
    pub fn alloc(&self, bytes: usize, stream: &Stream) -> Result<DeviceBuffer> {
        crate::capture::refuse("allocating device memory")?;
        let inner = &self.inner;
        // A cached chunk needs no driver call: check here that the context is not lost.
        inner.device.check_alive()?;
        if stream.device() != &inner.device {
            return Err(Error::DeviceMismatch {
                context: "MemoryPool::alloc (the stream's device)".into(),
                expected: inner.device.ordinal(),
                found: stream.device().ordinal(),
            });
        }
        let key = stream.key();
        let make = |ptr, size| DeviceBuffer {
            ptr,
            len: bytes,
            size,
            stream: stream.clone(),
            owner: Owner::Pool {
                key,
                pool: self.inner.clone(),
            },
        };
        if bytes == 0 {
            return Ok(make(0, 0));
        }
        let oom = |size: usize| Error::OutOfMemory {
            device: inner.device.ordinal(),
            requested: size,
            limit: self.limit(),
            used: self.used_bytes(),
            held: self.total_bytes(),
        };
        let size = rounded_size(bytes).ok_or_else(|| oom(bytes))?;

        // 1. The best-fitting cached chunk: this stream's first, else another stream's (not
        //    another thread's per-thread default stream, which cannot be ordered against here).
        let taken = sync::lock(&inner.arena).take(size, key, |s| s.kind() != StreamKind::PerThread);
        if let Some(t) = taken {
            if let Some((other_key, other)) = t.from {
                // Order this stream after the work pending on the chunk's old stream (both are
                // CUDA streams: a pool's streams are its device's).
                let ordered = other.order_before(stream);
                if let Err(e) = ordered {
                    sync::lock(&inner.arena).free(t.addr, other_key, &other);
                    return Err(e);
                }
            }
            return Ok(make(t.addr, size));
        }

        // 2. Within the limit (releasing free allocations if that makes room)?
        if !self.reserve(size) {
            self.free_all_blocks()?;
            if !self.reserve(size) {
                return Err(oom(size));
            }
        }

        // 3. From the driver; on OOM release the free allocations and retry once.
        inner.device.bind_to_thread().inspect_err(|_| {
            inner.held.fetch_sub(size, Ordering::Relaxed);
        })?;
        // SAFETY: the context is bound; the memory is uninitialised bytes owned by the pool.
        let mut r = unsafe { result::malloc_sync(size) };
        if matches!(r, Err(DriverError(CUresult::CUDA_ERROR_OUT_OF_MEMORY))) {
            if let Err(e) = self.free_all_blocks() {
                log::warn!(target: "cuprum::memory", "freeing cached blocks after an OOM failed: {e}");
            }
            inner.device.bind_to_thread().inspect_err(|_| {
                inner.held.fetch_sub(size, Ordering::Relaxed);
            })?;
            // SAFETY: as above.
            r = unsafe { result::malloc_sync(size) };
        }
        match r {
            Ok(ptr) => {
                sync::lock(&inner.arena).add_allocation(ptr, size);
                Ok(make(ptr, size))
            }
            Err(e) => {
                inner.held.fetch_sub(size, Ordering::Relaxed);
                if e.0 == CUresult::CUDA_ERROR_OUT_OF_MEMORY {
                    Err(oom(size))
                } else {
                    Err(inner.device.driver_error("cuMemAlloc", e))
                }
            }
        }
    }

    /// Adds `size` to the held bytes if that stays within the limit.
    fn reserve(&self, size: usize) -> bool {
        let limit = self.inner.limit.load(Ordering::Relaxed);
        self.inner
            .held
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |h| {
                h.checked_add(size).filter(|&n| n <= limit)
            })
            .is_ok()
    }
}

impl fmt::Debug for MemoryPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryPool")
            .field("device", &self.inner.device.ordinal())
            .field("used_bytes", &self.used_bytes())
            .field("total_bytes", &self.total_bytes())
            .field("n_free_blocks", &self.n_free_blocks())
            .field("limit", &self.limit())
            .finish()
    }
}

/// An owned allocation of a device: a chunk of a CUDA device's [`MemoryPool`], returned to the
/// pool when dropped, or host memory of the CPU device, freed when dropped.
pub struct DeviceBuffer {
    ptr: u64,
    /// Requested bytes.
    len: usize,
    /// Rounded bytes (the chunk's size; the host allocation's).
    size: usize,
    stream: Stream,
    owner: Owner,
}

/// Where a buffer's memory comes from.
enum Owner {
    /// A chunk of a pool, with the pool's key of the buffer's stream on the allocating thread.
    Pool { key: usize, pool: Arc<PoolInner> },
    /// Host memory of the CPU device (`size` bytes, [`HOST_ALIGN`]-aligned; none when `size` is
    /// 0), the lock every host access to it holds, and the allocation it lies in (`base`, of
    /// [`host_layout`]`(size)`; 0 when `size` is 0).
    Host { device: Device, lock: RwLock<()>, base: u64 },
    /// Memory another library allocated and owns (DLPack, the CUDA Array Interface, raw
    /// parts): never returned to a pool nor freed by cuprum; `keep` (what keeps it alive: a
    /// DLPack deleter's guard, a Python object) is dropped with the buffer. On the CPU device,
    /// the lock every host access holds.
    Foreign { device: Device, lock: Option<RwLock<()>>, _keep: Box<dyn std::any::Any + Send + Sync> },
}

/// The alignment of the CPU device's buffers (a cache line; every element type needs less).
const HOST_ALIGN: usize = 64;

/// The alignment the allocation of a host buffer asks for: the system allocator's own (16 bytes
/// on 64-bit targets), so that `alloc_zeroed` is `calloc`, whose large blocks are fresh pages
/// the kernel zeroes when they are first touched (by the threads that write them). A larger
/// alignment makes Rust's allocator write every byte at once, on the allocating thread: 30 ms
/// for a 64 MB buffer, more than a parallel `cumsum` of it. The buffer starts at the first
/// [`HOST_ALIGN`] boundary inside the allocation, which has room for it.
const ASKED_ALIGN: usize = 16;

/// The layout of the allocation of a host buffer of `size` (> 0) bytes.
fn host_layout(size: usize) -> Option<std::alloc::Layout> {
    std::alloc::Layout::from_size_align(size.checked_add(HOST_ALIGN - ASKED_ALIGN)?, ASKED_ALIGN).ok()
}

impl DeviceBuffer {
    /// Allocates `bytes` for use on `stream`: from the pool of `stream`'s device, or on the CPU
    /// device zeroed host memory.
    pub fn alloc(bytes: usize, stream: &Stream) -> Result<DeviceBuffer> {
        if stream.device().is_cpu() {
            return DeviceBuffer::alloc_host(bytes, stream);
        }
        MemoryPool::for_device(stream.device())?.alloc(bytes, stream)
    }

    fn alloc_host(bytes: usize, stream: &Stream) -> Result<DeviceBuffer> {
        crate::capture::refuse("allocating memory")?;
        let oom = || Error::OutOfMemory {
            device: stream.device().ordinal(),
            requested: bytes,
            limit: None,
            used: 0,
            held: 0,
        };
        let (ptr, base) = if bytes == 0 {
            (0, 0)
        } else {
            let layout = host_layout(bytes).ok_or_else(oom)?;
            // SAFETY: `layout` has a non-zero size (`bytes > 0`).
            let p = unsafe { std::alloc::alloc_zeroed(layout) };
            if p.is_null() {
                return Err(oom());
            }
            // The first HOST_ALIGN boundary: at most HOST_ALIGN - ASKED_ALIGN bytes in (`p` is
            // ASKED_ALIGN-aligned), so `bytes` fit after it.
            let base = p as u64;
            (base.next_multiple_of(HOST_ALIGN as u64), base)
        };
        Ok(DeviceBuffer {
            ptr,
            len: bytes,
            size: bytes,
            stream: stream.clone(),
            owner: Owner::Host {
                device: stream.device().clone(),
                lock: RwLock::new(()),
                base,
            },
        })
    }

    /// A buffer over `len` bytes at `ptr` of `device` that another library allocated and owns:
    /// cuprum never frees it nor returns it to a pool; `keep` is dropped when the buffer is (the
    /// last array viewing it), and should release the memory to its owner or keep it alive
    /// until then. `stream` orders cuprum's copies of it.
    ///
    /// # Safety
    ///
    /// `ptr..ptr + len` must be memory of `device` (device memory of its context, memory the
    /// device can address such as managed memory, or host memory for the CPU device), valid
    /// for reads and writes until `keep` is dropped, and not freed or reused by anyone before
    /// then; no one else may write it while cuprum's kernels may read it (the usual stream
    /// ordering between libraries).
    pub unsafe fn foreign(
        ptr: u64,
        len: usize,
        device: &Device,
        stream: &Stream,
        keep: Box<dyn std::any::Any + Send + Sync>,
    ) -> Result<DeviceBuffer> {
        if stream.device() != device {
            return Err(Error::DeviceMismatch {
                context: "foreign memory (the stream's device)".into(),
                expected: device.ordinal(),
                found: stream.device().ordinal(),
            });
        }
        if ptr == 0 && len > 0 {
            return Err(Error::InvalidSlice { detail: format!("a null pointer for {len} bytes of foreign memory") });
        }
        Ok(DeviceBuffer {
            ptr,
            len,
            size: len,
            stream: stream.clone(),
            owner: Owner::Foreign {
                device: device.clone(),
                lock: device.is_cpu().then(|| RwLock::new(())),
                _keep: keep,
            },
        })
    }

    /// Whether another library owns the memory ([`DeviceBuffer::foreign`]).
    pub fn is_foreign(&self) -> bool {
        matches!(self.owner, Owner::Foreign { .. })
    }

    /// The device address (`CUdeviceptr`; a host address on the CPU device); 0 for an empty
    /// buffer.
    pub fn ptr(&self) -> u64 {
        self.ptr
    }

    /// On the CPU device, the lock every host access to the memory holds (shared to read,
    /// exclusive to write); `None` for a CUDA device's buffer.
    pub(crate) fn host_lock(&self) -> Option<&RwLock<()>> {
        match &self.owner {
            Owner::Host { lock, .. } => Some(lock),
            Owner::Foreign { lock, .. } => lock.as_ref(),
            Owner::Pool { .. } => None,
        }
    }

    /// The requested size in bytes.
    pub fn len_bytes(&self) -> usize {
        self.len
    }

    /// The size of the buffer's pool chunk in bytes (the request rounded up to 512).
    pub fn capacity_bytes(&self) -> usize {
        self.size
    }

    /// The device the memory is on.
    pub fn device(&self) -> &Device {
        match &self.owner {
            Owner::Pool { pool, .. } => &pool.device,
            Owner::Host { device, .. } | Owner::Foreign { device, .. } => device,
        }
    }

    /// The stream the buffer was allocated on.
    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    fn check_range(&self, byte_offset: usize, n: usize, what: &str) -> Result<()> {
        match byte_offset.checked_add(n) {
            Some(end) if end <= self.len => Ok(()),
            _ => Err(Error::InvalidSlice {
                detail: format!(
                    "{what} of {n} bytes at byte offset {byte_offset} is outside the {}-byte buffer",
                    self.len
                ),
            }),
        }
    }

    /// Copies `src` into the buffer at `byte_offset`, queued on `stream`. The host data is
    /// staged by the driver before this returns, so `src` may be dropped afterwards.
    pub fn write_bytes(&self, byte_offset: usize, src: &[u8], stream: &Stream) -> Result<()> {
        stream.refuse_if_recording("a copy from host memory")?;
        self.check_range(byte_offset, src.len(), "a write")?;
        if src.is_empty() {
            return Ok(());
        }
        self.check_stream(stream)?;
        if let Some(lock) = self.host_lock() {
            let _write = sync::write(lock);
            // SAFETY: the destination range is inside this live host allocation (checked above),
            // which no other host access touches while the lock is held; `src` is a valid slice
            // of the same length that cannot overlap it (`src` is borrowed from elsewhere: no
            // reference into the buffer's memory is ever handed out).
            unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), (self.ptr as *mut u8).add(byte_offset), src.len()) };
            return Ok(());
        }
        self.device().bind_to_thread()?;
        // SAFETY: the destination range is inside this live allocation (checked above) and the
        // stream belongs to its device. From pageable host memory the driver copies `src` to a
        // staging buffer before returning, so `src` need not outlive the call.
        unsafe { result::memcpy_htod_async(self.ptr + byte_offset as u64, src, stream.handle()) }
            .map_err(self.device().driver_fn("cuMemcpyHtoDAsync"))
    }

    /// Sets every byte of the buffer to zero, queued on `stream`.
    pub fn zero(&self, stream: &Stream) -> Result<()> {
        stream.refuse_if_recording("a memset of a buffer")?;
        if self.len == 0 {
            return Ok(());
        }
        self.check_stream(stream)?;
        if let Some(lock) = self.host_lock() {
            let _write = sync::write(lock);
            // SAFETY: the range is exactly this live host allocation, which no other host access
            // touches while the lock is held.
            unsafe { std::ptr::write_bytes(self.ptr as *mut u8, 0, self.len) };
            return Ok(());
        }
        self.device().bind_to_thread()?;
        // SAFETY: the range is exactly this live allocation, and the stream belongs to its device
        // (checked above); the memset is ordered on the stream like every other use of the buffer.
        unsafe { result::memset_d8_async(self.ptr, 0, self.len, stream.handle()) }
            .map_err(self.device().driver_fn("cuMemsetD8Async"))
    }

    /// Copies bytes from the buffer at `byte_offset` into `dst`, ordered on `stream`, and waits
    /// for the copy.
    pub fn read_bytes(&self, byte_offset: usize, dst: &mut [u8], stream: &Stream) -> Result<()> {
        stream.refuse_if_recording("a copy to host memory")?;
        self.check_range(byte_offset, dst.len(), "a read")?;
        if dst.is_empty() {
            return Ok(());
        }
        self.check_stream(stream)?;
        if self.host_lock().is_some() {
            // SAFETY: `[u8]` and `[MaybeUninit<u8>]` have one layout; `read_host` only writes.
            let dst = unsafe { &mut *(dst as *mut [u8] as *mut [MaybeUninit<u8>]) };
            // As on a GPU, a copy to the host reports an index violation of a kernel (docs/semantics.md, row 18).
            self.read_host(byte_offset, dst)?;
            return stream.synchronize();
        }
        self.device().bind_to_thread()?;
        // SAFETY: the source range is inside this live allocation (checked above); `dst` is a
        // valid, exclusively borrowed host slice of the same length, and we synchronize the
        // stream before returning, so the copy has completed when `dst` is released.
        unsafe { result::memcpy_dtoh_async(dst, self.ptr + byte_offset as u64, stream.handle()) }
            .map_err(self.device().driver_fn("cuMemcpyDtoHAsync"))?;
        stream.synchronize()
    }

    /// [`read_bytes`](Self::read_bytes) into memory that need not be initialised (a vector's
    /// spare capacity); when it returns `Ok`, every byte of `dst` has been written.
    pub fn read_uninit(&self, byte_offset: usize, dst: &mut [MaybeUninit<u8>], stream: &Stream) -> Result<()> {
        stream.refuse_if_recording("a copy to host memory")?;
        self.check_range(byte_offset, dst.len(), "a read")?;
        if dst.is_empty() {
            return Ok(());
        }
        self.check_stream(stream)?;
        if self.host_lock().is_some() {
            // As on a GPU, a copy to the host reports an index violation of a kernel (docs/semantics.md, row 18).
            self.read_host(byte_offset, dst)?;
            return stream.synchronize();
        }
        self.device().bind_to_thread()?;
        // SAFETY: as in `read_bytes`; the driver only writes `dst` (never reads it), so its bytes
        // need not be initialised, and after the synchronize below all of them are.
        unsafe { result::memcpy_dtoh_async(dst, self.ptr + byte_offset as u64, stream.handle()) }
            .map_err(self.device().driver_fn("cuMemcpyDtoHAsync"))?;
        stream.synchronize()
    }

    /// The CPU device's read: a copy out of the host allocation under the shared lock.
    fn read_host(&self, byte_offset: usize, dst: &mut [MaybeUninit<u8>]) -> Result<()> {
        let Some(lock) = self.host_lock() else {
            return Err(Error::Unsupported { what: "a host read of a CUDA device's buffer".into() });
        };
        let _read = sync::read(lock);
        // SAFETY: the source range is inside this live host allocation (checked by the callers),
        // which no host access writes while the shared lock is held; `dst` is an exclusively
        // borrowed slice of the same length outside it (no reference into the buffer's memory is
        // handed out), and every byte of it is written here.
        unsafe {
            std::ptr::copy_nonoverlapping(
                (self.ptr as *const u8).add(byte_offset),
                dst.as_mut_ptr().cast::<u8>(),
                dst.len(),
            )
        };
        Ok(())
    }

    fn check_stream(&self, stream: &Stream) -> Result<()> {
        if stream.device() != self.device() {
            return Err(Error::DeviceMismatch {
                context: "a copy on a stream of another device".into(),
                expected: self.device().ordinal(),
                found: stream.device().ordinal(),
            });
        }
        Ok(())
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        if self.size == 0 {
            return;
        }
        match &self.owner {
            Owner::Pool { key, pool } => {
                let on = if self.stream.is_foreign() {
                    pool.foreign_free(*key, &self.stream)
                } else {
                    FreedOn::Stream(self.stream.clone())
                };
                let back = sync::lock(&pool.arena).free(self.ptr, *key, &on);
                debug_assert!(back, "{self:?} was not a live chunk of its pool");
            }
            Owner::Host { base, .. } => {
                if let Some(layout) = host_layout(self.size).filter(|_| self.size > 0) {
                    // SAFETY: `base` was allocated in `alloc_host` with this layout (the same
                    // size) and is freed only here, when the last owner is gone.
                    unsafe { std::alloc::dealloc(*base as *mut u8, layout) };
                }
            }
            // The owner's guard is dropped with the owner: it releases the memory.
            Owner::Foreign { .. } => {}
        }
    }
}

impl fmt::Debug for DeviceBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "DeviceBuffer({:#x}, {} bytes, device {})",
            self.ptr,
            self.len,
            self.device().ordinal()
        )
    }
}

/// Waits for `stream` without reporting index errors (for the runtime's own waits, such as the
/// memory pool's before it frees memory, which must not consume the user's report).
pub(crate) fn wait_stream(stream: &Stream) -> Result<()> {
    match stream.raw() {
        Ok(raw) => raw.synchronize().map_err(Error::driver_fn("cuStreamSynchronize")),
        // The CPU device's work is done when it is queued.
        Err(_) => Ok(()),
    }
}

/// Waits for all work on `device` without reporting index errors (see [`wait_stream`]).
pub(crate) fn wait_device(device: &Device) -> Result<()> {
    match device.context() {
        Ok(ctx) => ctx.synchronize().map_err(Error::driver_fn("cuCtxSynchronize")),
        Err(_) => Ok(()),
    }
}


#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding() {
        assert_eq!(rounded_size(0), Some(0));
        assert_eq!(rounded_size(1), Some(512));
        assert_eq!(rounded_size(400), Some(512));
        assert_eq!(rounded_size(512), Some(512));
        assert_eq!(rounded_size(513), Some(1024));
        assert_eq!(rounded_size(usize::MAX), None);
    }
}
