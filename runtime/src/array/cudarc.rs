//! Zero-copy conversions with cudarc (docs/interop.md): an array that owns a `CudaSlice`, and a
//! `CudaView`/`CudaViewMut` of an array's memory for the duration of a closure. cuprum's
//! devices use their primary contexts, which is what `CudaContext::new(ordinal)` retains, so
//! cudarc's and cuprum's memory and streams of one GPU live in the same context.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr};

use super::Array;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::stream::{Event, Stream};
use crate::Scalar;

/// A cudarc slice owned by an array's buffer: when the last view is dropped, the slice's own
/// stream waits for the work queued until then on the stream the array was made on (as the
/// pool orders its frees on a buffer's stream), then cudarc frees the slice on it.
struct OwnedSlice<T> {
    slice: Option<CudaSlice<T>>,
    stream: Stream,
}

impl<T> Drop for OwnedSlice<T> {
    fn drop(&mut self) {
        let Some(slice) = self.slice.take() else { return };
        match Event::record(&self.stream) {
            Ok(e) => match e.raw() {
                Ok(raw) => {
                    if let Err(err) = slice.stream().wait(raw) {
                        log::warn!(target: "cuprum::memory", "ordering the free of a cudarc slice failed ({err}); synchronizing");
                        let _ = crate::memory::wait_stream(&self.stream);
                    }
                }
                Err(_) => {
                    let _ = crate::memory::wait_stream(&self.stream);
                }
            },
            Err(_) => {
                let _ = crate::memory::wait_stream(&self.stream);
            }
        }
        drop(slice);
    }
}

/// The cuprum device of a cudarc context: the CUDA device of its ordinal, whose primary context
/// it must be.
fn device_of(ctx: &Arc<cudarc::driver::CudaContext>) -> Result<Device> {
    let device = Device::get(ctx.ordinal())?;
    if device.is_cpu() || device.cudarc_context()?.cu_ctx() != ctx.cu_ctx() {
        return Err(Error::Unsupported {
            what: format!(
                "cudarc memory of a context other than device {}'s primary context (make it with `CudaContext::new({0})` or `Device::cudarc_context`)",
                ctx.ordinal()
            ),
        });
    }
    Ok(device)
}

impl<T: Scalar + cudarc::driver::DeviceRepr> Array<T> {
    /// A 1-D array that owns `slice` (zero-copy) on its device, current stream: cuprum's launches
    /// on that stream are ordered after the work cudarc recorded on the slice, and the slice is
    /// freed by cudarc after cuprum's work on that stream when the last view is dropped. An
    /// error, with the slice dropped, for a slice of a context that is not its device's primary
    /// context.
    ///
    /// ```no_run
    /// # use cuprum_runtime::{Array, Device};
    /// let gpu = Device::get(0)?;
    /// let cudarc_stream = gpu.cudarc_context()?.default_stream();
    /// let slice = cudarc_stream.clone_htod(&[1.0f32, 2.0, 3.0]).unwrap(); // cudarc's memory
    /// let a = Array::from_cuda_slice(slice)?;                             // now cuprum's, no copy
    /// let back = (&a * 2.0f32)?.with_cuda_view(|v, s| s.clone_dtoh(v).unwrap())?; // and back
    /// assert_eq!(back, [2.0, 4.0, 6.0]);
    /// # Ok::<(), cuprum_runtime::Error>(())
    /// ```
    pub fn from_cuda_slice(slice: CudaSlice<T>) -> Result<Array<T>> {
        let device = device_of(slice.context())?;
        let stream = Stream::current_for(&device)?;
        let len = slice.len();
        let ptr = {
            // Orders `stream` after the slice's recorded writes (cudarc's event tracking).
            let (ptr, _sync) = slice.device_ptr(stream.raw()?);
            ptr
        };
        let owned = OwnedSlice { slice: Some(slice), stream };
        // SAFETY: `ptr..ptr + len` elements are the slice's live allocation of `device`'s
        // context, valid values of `T` (a `CudaSlice<T>`'s contract), freed only when `owned`
        // (the buffer's keeper) is dropped, after cuprum's work on the stream.
        unsafe { Array::from_raw_parts(ptr, vec![len], vec![1], &device, Box::new(owned)) }
    }

    /// Runs `f` with a cudarc view of the array's elements (C order), on the stream of the
    /// array's device that cuprum's current stream is: cudarc work `f` queues on `stream` and
    /// cuprum's later launches there are ordered. An error for an array of the CPU device or one
    /// that is not C-contiguous (`copy()` it first).
    pub fn with_cuda_view<R>(&self, f: impl FnOnce(&CudaView<'_, T>, &Arc<CudaStream>) -> R) -> Result<R> {
        let (slice, stream) = self.borrowed_slice("with_cuda_view")?;
        Ok(f(&slice.0.as_ref().map(|s| s.as_view()).expect("set until drop"), &stream))
    }

    /// [`with_cuda_view`](Array::with_cuda_view) with a mutable view, for cudarc work that writes
    /// the array.
    pub fn with_cuda_view_mut<R>(&mut self, f: impl FnOnce(&mut CudaViewMut<'_, T>, &Arc<CudaStream>) -> R) -> Result<R> {
        let (mut slice, stream) = self.borrowed_slice("with_cuda_view_mut")?;
        let mut view = slice.0.as_mut().map(|s| s.as_view_mut()).expect("set until drop");
        Ok(f(&mut view, &stream))
    }

    /// A cudarc slice over the array's elements that is never freed (leaked back when dropped,
    /// even by a panic), and the current stream as cudarc's.
    fn borrowed_slice(&self, op: &'static str) -> Result<(Borrowed<T>, Arc<CudaStream>)> {
        if !self.is_c_contiguous() {
            return Err(Error::InvalidShape { op, detail: format!("a cudarc view needs a C-contiguous array (strides {:?}); copy() it first", self.strides()) });
        }
        let stream = Stream::current_for(self.device())?;
        let raw = stream.raw()?.clone();
        // SAFETY: the range is the array's own live elements of this context (C-contiguous:
        // `len` elements from element 0), valid `T`s; the slice never frees it (`Borrowed`
        // leaks it back on drop), and `self` is borrowed for as long as the view exists.
        let slice = unsafe { raw.upgrade_device_ptr::<T>(self.device_ptr(), self.len()) };
        Ok((Borrowed(Some(slice)), raw))
    }
}

/// A cudarc slice over memory cuprum owns: leaked (not freed) when dropped.
struct Borrowed<T>(Option<CudaSlice<T>>);

impl<T> Drop for Borrowed<T> {
    fn drop(&mut self) {
        if let Some(s) = self.0.take() {
            s.leak();
        }
    }
}
