//! GPU tests of elementwise kernels, ported from CuPy's behaviour (issue 6, item 6): the
//! `#[elementwise]` machinery through a hand-written typed wrapper (what the macro generates) over
//! a kernel compiled from Rust source by `cuprum_compiler::compile_source`, and
//! `ElementwiseKernel`. Inputs are fresh random numbers, given outputs are poisoned first, and
//! results are compared with a host reference.
//!
//! `#[ignore = "needs a CUDA GPU"]`: run on a GPU machine with
//! `cargo test -p cuprum-runtime --release --test elementwise_gpu -- --include-ignored --test-threads 1`.

mod support;
use support::Rng;

/// The tests of this file run one at a time: some read the process-wide variant counters.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

use std::sync::OnceLock;

// The erased launch and kernels made by hand are the runtime's internals (`__workspace`). This file
// stays an integration test, a process of its own, for the process-wide launch variant counters
// it reads: the runtime's own tests (`src/tests/`) launch concurrently in theirs.
use cuprum_runtime::__workspace::elementwise::{
    self, Arg, ElementwiseKernel, Input, Options, Param, ParamType, Role, Value,
};
use cuprum_runtime::__workspace::registry::{self, Kernel, KernelUnit, Signature, UnitRef};
use cuprum_runtime::stats::Layer;
use cuprum_runtime::{Array, DType, Device, Float, Result, Scalar, Stream};
use cuprum_runtime::prelude::{f8e4m3, f8e5m2};
use half::{bf16, f16};
use num_complex::Complex;

// ---- helpers -------------------------------------------------------------------------------



/// Random values of every dtype, as `Value`s (small integers so that sums stay exact in f64).
fn random_value(d: DType, r: &mut Rng) -> Value {
    let f = r.range(-4.0, 4.0);
    let i = (r.next() % 200) as i64 - 100;
    match d {
        DType::Bool => Value::Bool(r.next() & 1 == 1),
        DType::F16 | DType::BF16 | DType::F32 | DType::F64 | DType::F8E4M3 | DType::F8E5M2 => Value::F64(f).cast(d),
        DType::C32 | DType::C64 => Value::C64(Complex::new(f, r.range(-4.0, 4.0))).cast(d),
        _ => Value::I64(i).cast(d),
    }
}

/// `a + b` on the host in the dtype's arithmetic (integers wrap; bool is "or", as C's bool).
fn host_add(a: Value, b: Value) -> Value {
    use Value::*;
    match (a, b) {
        (Bool(x), Bool(y)) => Bool(x | y),
        (I8(x), I8(y)) => I8(x.wrapping_add(y)),
        (I16(x), I16(y)) => I16(x.wrapping_add(y)),
        (I32(x), I32(y)) => I32(x.wrapping_add(y)),
        (I64(x), I64(y)) => I64(x.wrapping_add(y)),
        (U8(x), U8(y)) => U8(x.wrapping_add(y)),
        (U16(x), U16(y)) => U16(x.wrapping_add(y)),
        (U32(x), U32(y)) => U32(x.wrapping_add(y)),
        (U64(x), U64(y)) => U64(x.wrapping_add(y)),
        (F16(x), F16(y)) => F16(f16::from_f32(x.to_f32() + y.to_f32())),
        (BF16(x), BF16(y)) => BF16(bf16::from_f32(x.to_f32() + y.to_f32())),
        (F32(x), F32(y)) => F32(x + y),
        (F64(x), F64(y)) => F64(x + y),
        (C32(x), C32(y)) => C32(x + y),
        (C64(x), C64(y)) => C64(x + y),
        (F8E4M3(x), F8E4M3(y)) => F8E4M3(f8e4m3::from_f32(x.to_f32() + y.to_f32())),
        (F8E5M2(x), F8E5M2(y)) => F8E5M2(f8e5m2::from_f32(x.to_f32() + y.to_f32())),
        _ => panic!("mixed dtypes"),
    }
}

/// An array of `shape` with the given C-order values, whatever the dtype.
macro_rules! with_dtype {
    ($d:expr, $T:ident => $body:expr) => {
        match $d {
            DType::Bool => { type $T = bool; $body }
            DType::I8 => { type $T = i8; $body }
            DType::I16 => { type $T = i16; $body }
            DType::I32 => { type $T = i32; $body }
            DType::I64 => { type $T = i64; $body }
            DType::U8 => { type $T = u8; $body }
            DType::U16 => { type $T = u16; $body }
            DType::U32 => { type $T = u32; $body }
            DType::U64 => { type $T = u64; $body }
            DType::F16 => { type $T = f16; $body }
            DType::BF16 => { type $T = bf16; $body }
            DType::F32 => { type $T = f32; $body }
            DType::F64 => { type $T = f64; $body }
            DType::C32 => { type $T = Complex<f32>; $body }
            DType::C64 => { type $T = Complex<f64>; $body }
            DType::F8E4M3 => { type $T = f8e4m3; $body }
            DType::F8E5M2 => { type $T = f8e5m2; $body }
        }
    };
}

fn typed<T: Scalar>(v: Value) -> T {
    let any: Box<dyn std::any::Any> = match v {
        Value::Bool(x) => Box::new(x),
        Value::I8(x) => Box::new(x),
        Value::I16(x) => Box::new(x),
        Value::I32(x) => Box::new(x),
        Value::I64(x) => Box::new(x),
        Value::U8(x) => Box::new(x),
        Value::U16(x) => Box::new(x),
        Value::U32(x) => Box::new(x),
        Value::U64(x) => Box::new(x),
        Value::F16(x) => Box::new(x),
        Value::BF16(x) => Box::new(x),
        Value::F32(x) => Box::new(x),
        Value::F64(x) => Box::new(x),
        Value::C32(x) => Box::new(x),
        Value::C64(x) => Box::new(x),
        Value::F8E4M3(x) => Box::new(x),
        Value::F8E5M2(x) => Box::new(x),
    };
    *any.downcast::<T>().expect("value of the array's dtype")
}

fn poison<T: Scalar>(a: &mut Array<T>, v: T) {
    let n = a.len();
    a.copy_from_slice(&vec![v; n]).unwrap();
}

// ---- the typed wrapper `#[elementwise]` generates, written by hand --------------------------

const KERNELS: &str = r#"
use cuprum::prelude::*;

#[elementwise]
pub fn squared_diff<T: Float>(x: T, y: T) -> T {
    let d = x - y;
    d * d
}
"#;

fn unit() -> &'static KernelUnit {
    static UNIT: OnceLock<&'static KernelUnit> = OnceLock::new();
    UNIT.get_or_init(|| {
        let compiled = cuprum_compiler::compile_source(KERNELS).expect("the kernel file compiles");
        Box::leak(Box::new(KernelUnit::from_source("elementwise_gpu.rs", compiled.unit.source, compiled.unit.fast_math)))
    })
}

fn squared_diff_kernel() -> &'static Kernel {
    static K: OnceLock<Kernel> = OnceLock::new();
    // SAFETY: SQUARED_DIFF_SIG is the signature of KERNELS' `squared_diff` (what the macro
    // generates), whose code is cuprum's.
    K.get_or_init(|| unsafe { Kernel::new(UnitRef::Embedded(unit()), "squared_diff", Signature::Elementwise(&SQUARED_DIFF_SIG)) })
}

/// The kernel's signature: parameters, then the returned output.
const SQUARED_DIFF_SIG: [Param; 3] = [
    Param::new("x", Role::In, ParamType::Generic(0)),
    Param::new("y", Role::In, ParamType::Generic(0)),
    Param::new("out", Role::Out, ParamType::Generic(0)),
];

/// `squared_diff(&x, &y)?`: broadcast, output allocated on the arrays' device.
fn squared_diff<'a, T: Float>(x: impl Into<Input<'a, T>>, y: impl Into<Input<'a, T>>) -> Result<Array<T>> {
    let (x, y) = (x.into(), y.into());
    let shape = elementwise::broadcast_shape("squared_diff", &[x.arg(), y.arg()], None)?;
    let stream = match x.array().or(y.array()) {
        Some(a) => Stream::current_for(a.device())?,
        None => Stream::current()?,
    };
    let mut out = Array::<T>::empty_on(shape, &stream)?;
    squared_diff_into(x, y, &mut out, &Options::default())?;
    Ok(out)
}

/// `squared_diff` with an explicit output and options.
fn squared_diff_into<'a, T: Float>(
    x: impl Into<Input<'a, T>>,
    y: impl Into<Input<'a, T>>,
    out: &mut Array<T>,
    opts: &Options<'_>,
) -> Result<()> {
    let (x, y) = (x.into(), y.into());
    let args = [x.arg(), y.arg(), Arg::output(out)];
    elementwise::launch(squared_diff_kernel(), &[T::DTYPE], &args, opts)
}

fn check_squared_diff<T: Float>(x: &Array<T>, y: &Array<T>, tol: f64) {
    let z = squared_diff(x, y).unwrap();
    let shape = z.shape().to_vec();
    let xs = x.broadcast_to(shape.clone()).unwrap().to_vec().unwrap();
    let ys = y.broadcast_to(shape).unwrap().to_vec().unwrap();
    for (k, ((a, b), c)) in xs.iter().zip(&ys).zip(z.to_vec().unwrap()).enumerate() {
        let want = (a.to_f64() - b.to_f64()).powi(2);
        let got = c.to_f64();
        assert!((got - want).abs() <= tol * want.abs().max(1.0), "element {k}: {got} vs {want}");
    }
}

fn random_array<T: Float>(shape: &[usize], r: &mut Rng) -> Array<T> {
    let n: usize = shape.iter().product();
    let v: Vec<T> = (0..n).map(|_| T::from_f64(r.range(-4.0, 4.0))).collect();
    Array::from_shape_vec(shape.to_vec(), v).unwrap()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn typed_wrapper_runs_every_variant() {
    let _serial = serial();
    let mut r = Rng::new();
    elementwise::reset_variant_counts();
    // Contiguous, odd length (vector body and scalar tail).
    let x = random_array::<f32>(&[1001, 7], &mut r);
    let y = random_array::<f32>(&[1001, 7], &mut r);
    check_squared_diff(&x, &y, 1e-6);
    let c = elementwise::variant_counts();
    assert_eq!((c.contig, c.vector), (1, 1));
    // Broadcast rows and columns, transposed, sliced; f64 and f16.
    let row = random_array::<f32>(&[7], &mut r);
    let col = random_array::<f32>(&[1001, 1], &mut r);
    check_squared_diff(&x, &row, 1e-6);
    check_squared_diff(&col, &x, 1e-6);
    let sq = random_array::<f64>(&[300, 300], &mut r);
    let sq2 = random_array::<f64>(&[300, 300], &mut r);
    check_squared_diff(&sq.transpose(), &sq2, 1e-12);
    check_squared_diff(&sq.slice(0, cuprum_runtime::Slice::new(None, None, 2)).unwrap(), &sq2.slice(0, 0..150).unwrap(), 1e-12);
    let h = random_array::<f16>(&[64, 64], &mut r);
    let h2 = random_array::<f16>(&[64], &mut r);
    check_squared_diff(&h, &h2, 2e-3);
    let c = elementwise::variant_counts();
    assert!(c.s32 >= 4 && c.s64 == 0, "{c:?}");
    // A scalar operand, either side.
    let z = squared_diff(&x, 0.5f32).unwrap();
    for (a, b) in x.to_vec().unwrap().iter().zip(z.to_vec().unwrap()) {
        assert!((b - (a - 0.5) * (a - 0.5)).abs() < 1e-5);
    }
    let z = squared_diff(2.0f64, &sq).unwrap();
    for (a, b) in sq.to_vec().unwrap().iter().zip(z.to_vec().unwrap()) {
        assert!((b - (2.0 - a) * (2.0 - a)).abs() < 1e-12);
    }
    // The served records carry the variant symbols.
    let served = registry::served();
    assert!(served.iter().any(|s| s.symbol == "cuprum_elementwise_squared_diff_contig__f32"), "{served:?}");
    assert!(served.iter().any(|s| s.symbol == "cuprum_elementwise_squared_diff_s32__f16"), "{served:?}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn explicit_output_block_sizes_and_shape_mismatch() {
    let _serial = serial();
    let mut r = Rng::new();
    let x = random_array::<f32>(&[5000], &mut r);
    let y = random_array::<f32>(&[5000], &mut r);
    for block in [1u32, 32, 1024] {
        let mut out = Array::<f32>::zeros([5000]).unwrap();
        poison(&mut out, f32::NAN);
        squared_diff_into(&x, &y, &mut out, &Options { block_size: Some(block), ..Default::default() }).unwrap();
        for ((a, b), c) in x.to_vec().unwrap().iter().zip(y.to_vec().unwrap()).zip(out.to_vec().unwrap()) {
            assert!((c - (a - b) * (a - b)).abs() <= 1e-5 * c.abs().max(1.0), "block {block}");
        }
    }
    let mut out = Array::<f32>::zeros([5000]).unwrap();
    let e = squared_diff_into(&x, &y, &mut out, &Options { block_size: Some(0), ..Default::default() }).unwrap_err();
    assert!(e.to_string().contains("block size is 0"), "{e}");
    let mut small = Array::<f32>::zeros([10]).unwrap();
    let e = squared_diff_into(&x, &y, &mut small, &Options::default()).unwrap_err();
    assert!(e.to_string().contains("shape mismatch"), "{e}");
}

// ---- ElementwiseKernel ---------------------------------------------------------------------

fn add_kernel() -> ElementwiseKernel {
    ElementwiseKernel::new("T x, T y", "T z", "z = x + y", "add_ek").unwrap()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn array_plus_scalar_every_dtype_and_scalars_wrap() {
    let _serial = serial();
    let k = add_kernel();
    let mut r = Rng::new();
    for d in DType::ALL {
        with_dtype!(d, T => {
            let xs: Vec<Value> = (0..1000).map(|_| random_value(d, &mut r)).collect();
            let s = random_value(d, &mut r);
            let x = Array::<T>::from_vec(xs.iter().map(|v| typed::<T>(*v)).collect()).unwrap();
            let z = k.call().arg(&x).arg(typed::<T>(s)).run_one::<T>().unwrap();
            let want: Vec<T> = xs.iter().map(|v| typed::<T>(host_add(*v, s))).collect();
            assert_eq!(z.to_vec().unwrap(), want, "{d}");
        });
    }
    // Out-of-range scalars wrap like NumPy's C cast: 300 as uint8 is 44.
    let x = Array::<u8>::from_vec(vec![1, 2, 250]).unwrap();
    let z = k.call().arg(&x).arg(300i64).run_one::<u8>().unwrap();
    assert_eq!(z.to_vec().unwrap(), vec![45, 46, 38]);
    let z = k.call().arg(&x).arg(-1i32).run_one::<u8>().unwrap();
    assert_eq!(z.to_vec().unwrap(), vec![0, 1, 249]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn strided_inputs_of_every_dtype_match_the_host() {
    let _serial = serial();
    let k = add_kernel();
    let mut r = Rng::new();
    for d in DType::ALL {
        with_dtype!(d, T => {
            let base: Vec<Value> = (0..40 * 30).map(|_| random_value(d, &mut r)).collect();
            let other: Vec<Value> = (0..30).map(|_| random_value(d, &mut r)).collect();
            let a = Array::<T>::from_shape_vec([40, 30], base.iter().map(|v| typed::<T>(*v)).collect()).unwrap();
            let row = Array::<T>::from_vec(other.iter().map(|v| typed::<T>(*v)).collect()).unwrap();
            let cases: Vec<(Array<T>, Array<T>)> = vec![
                (a.transpose().slice(0, 0..30).unwrap().slice(1, 0..30).unwrap(), row.clone()),
                (a.slice(0, cuprum_runtime::Slice::new(None, None, 3)).unwrap(), row.clone()),
                (a.slice(1, cuprum_runtime::Slice::rev()).unwrap(), row.reshape([1, 30]).unwrap()),
                (a.clone(), row.clone()),
            ];
            for (x, y) in cases {
                let shape = cuprum_runtime::array::broadcast_shapes(&[x.shape(), y.shape()]).unwrap();
                let mut z = Array::<T>::empty(shape.clone()).unwrap();
                let p = typed::<T>(random_value(d, &mut r));
                poison(&mut z, p);
                let outs = k.call().arg(&x).arg(&y).out(&z).run().unwrap();
                assert_eq!(outs.len(), 1);
                let xs = x.broadcast_to(shape.clone()).unwrap().to_vec().unwrap();
                let ys = y.broadcast_to(shape.clone()).unwrap().to_vec().unwrap();
                let want: Vec<T> = xs.iter().zip(&ys).map(|(a, b)| typed::<T>(host_add(Value::of(*a), Value::of(*b)))).collect();
                assert_eq!(z.to_vec().unwrap(), want, "{d} {:?} {:?}", x.shape(), x.strides());
            }
        });
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn raw_manual_indexing_equals_the_broadcast_kernel() {
    let _serial = serial();
    let mut r = Rng::new();
    let n = 1000;
    let x = random_array::<f32>(&[n], &mut r);
    let y = random_array::<f32>(&[n], &mut r);
    let add_reverse = ElementwiseKernel::new("T x, raw T y", "T z", "z = x + y[_ind.size() - i - 1]", "add_reverse").unwrap();
    // A raw argument indexed by C text: the safe `run` refuses, the unsafe `run_raw` launches.
    let e = add_reverse.call().arg(&x).arg(&y).run_one::<f32>().unwrap_err();
    assert!(e.to_string().contains("run_raw"), "{e}");
    // SAFETY: `_ind.size() - i - 1` lies in 0..n, inside `y` (n elements).
    let a: Array<f32> = unsafe { add_reverse.call().arg(&x).arg(&y).run_raw() }.unwrap().remove(0).into_array().unwrap();
    let b = add_kernel().call().arg(&x).arg(&y.slice(0, cuprum_runtime::Slice::rev()).unwrap()).run_one::<f32>().unwrap();
    assert_eq!(a.to_vec().unwrap(), b.to_vec().unwrap());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn size_rules_on_the_gpu() {
    let _serial = serial();
    let mut r = Rng::new();
    let x = random_array::<f32>(&[64], &mut r);
    // All raw: the size is required, then sets the loop.
    let k = ElementwiseKernel::new("raw T x", "raw T y", "y[i] = x[i] * 2", "double_raw").unwrap();
    // SAFETY: `i` < 64, the size of `x` and `y` (and nothing launches without the size).
    let e = unsafe { k.call().arg(&x).run_raw() }.unwrap_err();
    assert!(e.to_string().contains("every array argument is raw"), "{e}");
    let y = Array::<f32>::zeros([64]).unwrap();
    // SAFETY: as above.
    unsafe { k.call().arg(&x).out(&y).size(64).run_raw() }.unwrap();
    let want: Vec<f32> = x.to_vec().unwrap().iter().map(|v| v * 2.0).collect();
    assert_eq!(y.to_vec().unwrap(), want);
    // A size with a non-raw argument is an error.
    let e = add_kernel().call().arg(&x).arg(&x).size(64).run().unwrap_err();
    assert!(e.to_string().contains("only when every array argument is raw"), "{e}");
    // The size taken from a given output; a kernel with no inputs.
    let iota = ElementwiseKernel::new("", "T y", "y = (T)i", "iota").unwrap();
    let mut out = Array::<i64>::zeros([3, 5]).unwrap();
    poison(&mut out, -7);
    iota.call().out(&out).run().unwrap();
    assert_eq!(out.to_vec().unwrap(), (0..15).collect::<Vec<i64>>());
    let e = iota.call().run().unwrap_err();
    assert!(e.to_string().contains("not bound") || e.to_string().contains("undecided"), "{e}");
    let fixed = ElementwiseKernel::new("", "int32 y", "y = (int)i * 3", "iota3").unwrap();
    let v = fixed.call().size(4).run_one::<i32>().unwrap();
    assert_eq!(v.to_vec().unwrap(), vec![0, 3, 6, 9]);
    // Invalid kernel name.
    assert!(ElementwiseKernel::new("T x", "T y", "y = x", "a-b").is_err());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn raw_arrays_size_shape_strides_and_flat_index() {
    let _serial = serial();
    let mut r = Rng::new();
    let base = random_array::<f64>(&[6, 4], &mut r);
    let t = base.transpose(); // (4, 6), strides (1, 4)
    let k = ElementwiseKernel::new(
        "raw T x",
        "raw int64 info, raw T flat",
        "if (i == 0) { info[0] = x.size(); info[1] = x.ndim(); info[2] = x.shape()[0]; info[3] = x.shape()[1]; info[4] = x.strides()[0]; info[5] = x.strides()[1]; } flat[i] = x[i]",
        "raw_info",
    )
    .unwrap();
    let info = Array::<i64>::zeros([6]).unwrap();
    let flat = Array::<f64>::zeros([24]).unwrap();
    // SAFETY: `i` < 24, the size of `x` and `flat`; `info` has the 6 elements written.
    unsafe { k.call().arg(&t).out(&info).out(&flat).size(24).run_raw() }.unwrap();
    assert_eq!(info.to_vec().unwrap(), vec![24, 2, 4, 6, 1, 4]);
    assert_eq!(flat.to_vec().unwrap(), t.to_vec().unwrap());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn concurrent_first_calls_compile_once() {
    let _serial = serial();
    let tag = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let op = format!("z = x * y /* {tag} */");
    let x = Array::<f32>::from_vec((0..256).map(|v| v as f32 + 0.5).collect()).unwrap();
    std::thread::scope(|s| {
        for _ in 0..8 {
            let (op, x) = (&op, &x);
            s.spawn(move || {
                let k = ElementwiseKernel::new("T x, T y", "T z", op, "mul_once").unwrap();
                let z = k.call().arg(x).arg(2.0f32).run_one::<f32>().unwrap();
                assert_eq!(z.to_vec().unwrap()[3], 7.0);
            });
        }
    });
    let k = ElementwiseKernel::new("T x, T y", "T z", &op, "mul_once").unwrap();
    let compiled = registry::served()
        .iter()
        .filter(|s| std::ptr::eq(s.kernel, k.name()) && s.layer == Layer::Nvrtc)
        .count();
    assert!(compiled <= 1, "compiled {compiled} times");
}

/// The 32/64-bit boundary: int8 loops of 2^31 +/- 1024 and 2^32 +/- 1024 elements, contiguous and
/// with a broadcast operand (strided variants). Skips cleanly when the GPU lacks the memory.
#[test]
#[ignore = "needs a CUDA GPU"]
fn index_boundary_int8() {
    let _serial = serial();
    let dev = Device::current().unwrap();
    let k = add_kernel();
    for n in [(1usize << 31) - 1024, (1usize << 31) + 1024, (1usize << 32) - 1024, (1usize << 32) + 1024] {
        let (free, _) = dev.memory_info().unwrap();
        if free < 2 * n + (1 << 30) {
            eprintln!("skipped n = {n}: {free} bytes free on the device");
            continue;
        }
        let x = Array::<i8>::full([n], 3).unwrap();
        let one = Array::<i8>::full([1], 5).unwrap();
        elementwise::reset_variant_counts();
        let z = k.call().arg(&x).arg(&one).run_one::<i8>().unwrap();
        let c = elementwise::variant_counts();
        let want_s64 = n > i32::MAX as usize;
        assert_eq!((c.s32, c.s64), (!want_s64 as u64, want_s64 as u64), "{n}");
        for start in [0, n / 2, n - 4096] {
            let v = z.slice(0, (start as isize)..(start as isize + 4096)).unwrap().to_vec().unwrap();
            assert!(v.iter().all(|&e| e == 8), "n = {n}, around {start}");
        }
        drop(z);
        let z = k.call().arg(&x).arg(&x).run_one::<i8>().unwrap();
        let v = z.slice(0, ((n - 4096) as isize)..(n as isize)).unwrap().to_vec().unwrap();
        assert!(v.iter().all(|&e| e == 6), "n = {n}, contiguous");
    }
}
