//! Tests of the matrix products (`matmul`, `dot`, `vdot`, `inner`, `outer`, `tensordot`) on each
//! device against a host reference in f64 (a plain triple loop with NumPy's shape rules written
//! out here), with fresh random inputs: every NumPy shape rule (vectors promoted, batches
//! broadcast), views (transposed, strided, reversed, broadcast), half, complex and integer types,
//! empty operands and `k = 0`, and bad input. Each runs on the CPU device (in CI) and on CUDA
//! device 0 (ignored without a GPU: `cargo test -p cuprum-runtime --test gpu_linalg --
//! --include-ignored`).

mod support;
use support::Rng;

use cuprum_runtime::{Array, Device, Error, Number, Slice};
use half::{bf16, f16};
use num_complex::Complex;

on_both_devices!(
    cuprum_runtime::Device;
    matmul_follows_numpy_shape_rules,
    matmul_reads_views,
    matmul_of_half_types,
    matmul_of_complex_types,
    integer_products,
    empty_operands_and_k_zero,
    f32_products_are_full_precision_without_tf32,
    dot_vdot_inner_outer_tensordot,
    bad_input_is_a_clear_error,
);

/// A real element type of the tests, converted exactly to f64.
trait Elem: Number {
    fn of(v: f64) -> Self;
    fn f(self) -> f64;
    /// The relative accuracy of one rounding.
    const EPS: f64;
}

impl Elem for f32 {
    fn of(v: f64) -> f32 {
        v as f32
    }
    fn f(self) -> f64 {
        self as f64
    }
    const EPS: f64 = f32::EPSILON as f64;
}
impl Elem for f64 {
    fn of(v: f64) -> f64 {
        v
    }
    fn f(self) -> f64 {
        self
    }
    const EPS: f64 = f64::EPSILON;
}
impl Elem for f16 {
    fn of(v: f64) -> f16 {
        f16::from_f64(v)
    }
    fn f(self) -> f64 {
        self.to_f64()
    }
    const EPS: f64 = 0.000_976_562_5;
}
impl Elem for bf16 {
    fn of(v: f64) -> bf16 {
        bf16::from_f64(v)
    }
    fn f(self) -> f64 {
        self.to_f64()
    }
    const EPS: f64 = 0.007_812_5;
}

/// Random values in [-1, 1), never 0, as `T` (the f64 copy holds the rounded values).
fn random<T: Elem>(r: &mut Rng, shape: &[usize]) -> (Array<T>, Vec<f64>) {
    let n: usize = shape.iter().product();
    let v: Vec<T> = (0..n).map(|_| T::of(r.range(-1.0, 1.0))).collect();
    let host = v.iter().map(|x| x.f()).collect();
    (Array::from_shape_vec(shape.to_vec(), v).unwrap(), host)
}

/// The element of a C-order array of `shape` at `idx` (as long as `shape`).
fn flat(shape: &[usize], idx: &[usize]) -> usize {
    idx.iter().zip(shape).fold(0, |acc, (&i, &d)| acc * d + i)
}

/// NumPy's matmul, written out: the result's shape, each element's value and the sum of the
/// magnitudes of its products (the scale of its rounding error). `a` and `b` are C-order.
fn reference(a: &[f64], sa: &[usize], b: &[f64], sb: &[usize]) -> (Vec<usize>, Vec<f64>, Vec<f64>) {
    let a2: Vec<usize> = if sa.len() == 1 { vec![1, sa[0]] } else { sa.to_vec() };
    let b2: Vec<usize> = if sb.len() == 1 { vec![sb[0], 1] } else { sb.to_vec() };
    let (m, k, n) = (a2[a2.len() - 2], a2[a2.len() - 1], b2[b2.len() - 1]);
    assert_eq!(k, b2[b2.len() - 2]);
    let (ba, bb) = (&a2[..a2.len() - 2], &b2[..b2.len() - 2]);
    let nd = ba.len().max(bb.len());
    let pad = |s: &[usize]| -> Vec<usize> { std::iter::repeat_n(1, nd - s.len()).chain(s.iter().copied()).collect() };
    let (pa, pb) = (pad(ba), pad(bb));
    let batch: Vec<usize> = pa.iter().zip(&pb).map(|(&x, &y)| if x == 1 { y } else { x }).collect();
    let count: usize = batch.iter().product();
    let (mut vals, mut mags) = (Vec::new(), Vec::new());
    for q in 0..count {
        let mut rest = q;
        let mut idx = vec![0; nd];
        for ax in (0..nd).rev() {
            idx[ax] = rest % batch[ax];
            rest /= batch[ax];
        }
        let ia: Vec<usize> = idx.iter().zip(&pa).map(|(&i, &d)| if d == 1 { 0 } else { i }).collect();
        let ib: Vec<usize> = idx.iter().zip(&pb).map(|(&i, &d)| if d == 1 { 0 } else { i }).collect();
        let (oa, ob) = (flat(&pa, &ia) * m * k, flat(&pb, &ib) * k * n);
        for i in 0..m {
            for j in 0..n {
                let (mut s, mut g) = (0.0, 0.0);
                for p in 0..k {
                    let x = a[oa + i * k + p] * b[ob + p * n + j];
                    s += x;
                    g += x.abs();
                }
                vals.push(s);
                mags.push(g);
            }
        }
    }
    let mut out = batch;
    if sa.len() > 1 {
        out.push(m);
    }
    if sb.len() > 1 {
        out.push(n);
    }
    (out, vals, mags)
}

/// `got` against the reference: each element within `tol` times its magnitude (plus the
/// result's own rounding).
#[track_caller]
fn check<T: Elem>(what: &str, got: &Array<T>, want: &(Vec<usize>, Vec<f64>, Vec<f64>), tol: f64) {
    assert_eq!(got.shape(), &want.0[..], "{what}: shape");
    let g = got.to_vec().unwrap();
    assert_eq!(g.len(), want.1.len(), "{what}: length");
    for (i, ((x, &w), &mag)) in g.iter().zip(&want.1).zip(&want.2).enumerate() {
        let err = (x.f() - w).abs();
        assert!(
            err <= tol * mag + T::EPS * w.abs(),
            "{what}: element {i}: {} against {w} (magnitude {mag})",
            x.f()
        );
    }
}

/// The shape pairs of NumPy's matmul rules.
const SHAPES: &[(&[usize], &[usize])] = &[
    (&[5], &[5]),
    (&[5], &[5, 4]),
    (&[3, 5], &[5]),
    (&[3, 5], &[5, 4]),
    (&[1, 1], &[1, 1]),
    (&[17, 33], &[33, 9]),
    (&[2, 3, 5], &[2, 5, 4]),
    (&[5, 1, 2, 3], &[4, 3, 6]),
    (&[2, 3, 5], &[5, 4]),
    (&[3, 5], &[2, 5, 4]),
    (&[7, 2, 3], &[3]),
    (&[3], &[7, 3, 2]),
    (&[2, 1, 3], &[1, 3, 2]),
];

fn shape_rules<T: Elem>(r: &mut Rng, tol: f64) {
    for &(sa, sb) in SHAPES {
        let (a, ha) = random::<T>(r, sa);
        let (b, hb) = random::<T>(r, sb);
        let got = a.matmul(&b).unwrap();
        assert!(got.is_c_contiguous());
        assert_eq!(got.device(), &Device::current().unwrap());
        check(
            &format!("{:?} @ {sa:?} x {sb:?}", T::DTYPE),
            &got,
            &reference(&ha, sa, &hb, sb),
            tol,
        );
    }
}

fn matmul_follows_numpy_shape_rules() {
    let mut r = Rng::new();
    shape_rules::<f32>(&mut r, 4.0 * f32::EPSILON as f64);
    shape_rules::<f64>(&mut r, 1e-14);
}

fn matmul_reads_views() {
    let mut r = Rng::new();
    let tol = 4.0 * f32::EPSILON as f64;
    // Each case: the operands as views, their C-order contents, the shapes.
    let (a, _) = random::<f32>(&mut r, &[6, 4]);
    let (b, _) = random::<f32>(&mut r, &[5, 6]);
    let views: Vec<(&str, Array<f32>, Array<f32>)> = vec![
        // A^T B^T of contiguous arrays: the transpose flags.
        ("transposed", a.transpose(), b.transpose()),
        // Every other row of a, b's columns reversed.
        (
            "strided and reversed",
            a.slice(0, Slice::new(None, None, 2)).unwrap(),
            a.slice(1, Slice::new(None, None, -1)).unwrap().transpose(),
        ),
        // A column of a as a vector (stride 4).
        ("strided vector", b.slice(0, ..3).unwrap(), a.index_axis(1, 2).unwrap()),
    ];
    for (what, x, y) in views {
        let (hx, hy) = (x.to_vec().unwrap(), y.to_vec().unwrap());
        let want = reference(
            &hx.iter().map(|v| *v as f64).collect::<Vec<_>>(),
            x.shape(),
            &hy.iter().map(|v| *v as f64).collect::<Vec<_>>(),
            y.shape(),
        );
        check(what, &x.matmul(&y).unwrap(), &want, tol);
    }
    // A batch broadcast as a view (stride 0), a batch of transposed matrices, a permuted batch.
    let (m, hm) = random::<f32>(&mut r, &[3, 4]);
    let (s, _) = random::<f32>(&mut r, &[5, 2, 4, 3]);
    let stacked = m.broadcast_to([5, 2, 3, 4]).unwrap();
    let hs = s.to_vec().unwrap().iter().map(|v| *v as f64).collect::<Vec<_>>();
    let hstack: Vec<f64> = (0..10).flat_map(|_| hm.iter().copied()).collect();
    check(
        "broadcast batch",
        &stacked.matmul(&s).unwrap(),
        &reference(&hstack, &[5, 2, 3, 4], &hs, &[5, 2, 4, 3]),
        tol,
    );
    let st = s.swap_axes(2, 3).unwrap();
    let hst = st.to_vec().unwrap().iter().map(|v| *v as f64).collect::<Vec<_>>();
    let (w, hw) = random::<f32>(&mut r, &[4, 2]);
    check(
        "transposed batch",
        &st.matmul(&w).unwrap(),
        &reference(&hst, &[5, 2, 3, 4], &hw, &[4, 2]),
        tol,
    );
    let sp = s.permute(&[1, 0, 2, 3]).unwrap();
    let hsp = sp.to_vec().unwrap().iter().map(|v| *v as f64).collect::<Vec<_>>();
    let (v, hv) = random::<f32>(&mut r, &[3]);
    check(
        "permuted batch",
        &sp.matmul(&v).unwrap(),
        &reference(&hsp, &[2, 5, 4, 3], &hv, &[3]),
        tol,
    );
    // The inputs are unchanged.
    assert_eq!(m.to_vec().unwrap().iter().map(|v| *v as f64).collect::<Vec<_>>(), hm);
}

fn matmul_of_half_types() {
    let mut r = Rng::new();
    // Products of f16/bf16 values are exact in f32 and summed in f32; the result is rounded once.
    shape_rules::<f16>(&mut r, 8.0 * f32::EPSILON as f64);
    shape_rules::<bf16>(&mut r, 8.0 * f32::EPSILON as f64);
    let (a, ha) = random::<bf16>(&mut r, &[64, 256]);
    let (b, hb) = random::<bf16>(&mut r, &[256, 32]);
    check(
        "bf16 k=256",
        &a.matmul(&b).unwrap(),
        &reference(&ha, &[64, 256], &hb, &[256, 32]),
        8.0 * f32::EPSILON as f64,
    );
}

fn complex_case<T: Elem>(r: &mut Rng, tol: f64)
where
    Complex<T>: Number,
{
    let (m, k, n) = (3, 5, 4);
    let a: Vec<Complex<T>> = (0..m * k)
        .map(|_| Complex::new(T::of(r.range(-1.0, 1.0)), T::of(r.range(-1.0, 1.0))))
        .collect();
    let b: Vec<Complex<T>> = (0..k * n)
        .map(|_| Complex::new(T::of(r.range(-1.0, 1.0)), T::of(r.range(-1.0, 1.0))))
        .collect();
    let c = Array::from_shape_vec([m, k], a.clone())
        .unwrap()
        .matmul(&Array::from_shape_vec([k, n], b.clone()).unwrap())
        .unwrap();
    let got = c.to_vec().unwrap();
    for i in 0..m {
        for j in 0..n {
            let (mut re, mut im, mut mag) = (0.0, 0.0, 0.0);
            for p in 0..k {
                let (x, y) = (a[i * k + p], b[p * n + j]);
                re += x.re.f() * y.re.f() - x.im.f() * y.im.f();
                im += x.re.f() * y.im.f() + x.im.f() * y.re.f();
                mag += (x.re.f().abs() + x.im.f().abs()) * (y.re.f().abs() + y.im.f().abs());
            }
            let g = got[i * n + j];
            assert!(
                (g.re.f() - re).abs() <= tol * mag && (g.im.f() - im).abs() <= tol * mag,
                "({i}, {j}): {g:?} against {re} + {im}i"
            );
        }
    }
    // vdot conjugates its first operand: vdot(a, a) = sum |a|^2, real.
    let va = Array::from_slice(&a).unwrap();
    let v = va.vdot(&va).unwrap();
    assert_eq!(v.shape(), &[] as &[usize]);
    let v = v.to_vec().unwrap()[0];
    let want: f64 = a.iter().map(|x| x.re.f() * x.re.f() + x.im.f() * x.im.f()).sum();
    assert!(
        (v.re.f() - want).abs() <= tol * want && v.im.f().abs() <= tol * want,
        "vdot {v:?} against {want}"
    );
}

fn matmul_of_complex_types() {
    let mut r = Rng::new();
    complex_case::<f32>(&mut r, 8.0 * f32::EPSILON as f64);
    complex_case::<f64>(&mut r, 1e-14);
}

fn integer_products() {
    let mut r = Rng::new();
    let (m, k, n) = (4, 7, 3);
    // Large values: the sums overflow i32 and wrap.
    let a: Vec<i32> = (0..m * k).map(|_| r.int(1 << 20, 1 << 30) as i32).collect();
    let b: Vec<i32> = (0..k * n).map(|_| r.int(-(1 << 30), -(1 << 20)) as i32).collect();
    let (xa, xb) = (
        Array::from_shape_vec([m, k], a.clone()).unwrap(),
        Array::from_shape_vec([k, n], b.clone()).unwrap(),
    );
    let got = xa.matmul(&xb).unwrap().to_vec().unwrap();
    for i in 0..m {
        for j in 0..n {
            let want = (0..k).fold(0i32, |s, p| s.wrapping_add(a[i * k + p].wrapping_mul(b[p * n + j])));
            assert_eq!(got[i * n + j], want, "({i}, {j})");
        }
    }
    // A broadcast batch and a transposed view (the GPU's kernel reads them as they lie).
    let bt = Array::from_shape_vec([n, k], (0..n * k).map(|q| b[(q % k) * n + q / k]).collect::<Vec<i32>>()).unwrap();
    let stacked = xa.broadcast_to([2, m, k]).unwrap().matmul(&bt.transpose()).unwrap();
    assert_eq!(stacked.shape(), &[2, m, n]);
    assert_eq!(stacked.to_vec().unwrap(), [got.clone(), got.clone()].concat());
    // u8 wraps too.
    let x = Array::from_slice(&[200u8, 100]).unwrap();
    assert_eq!(
        x.dot(&x).unwrap().to_vec().unwrap(),
        vec![200u8.wrapping_mul(200).wrapping_add(100u8.wrapping_mul(100))]
    );
}

fn empty_operands_and_k_zero() {
    // Poison the memory pool: the next allocations of this size reuse NaN-filled memory.
    drop(Array::<f32>::full([64], f32::NAN).unwrap());
    drop(Array::<f64>::full([64], f64::NAN).unwrap());
    let z = Array::<f32>::zeros([2, 0])
        .unwrap()
        .matmul(&Array::<f32>::zeros([0, 3]).unwrap())
        .unwrap();
    assert_eq!(z.shape(), &[2, 3]);
    assert_eq!(z.to_vec().unwrap(), vec![0.0; 6], "k = 0 gives zeros");
    let z = Array::<f64>::zeros([4, 0])
        .unwrap()
        .matmul(&Array::<f64>::zeros([0]).unwrap())
        .unwrap();
    assert_eq!((z.shape(), z.to_vec().unwrap()), (&[4usize][..], vec![0.0; 4]));
    let v = Array::<f32>::zeros([0]).unwrap();
    let d = v.dot(&v).unwrap();
    assert_eq!((d.shape(), d.to_vec().unwrap()), (&[] as &[usize], vec![0.0]));
    assert_eq!(v.vdot(&v).unwrap().to_vec().unwrap(), vec![0.0]);
    let e = Array::<f32>::ones([0, 5])
        .unwrap()
        .matmul(&Array::<f32>::ones([5, 4]).unwrap())
        .unwrap();
    assert_eq!((e.shape(), e.len()), (&[0usize, 4][..], 0));
    let e = Array::<f32>::ones([3, 0, 2, 5])
        .unwrap()
        .matmul(&Array::<f32>::ones([5, 4]).unwrap())
        .unwrap();
    assert_eq!(e.shape(), &[3, 0, 2, 4]);
    let e = Array::<f32>::ones([2, 5])
        .unwrap()
        .matmul(&Array::<f32>::ones([5, 0]).unwrap())
        .unwrap();
    assert_eq!(e.shape(), &[2, 0]);
    let o = v.outer(&Array::<f32>::ones([3]).unwrap()).unwrap();
    assert_eq!(o.shape(), &[0, 3]);
}

/// The largest error of an f32 product of `k = 4096` values in [-1, 1) against the f64 reference:
/// f32 arithmetic errs by about 1e-4 here, TF32 (the products' inputs rounded to 10-bit
/// mantissas) by about 2e-2.
fn worst_f32_error() -> f64 {
    let mut r = Rng::new();
    let (m, k, n) = (16, 4096, 16);
    let (a, ha) = random::<f32>(&mut r, &[m, k]);
    let (b, hb) = random::<f32>(&mut r, &[k, n]);
    let want = reference(&ha, &[m, k], &hb, &[k, n]);
    let got = a.matmul(&b).unwrap().to_vec().unwrap();
    got.iter()
        .zip(&want.1)
        .map(|(g, w)| (*g as f64 - w).abs())
        .fold(0.0, f64::max)
}

/// Between the two errors `worst_f32_error` expects.
const TF32_LINE: f64 = 2e-3;

fn f32_products_are_full_precision_without_tf32() {
    if std::env::var("CUPY_TF32").as_deref() == Ok("1") {
        eprintln!("CUPY_TF32=1: TF32 is asked for, the full-precision check does not apply");
        return;
    }
    let worst = worst_f32_error();
    assert!(
        worst < TF32_LINE,
        "max |error| {worst:e}: not f32 precision (TF32 used without CUPY_TF32=1?)"
    );
}

/// Runs test `test` of this binary in a child process with `vars` set.
fn run_child(test: &str, vars: &[(&str, &str)]) {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args([test, "--exact", "--include-ignored", "--nocapture"])
        .env("CUPRUM_TEST_CHILD", "1");
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child {test} {vars:?} failed:\n{text}");
    assert!(text.contains("1 passed"), "child {test} did not run:\n{text}");
}

fn is_child() -> bool {
    std::env::var("CUPRUM_TEST_CHILD").is_ok()
}

/// `CUPY_TF32=1` makes f32 products on a GPU use TF32 (their error grows past f32's), and a value
/// other than 0 or 1 is an error naming the variable; each in a child process.
#[test]
#[ignore = "needs a CUDA GPU"]
fn cupy_tf32_selects_tf32() {
    if is_child() {
        return;
    }
    run_child("child_tf32", &[("CUPY_TF32", "1")]);
    run_child("child_tf32_invalid", &[("CUPY_TF32", "yes")]);
}

#[test]
#[ignore = "needs a CUDA GPU (run by cupy_tf32_selects_tf32)"]
fn child_tf32() {
    if !is_child() {
        return;
    }
    let _gpu = Device::get(0).unwrap().use_scoped().unwrap();
    let worst = worst_f32_error();
    assert!(
        worst > TF32_LINE && worst < 0.2,
        "max |error| {worst:e}: CUPY_TF32=1 should give TF32's error"
    );
}

#[test]
#[ignore = "needs a CUDA GPU (run by cupy_tf32_selects_tf32)"]
fn child_tf32_invalid() {
    if !is_child() {
        return;
    }
    let _gpu = Device::get(0).unwrap().use_scoped().unwrap();
    let a = Array::<f32>::ones([2, 2]).unwrap();
    let e = a.matmul(&a).unwrap_err();
    assert!(matches!(e, Error::InvalidEnv { var: "CUPY_TF32", .. }), "{e}");
}

fn dot_vdot_inner_outer_tensordot() {
    let mut r = Rng::new();
    let tol = 1e-14;
    let (a, ha) = random::<f64>(&mut r, &[2, 3, 4]);
    let (b, hb) = random::<f64>(&mut r, &[5, 4, 6]);
    let (v, hv) = random::<f64>(&mut r, &[4]);
    let (w, hw) = random::<f64>(&mut r, &[6]);
    let at = |h: &[f64], s: &[usize], i: &[usize]| h[flat(s, i)];
    // dot of N-d and M-d: sum over a's last and b's second-to-last axes, every pair.
    let d = a.dot(&b).unwrap();
    assert_eq!(d.shape(), &[2, 3, 5, 6]);
    let dv = d.to_vec().unwrap();
    for (q, g) in dv.iter().enumerate() {
        let (i, j, k, l) = (q / 90, q / 30 % 3, q / 6 % 5, q % 6);
        let (s, mag) = (0..4).fold((0.0, 0.0), |(s, g), p| {
            let x = at(&ha, &[2, 3, 4], &[i, j, p]) * at(&hb, &[5, 4, 6], &[k, p, l]);
            (s + x, g + x.abs())
        });
        assert!((g - s).abs() <= tol * mag, "dot element {q}: {g} against {s}");
    }
    // dot with a vector, and of 2-d operands (matmul).
    check(
        "dot N-d 1-d",
        &a.dot(&v).unwrap(),
        &reference(&ha, &[2, 3, 4], &hv, &[4]),
        tol,
    );
    let (m2, hm2) = random::<f64>(&mut r, &[3, 4]);
    let (n2, hn2) = random::<f64>(&mut r, &[4, 6]);
    check(
        "dot 2-d",
        &m2.dot(&n2).unwrap(),
        &reference(&hm2, &[3, 4], &hn2, &[4, 6]),
        tol,
    );
    // dot with a 0-d operand multiplies.
    let s = Array::from_shape_vec(Vec::<usize>::new(), vec![2.5f64]).unwrap();
    assert_eq!(
        s.dot(&v).unwrap().to_vec().unwrap(),
        hv.iter().map(|x| x * 2.5).collect::<Vec<_>>()
    );
    // vdot flattens both (a transposed, sliced view: C order of its elements).
    let x = n2.slice(1, ..3).unwrap().transpose();
    assert_eq!(x.shape(), &[3, 4]);
    let vd = m2.vdot(&x).unwrap().to_vec().unwrap()[0];
    let want: f64 = (0..12).map(|q| hm2[q] * hn2[(q % 4) * 6 + q / 4]).sum();
    assert!((vd - want).abs() <= 1e-13, "vdot {vd} against {want}");
    // inner: the last axes of both.
    let inn = a.inner(&m2).unwrap();
    assert_eq!(inn.shape(), &[2, 3, 3]);
    let iv = inn.to_vec().unwrap();
    for (q, g) in iv.iter().enumerate() {
        let (i, j, k) = (q / 9, q / 3 % 3, q % 3);
        let s: f64 = (0..4).map(|p| at(&ha, &[2, 3, 4], &[i, j, p]) * hm2[k * 4 + p]).sum();
        assert!((g - s).abs() <= 1e-13, "inner element {q}: {g} against {s}");
    }
    let iv = v.inner(&v).unwrap();
    assert_eq!(iv.shape(), &[] as &[usize]);
    // outer: every product, exactly.
    let o = v.outer(&w).unwrap();
    assert_eq!(o.shape(), &[4, 6]);
    let want: Vec<f64> = hv.iter().flat_map(|x| hw.iter().map(move |y| x * y)).collect();
    assert_eq!(o.to_vec().unwrap(), want);
    // tensordot over two axes pairs in a chosen order, and with axes=n.
    let t = a.tensordot(&b.permute(&[1, 0, 2]).unwrap(), &[2], &[0]).unwrap();
    assert_eq!(t.shape(), &[2, 3, 5, 6]);
    let tv = t.to_vec().unwrap();
    for (x, y) in tv.iter().zip(&dv) {
        assert!((x - y).abs() <= 1e-13, "tensordot {x} against dot {y}");
    }
    let (c, hc) = random::<f64>(&mut r, &[3, 4, 2]);
    let t2 = a.tensordot_n(&c, 2).unwrap();
    assert_eq!(t2.shape(), &[2, 2]);
    let t2v = t2.to_vec().unwrap();
    for i in 0..2 {
        for l in 0..2 {
            let s: f64 = (0..3)
                .flat_map(|j| (0..4).map(move |p| (j, p)))
                .map(|(j, p)| at(&ha, &[2, 3, 4], &[i, j, p]) * at(&hc, &[3, 4, 2], &[j, p, l]))
                .sum();
            assert!((t2v[i * 2 + l] - s).abs() <= 1e-13, "tensordot_n ({i}, {l})");
        }
    }
    let t0 = v.tensordot_n(&w, 0).unwrap();
    assert_eq!(
        (t0.shape(), t0.to_vec().unwrap()),
        (&[4usize, 6][..], o.to_vec().unwrap())
    );
}

fn bad_input_is_a_clear_error() {
    let a = Array::<f32>::ones([2, 3]).unwrap();
    let b = Array::<f32>::ones([4, 5]).unwrap();
    let e = a.matmul(&b).unwrap_err().to_string();
    assert!(
        e.contains("[2, 3]") && e.contains("[4, 5]") && e.contains("matmul"),
        "{e}"
    );
    let e = a.dot(&Array::<f32>::ones([4]).unwrap()).unwrap_err().to_string();
    assert!(e.contains("[2, 3]") && e.contains("[4]") && e.contains("dot"), "{e}");
    let s = Array::from_shape_vec(Vec::<usize>::new(), vec![1.0f32]).unwrap();
    let e = s.matmul(&a).unwrap_err().to_string();
    assert!(e.contains("0-d"), "{e}");
    let e = Array::<f32>::ones([2, 2, 3])
        .unwrap()
        .matmul(&Array::<f32>::ones([3, 3, 1]).unwrap())
        .unwrap_err()
        .to_string();
    assert!(e.contains("batch") && e.contains("[2, 2, 3]"), "{e}");
    let e = a.vdot(&b).unwrap_err().to_string();
    assert!(e.contains("vdot") && e.contains("6") && e.contains("20"), "{e}");
    let e = a.inner(&b).unwrap_err().to_string();
    assert!(e.contains("inner") && e.contains("[2, 3]"), "{e}");
    assert!(matches!(
        a.tensordot(&b, &[2], &[0]).unwrap_err(),
        Error::InvalidAxis { axis: 2, ndim: 2 }
    ));
    let e = a.tensordot(&b, &[1], &[0, 1]).unwrap_err().to_string();
    assert!(e.contains("tensordot"), "{e}");
    assert!(a.tensordot_n(&b, 3).is_err());
    // Arrays on two devices.
    if !Device::current().unwrap().is_cpu() {
        let c = Array::<f32>::ones([3, 2]).unwrap().to_device(&Device::cpu()).unwrap();
        assert!(matches!(a.matmul(&c).unwrap_err(), Error::DeviceMismatch { .. }));
    }
}
