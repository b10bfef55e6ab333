//! DLPack's C exchange API (DLPack 1.2): a table of C functions that a tensor type publishes as
//! the class attribute `__dlpack_c_exchange_api__` (a capsule named `"dlpack_exchange_api"`;
//! torch >= 2.10 has it on `torch.Tensor`). Two of them serve a kernel call from Python: a
//! tensor's `DLTensor` filled in place, without a Python call, a capsule or an allocation
//! (`dltensor_from_py_object_no_sync`), and the library's current stream on a device
//! (`current_work_stream`). They replace the seven attribute reads and the stream query of
//! [`torch`](crate::torch)'s plain path (docs/interop.md, "What it costs").

use std::ffi::{c_int, c_void};

use cuprum::runtime::dlpack::ffi::{DLTensor, KDL_CUDA};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

/// `DLPackVersion`.
#[repr(C)]
struct Version {
    major: u32,
    minor: u32,
}

/// `DLPackExchangeAPIHeader`.
#[repr(C)]
struct Header {
    version: Version,
    prev_api: *const Header,
}

/// `DLPackExchangeAPI`: the header, then five function pointers (the three this module does not
/// call are kept as opaque pointers, for the layout).
#[repr(C)]
pub(crate) struct ExchangeApi {
    header: Header,
    managed_tensor_allocator: *const c_void,
    managed_tensor_from_py_object_no_sync: *const c_void,
    managed_tensor_to_py_object_no_sync: *const c_void,
    dltensor_from_py_object_no_sync: Option<unsafe extern "C" fn(*mut c_void, *mut DLTensor) -> c_int>,
    current_work_stream: Option<unsafe extern "C" fn(c_int, i32, *mut *mut c_void) -> c_int>,
}

// SAFETY: the table is immutable after its producer made it (a static of the producer's
// library), and its functions may be called from any thread holding the GIL.
unsafe impl Sync for ExchangeApi {}
// SAFETY: as above.
unsafe impl Send for ExchangeApi {}

impl ExchangeApi {
    /// The table a type publishes, with its capsule, when it has one of DLPack 1.2 or later with
    /// both functions this module calls; `None` otherwise. The table is used only while the
    /// returned capsule is held.
    ///
    /// # Safety
    ///
    /// A `"dlpack_exchange_api"` capsule on `ty` must hold a `DLPackExchangeAPI*` as DLPack 1.2
    /// defines it, valid while the capsule lives (the contract of the attribute; torch's table is
    /// a static of its library).
    pub(crate) unsafe fn of_type(ty: &Bound<'_, PyAny>) -> Option<(&'static ExchangeApi, Py<PyAny>)> {
        let capsule = ty.getattr("__dlpack_c_exchange_api__").ok()?;
        let table = {
            let capsule = capsule.downcast::<PyCapsule>().ok()?;
            if capsule.name().ok()??.to_bytes() != b"dlpack_exchange_api" {
                return None;
            }
            capsule.pointer() as *const ExchangeApi
        };
        if table.is_null() {
            return None;
        }
        // SAFETY: the capsule holds a live `DLPackExchangeAPI*` (the caller's contract), and the
        // caller keeps the returned capsule for as long as it uses the reference.
        let api: &'static ExchangeApi = unsafe { &*table };
        let Version { major, minor } = api.header.version;
        if (major, minor) < (1, 2) || api.dltensor_from_py_object_no_sync.is_none() || api.current_work_stream.is_none() {
            return None;
        }
        Some((api, capsule.unbind()))
    }

    /// `obj`'s `DLTensor`, borrowed from `obj`: its shape and strides point into `obj`'s own
    /// metadata, valid while `obj` lives and is not resized. `None` (and no Python error set)
    /// when the producer refuses `obj` (a sparse tensor, whose strides do not exist).
    ///
    /// # Safety
    ///
    /// `obj` must be an instance of the type whose table this is.
    pub(crate) unsafe fn dltensor(&self, obj: &Bound<'_, PyAny>) -> Option<DLTensor> {
        let f = self.dltensor_from_py_object_no_sync?;
        let mut t = DLTensor {
            data: std::ptr::null_mut(),
            device: cuprum::runtime::dlpack::ffi::DLDevice { device_type: 0, device_id: 0 },
            ndim: 0,
            dtype: cuprum::runtime::dlpack::ffi::DLDataType { code: 0, bits: 0, lanes: 0 },
            shape: std::ptr::null_mut(),
            strides: std::ptr::null_mut(),
            byte_offset: 0,
        };
        // SAFETY: `obj` is an instance of the table's type (the caller's contract) and `t` a
        // writable `DLTensor`; the GIL is held (`obj` is bound).
        if unsafe { f(obj.as_ptr().cast(), &mut t) } != 0 {
            // The producer set a Python error: the caller takes another path, which reports
            // the producer's own answer.
            // SAFETY: the GIL is held.
            unsafe { ffi::PyErr_Clear() };
            return None;
        }
        Some(t)
    }

    /// The producer's current stream on CUDA device `ordinal`, as a `CUstream` (0: the legacy
    /// default stream); `None` when the producer fails (its error is cleared).
    pub(crate) fn current_cuda_stream(&self, _py: Python<'_>, ordinal: usize) -> Option<u64> {
        let f = self.current_work_stream?;
        let mut stream: *mut c_void = std::ptr::null_mut();
        // SAFETY: the function writes one pointer into `stream`; the GIL is held (`_py`).
        if unsafe { f(KDL_CUDA as c_int, ordinal as i32, &mut stream) } != 0 {
            // SAFETY: the GIL is held.
            unsafe { ffi::PyErr_Clear() };
            return None;
        }
        Some(stream as u64)
    }
}
