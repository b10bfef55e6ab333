//! [`TensorMap`]: a 2-D array described for Hopper's tensor memory accelerator (TMA), the
//! argument of a `#[rawkernel]` parameter `map: &TensorMap<T>` that `tma_load_2d` copies boxes of
//! into shared memory, and [`TensorMapParam`], the value such a parameter receives (the
//! `cuprum::TensorMap<T>` of `abi/include/cuprum/hopper.h`).
//!
//! Every restriction of `cuTensorMapEncodeTiled` is checked here, before any driver call, so a
//! map the driver would refuse is a clear error (on the CPU device too, which checks the same and
//! keeps the plain description).

use std::fmt;

use cudarc::driver::sys::{self, CUtensorMapDataType};
use cuprum_abi::DType;

use crate::array::Array;
use crate::elem_type::ElemType;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::repr::DeviceRepr;

/// The shared-memory layout a TMA copy writes its box in.
///
/// With a swizzle of span `S` bytes (32, 64 or 128; a box row may be at most `S` bytes), the
/// 16-byte chunk at byte offset `o` of the box is stored at chunk `(o / 16) ^ ((o / 128) % (S /
/// 16))`, which spreads a column of chunks over the shared-memory banks. [`Swizzle::B128`] with
/// 128-byte box rows puts chunk `c` of row `r` at chunk `c ^ (r % 8)` of that row: the layout
/// `wgmma` reads (the destination must then be 1024-byte aligned).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Swizzle {
    /// Rows stored as they are (no swizzle).
    #[default]
    None,
    /// The 32-byte swizzle (box rows of at most 32 bytes).
    B32,
    /// The 64-byte swizzle (box rows of at most 64 bytes).
    B64,
    /// The 128-byte swizzle (box rows of at most 128 bytes): chunk `c` of a 128-byte row `r` at
    /// `c ^ (r % 8)`, what `wgmma` reads.
    B128,
}

impl Swizzle {
    /// The span in bytes: 0 for [`Swizzle::None`], else 32, 64 or 128 (the most bytes a box row
    /// may have with it; what the kernel parameter's `swizzle_bytes` holds).
    pub const fn bytes(self) -> u32 {
        match self {
            Swizzle::None => 0,
            Swizzle::B32 => 32,
            Swizzle::B64 => 64,
            Swizzle::B128 => 128,
        }
    }

    fn driver(self) -> sys::CUtensorMapSwizzle {
        use sys::CUtensorMapSwizzle::*;
        match self {
            Swizzle::None => CU_TENSOR_MAP_SWIZZLE_NONE,
            Swizzle::B32 => CU_TENSOR_MAP_SWIZZLE_32B,
            Swizzle::B64 => CU_TENSOR_MAP_SWIZZLE_64B,
            Swizzle::B128 => CU_TENSOR_MAP_SWIZZLE_128B,
        }
    }
}

/// The value a `&TensorMap<T>` kernel parameter receives: the driver's 128-byte `CUtensorMap`
/// and the box it copies, the layout of `cuprum::TensorMap<T>` in `abi/include/cuprum/hopper.h`
/// (192 bytes, 64-byte aligned). The kernel takes it as a `const __grid_constant__` parameter,
/// so it is passed by value in the parameter buffer.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorMapParam {
    /// The encoded `CUtensorMap` (opaque; zeros for an array on the CPU device).
    pub map: [u64; 16],
    /// The box's extent along the contiguous axis (its columns), in elements.
    pub box_inner: u32,
    /// The box's extent along the other axis (its rows).
    pub box_outer: u32,
    /// [`Swizzle::bytes`] of the map's swizzle: 0, 32, 64 or 128.
    pub swizzle_bytes: u32,
    /// Zero.
    pub reserved: u32,
}

const _: () = assert!(std::mem::size_of::<TensorMapParam>() == 192);
const _: () = assert!(std::mem::align_of::<TensorMapParam>() == 64);
const _: () = assert!(std::mem::offset_of!(TensorMapParam, box_inner) == 128);
const _: () = assert!(std::mem::offset_of!(TensorMapParam, swizzle_bytes) == 136);

// SAFETY: `#[repr(C, align(64))]` of `u64[16]` then four `u32`, no padding inside (128 + 16
// bytes) and 48 bytes of tail padding to 192: the layout of hopper.h's
// `struct alignas(64) TensorMap { u64 map[16]; u32 box_inner, box_outer; u32 swizzle_bytes,
// reserved; }` (the asserts above pin size, alignment and offsets). Plain integers, no pointers.
unsafe impl DeviceRepr for TensorMapParam {}

/// A 2-D C-contiguous array described for TMA copies of `box_shape` boxes into shared memory:
/// the argument of a `#[rawkernel]` parameter `map: &TensorMap<T>` (`tma_load_2d`).
///
/// It borrows the array, so while the map lives the array can neither be dropped nor be passed
/// mutably to the same launch. On a GPU it holds the map encoded by the driver
/// (`cuTensorMapEncodeTiled`); on the CPU device the same checks run and it keeps the plain
/// description. Elements of a box outside the array are read as zeros.
///
/// ```no_run
/// # use cuprum_runtime::{Array, Swizzle, TensorMap};
/// # use half::bf16;
/// # fn main() -> cuprum_runtime::Result<()> {
/// let a = Array::<bf16>::zeros([8192, 64])?;
/// let map = TensorMap::new(&a, [128, 64], Swizzle::B128)?;
/// assert_eq!(map.box_bytes(), 128 * 64 * 2); // what each copy brings: expect it on the barrier
/// # Ok(()) }
/// ```
pub struct TensorMap<'a, T: Element> {
    param: TensorMapParam,
    array: &'a Array<T>,
    box_shape: [u32; 2],
    swizzle: Swizzle,
}

impl<T: Element> Clone for TensorMap<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: Element> Copy for TensorMap<'_, T> {}

impl<T: Element> fmt::Debug for TensorMap<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TensorMap")
            .field("elem", &T::ELEM.rust_name())
            .field("shape", &self.shape())
            .field("box_shape", &self.box_shape)
            .field("swizzle", &self.swizzle)
            .field("device", &self.array.device().ordinal())
            .finish()
    }
}

/// The TMA data type of an element type; `None` for those TMA cannot copy.
fn data_type(elem: ElemType) -> Option<CUtensorMapDataType> {
    use CUtensorMapDataType::*;
    Some(match elem.dtype()? {
        // The 8-bit floats too: TMA moves their bytes (CUTLASS's FP8 GEMMs describe them so).
        DType::Bool | DType::U8 | DType::I8 | DType::F8E4M3 | DType::F8E5M2 => CU_TENSOR_MAP_DATA_TYPE_UINT8,
        DType::U16 | DType::I16 => CU_TENSOR_MAP_DATA_TYPE_UINT16,
        DType::F16 => CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        DType::BF16 => CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
        DType::U32 => CU_TENSOR_MAP_DATA_TYPE_UINT32,
        DType::I32 => CU_TENSOR_MAP_DATA_TYPE_INT32,
        DType::F32 => CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
        DType::U64 => CU_TENSOR_MAP_DATA_TYPE_UINT64,
        DType::I64 => CU_TENSOR_MAP_DATA_TYPE_INT64,
        DType::F64 => CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
        DType::C32 | DType::C64 => return None,
    })
}

/// The error of a box or array shape TMA cannot copy.
fn bad_shape(detail: String) -> Error {
    Error::InvalidShape { op: "TensorMap::new", detail }
}

impl<'a, T: Element> TensorMap<'a, T> {
    /// Describes the 2-D C-contiguous `array` of shape `(rows, cols)` for copies of boxes of
    /// `box_shape = [box_rows, box_cols]` elements laid out in shared memory as `swizzle` says.
    ///
    /// # Errors
    ///
    /// Each restriction of TMA (`cuTensorMapEncodeTiled`), checked before any driver call:
    /// - [`Error::InvalidShape`]: the array does not have exactly 2 dimensions (reshape it:
    ///   `.reshape(..)?`), is empty, or has more than 2^32 rows or columns; its row (`cols *
    ///   size_of::<T>()` bytes) is not a multiple of 16 bytes or is 2^40 bytes or more; a box
    ///   extent is not in 1..=256; a box row (`box_cols * size_of::<T>()` bytes) is not a
    ///   multiple of 16 bytes, or is longer than the swizzle's span (32, 64 or 128 bytes).
    /// - [`Error::NeedsCopy`]: the array is not C-contiguous (pass `.copy()?`).
    /// - [`Error::Unsupported`]: `T` is not a type TMA copies (`Complex`, a `#[device]` struct:
    ///   the scalars `bool`, integers, `f16`, `bf16`, `f32`, `f64`, `f8e4m3` and `f8e5m2` are), or the array does not
    ///   start 16-byte aligned (a view at an odd offset: pass `.copy()?`).
    /// - On a GPU, the driver's refusal ([`Error::Driver`] naming `cuTensorMapEncodeTiled`), or
    ///   [`Error::ContextLost`] for a device whose context a fault lost.
    pub fn new(array: &'a Array<T>, box_shape: [u32; 2], swizzle: Swizzle) -> Result<Self> {
        let elem = T::ELEM;
        let size = elem.size() as u64;
        let Some(data_type) = data_type(elem) else {
            return Err(Error::Unsupported {
                what: format!(
                    "a TensorMap of `{elem}` elements: TMA copies arrays of bool, integers, f16, bf16, f32, f64, f8e4m3 and f8e5m2, \
                     not complex numbers or #[device] structs"
                ),
            });
        };
        if array.ndim() != 2 {
            return Err(bad_shape(format!(
                "a TensorMap describes a 2-D array, but this one has {} dimension(s) (shape {:?}); reshape it to \
                 (rows, cols) first (`.reshape([rows, cols])?`)",
                array.ndim(),
                array.shape()
            )));
        }
        if !array.is_c_contiguous() {
            return Err(Error::NeedsCopy {
                op: "TensorMap::new",
                detail: format!(
                    "a TensorMap describes a C-contiguous array, but this one has strides {:?} (shape {:?})",
                    array.strides(),
                    array.shape()
                ),
            });
        }
        let (rows, cols) = (array.shape()[0] as u64, array.shape()[1] as u64);
        if rows == 0 || cols == 0 {
            return Err(bad_shape(format!(
                "the array is empty (shape {:?}): TMA needs at least one element along each axis",
                array.shape()
            )));
        }
        if rows > 1 << 32 || cols > 1 << 32 {
            return Err(bad_shape(format!(
                "the array's shape {:?} has an extent above 2^32, the most TMA addresses along an axis",
                array.shape()
            )));
        }
        let row_pitch = cols * size;
        if !row_pitch.is_multiple_of(16) {
            return Err(bad_shape(format!(
                "a row of the array is {row_pitch} bytes ({cols} x {size}-byte `{elem}`), and TMA needs rows that are a \
                 multiple of 16 bytes: pad the columns to a multiple of {} elements",
                16 / size
            )));
        }
        if row_pitch >= 1 << 40 {
            return Err(bad_shape(format!(
                "a row of the array is {row_pitch} bytes, and TMA needs rows shorter than 2^40 bytes"
            )));
        }
        let [box_rows, box_cols] = box_shape;
        if !(1..=256).contains(&box_rows) || !(1..=256).contains(&box_cols) {
            return Err(bad_shape(format!(
                "the box {box_shape:?} ([rows, cols]) must have 1 to 256 elements along each axis"
            )));
        }
        let box_row_bytes = u64::from(box_cols) * size;
        if !box_row_bytes.is_multiple_of(16) {
            return Err(bad_shape(format!(
                "a row of the box {box_shape:?} is {box_row_bytes} bytes ({box_cols} x {size}-byte `{elem}`), and TMA \
                 needs box rows that are a multiple of 16 bytes: make the box's columns a multiple of {}",
                16 / size
            )));
        }
        let span = u64::from(swizzle.bytes());
        if span != 0 && box_row_bytes > span {
            return Err(bad_shape(format!(
                "a row of the box {box_shape:?} is {box_row_bytes} bytes, longer than the {span}-byte span of \
                 `Swizzle::{swizzle:?}`: take at most {} columns per box (copy wider tiles as several boxes)",
                span / size
            )));
        }
        let base = array.device_ptr();
        if !base.is_multiple_of(16) {
            return Err(Error::Unsupported {
                what: format!(
                    "a TensorMap of an array that starts at address {base:#x}, which is not 16-byte aligned (the \
                     array views its buffer from element {}): TMA needs 16-byte aligned arrays; pass a copy \
                     (`.copy()?`)",
                    array.offset()
                ),
            });
        }
        let mut param = TensorMapParam {
            map: [0; 16],
            box_inner: box_cols,
            box_outer: box_rows,
            swizzle_bytes: swizzle.bytes(),
            reserved: 0,
        };
        let device = array.device();
        if !device.is_cpu() {
            // The driver's own type (its alignment is the CUDA headers' for the map), copied into
            // the parameter afterwards.
            let mut map = sys::CUtensorMap { opaque: [0; 16] };
            let dims: [u64; 2] = [cols, rows];
            let strides: [u64; 1] = [row_pitch];
            let boxes: [u32; 2] = [box_cols, box_rows];
            let element_strides: [u32; 2] = [1, 1];
            device.bind_to_thread()?;
            // SAFETY: `map` is a writable, suitably aligned `CUtensorMap`; the dimension, stride,
            // box and element-stride arrays hold `rank` (2), `rank - 1` (1), 2 and 2 values, as the
            // call reads; every value was checked above against the call's rules. The address is
            // the array's on this device (bound above); the map only describes it (nothing is read
            // or written until a kernel uses the map, while `array` is borrowed).
            unsafe {
                sys::cuTensorMapEncodeTiled(
                    &mut map,
                    data_type,
                    2,
                    base as *mut std::ffi::c_void,
                    dims.as_ptr(),
                    strides.as_ptr(),
                    boxes.as_ptr(),
                    element_strides.as_ptr(),
                    sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
                    swizzle.driver(),
                    sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                    sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
                )
            }
            .result()
            .map_err(device.driver_fn("cuTensorMapEncodeTiled"))?;
            param.map = map.opaque;
        }
        Ok(TensorMap { param, array, box_shape, swizzle })
    }

    /// The array's shape, `[rows, cols]`.
    pub fn shape(&self) -> [usize; 2] {
        let s = self.array.shape();
        [s[0], s[1]]
    }

    /// The box one copy brings, `[rows, cols]` in elements.
    pub fn box_shape(&self) -> [u32; 2] {
        self.box_shape
    }

    /// The shared-memory layout copies write.
    pub fn swizzle(&self) -> Swizzle {
        self.swizzle
    }

    /// The bytes one copy writes (`box_rows * box_cols * size_of::<T>()`, zeros of a box's part
    /// outside the array included): what a kernel passes to `mbarrier_arrive_expect_tx`.
    pub fn box_bytes(&self) -> u32 {
        self.box_shape[0] * self.box_shape[1] * std::mem::size_of::<T>() as u32
    }

    /// The ordinal of the array's device (`device::CPU_ORDINAL` for the CPU device).
    pub fn device(&self) -> usize {
        self.array.device().ordinal()
    }

    /// The array described.
    pub fn array(&self) -> &'a Array<T> {
        self.array
    }

    /// The distance between rows, in bytes.
    #[cfg(test)]
    pub(crate) fn row_pitch_bytes(&self) -> u64 {
        (self.shape()[1] * std::mem::size_of::<T>()) as u64
    }

    /// The kernel parameter (the encoded map on a GPU; zeros as the map on the CPU device).
    pub(crate) fn param(&self) -> TensorMapParam {
        self.param
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Device, Stream};
    use half::{bf16, f16};
    use num_complex::Complex;

    fn cpu<T: Element + Default>(shape: &[usize]) -> Array<T> {
        let n = shape.iter().product();
        Array::from_shape_vec_on(shape, &vec![T::default(); n], &Stream::null(&Device::cpu()).unwrap()).unwrap()
    }

    fn err<T: Element>(r: Result<TensorMap<'_, T>>) -> Error {
        r.unwrap_err()
    }

    #[test]
    fn the_param_has_hopper_h_layout() {
        assert_eq!(std::mem::size_of::<TensorMapParam>(), 192);
        assert_eq!(std::mem::align_of::<TensorMapParam>(), 64);
        assert_eq!(std::mem::offset_of!(TensorMapParam, map), 0);
        assert_eq!(std::mem::offset_of!(TensorMapParam, box_inner), 128);
        assert_eq!(std::mem::offset_of!(TensorMapParam, box_outer), 132);
        assert_eq!(std::mem::offset_of!(TensorMapParam, swizzle_bytes), 136);
        assert_eq!(std::mem::offset_of!(TensorMapParam, reserved), 140);
        // As a launch argument, in a tuple with other parameters, it stays 64-byte aligned.
        let t = (1u8, TensorMapParam { map: [0; 16], box_inner: 1, box_outer: 1, swizzle_bytes: 0, reserved: 0 }, 2u32);
        assert_eq!(&t.1 as *const TensorMapParam as usize % 64, 0);
        assert_eq!([Swizzle::None, Swizzle::B32, Swizzle::B64, Swizzle::B128].map(Swizzle::bytes), [0, 32, 64, 128]);
    }

    #[test]
    fn a_valid_map_on_the_cpu_device_keeps_its_description() {
        let a = cpu::<bf16>(&[300, 64]);
        let m = TensorMap::new(&a, [128, 64], Swizzle::B128).unwrap();
        assert_eq!(m.shape(), [300, 64]);
        assert_eq!(m.box_shape(), [128, 64]);
        assert_eq!(m.swizzle(), Swizzle::B128);
        assert_eq!(m.box_bytes(), 128 * 64 * 2);
        assert_eq!(m.device(), crate::device::CPU_ORDINAL);
        assert_eq!(m.row_pitch_bytes(), 128);
        assert!(std::ptr::eq(m.array(), &a));
        let p = m.param();
        assert_eq!((p.box_inner, p.box_outer, p.swizzle_bytes, p.reserved), (64, 128, 128, 0));
        assert_eq!(p.map, [0; 16]);
        // Other element types TMA copies, and boxes at the limits.
        TensorMap::new(&cpu::<u8>(&[5, 16]), [256, 16], Swizzle::None).unwrap();
        TensorMap::new(&cpu::<f64>(&[5, 2]), [1, 2], Swizzle::None).unwrap();
        TensorMap::new(&cpu::<f16>(&[8, 16]), [8, 16], Swizzle::B32).unwrap();
        TensorMap::new(&cpu::<i32>(&[8, 16]), [8, 16], Swizzle::B64).unwrap();
        TensorMap::new(&cpu::<f32>(&[1, 1024]), [1, 256], Swizzle::None).unwrap();
    }

    #[test]
    fn every_restriction_is_a_clear_error() {
        let msg = |e: Error| e.to_string();
        // Not 2-D.
        let a1 = cpu::<f32>(&[64]);
        let e = err(TensorMap::new(&a1, [8, 8], Swizzle::None));
        assert!(matches!(e, Error::InvalidShape { .. }) && msg(e).contains("1 dimension(s)"));
        let a3 = cpu::<f32>(&[2, 4, 8]);
        let m = msg(err(TensorMap::new(&a3, [2, 4], Swizzle::None)));
        assert!(m.contains("3 dimension(s)") && m.contains(".reshape("), "{m}");
        // Not C-contiguous.
        let a = cpu::<f32>(&[16, 16]);
        let t = a.transpose();
        let e = err(TensorMap::new(&t, [8, 8], Swizzle::None));
        assert!(matches!(e, Error::NeedsCopy { .. }), "{e:?}");
        assert!(msg(e).contains(".copy()"));
        // Element types TMA does not copy.
        let c = cpu::<Complex<f32>>(&[4, 4]);
        let m = msg(err(TensorMap::new(&c, [2, 2], Swizzle::None)));
        assert!(m.contains("Complex<f32>") && m.starts_with("unsupported"), "{m}");
        // Empty.
        let z = cpu::<f32>(&[0, 16]);
        assert!(msg(err(TensorMap::new(&z, [1, 4], Swizzle::None))).contains("empty"));
        // A row pitch that is not a multiple of 16 bytes.
        let odd = cpu::<f32>(&[4, 6]);
        let m = msg(err(TensorMap::new(&odd, [4, 4], Swizzle::None)));
        assert!(m.contains("24 bytes") && m.contains("multiple of 4 elements"), "{m}");
        // Box extents outside 1..=256.
        let m = msg(err(TensorMap::new(&a, [0, 4], Swizzle::None)));
        assert!(m.contains("1 to 256"), "{m}");
        let big = cpu::<u8>(&[4, 512]);
        assert!(msg(err(TensorMap::new(&big, [4, 272], Swizzle::None))).contains("1 to 256"));
        assert!(msg(err(TensorMap::new(&a, [257, 4], Swizzle::None))).contains("1 to 256"));
        // A box row that is not a multiple of 16 bytes.
        let m = msg(err(TensorMap::new(&a, [4, 2], Swizzle::None)));
        assert!(m.contains("8 bytes") && m.contains("multiple of 4"), "{m}");
        // A box row longer than the swizzle's span.
        let w = cpu::<bf16>(&[8, 128]);
        let m = msg(err(TensorMap::new(&w, [8, 128], Swizzle::B128)));
        assert!(m.contains("256 bytes") && m.contains("128-byte span") && m.contains("at most 64 columns"), "{m}");
        let m = msg(err(TensorMap::new(&w, [8, 32], Swizzle::B32)));
        assert!(m.contains("64 bytes") && m.contains("32-byte span"), "{m}");
        assert!(TensorMap::new(&w, [8, 32], Swizzle::B64).is_ok());
        // A base address that is not 16-byte aligned: a view of a buffer from element 1.
        let flat = cpu::<f32>(&[1 + 4 * 8]);
        let v = flat.slice(0, crate::Slice::new(Some(1), None, 1)).unwrap().reshape([4, 8]).unwrap();
        assert!(v.is_c_contiguous() && v.device_ptr() % 16 == 4);
        let e = err(TensorMap::new(&v, [4, 8], Swizzle::None));
        assert!(matches!(e, Error::Unsupported { .. }), "{e:?}");
        let m = msg(e);
        assert!(m.contains("16-byte aligned") && m.contains("element 1"), "{m}");
    }
}
