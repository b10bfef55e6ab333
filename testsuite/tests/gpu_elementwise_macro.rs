//! `#[elementwise]` end to end (issue 6): the typed call module the macro generates
//! (`NAME::call`, `call_with`, `call_into`, `call_into_with`) on the kernels of
//! `elementwise_kernels.rs`, and the array operators and functions, which run the built-in kernels
//! of `runtime/kernels/elementwise.rs`. Inputs are fresh random numbers, given outputs are poisoned
//! first, and every result is compared with a host reference: the kernel's own Rust body (run on
//! the host) or Rust's operators.
//!
//! GPU tests are `#[ignore = "needs a CUDA GPU"]`: run them on a GPU machine with
//! `cargo test -p cuprum-testsuite --release --test gpu_elementwise_macro -- --include-ignored`.
//! The tests without the marker (signatures, host calls) run anywhere.

#![allow(clippy::type_complexity, clippy::needless_range_loop)]

#[path = "../../runtime/tests/support/mod.rs"]
mod support;
use support::Rng;

mod elementwise_kernels;

use cuprum::prelude::{Raw, with_elementwise_index};
// `NAME::SIGNATURE` is generated code's vocabulary, the runtime's internals (`__workspace`).
use cuprum::__workspace::launch::signature::{Param, ParamType, Role};
use cuprum::audit;
use cuprum::runtime::elementwise::Options;
use cuprum::runtime::stats::Layer;
use cuprum::runtime::{Array, DType, Float, Int, Real, Scalar, Stream};
use elementwise_kernels as k;

// Each GPU test also runs on the CPU device (in CI): the same kernels, compiled for the host.
on_both_devices!(
    cuprum::runtime::Device;
    squared_diff_contiguous_broadcast_transposed,
    transposed_operands_by_tiles,
    scalars_in_any_position,
    multiple_outputs_and_output_parameters,
    raw_arguments_and_sizes,
    explicit_outputs_options_and_errors,
    operators_on_every_dtype,
    astype_between_every_real_dtype,
    device_fills_and_gathers,
);
use half::{bf16, f16};
use num_complex::Complex;

const GPU: &str = "needs a CUDA GPU";

/// Random values of a dtype (never all zeros) and a poison value.
trait Gen: Scalar + Copy {
    fn draw(r: &mut Rng) -> Self;
    fn poison() -> Self;
}
macro_rules! gen_int {
    ($($t:ty),*) => {$(
        impl Gen for $t {
            fn draw(r: &mut Rng) -> $t { r.next() as $t }
            fn poison() -> $t { 0x5a as $t }
        }
    )*};
}
gen_int!(i8, i16, i32, i64, u8, u16, u32, u64);
impl Gen for bool {
    fn draw(r: &mut Rng) -> bool {
        r.next() & 1 == 1
    }
    fn poison() -> bool {
        true
    }
}
impl Gen for f32 {
    fn draw(r: &mut Rng) -> f32 {
        r.range(-100.0, 100.0) as f32
    }
    fn poison() -> f32 {
        f32::NAN
    }
}
impl Gen for f64 {
    fn draw(r: &mut Rng) -> f64 {
        r.range(-100.0, 100.0)
    }
    fn poison() -> f64 {
        f64::NAN
    }
}
impl Gen for f16 {
    fn draw(r: &mut Rng) -> f16 {
        f16::from_f64(r.range(-10.0, 10.0))
    }
    fn poison() -> f16 {
        f16::NAN
    }
}
impl Gen for bf16 {
    fn draw(r: &mut Rng) -> bf16 {
        bf16::from_f64(r.range(-10.0, 10.0))
    }
    fn poison() -> bf16 {
        bf16::NAN
    }
}
impl Gen for Complex<f32> {
    fn draw(r: &mut Rng) -> Self {
        Complex::new(f32::draw(r), f32::draw(r))
    }
    fn poison() -> Self {
        Complex::new(f32::NAN, f32::NAN)
    }
}

fn random<T: Gen>(shape: &[usize], r: &mut Rng) -> (Array<T>, Vec<T>) {
    let n: usize = shape.iter().product();
    let v: Vec<T> = (0..n).map(|_| T::draw(r)).collect();
    (Array::from_shape_vec(shape.to_vec(), v.clone()).unwrap(), v)
}

fn poisoned<T: Gen>(shape: &[usize]) -> Array<T> {
    Array::full(shape.to_vec(), T::poison()).unwrap()
}

/// The elements of `a` broadcast to `shape`, in C order (host).
fn host_broadcast<T: Scalar>(a: &Array<T>, shape: &[usize]) -> Vec<T> {
    a.broadcast_to(shape.to_vec()).unwrap().to_vec().unwrap()
}

#[track_caller]
fn close(got: f64, want: f64, tol: f64, what: &str) {
    let ok = (got.is_nan() && want.is_nan())
        || got == want
        || (got - want).abs() <= tol * want.abs().max(1.0);
    assert!(ok, "{what}: got {got}, want {want}");
}

// ---- CPU: the generated signatures and host calls --------------------------------------------

#[test]
fn signatures_follow_the_kernel_parameters() {
    let g0 = ParamType::Generic(0);
    assert_eq!(
        k::squared_diff::SIGNATURE,
        &[
            Param::new("x", Role::In, g0),
            Param::new("y", Role::In, g0),
            Param::new("out", Role::Out, g0)
        ]
    );
    assert_eq!(
        k::sincos::SIGNATURE,
        &[
            Param::new("x", Role::In, g0),
            Param::new("s", Role::InOut, g0),
            Param::new("c", Role::InOut, g0)
        ]
    );
    assert_eq!(k::reverse::SIGNATURE[0], Param::new("x", Role::Raw, g0));
    assert_eq!(
        k::smooth3::SIGNATURE[1],
        Param::new("w", Role::In, ParamType::Fixed(DType::F32.into()))
    );
    let f = |d: DType| ParamType::Fixed(d.into());
    assert_eq!(
        k::split_float::SIGNATURE,
        &[
            Param::new("x", Role::In, f(DType::F64)),
            Param::new("out0", Role::Out, f(DType::F64)),
            Param::new("out1", Role::Out, f(DType::F64)),
            Param::new("out2", Role::Out, f(DType::Bool)),
        ]
    );
    assert_eq!(
        k::scale_by_int::SIGNATURE[1],
        Param::new("k", Role::In, ParamType::Generic(1))
    );
    // The unit of the kernel file lists the precompiled instances.
    let unit = k::scale_by_int::kernel().unit().unwrap();
    assert!(
        unit.precompiled()
            .contains(&"cuprum_elementwise_scale_by_int_contig__f32__i32"),
        "{:?}",
        unit.precompiled()
    );
    assert!(
        !unit
            .precompiled()
            .iter()
            .any(|s| s.contains("scale_by_int_contig__f64"))
    );
}

#[test]
fn kernels_stay_callable_on_the_host() {
    assert_eq!(k::squared_diff(3.0f32, 1.0), 4.0);
    assert_eq!(k::floor_divmod(-7i32, 2), (-4, 1));
    assert_eq!(k::split_float(-2.5), (-2.0, -0.5, true));
    let (mut s, mut c) = (0.0f32, 0.0f32);
    k::sincos(0.5f32, &mut s, &mut c);
    assert_eq!((s, c), (0.5f32.sin(), 0.5f32.cos()));
    let x = Raw::new(vec![1.0f32, 2.0, 3.0]);
    assert_eq!(with_elementwise_index(0, 3, || k::reverse(x.clone())), 3.0);
}

#[test]
fn builtin_kernels_are_registered() {
    let names: Vec<&str> = audit::kernels()
        .filter(|e| e.kind() == "elementwise")
        .map(|e| e.name())
        .collect();
    for n in [
        "add", "sub", "mul", "div", "rem_int", "lt", "eq", "select", "copy", "clip", "sqrt",
        "cast_f32", "nonzero",
    ] {
        assert!(names.contains(&n), "{n} missing from {names:?}");
    }
}

// ---- the macro's call API on the GPU ---------------------------------------------------------

fn check_squared_diff<T: Float + Gen>(x: &Array<T>, y: &Array<T>, tol: f64) {
    let z = k::squared_diff::call(x, y).unwrap();
    let shape = z.shape().to_vec();
    let (xs, ys) = (host_broadcast(x, &shape), host_broadcast(y, &shape));
    for (i, ((a, b), c)) in xs.iter().zip(&ys).zip(z.to_vec().unwrap()).enumerate() {
        close(
            c.to_f64(),
            k::squared_diff(a.to_f64(), b.to_f64()),
            tol,
            &format!("element {i}"),
        );
    }
}

/// Whether the test runs on a GPU (the layer that served a kernel is a GPU's matter: the CPU
/// device runs the kernels' host code, which no lookup serves).
fn on_gpu() -> bool {
    !cuprum::runtime::Device::current().unwrap().is_cpu()
}

fn squared_diff_contiguous_broadcast_transposed() {
    let _ = GPU;
    let mut r = Rng::new();
    let (x, _) = random::<f32>(&[301, 67], &mut r);
    let (y, _) = random::<f32>(&[301, 67], &mut r);
    check_squared_diff(&x, &y, 1e-6);
    let (row, _) = random::<f32>(&[67], &mut r);
    check_squared_diff(&x, &row, 1e-6);
    let (col, _) = random::<f32>(&[301, 1], &mut r);
    check_squared_diff(&col, &row, 1e-6);
    let (a, _) = random::<f64>(&[120, 90], &mut r);
    let (b, _) = random::<f64>(&[90, 120], &mut r);
    check_squared_diff(&a.transpose(), &b, 1e-14);
    check_squared_diff(
        &a.slice(1, cuprum::runtime::Slice::new(None, None, -3))
            .unwrap(),
        &b.transpose().slice(1, 0..30).unwrap(),
        1e-14,
    );
    if !on_gpu() {
        return;
    }
    // On a GPU, precompiled instances come from the embedded fat binary.
    let served = audit::served();
    let layer = |s: &str| served.iter().find(|x| x.symbol == s).map(|x| x.layer);
    assert!(
        matches!(
            layer("cuprum_elementwise_squared_diff_contig__f32"),
            Some(Layer::Aot | Layer::Loaded)
        ),
        "{served:?}"
    );
}

/// 2-D loops with an operand contiguous along the outer axis run by tiles (`TiledBody`): with
/// blocks of 256 threads through shared memory, with other multiples of 32 without, with other
/// sizes element by element. Inputs, outputs and output
/// parameters transposed, shapes with partial tiles on both axes, and element sizes 4 and 8.
fn transposed_operands_by_tiles() {
    let mut r = Rng::new();
    for (rows, cols) in [(1000usize, 777usize), (32, 32), (33, 95), (5, 300), (300, 5), (2, 2)] {
        // A transposed input, first or second (references from the host copies, not from a
        // device copy of the transposed view, which runs by tiles too).
        let (x, xh) = random::<f32>(&[cols, rows], &mut r);
        let (y, yh) = random::<f32>(&[rows, cols], &mut r);
        let xv: Vec<f32> = (0..rows * cols).map(|q| xh[(q % cols) * rows + q / cols]).collect();
        for block in [32u32, 100, 128, 256, 512, 1024] {
            let opts = Options::new().block_size(block);
            let z = k::squared_diff::call_with(&opts, &x.transpose(), &y).unwrap();
            let want: Vec<f32> = xv.iter().zip(&yh).map(|(a, b)| k::squared_diff(*a, *b)).collect();
            assert_eq!(z.to_vec().unwrap(), want, "{rows}x{cols}, block {block}");
            let z = k::squared_diff::call_with(&opts, &y, &x.transpose()).unwrap();
            let want: Vec<f32> = yh.iter().zip(&xv).map(|(a, b)| k::squared_diff(*a, *b)).collect();
            assert_eq!(z.to_vec().unwrap(), want, "{rows}x{cols}, block {block}, second");
        }
        let (xd, xdh) = random::<f64>(&[cols, rows], &mut r);
        let (yd, ydh) = random::<f64>(&[rows, cols], &mut r);
        let z = k::squared_diff::call(&xd.transpose(), &yd).unwrap().to_vec().unwrap();
        for q in 0..rows * cols {
            let want = k::squared_diff(xdh[(q % cols) * rows + q / cols], ydh[q]);
            assert_eq!(z[q], want, "{rows}x{cols}: f64 element {q}");
        }
        // A transposed output: its memory, read back in its own layout, is the transpose.
        let (a, av) = random::<f32>(&[rows, cols], &mut r);
        let (b, bv) = random::<f32>(&[rows, cols], &mut r);
        let z = poisoned::<f32>(&[cols, rows]);
        let mut zt = z.transpose();
        k::squared_diff::call_into(&a, &b, &mut zt).unwrap();
        let zv = z.to_vec().unwrap();
        for i in 0..rows {
            for j in 0..cols {
                let want = k::squared_diff(av[i * cols + j], bv[i * cols + j]);
                assert_eq!(zv[j * rows + i], want, "{rows}x{cols}: output ({i}, {j})");
            }
        }
        // An output parameter (read and written) transposed, its input not.
        let (acc, accv) = random::<f32>(&[cols, rows], &mut r);
        let mut acct = acc.transpose();
        k::accumulate::call(&a, &mut acct).unwrap();
        let got = acc.to_vec().unwrap();
        for i in 0..rows {
            for j in 0..cols {
                let mut want = accv[j * rows + i];
                k::accumulate(av[i * cols + j], &mut want);
                assert_eq!(got[j * rows + i], want, "{rows}x{cols}: accumulated ({i}, {j})");
            }
        }
    }
}

fn scalars_in_any_position() {
    let mut r = Rng::new();
    let (x, xs) = random::<f64>(&[1000], &mut r);
    let (y, ys) = random::<f64>(&[1000], &mut r);
    let cases: Vec<(Array<f64>, Box<dyn Fn(usize) -> f64>)> = vec![
        (
            k::axpb::call(2.5, &x, &y).unwrap(),
            Box::new(|i| k::axpb(2.5, xs[i], ys[i])),
        ),
        (
            k::axpb::call(&x, -1.5, &y).unwrap(),
            Box::new(|i| k::axpb(xs[i], -1.5, ys[i])),
        ),
        (
            k::axpb::call(&x, &y, 0.75).unwrap(),
            Box::new(|i| k::axpb(xs[i], ys[i], 0.75)),
        ),
        (
            k::axpb::call(3.0, 4.0, &y).unwrap(),
            Box::new(|i| k::axpb(3.0, 4.0, ys[i])),
        ),
    ];
    for (z, want) in cases {
        for (i, v) in z.to_vec().unwrap().into_iter().enumerate() {
            assert_eq!(v, want(i), "element {i}");
        }
    }
    // Only scalars: a 0-d result.
    let z = k::axpb::call(2.0f32, 3.0, 1.0).unwrap();
    assert_eq!((z.shape().len(), z.to_vec().unwrap()), (0, vec![7.0]));
}

fn multiple_outputs_and_output_parameters() {
    let mut r = Rng::new();
    let (a, av) = random::<i64>(&[50, 40], &mut r);
    let bv: Vec<i64> = (0..40)
        .map(|_| (r.next() % 1000) as i64 - 500)
        .map(|v| if v == 0 { 7 } else { v })
        .collect();
    let b = Array::from_vec(bv.clone()).unwrap();
    let (q, m) = k::floor_divmod::call(&a, &b).unwrap();
    for (i, (q, m)) in q
        .to_vec()
        .unwrap()
        .into_iter()
        .zip(m.to_vec().unwrap())
        .enumerate()
    {
        assert_eq!((q, m), k::floor_divmod(av[i], bv[i % 40]), "element {i}");
    }
    // Explicit outputs, poisoned.
    let (x, xv) = random::<f64>(&[777], &mut r);
    let (mut w, mut f, mut s) = (
        poisoned::<f64>(&[777]),
        poisoned::<f64>(&[777]),
        poisoned::<bool>(&[777]),
    );
    k::split_float::call_into(&x, &mut w, &mut f, &mut s).unwrap();
    let (w, f, s) = (
        w.to_vec().unwrap(),
        f.to_vec().unwrap(),
        s.to_vec().unwrap(),
    );
    for i in 0..777 {
        assert_eq!((w[i], f[i], s[i]), k::split_float(xv[i]), "element {i}");
    }
    // `&mut T` parameters: written, and read and written.
    let (x, xv) = random::<f32>(&[33, 65], &mut r);
    let (mut sn, mut cs) = (poisoned::<f32>(&[33, 65]), poisoned::<f32>(&[33, 65]));
    k::sincos::call(&x, &mut sn, &mut cs).unwrap();
    for (i, (s, c)) in sn
        .to_vec()
        .unwrap()
        .into_iter()
        .zip(cs.to_vec().unwrap())
        .enumerate()
    {
        let (mut hs, mut hc) = (0.0f64, 0.0f64);
        k::sincos(xv[i] as f64, &mut hs, &mut hc);
        close(s as f64, hs, 1e-6, "sin");
        close(c as f64, hc, 1e-6, "cos");
    }
    let (mut acc, accv) = random::<f32>(&[33, 65], &mut r);
    k::accumulate::call(&x, &mut acc).unwrap();
    for (i, v) in acc.to_vec().unwrap().into_iter().enumerate() {
        let mut want = accv[i];
        k::accumulate(xv[i], &mut want);
        assert_eq!(v, want, "element {i}");
    }
}

fn raw_arguments_and_sizes() {
    let mut r = Rng::new();
    let (x, xv) = random::<f32>(&[1001], &mut r);
    // Every array raw: the size is needed.
    let e = k::reverse::call(&x).unwrap_err();
    assert!(e.to_string().contains("give it (`size`)"), "{e}");
    let z = k::reverse::call_with(&Options::new().size(1001), &x).unwrap();
    let want: Vec<f32> = xv.iter().rev().copied().collect();
    assert_eq!(z.to_vec().unwrap(), want);
    // A given output sets the size.
    let mut out = poisoned::<f32>(&[1001]);
    k::reverse::call_into(&x, &mut out).unwrap();
    assert_eq!(out.to_vec().unwrap(), want);
    // A size next to a non-raw array is an error.
    let mut out = poisoned::<f32>(&[1001]);
    let e = k::reverse::call_into_with(&Options::new().size(1001), &x, &mut out).unwrap_err();
    assert!(e.to_string().contains("give the size only when"), "{e}");
    // Raw next to a scalar, compared with the host body run at every index.
    let z = k::smooth3::call_with(&Options::new().size(1001), &x, 0.25).unwrap();
    let raw = Raw::new(xv.clone());
    for (i, v) in z.to_vec().unwrap().into_iter().enumerate() {
        assert_eq!(
            v,
            with_elementwise_index(i, 1001, || k::smooth3(&raw, 0.25)),
            "element {i}"
        );
    }
    // Another dtype, through NVRTC or the cache when not precompiled (i64).
    let xi = Array::from_vec((0..100i64).collect()).unwrap();
    let z = k::reverse::call_with(&Options::new().size(100), &xi).unwrap();
    assert_eq!(z.to_vec().unwrap(), (0..100i64).rev().collect::<Vec<_>>());
}

fn explicit_outputs_options_and_errors() {
    let mut r = Rng::new();
    let (x, xv) = random::<f32>(&[64], &mut r);
    let (y, yv) = random::<f32>(&[64], &mut r);
    // An output larger than the inputs: they broadcast to it.
    let mut big = poisoned::<f32>(&[3, 64]);
    k::squared_diff::call_into(&x, &y, &mut big).unwrap();
    for (i, v) in big.to_vec().unwrap().into_iter().enumerate() {
        assert_eq!(v, k::squared_diff(xv[i % 64], yv[i % 64]));
    }
    // Wrong output shapes.
    let mut small = poisoned::<f32>(&[1, 64]);
    let e = k::squared_diff::call_into(
        &x,
        &y.reshape([1, 64]).unwrap().broadcast_to([2, 64]).unwrap(),
        &mut small,
    )
    .unwrap_err();
    assert!(e.to_string().contains("shape mismatch"), "{e}");
    let mut wrong = poisoned::<f32>(&[65]);
    assert!(
        k::squared_diff::call_into(&x, &y, &mut wrong)
            .unwrap_err()
            .to_string()
            .contains("shape mismatch")
    );
    // Shapes that do not broadcast.
    let (z, _) = random::<f32>(&[63], &mut r);
    assert!(k::squared_diff::call(&x, &z).is_err());
    // Block sizes and a stream.
    let stream = Stream::new(x.device()).unwrap();
    for block in [1u32, 32, 1024] {
        let z =
            k::squared_diff::call_with(&Options::new().block_size(block).stream(&stream), &x, &y)
                .unwrap();
        stream.synchronize().unwrap();
        assert_eq!(
            z.to_vec().unwrap(),
            xv.iter()
                .zip(&yv)
                .map(|(a, b)| k::squared_diff(*a, *b))
                .collect::<Vec<_>>()
        );
    }
    let e = k::squared_diff::call_with(&Options::new().block_size(0), &x, &y).unwrap_err();
    assert!(e.to_string().contains("block size is 0"), "{e}");
    // Two generic parameters; (f64, u8) is not precompiled.
    let k8 = Array::from_vec((0..64).map(|i| i as u8).collect()).unwrap();
    let (xd, xdv) = random::<f64>(&[64], &mut r);
    let z = k::scale_by_int::call(&xd, &k8).unwrap();
    for (i, v) in z.to_vec().unwrap().into_iter().enumerate() {
        assert_eq!(v, k::scale_by_int(xdv[i], i as u8));
    }
    if on_gpu() {
        let served = audit::served();
        let s = served
            .iter()
            .find(|s| s.symbol == "cuprum_elementwise_scale_by_int_contig__f64__u8")
            .expect("served");
        assert_ne!(s.layer, Layer::Aot);
    }
}

// ---- operators and functions -------------------------------------------------------------------

fn host_int_div<T: Int>(a: T, b: T) -> T {
    if b == T::zero() {
        T::zero()
    } else if a == T::min_value() && b == T::zero().wrapping_sub(T::one()) {
        a
    } else {
        a / b
    }
}

fn host_int_rem<T: Int>(a: T, b: T) -> T {
    if b == T::zero() || (a == T::min_value() && b == T::zero().wrapping_sub(T::one())) {
        T::zero()
    } else {
        a % b
    }
}

/// Every operator on an integer dtype, (37, 19) against (19,) and scalars.
fn check_int_ops<T: Int + Gen>(r: &mut Rng) {
    let (a, av) = random::<T>(&[37, 19], r);
    let (_, mut bv) = random::<T>(&[19], r);
    bv[3] = T::zero();
    let b = Array::from_vec(bv.clone()).unwrap();
    let s = T::draw(r);
    let n = 37 * 19;
    let bb = |i: usize| bv[i % 19];
    let d = T::DTYPE;
    let eq = |got: Array<T>, want: &dyn Fn(usize) -> T, what: &str| {
        let got = got.to_vec().unwrap();
        for i in 0..n {
            assert_eq!(got[i], want(i), "{d} {what} element {i}");
        }
    };
    eq((&a + &b).unwrap(), &|i| av[i].wrapping_add(bb(i)), "+");
    eq((&a - &b).unwrap(), &|i| av[i].wrapping_sub(bb(i)), "-");
    eq((&a * &b).unwrap(), &|i| av[i].wrapping_mul(bb(i)), "*");
    eq((&a / &b).unwrap(), &|i| host_int_div(av[i], bb(i)), "/");
    eq((&a % &b).unwrap(), &|i| host_int_rem(av[i], bb(i)), "%");
    eq((&a + s).unwrap(), &|i| av[i].wrapping_add(s), "+ scalar");
    eq((&a / s).unwrap(), &|i| host_int_div(av[i], s), "/ scalar");
    eq((-&a).unwrap(), &|i| av[i].wrapping_neg(), "neg");
    eq(
        a.abs().unwrap(),
        &|i| {
            if av[i] < T::zero() {
                av[i].wrapping_neg()
            } else {
                av[i]
            }
        },
        "abs",
    );
    eq(a.minimum(&b).unwrap(), &|i| av[i].min(bb(i)), "minimum");
    eq(a.maximum(s).unwrap(), &|i| av[i].max(s), "maximum");
    let (lo, hi) = if s < bv[0] { (s, bv[0]) } else { (bv[0], s) };
    eq(
        a.clip(lo, hi).unwrap(),
        &|i| {
            if av[i] < lo {
                lo
            } else if av[i] > hi {
                hi
            } else {
                av[i]
            }
        },
        "clip",
    );
    check_compare(&a, &av, &b, &bv);
}

fn check_compare<T: Real + Gen>(a: &Array<T>, av: &[T], b: &Array<T>, bv: &[T]) {
    let d = T::DTYPE;
    let m = bv.len();
    let cases: [(Array<bool>, fn(&T, &T) -> bool, &str); 6] = [
        (a.lt(b).unwrap(), |x, y| x < y, "<"),
        (a.le(b).unwrap(), |x, y| x <= y, "<="),
        (a.gt(b).unwrap(), |x, y| x > y, ">"),
        (a.ge(b).unwrap(), |x, y| x >= y, ">="),
        (a.eq(b).unwrap(), |x, y| x == y, "=="),
        (a.ne(b).unwrap(), |x, y| x != y, "!="),
    ];
    for (got, f, what) in cases {
        for (i, g) in got.to_vec().unwrap().into_iter().enumerate() {
            assert_eq!(g, f(&av[i], &bv[i % m]), "{d} {what} element {i}");
        }
    }
    // Equal elements compare equal.
    assert!(a.eq(a).unwrap().to_vec().unwrap().into_iter().all(|x| x));
    // where, fill, copy of a transposed view.
    let cond = a.lt(b).unwrap();
    let w = cuprum::runtime::where_(&cond, a, b).unwrap();
    for (i, g) in w.to_vec().unwrap().into_iter().enumerate() {
        assert_eq!(
            g,
            if av[i] < bv[i % m] { av[i] } else { bv[i % m] },
            "{d} where element {i}"
        );
    }
    let t = a.transpose();
    let c = t.copy().unwrap();
    assert!(c.is_c_contiguous());
    assert_eq!(c.to_vec().unwrap(), t.to_vec().unwrap(), "{d} copy");
    let f = a.copy().unwrap();
    let mut view = f
        .slice(1, cuprum::runtime::Slice::new(None, None, 2))
        .unwrap();
    view.fill(bv[0]).unwrap();
    for (i, g) in f.to_vec().unwrap().into_iter().enumerate() {
        assert_eq!(
            g,
            if (i % m) % 2 == 0 { bv[0] } else { av[i] },
            "{d} fill element {i}"
        );
    }
}

/// Every operator on a float dtype: the arithmetic exactly (IEEE, half types through f32), the
/// math functions within `tol`.
fn check_float_ops<T: Float + Gen>(r: &mut Rng, tol: f64) {
    let (a, av) = random::<T>(&[37, 19], r);
    let (b, bv) = random::<T>(&[19], r);
    let s = T::draw(r);
    let n = 37 * 19;
    let bb = |i: usize| bv[i % 19];
    let d = T::DTYPE;
    let exact = |got: Array<T>, want: &dyn Fn(usize) -> T, what: &str| {
        let got = got.to_vec().unwrap();
        for i in 0..n {
            let (g, w) = (got[i].to_f64(), want(i).to_f64());
            assert!(
                g == w || (g.is_nan() && w.is_nan()),
                "{d} {what} element {i}: got {g}, want {w}"
            );
        }
    };
    exact((&a + &b).unwrap(), &|i| av[i] + bb(i), "+");
    exact((&a - &b).unwrap(), &|i| av[i] - bb(i), "-");
    exact((&a * &b).unwrap(), &|i| av[i] * bb(i), "*");
    exact((&a / &b).unwrap(), &|i| av[i] / bb(i), "/");
    exact((&a % &b).unwrap(), &|i| av[i] % bb(i), "%");
    exact((&a * s).unwrap(), &|i| av[i] * s, "* scalar");
    exact((-&a).unwrap(), &|i| -av[i], "neg");
    exact(a.abs().unwrap(), &|i| av[i].abs(), "abs");
    exact(a.sqrt().unwrap(), &|i| av[i].sqrt(), "sqrt");
    exact(
        a.minimum(&b).unwrap(),
        &|i| Real::min(&av[i], bb(i)),
        "minimum",
    );
    exact(
        a.maximum(&b).unwrap(),
        &|i| Real::max(&av[i], bb(i)),
        "maximum",
    );
    let (lo, hi) = (T::from_f64(-1.0), T::from_f64(2.0));
    exact(
        a.clip(lo, hi).unwrap(),
        &|i| {
            if av[i] < lo {
                lo
            } else if av[i] > hi {
                hi
            } else {
                av[i]
            }
        },
        "clip",
    );
    let math: [(Array<T>, fn(f64) -> f64, &str); 5] = [
        (a.exp().unwrap(), f64::exp, "exp"),
        (a.abs().unwrap().log().unwrap(), |x| x.abs().ln(), "log"),
        (a.sin().unwrap(), f64::sin, "sin"),
        (a.cos().unwrap(), f64::cos, "cos"),
        (a.tanh().unwrap(), f64::tanh, "tanh"),
    ];
    for (got, f, what) in math {
        for (i, g) in got.to_vec().unwrap().into_iter().enumerate() {
            // The reference in f64, rounded to T (exp overflows to inf in f32 as on the GPU).
            close(
                g.to_f64(),
                T::from_f64(f(av[i].to_f64())).to_f64(),
                tol,
                &format!("{d} {what} element {i}"),
            );
        }
    }
    check_compare(&a, &av, &b, &bv);
}

fn operators_on_every_dtype() {
    let mut r = Rng::new();
    check_int_ops::<i8>(&mut r);
    check_int_ops::<i16>(&mut r);
    check_int_ops::<i32>(&mut r);
    check_int_ops::<i64>(&mut r);
    check_int_ops::<u8>(&mut r);
    check_int_ops::<u16>(&mut r);
    check_int_ops::<u32>(&mut r);
    check_int_ops::<u64>(&mut r);
    check_float_ops::<f32>(&mut r, 2e-6);
    check_float_ops::<f64>(&mut r, 1e-14);
    check_float_ops::<f16>(&mut r, 2e-3);
    check_float_ops::<bf16>(&mut r, 1e-2);
    // A scalar on the left, chained operators on owned results.
    let (x, xv) = random::<f32>(&[100], &mut r);
    let z = ((2.0f32 - &x).unwrap() * &x).unwrap();
    for (i, v) in z.to_vec().unwrap().into_iter().enumerate() {
        assert_eq!(v, (2.0 - xv[i]) * xv[i]);
    }
    let z = (1.0f32 / &x).unwrap();
    assert_eq!(
        z.to_vec().unwrap(),
        xv.iter().map(|v| 1.0 / v).collect::<Vec<_>>()
    );
    // Complex numbers: + and *.
    let (c, cv) = random::<Complex<f32>>(&[50], &mut r);
    let z = (&c * &c).unwrap();
    for (i, v) in z.to_vec().unwrap().into_iter().enumerate() {
        let w = cv[i] * cv[i];
        assert!(
            (v - w).norm() <= 1e-5 * w.norm().max(1.0),
            "complex * element {i}"
        );
    }
    if !on_gpu() {
        return;
    }
    // Precompiled instances come from the embedded fat binary; other dtypes are compiled.
    let served = audit::served();
    let layer = |s: &str| served.iter().find(|x| x.symbol == s).map(|x| x.layer);
    assert_eq!(
        layer("cuprum_elementwise_add_s32__f32"),
        Some(Layer::Aot),
        "{served:?}"
    );
    assert!(
        matches!(
            layer("cuprum_elementwise_add_s32__i8"),
            Some(Layer::Nvrtc | Layer::Disk | Layer::Memory)
        ),
        "{served:?}"
    );
}

/// Rust's `as` on the host, for every pair of the real dtypes and bool: each source value is
/// exact in i128 or f64, then converted once.
#[derive(Clone, Copy, Debug)]
enum Num {
    I(i128),
    F(f64),
}
trait HostAs: Gen {
    fn num(self) -> Num;
    fn from_num(n: Num) -> Self;
}
macro_rules! host_as_int {
    ($($t:ty),*) => {$(
        impl HostAs for $t {
            fn num(self) -> Num { Num::I(self as i128) }
            fn from_num(n: Num) -> $t { match n { Num::I(i) => i as $t, Num::F(f) => f as $t } }
        }
    )*};
}
host_as_int!(i8, i16, i32, i64, u8, u16, u32, u64);
impl HostAs for f32 {
    fn num(self) -> Num {
        Num::F(self as f64)
    }
    fn from_num(n: Num) -> f32 {
        match n {
            Num::I(i) => i as f32,
            Num::F(f) => f as f32,
        }
    }
}
impl HostAs for f64 {
    fn num(self) -> Num {
        Num::F(self)
    }
    fn from_num(n: Num) -> f64 {
        match n {
            Num::I(i) => i as f64,
            Num::F(f) => f,
        }
    }
}
/// `i` rounded once to `bits` significant bits (round half to even), as an f64 (exact: at most 53
/// bits): the correctly rounded conversion of an integer to a narrow float, which `i as f64`
/// followed by a second rounding to the narrow type can miss (double rounding).
fn round_sig(i: i128, bits: u32) -> f64 {
    let m = i.unsigned_abs();
    let width = 128 - m.leading_zeros();
    if width <= bits {
        return i as f64;
    }
    let shift = width - bits;
    let (q, r, half) = (m >> shift, m & ((1u128 << shift) - 1), 1u128 << (shift - 1));
    let q = if r > half || (r == half && q & 1 == 1) {
        q + 1
    } else {
        q
    };
    let v = q as f64 * 2f64.powi(shift as i32);
    if i < 0 { -v } else { v }
}
/// `f` rounded once to the nearest 16-bit float, ties to even. `half`'s `from_f64` drops the low 32
/// bits of `f` before it rounds, which decides some ties wrongly (f32 98.25005 became bf16 98.0;
/// the GPU's 98.5 is right): its result, or a neighbour, is the nearest.
fn nearest_16<H: Copy>(
    f: f64,
    guess: H,
    to_f64: fn(H) -> f64,
    bits: fn(H) -> u16,
    from_bits: fn(u16) -> H,
) -> H {
    if !f.is_finite() || !to_f64(guess).is_finite() {
        return guess;
    }
    let b = bits(guess);
    let mut best = guess;
    for n in [b.checked_sub(1), b.checked_add(1)]
        .into_iter()
        .flatten()
        .map(from_bits)
    {
        let (dn, db) = ((to_f64(n) - f).abs(), (to_f64(best) - f).abs());
        if dn < db || (dn == db && bits(n) & 1 == 0) {
            best = n;
        }
    }
    best
}

impl HostAs for f16 {
    fn num(self) -> Num {
        Num::F(self.to_f64())
    }
    fn from_num(n: Num) -> f16 {
        match n {
            Num::I(i) => f16::from_f64(round_sig(i, 11)),
            Num::F(f) => nearest_16(
                f,
                f16::from_f64(f),
                f16::to_f64,
                f16::to_bits,
                f16::from_bits,
            ),
        }
    }
}
impl HostAs for bf16 {
    fn num(self) -> Num {
        Num::F(self.to_f64())
    }
    fn from_num(n: Num) -> bf16 {
        match n {
            Num::I(i) => bf16::from_f64(round_sig(i, 8)),
            Num::F(f) => nearest_16(
                f,
                bf16::from_f64(f),
                bf16::to_f64,
                bf16::to_bits,
                bf16::from_bits,
            ),
        }
    }
}
impl HostAs for bool {
    fn num(self) -> Num {
        Num::I(self as i128)
    }
    fn from_num(n: Num) -> bool {
        match n {
            Num::I(i) => i != 0,
            Num::F(f) => f != 0.0,
        }
    }
}

fn check_cast<S: HostAs, D: HostAs>(x: &Array<S>, xv: &[S]) {
    let y = x.astype::<D>().unwrap();
    for (i, g) in y.to_vec().unwrap().into_iter().enumerate() {
        let w = D::from_num(xv[i].num());
        let same = g == w || (format!("{g:?}") == format!("{w:?}"));
        assert!(
            same,
            "astype {} -> {} element {i}: {:?} gave {g:?}, want {w:?}",
            S::DTYPE,
            D::DTYPE,
            xv[i]
        );
    }
}

fn check_casts_from<S: HostAs>(r: &mut Rng, specials: &[S]) {
    let (_, mut xv) = random::<S>(&[200], r);
    xv[..specials.len()].copy_from_slice(specials);
    // A transposed source: the cast reads strided.
    let x = Array::from_shape_vec([10, 20], xv.clone())
        .unwrap()
        .transpose();
    let xv = x.to_vec().unwrap();
    check_cast::<S, bool>(&x, &xv);
    check_cast::<S, i8>(&x, &xv);
    check_cast::<S, i16>(&x, &xv);
    check_cast::<S, i32>(&x, &xv);
    check_cast::<S, i64>(&x, &xv);
    check_cast::<S, u8>(&x, &xv);
    check_cast::<S, u16>(&x, &xv);
    check_cast::<S, u32>(&x, &xv);
    check_cast::<S, u64>(&x, &xv);
    check_cast::<S, f16>(&x, &xv);
    check_cast::<S, bf16>(&x, &xv);
    check_cast::<S, f32>(&x, &xv);
    check_cast::<S, f64>(&x, &xv);
}

fn astype_between_every_real_dtype() {
    let mut r = Rng::new();
    check_casts_from::<bool>(&mut r, &[true, false]);
    check_casts_from::<i8>(&mut r, &[i8::MIN, -1, 0]);
    check_casts_from::<i16>(&mut r, &[i16::MIN, 300, 0]);
    check_casts_from::<i32>(&mut r, &[i32::MIN, i32::MAX, -1]);
    check_casts_from::<i64>(&mut r, &[i64::MIN, i64::MAX, -1, 1 << 53]);
    check_casts_from::<u8>(&mut r, &[255, 0]);
    check_casts_from::<u16>(&mut r, &[65535, 0]);
    check_casts_from::<u32>(&mut r, &[u32::MAX, 0]);
    check_casts_from::<u64>(&mut r, &[u64::MAX, 1 << 63, 0]);
    check_casts_from::<f16>(
        &mut r,
        &[f16::NAN, f16::INFINITY, f16::from_f32(-300.5), f16::ZERO],
    );
    check_casts_from::<bf16>(
        &mut r,
        &[bf16::NAN, bf16::NEG_INFINITY, bf16::from_f32(1e10)],
    );
    check_casts_from::<f32>(&mut r, &[f32::NAN, 1e10, -1e10, -2.7, 300.0, 0.0]);
    check_casts_from::<f64>(&mut r, &[f64::NAN, 1e300, -1e20, -2.7, 65504.5, 0.0]);
    // A contiguous source.
    let (x, xv) = random::<i64>(&[300], &mut r);
    check_cast::<i64, f32>(&x, &xv);
    if !on_gpu() {
        return;
    }
    let served = audit::served();
    let layer = |s: &str| served.iter().find(|x| x.symbol == s).map(|x| x.layer);
    assert_eq!(
        layer("cuprum_elementwise_cast_i64_contig__f32"),
        Some(Layer::Aot),
        "{served:?}"
    );
    // The tiled variant (the transposed source) is compiled at first use.
    assert!(
        matches!(
            layer("cuprum_elementwise_cast_f32_t32__i64"),
            Some(Layer::Nvrtc | Layer::Disk | Layer::Memory)
        ),
        "{served:?}"
    );
}

/// Creation fills run on the device (memset for zero bytes, the fill kernel otherwise) and a
/// non-contiguous view is gathered on the device by the copy kernel before the download.
fn device_fills_and_gathers() {
    use cuprum::runtime::Array;
    let z = Array::<f64>::zeros([3, 1000]).unwrap();
    assert!(z.to_vec().unwrap().iter().all(|&v| v == 0.0));
    let f = Array::<f32>::full([7, 9], 2.5).unwrap();
    assert!(f.to_vec().unwrap().iter().all(|&v| v == 2.5));
    let m = Array::<i64>::full([1001], -1).unwrap();
    assert!(m.to_vec().unwrap().iter().all(|&v| v == -1));
    let b = Array::<bool>::full([33], true).unwrap();
    assert!(b.to_vec().unwrap().iter().all(|&v| v));
    let nz = Array::<f32>::full([5], -0.0).unwrap();
    assert!(
        nz.to_vec()
            .unwrap()
            .iter()
            .all(|v| v.to_bits() == (-0.0f32).to_bits())
    );
    let (rows, cols) = (37usize, 53usize);
    let host: Vec<i32> = (0..rows * cols)
        .map(|v| (v as i32).wrapping_mul(2654435761u32 as i32))
        .collect();
    let a = Array::from_shape_vec([rows, cols], host.clone()).unwrap();
    let t = a.transpose();
    let want: Vec<i32> = (0..rows * cols)
        .map(|q| host[(q % rows) * cols + q / rows])
        .collect();
    assert_eq!(t.to_vec().unwrap(), want);
}
