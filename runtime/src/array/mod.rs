//! `Array<T>`: an n-dimensional array in device memory (docs/architecture.md).
//!
//! An array is a reference-counted [`DeviceBuffer`] plus a shape, strides **in elements** (0 for
//! broadcast axes, negative for reversed ones) and an offset (the element index of the first
//! logical element within the buffer). Views (`reshape`, `transpose`, `slice`, `broadcast_to`,
//! ...) share the buffer and never copy; `clone()` is such a view too. `copy()` makes a new
//! C-contiguous array.
//!
//! The elements are any [`Element`]: a scalar of the dtype table or a `#[device]` struct. The
//! structural methods (creation from host data, `empty`, `zeros`, transfers, views, `copy`) take
//! any element; what needs a dtype (`dtype()`, `full`/`ones`/`arange`/`linspace`, arithmetic,
//! `astype`, reductions, `ndarray` interop) is on `Array<T: Scalar>`.
//!
//! Creation allocates on the current device and copies on that device's current stream.
//! `zeros` is a memset; `full` and `fill` run the built-in fill kernel; `copy()` and the `to_vec()`
//! of a non-contiguous view run the built-in copy kernel on the device (see `ops/convert.rs`: the
//! operators, `astype`, comparisons and math functions, all through the runtime's built-in
//! elementwise kernels). A struct array is copied by the copy kernel of the integer (or, for 16
//! bytes, `Complex<f64>`) of its size when its size is 1, 2, 4, 8 or 16 bytes, else gathered on
//! the host.
//!
//! One concept per file: this file holds the type, its accessors and host transfers; `creation.rs`
//! the constructors (NumPy's creation routines), `views.rs` the shape views, `attributes.rs`
//! NumPy's attributes (`itemsize`, `flags`, `view`, `tolist`, `tofile`), `indexing.rs` basic
//! indexing, `diagonal.rs`, `axes.rs` (`moveaxis`, `atleast_*`, `broadcast_arrays`), `join.rs`
//! (`concatenate`, `stack`, ...), `split.rs`, `npy.rs` (NumPy's files), `display.rs` (`repr`,
//! `str`), `interop.rs` (`ndarray`), `foreign.rs` and `cudarc.rs` (other libraries' memory), and
//! `shape.rs` the layout arithmetic they all use. `take` and `trace` need kernels of higher
//! layers: `src/take.rs`, `src/reduction/trace.rs`.

pub mod shape;

mod attributes;
mod axes;
mod creation;
mod cudarc;
mod diagonal;
mod display;
mod foreign;
mod indexing;
mod interop;
mod join;
mod npy;
mod split;
mod views;

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use std::mem::MaybeUninit;

use crate::device::Device;
use crate::element::{ElemType, Element};
use crate::error::{Error, Result};
use crate::memory::DeviceBuffer;
use crate::stream::Stream;
use crate::sync;
use crate::{DType, Scalar};

pub use attributes::{Flags, List};
pub use axes::{Broadcast, broadcast, broadcast_arrays};
pub use creation::AsArray;
pub use indexing::Idx;
pub use join::{column_stack, concatenate, dstack, hstack, stack, vstack};
pub use npy::{NpyArray, load, save};
#[cfg(feature = "npz")]
pub use npy::{Npz, load_npz, savez, savez_compressed};
pub use shape::{Layout, Slice, broadcast_shapes};
pub use split::{Sections, array_split, dsplit, hsplit, split, vsplit};

/// Anything usable as a shape: `[2, 3]`, `&[2, 3][..]`, `vec![2, 3]`, or `5` for `[5]`.
pub trait IntoShape {
    /// The extents, one per axis.
    fn into_shape(self) -> Vec<usize>;
}

impl IntoShape for usize {
    fn into_shape(self) -> Vec<usize> {
        vec![self]
    }
}

impl<const N: usize> IntoShape for [usize; N] {
    fn into_shape(self) -> Vec<usize> {
        self.to_vec()
    }
}

impl<const N: usize> IntoShape for &[usize; N] {
    fn into_shape(self) -> Vec<usize> {
        self.to_vec()
    }
}

impl IntoShape for &[usize] {
    fn into_shape(self) -> Vec<usize> {
        self.to_vec()
    }
}

impl IntoShape for Vec<usize> {
    fn into_shape(self) -> Vec<usize> {
        self
    }
}

impl IntoShape for &Vec<usize> {
    fn into_shape(self) -> Vec<usize> {
        self.clone()
    }
}

/// An n-dimensional array of `T` (a scalar or a `#[device]` struct) in device memory.
pub struct Array<T: Element> {
    buf: Arc<DeviceBuffer>,
    layout: Layout,
    _t: PhantomData<T>,
}

/// A view of the same data (like `ndarray::ArcArray`): no device memory is copied.
impl<T: Element> Clone for Array<T> {
    fn clone(&self) -> Self {
        Array {
            buf: self.buf.clone(),
            layout: self.layout.clone(),
            _t: PhantomData,
        }
    }
}

impl<T: Element> fmt::Debug for Array<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Array<{}>(shape {:?}, strides {:?}, offset {}, device {})",
            T::ELEM.rust_name(),
            self.layout.shape,
            self.layout.strides,
            self.layout.offset,
            self.buf.device().ordinal()
        )
    }
}

// ---- host <-> device element transfers -------------------------------------------------------

fn as_bytes<T: Element>(v: &[T]) -> &[u8] {
    // SAFETY: `Element` guarantees that `T` has no padding and that its bytes are the C value, so
    // viewing initialised `T`s as bytes is sound; the length is the slice's size in bytes.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

/// Reads `count` elements starting at element `start` of `buf` (synchronously on `stream`),
/// straight into the returned vector's memory.
fn read_elems<T: Element>(
    buf: &DeviceBuffer,
    start: usize,
    count: usize,
    stream: &Stream,
) -> Result<Vec<T>> {
    let size = std::mem::size_of::<T>();
    let mut out: Vec<T> = Vec::with_capacity(count);
    if count == 0 {
        return Ok(out);
    }
    let spare = &mut out.spare_capacity_mut()[..count];
    // SAFETY: `spare` is `count` uninitialised `T`s owned by `out`; as `MaybeUninit<u8>` (which
    // has no validity requirement) they are exactly `count * size` bytes.
    let bytes = unsafe {
        std::slice::from_raw_parts_mut(spare.as_mut_ptr().cast::<MaybeUninit<u8>>(), count * size)
    };
    buf.read_uninit(start * size, bytes, stream)?;
    if T::ELEM == ElemType::Scalar(DType::Bool) {
        // Device bytes other than 0/1 are not valid Rust bools: normalise them before they are
        // read as `T`.
        for b in bytes.iter_mut() {
            // SAFETY: `read_uninit` returned Ok, so it wrote every one of these bytes.
            let v = unsafe { b.assume_init() };
            b.write((v != 0) as u8);
        }
    }
    // SAFETY: every byte of the first `count` elements was written above (the copy succeeded),
    // and by `Element`'s contract every bit pattern of `T` is valid (for bool, which has only
    // 0 and 1, the bytes were normalised above); `count <= capacity`.
    unsafe { out.set_len(count) };
    Ok(out)
}

impl<T: Element> Array<T> {
    // ---- accessors ---------------------------------------------------------------------------

    /// The extent of each axis.
    pub fn shape(&self) -> &[usize] {
        &self.layout.shape
    }

    /// Strides in elements.
    pub fn strides(&self) -> &[isize] {
        &self.layout.strides
    }

    /// Strides in bytes.
    pub fn byte_strides(&self) -> Vec<isize> {
        let s = std::mem::size_of::<T>() as isize;
        self.layout.strides.iter().map(|&x| x * s).collect()
    }

    /// The number of axes.
    pub fn ndim(&self) -> usize {
        self.layout.shape.len()
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.layout.len()
    }

    /// Whether it has no element (some extent is 0).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of bytes of the elements (`len() * size_of::<T>()`).
    pub fn nbytes(&self) -> usize {
        self.len() * std::mem::size_of::<T>()
    }

    /// The element index of the first element within the buffer.
    pub fn offset(&self) -> usize {
        self.layout.offset
    }

    /// The element type (a dtype or a `#[device]` struct); for a scalar array `dtype()` too.
    pub fn elem_type(&self) -> ElemType {
        T::ELEM
    }

    /// The device address of the first element (buffer address + offset), for launches.
    pub fn device_ptr(&self) -> u64 {
        // A launch takes the address: a graph being recorded keeps the buffer (docs/graphs.md).
        crate::capture::keep(&self.buf);
        self.buf.ptr() + (self.layout.offset * std::mem::size_of::<T>()) as u64
    }

    /// The device the elements live on.
    pub fn device(&self) -> &Device {
        self.buf.device()
    }

    /// The allocation the array views (shared with other views of it).
    pub fn buffer(&self) -> &Arc<DeviceBuffer> {
        &self.buf
    }

    /// Whether the elements are in row-major order with no gaps.
    pub fn is_c_contiguous(&self) -> bool {
        self.layout.is_c_contiguous()
    }

    /// Whether the elements are in column-major order with no gaps.
    pub fn is_f_contiguous(&self) -> bool {
        self.layout.is_f_contiguous()
    }

    /// The current stream of the array's device (transfers are ordered on it).
    fn stream(&self) -> Result<Stream> {
        Stream::current_for(self.device())
    }

    // ---- host transfers ----------------------------------------------------------------------

    /// The elements in C order. Works for any view (a non-contiguous one is first gathered on the
    /// device by the copy kernel, except a struct of a size it cannot copy, gathered on the
    /// host). Waits for the copy.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let stream = self.stream()?;
        let Some((lo, hi)) = self.layout.index_range() else {
            return Ok(Vec::new());
        };
        if !self.is_c_contiguous() {
            // Gathered on the device (only the elements cross the bus) when the copy kernel can
            // copy the element type.
            if let Some(copied) = self.copy_on_device() {
                return copied?.to_vec();
            }
        }
        let span = read_elems::<T>(&self.buf, lo, hi - lo + 1, &stream)?;
        if self.is_c_contiguous() {
            return Ok(span);
        }
        Ok(self.layout.gather(&span, lo))
    }

    /// A copy of this array on `device` (a view of it when it is on `device` already): the
    /// transfer between the CPU device and a GPU, or between GPUs.
    ///
    /// Between two GPUs that reach each other's memory ([`Device::can_access_peer`], which turns
    /// peer access on) the copy goes peer to peer (`cuMemcpyPeerAsync`) on `device`'s current
    /// stream, after the work queued on this array's device's current stream, and does not wait
    /// (work on `device`'s current stream sees the elements; a non-contiguous view is first made
    /// contiguous on its own device). Otherwise the elements go through host memory
    /// ([`Array::to_device_through_host`], which waits).
    pub fn to_device(&self, device: &Device) -> Result<Array<T>> {
        if self.device() == device {
            return Ok(self.clone());
        }
        if self.device().can_access_peer(device)? {
            return self.to_peer(device);
        }
        self.to_device_through_host(device)
    }

    /// A copy of this array on `device` through host memory: the elements are read to the host
    /// on this array's device's current stream, then written on `device`'s current stream; waits
    /// for both. What [`Array::to_device`] does between the CPU device and a GPU, and between
    /// GPUs without peer access.
    pub fn to_device_through_host(&self, device: &Device) -> Result<Array<T>> {
        let data = self.to_vec()?;
        Array::from_shape_vec_on(self.layout.shape.clone(), &data, &Stream::current_for(device)?)
    }

    /// The peer-to-peer copy of [`Array::to_device`].
    fn to_peer(&self, device: &Device) -> Result<Array<T>> {
        let src = if self.is_c_contiguous() { self.clone() } else { self.copy()? };
        let stream = Stream::current_for(device)?;
        let out = Array::<T>::empty_on(self.layout.shape.clone(), &stream)?;
        let size = std::mem::size_of::<T>();
        let src_offset = src.layout.index_range().map_or(0, |(lo, _)| lo * size);
        out.buf.copy_from_peer(0, &src.buf, src_offset, out.nbytes(), &src.stream()?, &stream)?;
        Ok(out)
    }

    /// The CPU device's writes: element `k` (C order) of this array becomes `value(k)`, under the
    /// buffer's write lock. `op` names the operation for errors. A broadcast view (stride 0 on an
    /// axis of extent > 1) is an error, as for a kernel's output.
    pub(crate) fn write_host(&self, op: &str, mut value: impl FnMut(usize) -> T) -> Result<()> {
        let Some(lock) = self.buf.host_lock() else {
            return Err(Error::Unsupported { what: format!("`{op}` by the host on a CUDA device's array") });
        };
        if self.layout.shape.iter().zip(&self.layout.strides).any(|(&d, &s)| d > 1 && s == 0) {
            return Err(Error::InvalidLaunch {
                kernel: op.to_string(),
                detail: format!(
                    "the array written is a broadcast view (stride 0 on an axis of extent > 1, strides {:?}): every element would be written several times; write a contiguous array",
                    self.layout.strides
                ),
            });
        }
        let _write = sync::write(lock);
        let base = self.buf.ptr() as *mut T;
        let mut k = 0;
        shape::for_each_index(&self.layout.shape, &self.layout.strides, self.layout.offset as isize, |i| {
            // SAFETY: the layout was checked to stay inside the buffer when the array was made
            // (`from_parts`, and every view keeps its indices within its source's), so `i` is
            // an element of this live host allocation, whose base is 64-byte aligned (every
            // element at a multiple of `T`'s size from it is aligned); no other host access
            // touches the memory while the write lock is held.
            unsafe { base.add(i as usize).write(value(k)) };
            k += 1;
        });
        Ok(())
    }

    /// Copies `data` (C order, `len()` elements) into this array, which must be C-contiguous.
    pub fn copy_from_slice(&mut self, data: &[T]) -> Result<()> {
        if data.len() != self.len() {
            return Err(Error::ShapeMismatch {
                context: "copy_from_slice (element count)".into(),
                expected: vec![self.len()],
                found: vec![data.len()],
            });
        }
        if !self.is_c_contiguous() {
            return Err(Error::NeedsCopy {
                op: "copy_from_slice",
                detail: "the destination is not C-contiguous".into(),
            });
        }
        let size = std::mem::size_of::<T>();
        self.buf
            .write_bytes(self.layout.offset * size, as_bytes(data), &self.stream()?)
    }

    // ---- views (the layout arithmetic is in `shape::Layout`) -----------------------------------

    fn with_layout(&self, layout: Layout) -> Array<T> {
        Array {
            buf: self.buf.clone(),
            layout,
            _t: PhantomData,
        }
    }


    /// A new C-contiguous array with the same elements, on the same device: through the
    /// built-in copy kernel (a struct of a size it cannot copy is gathered on the host).
    pub fn copy(&self) -> Result<Array<T>> {
        if let Some(copied) = self.copy_on_device() {
            return copied;
        }
        let stream = self.stream()?;
        let data = self.to_vec()?;
        Array::from_shape_vec_on(self.layout.shape.clone(), &data, &stream)
    }
}

impl<T: Scalar> Array<T> {
    /// The element's dtype.
    pub fn dtype(&self) -> DType {
        T::DTYPE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<X: Send + Sync>() {}

    #[test]
    fn arrays_and_buffers_are_send_and_sync() {
        assert_send_sync::<Array<f32>>();
        assert_send_sync::<Array<Complex64>>();
        assert_send_sync::<DeviceBuffer>();
        assert_send_sync::<Stream>();
        assert_send_sync::<Device>();
        assert_send_sync::<crate::MemoryPool>();
    }

    type Complex64 = num_complex::Complex<f64>;

    /// Without a GPU every creation path is a clean error (this machine may or may not have one).
    #[test]
    fn creation_without_gpu_is_an_error() {
        if Device::count().is_ok() {
            return;
        }
        let errs = [
            Array::<f32>::zeros([2, 3]).map(|_| ()).unwrap_err(),
            Array::<f32>::from_vec(vec![1.0]).map(|_| ()).unwrap_err(),
            Array::<i32>::arange(4).map(|_| ()).unwrap_err(),
            Array::<f64>::linspace(0.0, 1.0, 3).map(|_| ()).unwrap_err(),
            Array::<u8>::from_ndarray(&ndarray::arr1(&[1u8, 2]))
                .map(|_| ())
                .unwrap_err(),
            crate::MemoryPool::current().map(|_| ()).unwrap_err(),
        ];
        for e in errs {
            assert!(e.is_no_gpu(), "{e}");
        }
    }

    #[test]
    fn shapes_convert() {
        assert_eq!(5usize.into_shape(), vec![5]);
        assert_eq!([2usize, 3].into_shape(), vec![2, 3]);
        assert_eq!((&[2usize, 3][..]).into_shape(), vec![2, 3]);
        assert_eq!(vec![4usize].into_shape(), vec![4]);
        assert_eq!([0usize; 0].into_shape(), Vec::<usize>::new());
    }
}
