//! DLPack, both directions, zero-copy (docs/interop.md): an [`Array`] from another library's
//! tensor ([`Array::from_dlpack_versioned`], [`Array::from_dlpack`]) and a tensor of an array for
//! another library ([`Array::to_dlpack_versioned`], [`Array::to_dlpack`]). The C ABI is in
//! [`ffi`], written here rather than taken from a crate: it is 100 lines that never change
//! within a major version, while the Rust crates around it (`dlpark`: five breaking releases in
//! two years, an alpha now) would tie cuprum's `pyo3` version and API to theirs.
//!
//! Ownership: an imported tensor is owned by the array (and its views) and its deleter runs
//! when the last view is dropped; an exported tensor holds a view of the array (its buffer
//! stays allocated, never reused by the pool) until the consumer calls its deleter. Streams
//! are the caller's matter here: DLPack's Python exchange (`__dlpack__(stream=...)`) and the
//! CUDA Array Interface's `stream` are handled by the Python package (`python/`).

pub mod ffi;

use std::any::Any;
use std::ffi::c_void;

use ffi::{
    DLDataType, DLDevice, DLManagedTensor, DLManagedTensorVersioned, DLPackVersion, DLTensor,
    DLPACK_FLAG_BITMASK_READ_ONLY, DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION, KDL_BFLOAT, KDL_BOOL,
    KDL_COMPLEX, KDL_FLOAT8_E4M3FN, KDL_FLOAT8_E5M2, KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED, KDL_FLOAT, KDL_INT, KDL_UINT,
};

use crate::array::Array;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::{DType, Scalar};

/// The DLPack data type of a dtype.
pub fn dl_dtype(d: DType) -> DLDataType {
    let (code, bits) = match d {
        DType::Bool => (KDL_BOOL, 8),
        DType::I8 => (KDL_INT, 8),
        DType::I16 => (KDL_INT, 16),
        DType::I32 => (KDL_INT, 32),
        DType::I64 => (KDL_INT, 64),
        DType::U8 => (KDL_UINT, 8),
        DType::U16 => (KDL_UINT, 16),
        DType::U32 => (KDL_UINT, 32),
        DType::U64 => (KDL_UINT, 64),
        DType::F16 => (KDL_FLOAT, 16),
        DType::BF16 => (KDL_BFLOAT, 16),
        DType::F32 => (KDL_FLOAT, 32),
        DType::F64 => (KDL_FLOAT, 64),
        DType::C32 => (KDL_COMPLEX, 64),
        DType::C64 => (KDL_COMPLEX, 128),
        DType::F8E4M3 => (KDL_FLOAT8_E4M3FN, 8),
        DType::F8E5M2 => (KDL_FLOAT8_E5M2, 8),
    };
    DLDataType { code, bits, lanes: 1 }
}

/// The dtype of a DLPack data type; an error naming it for one cuprum has no dtype for
/// (vectors of lanes, the float8 kinds other than e4m3fn and e5m2, opaque handles, sub-byte
/// types).
pub fn dtype_of(t: &DLTensor) -> Result<DType> {
    let d = t.dtype;
    DType::ALL
        .into_iter()
        .find(|&c| dl_dtype(c) == d)
        .ok_or_else(|| Error::Unsupported {
            what: format!(
                "the DLPack data type (code {}, {} bits, {} lanes), which is no cuprum dtype (cuprum takes bool, integers of 8 to 64 bits, f16, bf16, f32, f64, complex64/128 and float8 e4m3fn/e5m2, one lane)",
                d.code, d.bits, d.lanes
            ),
        })
}

/// The DLPack device of a cuprum device.
pub fn dl_device(device: &Device) -> DLDevice {
    if device.is_cpu() {
        DLDevice { device_type: KDL_CPU, device_id: 0 }
    } else {
        DLDevice { device_type: KDL_CUDA, device_id: device.ordinal() as i32 }
    }
}

/// The cuprum device a DLPack tensor's memory is on: the CPU device for host memory, the
/// CUDA device of the same ordinal for device and managed memory; an error for another kind
/// (pinned host memory too: copy it to a device or to pageable host memory).
pub fn device_of(t: &DLTensor) -> Result<Device> {
    let DLDevice { device_type, device_id } = t.device;
    match device_type {
        KDL_CPU => Ok(Device::cpu()),
        KDL_CUDA | KDL_CUDA_MANAGED if device_id >= 0 => {
            let d = Device::get(device_id as usize)?;
            if d.is_cpu() {
                return Err(Error::Unsupported { what: format!("the CUDA device {device_id} of a DLPack tensor, which is not a CUDA device here") });
            }
            Ok(d)
        }
        KDL_CUDA_HOST => Err(Error::Unsupported {
            what: "a DLPack tensor in pinned host memory (kDLCUDAHost); give cuprum device memory, or host memory for the CPU device".into(),
        }),
        other => Err(Error::Unsupported {
            what: format!("a DLPack tensor on device type {other} (cuprum takes kDLCPU = 1, kDLCUDA = 2 and kDLCUDAManaged = 13)"),
        }),
    }
}

/// A managed tensor of either ABI: its tensor and its deleter.
trait Managed {
    fn tensor(&self) -> &DLTensor;
    /// Calls the deleter, if any.
    ///
    /// # Safety
    ///
    /// `p` is a live managed tensor whose deleter has not run; it is dangling afterwards.
    unsafe fn delete(p: *mut Self);
}

impl Managed for DLManagedTensor {
    fn tensor(&self) -> &DLTensor {
        &self.dl_tensor
    }
    unsafe fn delete(p: *mut Self) {
        // SAFETY: `p` is live (the caller's contract), so its deleter field can be read.
        if let Some(d) = unsafe { (*p).deleter } {
            // SAFETY: the deleter is the producer's, called once with its own tensor.
            unsafe { d(p) }
        }
    }
}

impl Managed for DLManagedTensorVersioned {
    fn tensor(&self) -> &DLTensor {
        &self.dl_tensor
    }
    unsafe fn delete(p: *mut Self) {
        // SAFETY: as for `DLManagedTensor`.
        if let Some(d) = unsafe { (*p).deleter } {
            // SAFETY: as for `DLManagedTensor`.
            unsafe { d(p) }
        }
    }
}

/// An imported tensor's ownership: runs the producer's deleter when the last view is dropped.
struct Owned<M: Managed>(*mut M);

// SAFETY: the tensor is only touched again by its deleter, which DLPack requires producers to
// make callable from any thread (Python producers take the GIL in it themselves).
unsafe impl<M: Managed> Send for Owned<M> {}
// SAFETY: `Owned` has no `&self` methods: sharing it shares nothing.
unsafe impl<M: Managed> Sync for Owned<M> {}

impl<M: Managed> Drop for Owned<M> {
    fn drop(&mut self) {
        // SAFETY: `self.0` is the live tensor handed over at import, deleted only here, once.
        unsafe { M::delete(self.0) }
    }
}

/// The array viewing `m`'s tensor, owning `m` on success (on error, nothing is taken).
///
/// # Safety
///
/// `m` is a live managed tensor whose fields follow DLPack: `shape`/`strides` point to `ndim`
/// values (strides may be null), and the memory they describe is valid for reads and writes
/// until the deleter runs.
unsafe fn import<T: Scalar, M: Managed + 'static>(m: *mut M, read_only: bool) -> Result<Array<T>> {
    if m.is_null() {
        return Err(Error::Unsupported { what: "a null DLPack tensor".into() });
    }
    // SAFETY: `m` is live (the caller's contract).
    let t = unsafe { (*m).tensor() };
    if read_only {
        return Err(Error::Unsupported {
            what: "a read-only DLPack tensor (its producer forbids writes, and every cuprum array is writable); pass a writable array, or a copy".into(),
        });
    }
    let dtype = dtype_of(t)?;
    if dtype != T::DTYPE {
        return Err(Error::DtypeMismatch {
            context: "an array from a DLPack tensor".into(),
            expected: T::ELEM,
            found: crate::ElemType::Scalar(dtype),
        });
    }
    let device = device_of(t)?;
    let ndim = usize::try_from(t.ndim).map_err(|_| Error::InvalidShape { op: "from_dlpack", detail: format!("ndim {}", t.ndim) })?;
    let read = |p: *const i64, what: &str| -> Result<Vec<i64>> {
        if ndim == 0 {
            return Ok(Vec::new());
        }
        if p.is_null() {
            return Err(Error::InvalidShape { op: "from_dlpack", detail: format!("a null {what} pointer for {ndim} dimensions") });
        }
        // SAFETY: a non-null `shape`/`strides` points to `ndim` values (DLPack; the caller's contract).
        Ok(unsafe { std::slice::from_raw_parts(p, ndim) }.to_vec())
    };
    let shape: Vec<usize> = read(t.shape, "shape")?
        .into_iter()
        .map(|d| usize::try_from(d).map_err(|_| Error::InvalidShape { op: "from_dlpack", detail: format!("a negative extent {d}") }))
        .collect::<Result<_>>()?;
    let strides: Vec<isize> = if t.strides.is_null() {
        crate::array::shape::c_strides(&shape)
    } else {
        read(t.strides, "strides")?.into_iter().map(|s| s as isize).collect()
    };
    let ptr = (t.data as u64).checked_add(t.byte_offset).ok_or_else(|| Error::InvalidSlice {
        detail: format!("data {:p} plus byte offset {} overflows", t.data, t.byte_offset),
    })?;
    // SAFETY: the memory is live until the deleter runs (the caller's contract), which the
    // array's buffer owns through `Owned` once every check has passed.
    unsafe { Array::from_foreign(ptr, shape, strides, &device, move || Box::new(Owned(m)) as Box<dyn Any + Send + Sync>) }
}

impl<T: Scalar> Array<T> {
    /// The array viewing a DLPack 1.x tensor (capsule `"dltensor_versioned"`), zero-copy: on
    /// `Ok` the array owns the tensor and runs its deleter when its last view is dropped; on
    /// `Err` nothing is taken (the caller still owns the tensor) and nothing is touched.
    ///
    /// Errors: another major version, a read-only tensor, a data type other than `T`'s, a
    /// device that is neither the host (the CPU device) nor a CUDA device of this process, an
    /// element 0 not aligned for `T`, a negative extent.
    ///
    /// ```
    /// use cuprum_runtime::{Array, Device};
    /// let _cpu = Device::cpu().use_scoped()?;
    /// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0])?;
    /// let t = x.to_dlpack_versioned(); // what another library would receive: no copy
    /// // SAFETY: `t` is a live tensor owned here; on `Ok` the array owns it.
    /// let y = unsafe { Array::<f32>::from_dlpack_versioned(t) }?;
    /// assert_eq!(y.device_ptr(), x.device_ptr()); // the same memory
    /// assert_eq!(y.to_vec()?, [1.0, 2.0, 3.0]);
    /// # Ok::<(), cuprum_runtime::Error>(())
    /// ```
    ///
    /// # Safety
    ///
    /// `t` must be a live `DLManagedTensorVersioned` that the caller owns (its deleter not yet
    /// run), describing memory valid for reads and writes until the deleter runs; the
    /// producer's pending work on it must be ordered before cuprum's use (DLPack's stream rule).
    pub unsafe fn from_dlpack_versioned(t: *mut DLManagedTensorVersioned) -> Result<Array<T>> {
        if !t.is_null() {
            // SAFETY: `t` is live (the caller's contract).
            let v = unsafe { (*t).version };
            if v.major != DLPACK_MAJOR_VERSION {
                return Err(Error::Unsupported { what: format!("a DLPack {}.{} tensor (cuprum reads DLPack 1.x)", v.major, v.minor) });
            }
        }
        // SAFETY: the caller's contract; the flags are read from the live tensor.
        unsafe {
            let read_only = !t.is_null() && (*t).flags & DLPACK_FLAG_BITMASK_READ_ONLY != 0;
            import(t, read_only)
        }
    }

    /// [`from_dlpack_versioned`](Array::from_dlpack_versioned) for the legacy ABI
    /// (`DLManagedTensor`, capsule `"dltensor"`), which has no version and no read-only flag.
    ///
    /// # Safety
    ///
    /// As for [`from_dlpack_versioned`](Array::from_dlpack_versioned).
    pub unsafe fn from_dlpack(t: *mut DLManagedTensor) -> Result<Array<T>> {
        // SAFETY: the caller's contract.
        unsafe { import(t, false) }
    }

    /// A DLPack 1.x tensor viewing this array, zero-copy, for another library: it keeps a view
    /// of the array (so its memory stays allocated) until its deleter is called, which the
    /// consumer must do exactly once. The flags are 0 (writable, not copied); strides are always
    /// given; element 0 is `data` (`byte_offset` 0), as PyTorch and CuPy export.
    pub fn to_dlpack_versioned(&self) -> *mut DLManagedTensorVersioned {
        let (shape, strides, _) = export_dims(self);
        let mut e = Box::new(Exported {
            managed: DLManagedTensorVersioned {
                version: DLPackVersion { major: DLPACK_MAJOR_VERSION, minor: DLPACK_MINOR_VERSION },
                manager_ctx: std::ptr::null_mut(),
                deleter: Some(delete_exported::<DLManagedTensorVersioned>),
                flags: 0,
                dl_tensor: tensor_of(self),
            },
            shape,
            strides,
            _view: Box::new(self.clone()),
        });
        e.finish();
        Box::into_raw(e) as *mut DLManagedTensorVersioned
    }

    /// [`to_dlpack_versioned`](Array::to_dlpack_versioned) in the legacy ABI
    /// (`DLManagedTensor`), for consumers that take only that.
    pub fn to_dlpack(&self) -> *mut DLManagedTensor {
        let (shape, strides, _) = export_dims(self);
        let mut e = Box::new(Exported {
            managed: DLManagedTensor {
                dl_tensor: tensor_of(self),
                manager_ctx: std::ptr::null_mut(),
                deleter: Some(delete_exported::<DLManagedTensor>),
            },
            shape,
            strides,
            _view: Box::new(self.clone()),
        });
        e.finish();
        Box::into_raw(e) as *mut DLManagedTensor
    }
}

/// An exported tensor with what it points to: the managed struct first (`#[repr(C)]`), so that
/// the deleter's pointer is the box's.
#[repr(C)]
struct Exported<M: Managed> {
    managed: M,
    shape: Vec<i64>,
    strides: Vec<i64>,
    _view: Box<dyn Any + Send + Sync>,
}

impl<M: Managed + ManagedMut> Exported<M> {
    /// Points the tensor's shape and strides at the box's own vectors (which never move again:
    /// the box is not resized) and its context at the box.
    fn finish(&mut self) {
        let ctx = self as *mut Exported<M> as *mut c_void;
        let (shape, strides) = (self.shape.as_mut_ptr(), self.strides.as_mut_ptr());
        let t = self.managed.tensor_mut();
        t.shape = shape;
        t.strides = strides;
        self.managed.set_ctx(ctx);
    }
}

/// Writing a managed tensor's fields (export only).
trait ManagedMut {
    fn tensor_mut(&mut self) -> &mut DLTensor;
    fn set_ctx(&mut self, ctx: *mut c_void);
}

impl ManagedMut for DLManagedTensor {
    fn tensor_mut(&mut self) -> &mut DLTensor {
        &mut self.dl_tensor
    }
    fn set_ctx(&mut self, ctx: *mut c_void) {
        self.manager_ctx = ctx;
    }
}

impl ManagedMut for DLManagedTensorVersioned {
    fn tensor_mut(&mut self) -> &mut DLTensor {
        &mut self.dl_tensor
    }
    fn set_ctx(&mut self, ctx: *mut c_void) {
        self.manager_ctx = ctx;
    }
}

/// The deleter of cuprum's exports: frees the box, dropping the array view it holds.
unsafe extern "C" fn delete_exported<M: Managed>(p: *mut M) {
    if !p.is_null() {
        // SAFETY: `p` is the `managed` field at offset 0 of a leaked `Box<Exported<M>>` (made
        // by `to_dlpack*`), and DLPack calls the deleter exactly once.
        drop(unsafe { Box::from_raw(p as *mut Exported<M>) });
    }
}

/// The shape and strides of an export, as DLPack's `int64_t`s, and the element count.
fn export_dims<T: Scalar>(a: &Array<T>) -> (Vec<i64>, Vec<i64>, usize) {
    let shape = a.shape().iter().map(|&d| d as i64).collect();
    let strides = a.strides().iter().map(|&s| s as i64).collect();
    (shape, strides, a.len())
}

/// The tensor of an export (shape and strides set by `Exported::finish`).
fn tensor_of<T: Scalar>(a: &Array<T>) -> DLTensor {
    DLTensor {
        data: a.device_ptr() as *mut c_void,
        device: dl_device(a.device()),
        ndim: a.ndim() as i32,
        dtype: dl_dtype(T::DTYPE),
        shape: std::ptr::null_mut(),
        strides: std::ptr::null_mut(),
        byte_offset: 0,
    }
}
