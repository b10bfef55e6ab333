//! Index checks in kernels, the host side (docs/semantics.md, row 18; docs/runtime.md, "Index
//! checks").
//!
//! A generated kernel skips an out-of-range access and writes the first violation of the context
//! into one record, [`OobRecord`], which lives in mapped pinned host memory (one per device's
//! context, allocated the first time a module that checks indices is loaded there). Every module
//! that includes `cuprum/bounds.h` has its own `__device__` pointer to that record
//! ([`SLOT_SYMBOL`]): `on_module_load` sets it right after the module is loaded, once per load.
//! `check` runs at every synchronising call (stream, event and device `synchronize`, and so every
//! copy to the host: `to_vec`, `Global::read`, ...): it reads the record's flag from host memory,
//! with no driver call, and turns a complete record into [`Error::IndexOutOfBounds`], clearing it
//! for the next one. Launches do nothing here: the checks cost the host nothing per launch.
//!
//! One record per context means that a violation is reported by the next synchronising call on
//! any stream of that device, which may be earlier than the synchronisation of the stream the
//! kernel ran on (never later).

use std::ffi::{CString, c_void};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};

use cudarc::driver::result;
use cudarc::driver::sys::{self, CUresult};

use crate::error::{Error, Result};
use crate::sync;

pub use cuprum_abi::bounds::{OobRecord, SLOT_SYMBOL};
use cuprum_abi::bounds::{FLAG_COMPLETE, FLAG_EMPTY};

/// [`OobRecord::flag`] while a host thread copies the record out (device threads see it taken).
const FLAG_READING: u32 = 3;

/// A device's record: its host address, the device address the modules point at, and the
/// private non-blocking stream that writes module slots (so that setting a slot never waits for
/// the user's work).
struct DeviceRecord {
    host: *mut OobRecord,
    device_ptr: u64,
    stream: sys::CUstream,
}

// SAFETY: `host` is pinned memory that lives for the rest of the process (never freed) and is
// only accessed through atomics and volatile reads/writes; the stream handle is a driver handle
// usable from any thread with the context bound.
unsafe impl Send for DeviceRecord {}
// SAFETY: as above.
unsafe impl Sync for DeviceRecord {}

/// Per device ordinal, sized by the device count on first use.
fn slots() -> Option<&'static [OnceLock<DeviceRecord>]> {
    static SLOTS: OnceLock<Box<[OnceLock<DeviceRecord>]>> = OnceLock::new();
    if let Some(s) = SLOTS.get() {
        return Some(s);
    }
    // Through the guarded probe: the CPU device asks without a driver.
    let n = crate::driver::driver_device_count().ok()?;
    Some(SLOTS.get_or_init(|| (0..n).map(|_| OnceLock::new()).collect()))
}

/// The record of device `ordinal`, allocated (zeroed) on first use, with the device's context
/// made current by `bind`: when cuprum creates the context ([`on_context_created`]), else at the
/// first load of a module with checked indexing. The pinned, device-mapped page is the context's
/// first pinned allocation, 1.2-1.4 ms on the H200 machine's host (a second one costs 0.01 ms),
/// which a process whose context another library made and whose kernels check no index never
/// pays. Allocated on another thread while a module loads, it only made that load slower (the
/// driver serializes them: measured, 2.1 ms against 1.5 ms).
fn record(ordinal: usize, bind: impl FnOnce() -> Result<()>) -> Result<&'static DeviceRecord> {
    let slot = slots()
        .and_then(|s| s.get(ordinal))
        .ok_or(Error::InvalidDevice { ordinal, count: slots().map_or(0, <[_]>::len) })?;
    if let Some(r) = slot.get() {
        return Ok(r);
    }
    static ALLOCATING: Mutex<()> = Mutex::new(());
    let _g = sync::lock(&ALLOCATING);
    if let Some(r) = slot.get() {
        return Ok(r);
    }
    bind()?;
    let size = std::mem::size_of::<OobRecord>();
    // SAFETY: the context is bound; the allocation is checked below and never freed (the
    // record outlives every module that points at it).
    let host = unsafe { result::malloc_host(size, sys::CU_MEMHOSTALLOC_DEVICEMAP) }
        .map_err(Error::driver_fn("cuMemHostAlloc"))? as *mut OobRecord;
    // SAFETY: `host` is a fresh allocation of `size` bytes, suitably aligned (page-aligned).
    unsafe { host.write_volatile(OobRecord::EMPTY) };
    let mut device_ptr: sys::CUdeviceptr = 0;
    // SAFETY: `host` was allocated by cuMemHostAlloc with DEVICEMAP in this context.
    unsafe { sys::cuMemHostGetDevicePointer_v2(&mut device_ptr, host as *mut c_void, 0) }
        .result()
        .map_err(Error::driver_fn("cuMemHostGetDevicePointer"))?;
    let stream = result::stream::create(result::stream::StreamKind::NonBlocking)
        .map_err(Error::driver_fn("cuStreamCreate"))?;
    let _ = slot.set(DeviceRecord { host, device_ptr, stream });
    Ok(slot.get().expect("set above"))
}

/// Allocates the device's record when cuprum has just created the device's primary context: next
/// to that (a hundred milliseconds and more) the record's cost is noise, and the first kernel call
/// then does not pay it. When another library made the context (torch's, in an extension called
/// from Python), the record waits for the first module with checked indexing ([`record`]). A
/// failure here is retried, and reported, at that module load.
pub(crate) fn on_context_created(ordinal: usize, bind: impl FnOnce() -> Result<()>) {
    if let Err(e) = record(ordinal, bind) {
        log::debug!(target: "cuprum::bounds", "index-check record for device {ordinal}: {e}");
    }
}

/// Points a freshly loaded module's slot (`cuprum_oob_slot_v<>`, [`SLOT_SYMBOL`]) at the device's
/// record; a module without the symbol (no checked indexing in its code, or CUDA C that does not
/// include `cuprum/bounds.h`) is left alone, and needs no record. Called by the module loader with the device's context bound.
pub(crate) fn on_module_load(ordinal: usize, bind: impl FnOnce() -> Result<()>, module: sys::CUmodule) -> Result<()> {
    let name = CString::new(SLOT_SYMBOL).expect("no NUL in the symbol");
    // SAFETY: `module` was just loaded in the bound context.
    let (ptr, size) = match unsafe { result::module::get_global(module, name) } {
        Ok(g) => g,
        Err(e) if e.0 == CUresult::CUDA_ERROR_NOT_FOUND => return Ok(()),
        Err(e) => return Err(Error::driver("cuModuleGetGlobal", e)),
    };
    if size != std::mem::size_of::<u64>() {
        return Err(Error::Global {
            name: SLOT_SYMBOL.into(),
            detail: format!("is {size} bytes, expected a pointer (8): a module defines it other than cuprum/bounds.h does"),
        });
    }
    let rec = record(ordinal, bind)?;
    let value = [rec.device_ptr];
    // SAFETY: `ptr` is the module's 8-byte global; `value` lives until the stream is synchronized
    // below, on a non-blocking stream of this context that nothing else uses.
    unsafe { result::memcpy_htod_async(ptr, &value, rec.stream) }.map_err(Error::driver_fn("cuMemcpyHtoDAsync"))?;
    // SAFETY: the stream handle is alive (never destroyed).
    unsafe { result::stream::synchronize(rec.stream) }.map_err(Error::driver_fn("cuStreamSynchronize"))
}

/// The first out-of-range index recorded on `device` since the last report, as
/// [`Error::IndexOutOfBounds`], clearing the record; `Ok` when there is none (or a kernel is
/// still writing one, which the next call will see). Reads host memory only.
pub(crate) fn check(ordinal: usize) -> Result<()> {
    if ordinal == crate::driver::CPU_ORDINAL {
        let taken = sync::lock(cpu_record()).take();
        return taken.map_or(Ok(()), |r| Err(error_of(&r)));
    }
    let Some(rec) = slots().and_then(|s| s.get(ordinal)).and_then(OnceLock::get) else {
        return Ok(());
    };
    match take(rec.host) {
        Some(r) => Err(error_of(&r)),
        None => Ok(()),
    }
}

/// The CPU device's record: kernels run by the host write it directly (the first violation
/// since the last report is kept).
fn cpu_record() -> &'static Mutex<Option<OobRecord>> {
    static RECORD: Mutex<Option<OobRecord>> = Mutex::new(None);
    &RECORD
}

/// Records an out-of-range index of a kernel running on the CPU device, unless one is recorded
/// already (reported, as on a GPU, by the device's next synchronising call).
pub(crate) fn record_cpu(kernel: &str, index: i128, len: u64, block: [u32; 3], thread: [u32; 3]) {
    record_cpu_info(kernel, index, len, block, thread, 0);
}

/// [`record_cpu`] with [`OobRecord::info`] bits (`INFO_MISALIGNED`: `len` is the alignment).
pub(crate) fn record_cpu_info(kernel: &str, index: i128, len: u64, block: [u32; 3], thread: [u32; 3], info: u32) {
    let mut slot = sync::lock(cpu_record());
    if slot.is_some() {
        return;
    }
    let mut r = OobRecord { flag: FLAG_COMPLETE, index: index as u64, len, block, thread, info, ..OobRecord::EMPTY };
    if index < 0 {
        r.info |= cuprum_abi::bounds::INFO_SIGNED;
    }
    let name = kernel.as_bytes();
    let n = name.len().min(r.kernel.len() - 1);
    r.kernel[..n].copy_from_slice(&name[..n]);
    *slot = Some(r);
}

/// Takes a complete record out of `host` (leaving it empty), if there is one.
fn take(host: *mut OobRecord) -> Option<OobRecord> {
    // SAFETY: `host` points at a live, aligned record (pinned, never freed); the flag is only
    // accessed atomically by the host, and by the device through its own atomics.
    let flag = unsafe { AtomicU32::from_ptr(std::ptr::addr_of_mut!((*host).flag)) };
    if flag.load(Ordering::Acquire) != FLAG_COMPLETE {
        return None;
    }
    // Another host thread may be reporting the same record: only one takes it.
    flag.compare_exchange(FLAG_COMPLETE, FLAG_READING, Ordering::Acquire, Ordering::Relaxed).ok()?;
    // SAFETY: as above; the device finished writing before it set FLAG_COMPLETE (after a
    // system-wide fence), and no device thread writes while the flag is not empty.
    let r = unsafe { host.read_volatile() };
    flag.store(FLAG_EMPTY, Ordering::Release);
    Some(r)
}

fn error_of(r: &OobRecord) -> Error {
    if r.info & cuprum_abi::bounds::INFO_MISALIGNED != 0 {
        return Error::IndexMisaligned { kernel: r.kernel_name(), index: r.index_value(), align: r.len, block: r.block, thread: r.thread };
    }
    Error::IndexOutOfBounds { kernel: r.kernel_name(), index: r.index_value(), len: r.len, block: r.block, thread: r.thread }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_complete_record_is_taken_once() {
        let p: *mut OobRecord = Box::into_raw(Box::new(OobRecord::EMPTY));
        // SAFETY: `p` is a live, exclusively owned record for the whole test (freed at the end).
        let set = |f: &dyn Fn(&mut OobRecord)| unsafe { f(&mut *p) };
        assert!(take(p).is_none());
        set(&|r| r.flag = cuprum_abi::bounds::FLAG_WRITING);
        assert!(take(p).is_none(), "a record being written is not read");
        set(&|r| {
            r.flag = FLAG_COMPLETE;
            r.index = 7;
            r.len = 4;
            r.block = [1, 0, 0];
            r.thread = [3, 0, 0];
            r.kernel[..6].copy_from_slice(b"gather");
        });
        let got = take(p).expect("complete");
        // SAFETY: as above.
        assert_eq!(unsafe { (*p).flag }, FLAG_EMPTY, "taking clears the record");
        assert!(take(p).is_none());
        // SAFETY: `p` came from Box::into_raw and is not used after this.
        drop(unsafe { Box::from_raw(p) });
        let e = error_of(&got);
        match &e {
            Error::IndexOutOfBounds { kernel, index, len, block, thread } => {
                assert_eq!((kernel.as_str(), *index, *len, *block, *thread), ("gather", 7, 4, [1, 0, 0], [3, 0, 0]));
            }
            other => panic!("{other}"),
        }
        let m = e.to_string();
        assert!(m.contains("`gather`") && m.contains("the len is 4 but the index is 7") && m.contains("block (1, 0, 0)"), "{m}");
    }
}
