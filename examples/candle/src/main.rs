//! cuprum kernels on candle tensors on CUDA, zero-copy both ways (docs/interop.md, "cudarc").
//!
//! candle 0.11 and cuprum use the same cudarc (0.19) and the GPU's primary context, so a candle
//! `CudaStorage` holds a `CudaSlice<f32>` whose device address cuprum can view as an array
//! (`Array::from_raw_parts`, honouring candle's `Layout`: start offset and strides), and cuprum can
//! launch on candle's stream (`Stream::from_raw` of its `CUstream`). Two candle custom ops:
//!
//! - `SquaredDiff` (`CustomOp2`): `(x - y)^2` by cuprum's `#[elementwise]` kernel, `x` a narrowed
//!   tensor (a start offset), into an output slice candle's device allocates; that slice becomes
//!   the result tensor (`CudaStorage::wrap_cuda_slice`), so the tensor's memory is the memory
//!   cuprum wrote.
//! - `Softmax` (`CustomOp1`): softmax over the last axis of a transposed (column-major) tensor, by
//!   a `#[fuse]` row kernel (log-sum-exp of each row) and an `#[elementwise]` kernel writing
//!   `exp(x - lse)` into candle's output slice.
//!
//! Both are checked against candle computing the same thing with its own ops; the program prints
//! the largest errors and the device addresses, and exits with 1 on a mismatch or a copy. Last,
//! the owned route: a `CudaSlice` candle's device allocated, owned by a cuprum array
//! (`Array::from_cuda_slice`).
//!
//! Build and run (README.md): `bash build.sh && ./target/release/cuprum-candle-example`.

#[path = "../kernels/ops.rs"]
mod kernels;

use std::sync::atomic::{AtomicU64, Ordering};

use candle_core::cuda_backend::cudarc::driver::{DevicePtr, DevicePtrMut};
use candle_core::{
    CpuStorage, CudaDevice, CudaStorage, CustomOp1, CustomOp2, D, Device as CandleDevice, Layout,
    Shape, Storage, Tensor,
};
use cuprum::runtime::{Array, Device, MemoryPool, Stream};

/// cuprum's errors as candle's (a custom op returns candle's `Result`).
fn cu<T>(r: cuprum::runtime::Result<T>) -> candle_core::Result<T> {
    r.map_err(candle_core::Error::wrap)
}

/// The cuprum device of a candle CUDA device, and candle's stream as a cuprum stream: launches
/// made while it is current (`use_scoped`) are ordered with candle's own work on it.
fn cuprum_side(dev: &CudaDevice) -> candle_core::Result<(Device, Stream)> {
    let candle_stream = dev.cuda_stream();
    let device = cu(Device::get(candle_stream.context().ordinal()))?;
    // SAFETY: the handle is candle's live stream of this device's primary context; `dev` (which
    // holds it in an `Arc`) outlives the custom op that uses the returned stream.
    let stream = cu(unsafe { Stream::from_raw(&device, candle_stream.cu_stream() as u64) })?;
    Ok((device, stream))
}

/// A cuprum view of the f32 elements at device address `base` laid out as candle's `layout`
/// says (element 0 at `start_offset`, strides in elements), with no keeper: the caller's scope
/// keeps the memory alive.
///
/// # Safety
///
/// `base` must be the start of a live allocation of `device` holding every element `layout`
/// reaches, which outlives the returned array (and every view of it) and is not freed or
/// written by others while cuprum's work on it is queued.
unsafe fn view(base: u64, layout: &Layout, device: &Device) -> candle_core::Result<Array<f32>> {
    let ptr = base + (layout.start_offset() * size_of::<f32>()) as u64;
    let strides = layout.stride().iter().map(|&s| s as isize).collect();
    // SAFETY: the caller's contract. The keeper is a no-op: candle's tensors own the memory and
    // the custom op's scope (the caller's) keeps them alive while the view exists.
    cu(
        unsafe {
            Array::from_raw_parts(ptr, layout.dims().to_vec(), strides, device, Box::new(()))
        },
    )
}

/// `(x - y)^2` by cuprum's `squared_diff` kernel, into memory candle allocates and keeps.
#[derive(Default)]
struct SquaredDiff {
    /// The address of element 0 of the output cuprum wrote (for the zero-copy check).
    wrote_at: AtomicU64,
}

impl CustomOp2 for SquaredDiff {
    fn name(&self) -> &'static str {
        "cuprum-squared-diff"
    }

    fn cpu_fwd(
        &self,
        _: &CpuStorage,
        _: &Layout,
        _: &CpuStorage,
        _: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        candle_core::bail!("{} runs on CUDA tensors only", self.name())
    }

    fn cuda_fwd(
        &self,
        xs: &CudaStorage,
        xl: &Layout,
        ys: &CudaStorage,
        yl: &Layout,
    ) -> candle_core::Result<(CudaStorage, Shape)> {
        if xl.dims() != yl.dims() {
            candle_core::bail!(
                "{}: shapes {:?} and {:?} differ",
                self.name(),
                xl.dims(),
                yl.dims()
            );
        }
        let dev = &xs.device;
        let candle_stream = dev.cuda_stream();
        let (device, stream) = cuprum_side(dev)?;
        let shape = xl.shape().clone();
        // The inputs' slices, as candle's stream reads them (cudarc's event tracking, when on,
        // makes the stream wait for their writers; the guards record this read when dropped).
        let (x_base, _x_read) = xs.as_cuda_slice::<f32>()?.device_ptr(&candle_stream);
        let (y_base, _y_read) = ys.as_cuda_slice::<f32>()?.device_ptr(&candle_stream);
        // SAFETY: every element is written by the kernel below before anyone reads it.
        let mut out = unsafe { dev.alloc::<f32>(shape.elem_count()) }?;
        {
            let (z_base, _z_write) = out.device_ptr_mut(&candle_stream);
            let _on_candle = stream.use_scoped();
            // SAFETY: the slices are candle's live allocations of this device (the storages
            // are borrowed for this call, `out` is ours); the views are dropped at the end of
            // this block, before `out` is handed to candle, and every launch is on candle's
            // stream, so candle frees nothing before the kernel is done.
            let (x, y) = unsafe { (view(x_base, xl, &device)?, view(y_base, yl, &device)?) };
            // SAFETY: `out` is a live allocation of `shape.elem_count()` f32s of this device,
            // ours until it is handed to candle after this block.
            let mut z = unsafe { view(z_base, &Layout::contiguous(shape.clone()), &device)? };
            cu(kernels::squared_diff::call_into(&x, &y, &mut z))?;
            self.wrote_at.store(z.device_ptr(), Ordering::Relaxed);
        }
        Ok((CudaStorage::wrap_cuda_slice(out, dev.clone()), shape))
    }
}

/// Softmax over the last axis by cuprum's `logsumexp` row kernel and `exp_minus`, into memory
/// candle allocates and keeps.
#[derive(Default)]
struct Softmax {
    wrote_at: AtomicU64,
}

impl CustomOp1 for Softmax {
    fn name(&self) -> &'static str {
        "cuprum-softmax"
    }

    fn cpu_fwd(&self, _: &CpuStorage, _: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        candle_core::bail!("{} runs on CUDA tensors only", self.name())
    }

    fn cuda_fwd(&self, xs: &CudaStorage, xl: &Layout) -> candle_core::Result<(CudaStorage, Shape)> {
        let dev = &xs.device;
        let candle_stream = dev.cuda_stream();
        let (device, stream) = cuprum_side(dev)?;
        let shape = xl.shape().clone();
        let (x_base, _x_read) = xs.as_cuda_slice::<f32>()?.device_ptr(&candle_stream);
        // SAFETY: every element is written by `exp_minus` below before anyone reads it.
        let mut out = unsafe { dev.alloc::<f32>(shape.elem_count()) }?;
        {
            let (z_base, _z_write) = out.device_ptr_mut(&candle_stream);
            let _on_candle = stream.use_scoped();
            // SAFETY: as in `SquaredDiff::cuda_fwd`.
            let x = unsafe { view(x_base, xl, &device)? };
            // SAFETY: as in `SquaredDiff::cuda_fwd`.
            let mut z = unsafe { view(z_base, &Layout::contiguous(shape.clone()), &device)? };
            // `lse` is cuprum's temporary (its pool, on candle's stream: freed in order after
            // `exp_minus` has read it).
            let lse = cu(kernels::logsumexp::call(&x))?;
            cu(kernels::exp_minus::call_into(&x, &lse, &mut z))?;
            self.wrote_at.store(z.device_ptr(), Ordering::Relaxed);
        }
        Ok((CudaStorage::wrap_cuda_slice(out, dev.clone()), shape))
    }
}

/// The device address of element 0 of a CUDA tensor.
fn address(t: &Tensor) -> candle_core::Result<u64> {
    let (storage, layout) = t.storage_and_layout();
    let Storage::Cuda(s) = &*storage else {
        candle_core::bail!("not a CUDA tensor")
    };
    let stream = s.device.cuda_stream();
    let (base, _read) = s.as_cuda_slice::<f32>()?.device_ptr(&stream);
    Ok(base + (layout.start_offset() * size_of::<f32>()) as u64)
}

/// The largest `|a - b|`, computed by candle.
fn max_abs_diff(a: &Tensor, b: &Tensor) -> candle_core::Result<f32> {
    (a - b)?.abs()?.flatten_all()?.max(0)?.to_scalar::<f32>()
}

fn main() {
    match run() {
        Ok(true) => println!("ok"),
        Ok(false) => {
            eprintln!("FAILED");
            std::process::exit(1);
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}

fn run() -> candle_core::Result<bool> {
    // A stream of candle's own (not the default one), to show that cuprum launches on it.
    let dev = CandleDevice::new_cuda_with_stream(0)?;
    let cd = dev.as_cuda_device()?;
    println!(
        "candle stream {:#x} on GPU 0",
        cd.cuda_stream().cu_stream() as u64
    );
    let mut ok = true;

    // (x - y)^2 over 2^20 elements; x is a narrowed tensor (start offset 1 in its storage).
    let n = 1 << 20;
    let x = Tensor::randn(0f32, 1f32, n + 1, &dev)?.narrow(0, 1, n)?;
    let y = Tensor::randn(0f32, 1f32, n, &dev)?;
    let op = SquaredDiff::default();
    let z = x.apply_op2_no_bwd(&y, &op)?;
    let want = (&x - &y)?.sqr()?;
    let err = max_abs_diff(&z, &want)? / want.abs()?.max(0)?.to_scalar::<f32>()?;
    let (wrote, holds) = (op.wrote_at.load(Ordering::Relaxed), address(&z)?);
    println!(
        "squared_diff: {n} elements, max relative error {err:.2e}; cuprum wrote at {wrote:#x}, the candle tensor's memory is at {holds:#x}"
    );
    ok &= err <= 1e-6 && wrote == holds;

    // Softmax over the rows of a transposed tensor: shape (rows, cols), strides (1, rows).
    let (rows, cols) = (512, 1000);
    let x2 = Tensor::randn(0f32, 1f32, (cols, rows), &dev)?.t()?;
    let op = Softmax::default();
    let p = x2.apply_op1_no_bwd(&op)?;
    let e = x2.broadcast_sub(&x2.max_keepdim(D::Minus1)?)?.exp()?;
    let want = e.broadcast_div(&e.sum_keepdim(D::Minus1)?)?;
    let err = max_abs_diff(&p, &want)?;
    let (wrote, holds) = (op.wrote_at.load(Ordering::Relaxed), address(&p)?);
    println!(
        "softmax: ({rows}, {cols}) with strides {:?}, max error {err:.2e}; cuprum wrote at {wrote:#x}, the candle tensor's memory is at {holds:#x}",
        x2.stride()
    );
    ok &= err <= 1e-5 && wrote == holds;
    let row_sums = p.sum(D::Minus1)?;
    ok &= max_abs_diff(
        &row_sums,
        &Tensor::ones(rows, candle_core::DType::F32, &dev)?,
    )? <= 1e-4;

    // The owned route: a cudarc slice candle's device allocated (on its stream), given to a
    // cuprum array, which frees it (through cudarc) after cuprum's work when dropped. A candle
    // `Tensor` itself never gives up its slice (its storage is shared behind a lock), so its
    // memory is only ever viewed, as above.
    let (device, stream) = cuprum_side(cd)?;
    let _on_candle = stream.use_scoped();
    let mut owned = cu(Array::from_cuda_slice(cd.alloc_zeros::<f32>(n)?))?;
    let (xs, xl) = x.storage_and_layout();
    let (ys, yl) = y.storage_and_layout();
    let (Storage::Cuda(xs), Storage::Cuda(ys)) = (&*xs, &*ys) else {
        candle_core::bail!("not CUDA tensors")
    };
    let candle_stream = cd.cuda_stream();
    let (x_base, _x_read) = xs.as_cuda_slice::<f32>()?.device_ptr(&candle_stream);
    let (y_base, _y_read) = ys.as_cuda_slice::<f32>()?.device_ptr(&candle_stream);
    // SAFETY: the storages are read-locked until the end of `run`, after the views are dropped.
    let (xa, ya) = unsafe { (view(x_base, xl, &device)?, view(y_base, yl, &device)?) };
    cu(kernels::squared_diff::call_into(&xa, &ya, &mut owned))?;
    let (got, want) = (cu(owned.to_vec())?, z.to_vec1::<f32>()?);
    let same = got == want;
    println!(
        "owned route: cuprum array over a slice candle allocated, same result as the custom op: {same}"
    );
    ok &= same;

    // cuprum's pool caches the chunks freed on candle's stream (the softmax's `lse`) with that
    // stream: return them to the driver while the stream lives (candle destroys it with `dev`).
    cu(cu(MemoryPool::for_device(&device))?.free_all_blocks())?;
    Ok(ok)
}
