//! DLPack both ways, arrays over foreign memory (`cuprum_runtime::dlpack`,
//! `Array::from_raw_parts`), cudarc slices and views, foreign streams, on the CPU device here and on a GPU with `--include-ignored`: the
//! imported array views the producer's memory (same address, writes seen both ways), the
//! producer's deleter runs exactly once when the last view is gone and never on an error, every
//! dtype round-trips, strided and reversed views read the right elements, bad tensors are
//! refused with nothing taken. (Tensors of other libraries, PyTorch's, CuPy's and NumPy's, are
//! tested from Python: examples/python/tests.)

mod support;

use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use cuprum_runtime::dlpack::ffi::*;
use cuprum_runtime::dlpack::{dl_dtype, dtype_of};
use cuprum_runtime::{Array, DType, Device, Scalar, Stream};
use cuprum_runtime::prelude::{f8e4m3, f8e5m2};
use half::{bf16, f16};
use num_complex::Complex;
use support::Rng;

on_both_devices!(
    cuprum_runtime::Device;
    an_import_shares_memory_and_runs_the_deleter_once,
    strided_and_reversed_tensors_read_the_right_elements,
    every_dtype_round_trips_both_abis,
    an_export_keeps_the_array_alive_until_its_deleter,
    bad_tensors_are_refused_and_stay_the_callers,
    raw_parts_drop_their_keeper_with_the_last_view,
);

/// A producer's tensor: cuprum memory standing for another library's (it is memory of the
/// current device either way), with a deleter that counts its calls.
#[repr(C)]
struct Made<T: Scalar> {
    managed: DLManagedTensorVersioned,
    shape: Vec<i64>,
    strides: Vec<i64>,
    _mem: Array<T>,
    deleted: Arc<AtomicUsize>,
}

unsafe extern "C" fn count_delete<T: Scalar>(p: *mut DLManagedTensorVersioned) {
    // SAFETY: `p` is the first field of a leaked `Box<Made<T>>`, deleted once.
    let made = unsafe { Box::from_raw(p as *mut Made<T>) };
    made.deleted.fetch_add(1, Ordering::SeqCst);
}

/// A versioned tensor over `mem`'s memory: element 0 at element `first` of `mem`, `shape`,
/// `strides` (`None`: C order, a null pointer).
fn make<T: Scalar>(mem: &Array<T>, first: usize, shape: &[i64], strides: Option<&[i64]>, deleted: &Arc<AtomicUsize>) -> *mut DLManagedTensorVersioned {
    let mut m = Box::new(Made {
        managed: DLManagedTensorVersioned {
            version: DLPackVersion { major: 1, minor: 0 },
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(count_delete::<T>),
            flags: 0,
            dl_tensor: DLTensor {
                data: mem.device_ptr() as *mut c_void,
                device: cuprum_runtime::dlpack::dl_device(mem.device()),
                ndim: shape.len() as i32,
                dtype: dl_dtype(T::DTYPE),
                shape: std::ptr::null_mut(),
                strides: std::ptr::null_mut(),
                byte_offset: (first * std::mem::size_of::<T>()) as u64,
            },
        },
        shape: shape.to_vec(),
        strides: strides.map(<[i64]>::to_vec).unwrap_or_default(),
        _mem: mem.clone(),
        deleted: deleted.clone(),
    });
    m.managed.dl_tensor.shape = m.shape.as_mut_ptr();
    if strides.is_some() {
        m.managed.dl_tensor.strides = m.strides.as_mut_ptr();
    }
    Box::into_raw(m) as *mut DLManagedTensorVersioned
}

fn random_f32(n: usize) -> Vec<f32> {
    let mut rng = Rng::new();
    (0..n).map(|_| rng.range(-4.0, 4.0) as f32 + 0.125).collect()
}

fn an_import_shares_memory_and_runs_the_deleter_once() {
    let xs = random_f32(15);
    let x = Array::from_shape_vec([3usize, 5], xs.clone()).unwrap();
    let deleted = Arc::new(AtomicUsize::new(0));
    let t = make(&x, 0, &[3, 5], None, &deleted);
    // SAFETY: `t` is a live tensor this test owns, over memory `Made` keeps alive.
    let mut a = unsafe { Array::<f32>::from_dlpack_versioned(t) }.unwrap();
    assert_eq!(a.device_ptr(), x.device_ptr(), "an import copies nothing");
    assert_eq!(a.shape(), &[3, 5]);
    assert_eq!(a.to_vec().unwrap(), xs);
    // Writes through the import are the producer's data.
    let ys = random_f32(15);
    a.copy_from_slice(&ys).unwrap();
    assert_eq!(x.to_vec().unwrap(), ys);
    // The deleter runs when the last view is gone, not before.
    let view = a.transpose();
    drop(a);
    assert_eq!(deleted.load(Ordering::SeqCst), 0);
    assert_eq!(view.to_vec().unwrap()[1], ys[5]);
    drop(view);
    assert_eq!(deleted.load(Ordering::SeqCst), 1);
}

fn strided_and_reversed_tensors_read_the_right_elements() {
    let xs = random_f32(30);
    let x = Array::from_shape_vec([5usize, 6], xs.clone()).unwrap();
    let deleted = Arc::new(AtomicUsize::new(0));
    // Column 2: 5 elements 6 apart, element 0 at byte offset 8.
    let t = make(&x, 2, &[5], Some(&[6]), &deleted);
    // SAFETY: as above.
    let col = unsafe { Array::<f32>::from_dlpack_versioned(t) }.unwrap();
    assert_eq!(col.to_vec().unwrap(), (0..5).map(|r| xs[r * 6 + 2]).collect::<Vec<_>>());
    // Rows reversed, columns reversed: element 0 is the last element, strides negative.
    let t = make(&x, 29, &[5, 6], Some(&[-6, -1]), &deleted);
    // SAFETY: as above.
    let rev = unsafe { Array::<f32>::from_dlpack_versioned(t) }.unwrap();
    assert_eq!(rev.to_vec().unwrap(), xs.iter().rev().copied().collect::<Vec<_>>());
    // A kernel reads a reversed import too.
    let total = rev.sum().run().unwrap().item().unwrap() as f64;
    let want: f64 = xs.iter().map(|&v| v as f64).sum();
    assert!((total - want).abs() < 1e-4 * (1.0 + want.abs()), "{total} vs {want}");
    // A broadcast axis (stride 0).
    let t = make(&x, 1, &[4, 3], Some(&[0, 1]), &deleted);
    // SAFETY: as above.
    let b = unsafe { Array::<f32>::from_dlpack_versioned(t) }.unwrap();
    assert_eq!(b.to_vec().unwrap(), (0..12).map(|i| xs[1 + i % 3]).collect::<Vec<_>>());
    drop((col, rev, b));
    assert_eq!(deleted.load(Ordering::SeqCst), 3);
}

fn round_trip<T: Scalar + PartialEq + std::fmt::Debug>(values: Vec<T>) {
    let n = values.len();
    let x = Array::from_shape_vec([2usize, n / 2], values.clone()).unwrap();
    let t = x.to_dlpack_versioned();
    // SAFETY: `t` is the live export just made; its tensor is read before the import takes it.
    let tensor = unsafe { &(*t).dl_tensor };
    assert_eq!(dtype_of(tensor).unwrap(), T::DTYPE);
    assert_eq!(tensor.dtype, dl_dtype(T::DTYPE));
    assert_eq!(tensor.device, cuprum_runtime::dlpack::dl_device(x.device()));
    // SAFETY: cuprum's export is a live tensor owned here until the import takes it.
    let y = unsafe { Array::<T>::from_dlpack_versioned(t) }.unwrap();
    assert_eq!(y.device_ptr(), x.device_ptr());
    assert_eq!(y.to_vec().unwrap(), values, "{:?}", T::DTYPE);
    let t = x.transpose().to_dlpack();
    // SAFETY: as above, legacy ABI.
    let z = unsafe { Array::<T>::from_dlpack(t) }.unwrap();
    assert_eq!(z.strides(), x.transpose().strides());
    assert_eq!(z.to_vec().unwrap(), x.transpose().to_vec().unwrap(), "{:?} transposed", T::DTYPE);
}

fn every_dtype_round_trips_both_abis() {
    let mut rng = Rng::new();
    let mut ints = |lo: i64, hi: i64| -> Vec<i64> { (0..8).map(|_| rng.int(lo, hi)).collect() };
    round_trip::<bool>(ints(0, 1).into_iter().map(|v| v == 1).collect());
    round_trip::<i8>(ints(-128, 127).into_iter().map(|v| v as i8).collect());
    round_trip::<i16>(ints(-30000, 30000).into_iter().map(|v| v as i16).collect());
    round_trip::<i32>(ints(-1 << 30, 1 << 30).into_iter().map(|v| v as i32).collect());
    round_trip::<i64>(ints(i64::MIN / 2, i64::MAX / 2));
    round_trip::<u8>(ints(0, 255).into_iter().map(|v| v as u8).collect());
    round_trip::<u16>(ints(0, 65535).into_iter().map(|v| v as u16).collect());
    round_trip::<u32>(ints(0, u32::MAX as i64).into_iter().map(|v| v as u32).collect());
    round_trip::<u64>(ints(0, i64::MAX).into_iter().map(|v| v as u64 * 2).collect());
    let fs = random_f32(8);
    round_trip::<f16>(fs.iter().map(|&v| f16::from_f32(v)).collect());
    round_trip::<bf16>(fs.iter().map(|&v| bf16::from_f32(v)).collect());
    round_trip::<f32>(fs.clone());
    round_trip::<f64>(fs.iter().map(|&v| v as f64 / 3.0).collect());
    round_trip::<Complex<f32>>(fs.iter().map(|&v| Complex::new(v, -v / 2.0)).collect());
    round_trip::<Complex<f64>>(fs.iter().map(|&v| Complex::new(v as f64 / 3.0, 1.0 / v as f64)).collect());
    round_trip::<f8e4m3>(fs.iter().map(|&v| f8e4m3::from_f32(v)).collect());
    round_trip::<f8e5m2>(fs.iter().map(|&v| f8e5m2::from_f32(v)).collect());
    // DLPack 1.1's codes: kDLFloat8_e4m3fn 10, kDLFloat8_e5m2 12 (torch's float8_e4m3fn, float8_e5m2).
    assert_eq!((dl_dtype(DType::F8E4M3).code, dl_dtype(DType::F8E4M3).bits), (10, 8));
    assert_eq!((dl_dtype(DType::F8E5M2).code, dl_dtype(DType::F8E5M2).bits), (12, 8));
    assert_eq!(DType::ALL.len(), 17, "a new dtype needs a round trip here");
}

fn an_export_keeps_the_array_alive_until_its_deleter() {
    let xs = random_f32(64);
    let x = Array::from_vec(xs.clone()).unwrap();
    let buffer = x.buffer().clone();
    let before = Arc::strong_count(&buffer);
    let t = x.to_dlpack_versioned();
    drop(x);
    assert_eq!(Arc::strong_count(&buffer), before, "the export holds a view in place of the dropped array");
    // The consumer reads the memory after the producer's array is gone.
    // SAFETY: the live export, owned here.
    let y = unsafe { Array::<f32>::from_dlpack_versioned(t) }.unwrap();
    assert_eq!(y.to_vec().unwrap(), xs);
    drop(y);
    assert_eq!(Arc::strong_count(&buffer), before - 1, "the deleter released the export's view");
    // An export whose consumer calls the deleter directly.
    let t = Array::<f32>::from_parts(buffer.clone(), vec![64], vec![1], 0).unwrap().to_dlpack();
    // SAFETY: a live export; its deleter is called once, as DLPack requires.
    unsafe { ((*t).deleter.unwrap())(t) };
    assert_eq!(Arc::strong_count(&buffer), before - 1);
}

fn bad_tensors_are_refused_and_stay_the_callers() {
    let xs = random_f32(8);
    let x = Array::from_vec(xs).unwrap();
    let deleted = Arc::new(AtomicUsize::new(0));
    let refuse = |t: *mut DLManagedTensorVersioned, what: &str, fix: &dyn Fn(*mut DLManagedTensorVersioned)| {
        fix(t);
        // SAFETY: a live tensor owned here; on the error below it stays owned here.
        let e = unsafe { Array::<f32>::from_dlpack_versioned(t) }.expect_err(what).to_string();
        assert!(e.contains(what), "{e}");
        assert_eq!(deleted.load(Ordering::SeqCst), 0, "an error must not run the producer's deleter: {e}");
        // SAFETY: still the caller's: delete it as a consumer that gave up would.
        unsafe { ((*t).deleter.unwrap())(t) };
        deleted.store(0, Ordering::SeqCst);
    };
    refuse(make(&x, 0, &[8], None, &deleted), "i32", &|t| {
        // SAFETY: `t` is the live tensor just made.
        unsafe { (*t).dl_tensor.dtype = dl_dtype(DType::I32) }
    });
    refuse(make(&x, 0, &[8], None, &deleted), "2 lanes", &|t| {
        // SAFETY: `t` is the live tensor just made.
        unsafe { (*t).dl_tensor.dtype.lanes = 2 }
    });
    refuse(make(&x, 0, &[8], None, &deleted), "device type 4", &|t| {
        // SAFETY: `t` is the live tensor just made.
        unsafe { (*t).dl_tensor.device.device_type = 4 }
    });
    refuse(make(&x, 0, &[8], None, &deleted), "read-only", &|t| {
        // SAFETY: `t` is the live tensor just made.
        unsafe { (*t).flags = DLPACK_FLAG_BITMASK_READ_ONLY }
    });
    refuse(make(&x, 0, &[8], None, &deleted), "DLPack 2.0", &|t| {
        // SAFETY: `t` is the live tensor just made.
        unsafe { (*t).version.major = 2 }
    });
    refuse(make(&x, 0, &[4], None, &deleted), "not aligned", &|t| {
        // SAFETY: `t` is the live tensor just made.
        unsafe { (*t).dl_tensor.byte_offset = 2 }
    });
    refuse(make(&x, 0, &[4], None, &deleted), "negative extent", &|t| {
        // SAFETY: `t` is the live tensor just made.
        unsafe { *(*t).dl_tensor.shape = -3 }
    });
    refuse(make(&x, 0, &[4], None, &deleted), "null shape", &|t| {
        // SAFETY: `t` is the live tensor just made.
        unsafe { (*t).dl_tensor.shape = std::ptr::null_mut() }
    });
    // SAFETY: a null pointer is refused without being read.
    assert!(unsafe { Array::<f32>::from_dlpack_versioned(std::ptr::null_mut()) }.is_err());
}

struct Keeper(Arc<AtomicUsize>);
impl Drop for Keeper {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn raw_parts_drop_their_keeper_with_the_last_view() {
    let xs = random_f32(12);
    let x = Array::from_shape_vec([3usize, 4], xs.clone()).unwrap();
    let dropped = Arc::new(AtomicUsize::new(0));
    let device = x.device().clone();
    // SAFETY: `x` keeps the memory alive for the whole test; the keeper only counts.
    let a = unsafe {
        Array::<f32>::from_raw_parts(x.device_ptr(), vec![4, 3], vec![1, 4], &device, Box::new(Keeper(dropped.clone())))
    }
    .unwrap();
    assert!(a.buffer().is_foreign());
    assert_eq!(a.to_vec().unwrap(), x.transpose().to_vec().unwrap());
    let b = a.clone();
    drop(a);
    assert_eq!(dropped.load(Ordering::SeqCst), 0);
    drop(b);
    assert_eq!(dropped.load(Ordering::SeqCst), 1);
    // An error drops the keeper at once and touches nothing.
    // SAFETY: refused before anything is read.
    let e = unsafe { Array::<f32>::from_raw_parts(x.device_ptr() + 2, vec![2], vec![1], &device, Box::new(Keeper(dropped.clone()))) };
    assert!(e.unwrap_err().to_string().contains("not aligned"));
    assert_eq!(dropped.load(Ordering::SeqCst), 2);
}

#[test]
fn foreign_streams_of_the_cpu_device_are_its_null_streams() {
    let cpu = Device::cpu();
    for (h, kind) in [(0u64, cuprum_runtime::StreamKind::Legacy), (1, cuprum_runtime::StreamKind::Legacy), (2, cuprum_runtime::StreamKind::PerThread)] {
        // SAFETY: the null streams are never destroyed.
        let s = unsafe { Stream::from_raw(&cpu, h) }.unwrap();
        assert_eq!(s.kind(), kind);
    }
    // SAFETY: refused before use.
    let e = unsafe { Stream::from_raw(&cpu, 0x1234) }.unwrap_err().to_string();
    assert!(e.contains("CPU device"), "{e}");
    assert_eq!(Stream::legacy(&cpu).as_raw(), 0);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_foreign_cuda_stream_runs_launches_and_is_not_destroyed() {
    use cudarc::driver::result;
    let device = Device::get(0).unwrap();
    device.bind_to_thread().unwrap();
    let raw = result::stream::create(result::stream::StreamKind::NonBlocking).unwrap();
    let xs = random_f32(1 << 16);
    {
        // SAFETY: `raw` lives until it is destroyed below, after every use.
        let s = unsafe { Stream::from_raw(&device, raw as u64) }.unwrap();
        assert_eq!(s.as_raw(), raw as u64);
        assert_eq!(s.kind(), cuprum_runtime::StreamKind::NonBlocking);
        let _current = s.use_scoped();
        let x = Array::from_vec(xs.clone()).unwrap();
        let y = (&x * 2.0f32).unwrap();
        let total = y.sum().run().unwrap().item().unwrap() as f64;
        let want: f64 = xs.iter().map(|&v| 2.0 * v as f64).sum();
        assert!((total - want).abs() < 1e-3 * (1.0 + want.abs()), "{total} vs {want}");
        // A graph recorded on the foreign stream, replayed there.
        let mut z = Array::<f32>::zeros([xs.len()]).unwrap();
        z.assign(&y).unwrap();
        z.fill(-1.0).unwrap();
        let graph = cuprum_runtime::Graph::capture(&s, |_| z.assign(&y)).unwrap();
        graph.replay().unwrap();
        s.synchronize().unwrap();
        assert_eq!(z.to_vec().unwrap(), y.to_vec().unwrap());
        // A reduction that needs scratch memory cannot be recorded there (its scratch is
        // allocated per launch on a foreign stream): a clear error, the stream still usable.
        let mut t = Array::<f32>::zeros([]).unwrap();
        let big = Array::<f32>::full([1usize << 22], 1.0).unwrap();
        big.sum().out(&mut t).run().unwrap();
        match cuprum_runtime::Graph::capture(&s, |_| big.sum().out(&mut t).run().map(drop)) {
            Ok(_) => {}
            Err(e) => assert!(e.to_string().contains("alloc"), "{e}"),
        }
        assert_eq!(big.sum().run().unwrap().item().unwrap(), (1u64 << 22) as f32);
    }
    // The wrapper is gone; the stream is still the owner's.
    // SAFETY: `raw` is live (never destroyed by cuprum), destroyed once here.
    unsafe {
        result::stream::synchronize(raw).unwrap();
        result::stream::destroy(raw).unwrap();
    }
    // The pool holds chunks freed on that stream: taking them on another stream and releasing
    // them must not touch the destroyed stream's handle.
    let _current = Stream::legacy(&device).use_scoped();
    let x = Array::from_vec(xs.clone()).unwrap();
    let y = (&x * 2.0f32).unwrap();
    assert_eq!(y.to_vec().unwrap()[7], 2.0 * xs[7]);
    drop((x, y));
    cuprum_runtime::MemoryPool::for_device(&device).unwrap().free_all_blocks().unwrap();
    let z = (&Array::from_vec(xs.clone()).unwrap() + 1.0f32).unwrap();
    assert_eq!(z.to_vec().unwrap()[9], xs[9] + 1.0);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cudarc_slices_and_views_are_zero_copy() {
    let device = Device::get(0).unwrap();
    let _current = device.use_scoped().unwrap();
    let ctx = device.cudarc_context().unwrap();
    let cs = ctx.default_stream();
    let xs = random_f32(1000);
    // A cudarc slice becomes an array (same memory), freed by cudarc with the last view.
    let slice = cs.clone_htod(&xs).unwrap();
    let a = Array::from_cuda_slice(slice).unwrap();
    assert!(a.buffer().is_foreign());
    assert_eq!(a.to_vec().unwrap(), xs);
    let y = (&a * 2.0f32).unwrap();
    drop(a);
    // A cudarc view of cuprum's array: cudarc reads it, on cuprum's current stream.
    let back = y.with_cuda_view(|v, s| s.clone_dtoh(v).unwrap()).unwrap();
    assert_eq!(back, xs.iter().map(|v| v * 2.0).collect::<Vec<_>>());
    // ... and writes it.
    let mut z = Array::<f32>::full([1000usize], f32::NAN).unwrap();
    z.with_cuda_view_mut(|v, s| s.memcpy_htod(&xs, v).unwrap()).unwrap();
    assert_eq!(z.to_vec().unwrap(), xs);
    // A non-contiguous array has no view.
    let m = Array::from_shape_vec([10usize, 100], xs.clone()).unwrap();
    assert!(m.transpose().with_cuda_view(|_, _| ()).unwrap_err().to_string().contains("C-contiguous"));
    // The array still works after the view (its memory was not freed by the view's slice).
    assert_eq!(y.to_vec().unwrap()[3], xs[3] * 2.0);
}
