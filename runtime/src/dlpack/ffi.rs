//! The DLPack C ABI (`dlpack.h`, version 1.x; <https://dmlc.github.io/dlpack/latest/>), as
//! `#[repr(C)]` types: what a capsule or another library's pointer holds. Only the fields and
//! constants cuprum reads or writes are documented beyond the header's words.

use std::ffi::c_void;

/// The DLPack major version cuprum reads and writes (a tensor of another major version is
/// refused: its layout may differ).
pub const DLPACK_MAJOR_VERSION: u32 = 1;
/// The minor version cuprum's exports state.
pub const DLPACK_MINOR_VERSION: u32 = 0;

/// `kDLCPU`: host memory.
pub const KDL_CPU: i32 = 1;
/// `kDLCUDA`: CUDA device memory.
pub const KDL_CUDA: i32 = 2;
/// `kDLCUDAHost`: pinned host memory allocated by CUDA.
pub const KDL_CUDA_HOST: i32 = 3;
/// `kDLCUDAManaged`: CUDA managed (unified) memory.
pub const KDL_CUDA_MANAGED: i32 = 13;

/// `kDLInt`: signed integers.
pub const KDL_INT: u8 = 0;
/// `kDLUInt`: unsigned integers.
pub const KDL_UINT: u8 = 1;
/// `kDLFloat`: IEEE floats.
pub const KDL_FLOAT: u8 = 2;
/// `kDLBfloat`: bfloat16.
pub const KDL_BFLOAT: u8 = 4;
/// `kDLComplex`: complex numbers (two floats).
pub const KDL_COMPLEX: u8 = 5;
/// `kDLBool`: booleans (8 bits).
pub const KDL_BOOL: u8 = 6;
/// `kDLFloat8_e4m3fn` (DLPack 1.1): OCP FP8 E4M3, no infinities (torch's `float8_e4m3fn`).
pub const KDL_FLOAT8_E4M3FN: u8 = 10;
/// `kDLFloat8_e5m2` (DLPack 1.1): OCP FP8 E5M2 (torch's `float8_e5m2`).
pub const KDL_FLOAT8_E5M2: u8 = 12;

/// `DLPACK_FLAG_BITMASK_READ_ONLY`: the consumer must not write the tensor.
pub const DLPACK_FLAG_BITMASK_READ_ONLY: u64 = 1;
/// `DLPACK_FLAG_BITMASK_IS_COPIED`: the producer copied the data for this export.
pub const DLPACK_FLAG_BITMASK_IS_COPIED: u64 = 1 << 1;

/// `DLDevice`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DLDevice {
    /// `DLDeviceType` (`KDL_CPU`, `KDL_CUDA`, ...).
    pub device_type: i32,
    /// The device's ordinal (0 for the host).
    pub device_id: i32,
}

/// `DLDataType`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DLDataType {
    /// `DLDataTypeCode` (`KDL_INT`, `KDL_FLOAT`, ...).
    pub code: u8,
    /// Bits per lane.
    pub bits: u8,
    /// Lanes per element (1 for every type cuprum takes).
    pub lanes: u16,
}

/// `DLTensor`: a view of memory.
#[repr(C)]
#[derive(Debug)]
pub struct DLTensor {
    /// The memory (`data + byte_offset` is element 0).
    pub data: *mut c_void,
    /// Where the memory is.
    pub device: DLDevice,
    /// The number of dimensions.
    pub ndim: i32,
    /// The element type.
    pub dtype: DLDataType,
    /// `ndim` extents.
    pub shape: *mut i64,
    /// `ndim` strides in elements, or null for C order.
    pub strides: *mut i64,
    /// Bytes from `data` to element 0.
    pub byte_offset: u64,
}

/// `DLManagedTensor` (the legacy, unversioned ABI; capsule name `"dltensor"`).
#[repr(C)]
#[derive(Debug)]
pub struct DLManagedTensor {
    /// The tensor.
    pub dl_tensor: DLTensor,
    /// The producer's context.
    pub manager_ctx: *mut c_void,
    /// Called once by the consumer when it no longer needs the tensor (may be null).
    pub deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

/// `DLPackVersion`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DLPackVersion {
    /// The major version (1).
    pub major: u32,
    /// The minor version.
    pub minor: u32,
}

/// `DLManagedTensorVersioned` (DLPack 1.x; capsule name `"dltensor_versioned"`).
#[repr(C)]
#[derive(Debug)]
pub struct DLManagedTensorVersioned {
    /// The ABI version of this struct.
    pub version: DLPackVersion,
    /// The producer's context.
    pub manager_ctx: *mut c_void,
    /// Called once by the consumer when it no longer needs the tensor (may be null).
    pub deleter: Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>,
    /// `DLPACK_FLAG_BITMASK_*`.
    pub flags: u64,
    /// The tensor.
    pub dl_tensor: DLTensor,
}
