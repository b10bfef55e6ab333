//! Arrays over memory another library owns (docs/interop.md): the one way such memory enters
//! cuprum, used by DLPack imports (`crate::dlpack`) and the CUDA Array Interface.

use std::any::Any;
use std::sync::Arc;

use super::{Array, shape};
use crate::device::Device;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::memory::DeviceBuffer;
use crate::stream::Stream;

impl<T: Element> Array<T> {
    /// An array over memory another library allocated: element 0 at address `ptr` (a device
    /// address of `device`, or a host address for the CPU device), `shape`, and `strides` in
    /// elements (negative walks backwards, 0 broadcasts). No copy: the array is a view of that
    /// memory, which cuprum never frees nor returns to its pool; `keep` is dropped when the last
    /// view of the array is (give it what keeps the memory alive: a DLPack deleter's guard, a
    /// Python object). Copies to and from the host are ordered on the device's current stream.
    ///
    /// Errors, with `keep` dropped and nothing else touched: strides of another length than the
    /// shape, an address not aligned for `T`, a null address for a non-empty array, a size that
    /// overflows.
    ///
    /// ```
    /// use cuprum_runtime::{Array, Device};
    /// let cpu = Device::cpu();
    /// let _current = cpu.use_scoped()?;
    /// let data = Box::new([1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
    /// let ptr = data.as_ptr() as u64;
    /// // SAFETY: host memory (the CPU device's), moved into `keep`: it lives as long as the array.
    /// let a = unsafe { Array::<f32>::from_raw_parts(ptr, vec![2, 3], vec![1, 2], &cpu, Box::new(data)) }?;
    /// assert_eq!(a.to_vec()?, [1.0, 3.0, 5.0, 2.0, 4.0, 6.0]); // column-major view, no copy
    /// # Ok::<(), cuprum_runtime::Error>(())
    /// ```
    ///
    /// # Safety
    ///
    /// Every element the shape and strides reach from `ptr` must be memory of `device` (device
    /// memory of its context or memory it can address, such as managed memory; host memory for
    /// the CPU device) holding valid values of `T`, valid for reads and writes, and not freed or
    /// reused until `keep` is dropped. Work of other libraries on it must be ordered with
    /// cuprum's streams by the caller (DLPack's and the CUDA Array Interface's stream rules).
    pub unsafe fn from_raw_parts(
        ptr: u64,
        shape: Vec<usize>,
        strides: Vec<isize>,
        device: &Device,
        keep: Box<dyn Any + Send + Sync>,
    ) -> Result<Array<T>> {
        // SAFETY: the caller's contract is `from_foreign`'s.
        unsafe { Array::from_foreign(ptr, shape, strides, device, move || keep) }
    }

    /// [`from_raw_parts`](Array::from_raw_parts) with the keeper made by `keep` only once every
    /// check has passed, so that an error leaves the memory's owner untouched (a DLPack import
    /// that fails must not call the producer's deleter).
    ///
    /// # Safety
    ///
    /// As for [`from_raw_parts`](Array::from_raw_parts).
    pub(crate) unsafe fn from_foreign(
        ptr: u64,
        shape: Vec<usize>,
        strides: Vec<isize>,
        device: &Device,
        keep: impl FnOnce() -> Box<dyn Any + Send + Sync>,
    ) -> Result<Array<T>> {
        let size = std::mem::size_of::<T>();
        if shape.len() != strides.len() {
            return Err(Error::InvalidShape {
                op: "from_raw_parts",
                detail: format!("shape {shape:?} and strides {strides:?} differ in length"),
            });
        }
        let n = shape::size_of(&shape)?;
        if !ptr.is_multiple_of(std::mem::align_of::<T>() as u64) {
            return Err(Error::InvalidSlice {
                detail: format!(
                    "the address {ptr:#x} is not aligned for elements of {} bytes (alignment {}); copy the data to an aligned array first",
                    size,
                    std::mem::align_of::<T>()
                ),
            });
        }
        if ptr == 0 && n > 0 {
            return Err(Error::InvalidSlice { detail: format!("a null address for {n} elements") });
        }
        // The buffer: the elements' span, from the lowest address any of them has (in i128: a
        // foreign stride may be anything).
        let overflow = || Error::InvalidShape {
            op: "from_raw_parts",
            detail: format!("shape {shape:?} with strides {strides:?} reaches past the address space"),
        };
        let (mut lo, mut hi) = (0i128, 0i128);
        for (&d, &s) in shape.iter().zip(&strides) {
            let span = (d as i128 - 1).max(0) * s as i128;
            if span < 0 { lo += span } else { hi += span }
        }
        let (back, bytes) = if n == 0 { (0i128, 0i128) } else { (-lo, (hi - lo + 1) * size as i128) };
        let base = ptr as i128 - back * size as i128;
        if base < 0 || bytes > isize::MAX as i128 || base + bytes > u64::MAX as i128 {
            return Err(overflow());
        }
        if base == 0 && bytes > 0 {
            return Err(Error::InvalidSlice { detail: format!("shape {shape:?} with strides {strides:?} reaches the null address") });
        }
        let (base, bytes, back) = (base as u64, bytes as usize, back as usize);
        let stream = Stream::current_for(device)?;
        // SAFETY: the span `base..base + bytes` is exactly the elements the caller promised to be
        // live memory of `device` until what `keep` makes is dropped, which the buffer owns.
        // `stream` is of `device`, and `base` is null only when `bytes` is 0: it cannot fail.
        let buf = unsafe { DeviceBuffer::foreign(base, bytes, device, &stream, keep())? };
        // The span covers the layout exactly (checked above): it cannot fail either.
        Array::from_parts(Arc::new(buf), shape, strides, back)
    }
}
