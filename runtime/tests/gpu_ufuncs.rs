//! Tests of NumPy's ufuncs as `Array` methods and operators (issue 36) on each device: the math
//! functions against host references in f64, NumPy's floored division and remainder, rounding
//! half to even, the floating-point functions, the logic functions, the bitwise operators and
//! shifts, the in-place forms; edge values (NaN, infinities, -0.0, integer overflow), views,
//! broadcasting and bad input. Run on a GPU machine with
//! `cargo test -p cuprum-runtime --test gpu_ufuncs -- --include-ignored`.

mod support;
use support::Rng;

use cuprum_runtime::{Array, Error, Result};

on_both_devices!(
    cuprum_runtime::Device;
    float_unary_functions_match_f64,
    float_binary_functions_match_f64,
    floored_division_and_remainder,
    integer_arithmetic_wraps_as_documented,
    rint_rounds_half_to_even,
    floating_point_functions,
    maximum_propagates_nan_fmax_ignores_it,
    logic_functions,
    bitwise_operators_and_shifts,
    in_place_forms,
    views_and_broadcasting,
    bad_input_is_an_error_and_writes_nothing,
);

/// The edge values every float function sees besides random ones.
const EDGES: [f64; 9] = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, f64::INFINITY, f64::NEG_INFINITY, f64::NAN];

fn random_f32(r: &mut Rng, n: usize, lo: f64, hi: f64) -> Vec<f32> {
    let mut v: Vec<f32> = EDGES.iter().map(|&x| x as f32).collect();
    v.extend((0..n).map(|_| r.range(lo, hi) as f32));
    v
}

/// Whether `got` (an f32 result) is `want` (the f64 reference) within `rtol` (relative) or
/// `atol`, with NaN equal to NaN and infinities exact (a reference beyond f32's range is an
/// infinity of f32).
fn close(got: f32, want: f64, rtol: f64, atol: f64) -> bool {
    let want32 = want as f32;
    if want.is_nan() || want32.is_nan() {
        return got.is_nan();
    }
    if want32.is_infinite() {
        return got == want32;
    }
    let g = f64::from(got);
    (g - want).abs() <= rtol * want.abs() + atol
}

#[track_caller]
fn check_unary(name: &str, x: &[f32], got: Result<Array<f32>>, reference: impl Fn(f64) -> f64, rtol: f64) {
    let got = got.unwrap_or_else(|e| panic!("{name}: {e}")).to_vec().unwrap();
    assert_eq!(got.len(), x.len(), "{name}: length");
    for (i, (&g, &xi)) in got.iter().zip(x).enumerate() {
        let want = reference(f64::from(xi));
        assert!(close(g, want, rtol, 1e-30), "{name}({xi}) element {i}: got {g}, want {want}");
    }
}

#[track_caller]
fn check_binary(name: &str, x: &[f32], y: &[f32], got: Result<Array<f32>>, reference: impl Fn(f64, f64) -> f64, rtol: f64) {
    check_binary_atol(name, x, y, got, reference, rtol, 1e-30)
}

/// [`check_binary`] with an absolute tolerance too (results that cancel to near zero).
#[track_caller]
fn check_binary_atol(name: &str, x: &[f32], y: &[f32], got: Result<Array<f32>>, reference: impl Fn(f64, f64) -> f64, rtol: f64, atol: f64) {
    let got = got.unwrap_or_else(|e| panic!("{name}: {e}")).to_vec().unwrap();
    assert_eq!(got.len(), x.len(), "{name}: length");
    for i in 0..x.len() {
        let want = reference(f64::from(x[i]), f64::from(y[i]));
        assert!(close(got[i], want, rtol, atol), "{name}({}, {}) element {i}: got {}, want {want}", x[i], y[i], got[i]);
    }
}

fn float_unary_functions_match_f64() {
    let r = &mut Rng::new();
    let x = random_f32(r, 2000, -3.0, 3.0);
    let unit = random_f32(r, 2000, -1.0, 1.0);
    let big = random_f32(r, 2000, 1.0, 50.0);
    let (a, u, b) = (Array::from_slice(&x).unwrap(), Array::from_slice(&unit).unwrap(), Array::from_slice(&big).unwrap());
    let tol = 4e-6;
    check_unary("tan", &x, a.tan(), f64::tan, 2e-5);
    check_unary("arcsin", &unit, u.arcsin(), f64::asin, tol);
    check_unary("arccos", &unit, u.arccos(), f64::acos, tol);
    check_unary("arctan", &x, a.arctan(), f64::atan, tol);
    check_unary("deg2rad", &x, a.deg2rad(), f64::to_radians, tol);
    check_unary("radians", &x, a.radians(), f64::to_radians, tol);
    check_unary("rad2deg", &x, a.rad2deg(), f64::to_degrees, tol);
    check_unary("degrees", &x, a.degrees(), f64::to_degrees, tol);
    check_unary("sinh", &x, a.sinh(), f64::sinh, tol);
    check_unary("cosh", &x, a.cosh(), f64::cosh, tol);
    check_unary("arcsinh", &x, a.arcsinh(), f64::asinh, tol);
    check_unary("arccosh", &big, b.arccosh(), f64::acosh, tol);
    // Within 0.9 of 0: the host's `f32::atanh` (the CPU device's) loses accuracy near -1.
    let inner: Vec<f32> = unit.iter().map(|v| v * 0.9).collect();
    check_unary("arctanh", &inner, Array::from_slice(&inner).unwrap().arctanh(), f64::atanh, tol);
    check_unary("floor", &x, a.floor(), f64::floor, 0.0);
    check_unary("ceil", &x, a.ceil(), f64::ceil, 0.0);
    check_unary("trunc", &x, a.trunc(), f64::trunc, 0.0);
    check_unary("expm1", &x, a.expm1(), f64::exp_m1, tol);
    check_unary("exp2", &x, a.exp2(), f64::exp2, tol);
    check_unary("log10", &big, b.log10(), f64::log10, tol);
    check_unary("log2", &big, b.log2(), f64::log2, tol);
    check_unary("log1p", &unit, u.log1p(), f64::ln_1p, tol);
    check_unary("square", &x, a.square(), |v| v * v, tol);
    check_unary("reciprocal", &x, a.reciprocal(), |v| 1.0 / v, tol);
    check_unary("negative", &x, a.negative(), |v| -v, 0.0);
    check_unary("absolute", &x, a.absolute(), f64::abs, 0.0);
    let sign = |v: f64| if v > 0.0 { 1.0 } else if v < 0.0 { -1.0 } else if v == 0.0 { 0.0 } else { v };
    check_unary("sign", &x, a.sign(), sign, 0.0);
    // Signs of zeros: floor/ceil/trunc keep them, sign gives +0.
    let z = Array::from_slice(&[-0.0f32, 0.0]).unwrap();
    assert_eq!(z.trunc().unwrap().to_vec().unwrap()[0].to_bits(), (-0.0f32).to_bits());
    assert_eq!(z.sign().unwrap().to_vec().unwrap()[0].to_bits(), 0.0f32.to_bits());
    // f64 too (compiled at first use on a GPU).
    let x64: Vec<f64> = x.iter().map(|&v| f64::from(v) * 1.37).collect();
    let got = Array::from_slice(&x64).unwrap().arcsinh().unwrap().to_vec().unwrap();
    for (g, v) in got.iter().zip(&x64) {
        let w = v.asinh();
        assert!(g == &w || (g.is_nan() && w.is_nan()) || (g - w).abs() <= 1e-14 * w.abs(), "arcsinh f64({v}): {g} vs {w}");
    }
}

fn float_binary_functions_match_f64() {
    let r = &mut Rng::new();
    let mut x = random_f32(r, 2000, -4.0, 4.0);
    let mut y = random_f32(r, 2000, -4.0, 4.0);
    // Every edge value against every other.
    for p in EDGES {
        for q in EDGES {
            x.push(p as f32);
            y.push(q as f32);
        }
    }
    y.truncate(x.len());
    let (a, b) = (Array::from_slice(&x).unwrap(), Array::from_slice(&y).unwrap());
    let tol = 4e-6;
    check_binary("arctan2", &x, &y, a.arctan2(&b), f64::atan2, tol);
    check_binary("hypot", &x, &y, a.hypot(&b), f64::hypot, tol);
    check_binary("copysign", &x, &y, a.copysign(&b), f64::copysign, 0.0);
    let logaddexp = |p: f64, q: f64| {
        if p == q {
            p + std::f64::consts::LN_2
        } else {
            let d = p - q;
            if d > 0.0 { p + (-d).exp().ln_1p() } else if d <= 0.0 { q + d.exp().ln_1p() } else { d }
        }
    };
    check_binary_atol("logaddexp", &x, &y, a.logaddexp(&b), logaddexp, tol, 4e-6);
    check_binary_atol("logaddexp2", &x, &y, a.logaddexp2(&b), |p, q| logaddexp(p * std::f64::consts::LN_2, q * std::f64::consts::LN_2) / std::f64::consts::LN_2, tol, 4e-6);
    // power: positive bases (a negative base to a fractional power is NaN in both).
    let pos: Vec<f32> = x.iter().map(|v| v.abs() + 0.25).collect();
    let p = Array::from_slice(&pos).unwrap();
    check_binary("power", &pos, &y, p.power(&b), f64::powf, 2e-5);
    check_binary("pow", &pos, &y, p.pow(2.5), |v, _| v.powf(2.5), 2e-5);
    check_binary("add", &x, &y, a.add(&b), |p, q| p + q, 1e-7);
    check_binary("subtract", &x, &y, a.subtract(&b), |p, q| p - q, 1e-7);
    check_binary("multiply", &x, &y, a.multiply(&b), |p, q| p * q, 1e-7);
    check_binary("divide", &x, &y, a.divide(&b), |p, q| p / q, 1e-7);
    check_binary("true_divide", &x, &y, a.true_divide(&b), |p, q| p / q, 1e-7);
}

/// NumPy's `npy_divmod` in f64: `(floor_divide, remainder)`.
fn npy_divmod(a: f64, b: f64) -> (f64, f64) {
    let m = a % b;
    if b == 0.0 {
        return (a / b, m);
    }
    let mut div = (a - m) / b;
    let mut r = m;
    if m != 0.0 {
        if (b < 0.0) != (m < 0.0) {
            r += b;
            div -= 1.0;
        }
    } else {
        r = 0.0f64.copysign(b);
    }
    let q = if div != 0.0 {
        let f = div.floor();
        if div - f > 0.5 { f + 1.0 } else { f }
    } else {
        0.0f64.copysign(a / b)
    };
    (q, r)
}

fn floored_division_and_remainder() {
    let r = &mut Rng::new();
    // Floats: random pairs, edge pairs, and exact multiples (a zero remainder's sign).
    let mut x: Vec<f32> = (0..3000).map(|_| r.range(-100.0, 100.0) as f32).collect();
    let mut y: Vec<f32> = (0..3000).map(|_| r.range(-7.0, 7.0) as f32).collect();
    for (p, q) in [(6.0, 3.0), (-6.0, 3.0), (6.0, -3.0), (-0.0, 2.0), (1.0, 0.0), (-1.0, 0.0), (0.0, 0.0), (f32::INFINITY, 2.0), (5.0, f32::INFINITY), (-5.0, f32::INFINITY), (f32::NAN, 1.0)] {
        x.push(p);
        y.push(q);
    }
    // The remainder's fast path (`fmod_fast`, runtime/kernels/math.rs) at its edges: quotients
    // that round up to an integer (0.3 / 0.1), just below and above 2^23 (where it hands over to
    // the library's fmod), subnormals, huge ratios, and near multiples; and floor_divide's
    // quotient from the remainder's below 2^21, NumPy's steps from there (both sides of it, below:
    // divmod's quotient, NumPy's steps throughout, must have the same bits).
    let third = 0.1f32;
    for (p, q) in [
        (2097151.5f32, 1.0f32),
        (2097152.0, 1.0),
        (-2097152.5, -1.0),
        (-1048577.0, 0.5),
        (4194303.0, -2.0),
        (0.3f32, third),
        (-0.3, third),
        (0.3, -third),
        (8388607.0, 1.0),
        (8388607.5, 0.5),
        (16777215.0, 0.5),
        (1.0e30, 3.0),
        (1.0, 1.0e-38),
        (3.0e-39, 7.0e-40),
        (-3.0e-39, 7.0e-40),
        (f32::from_bits(0x4040_0001), 1.0),
        (f32::from_bits(0x403f_ffff), 1.0),
        (f32::MAX, f32::MIN_POSITIVE),
    ] {
        x.push(p);
        y.push(q);
    }
    for _ in 0..2000 {
        // Near multiples: q y plus or minus a few ulps.
        let q = r.int(1, 1 << 22) as f32;
        let b = r.range(-3.0, 3.0) as f32;
        let ulps = r.int(-3, 3) as i32;
        x.push(f32::from_bits(((q * b).to_bits() as i32).wrapping_add(ulps) as u32));
        y.push(b);
    }
    let (a, b) = (Array::from_slice(&x).unwrap(), Array::from_slice(&y).unwrap());
    let fd = a.floor_divide(&b).unwrap().to_vec().unwrap();
    let rm = a.remainder(&b).unwrap().to_vec().unwrap();
    let fm = a.fmod(&b).unwrap().to_vec().unwrap();
    let (dq, dr) = a.divmod(&b).unwrap();
    let (dq, dr) = (dq.to_vec().unwrap(), dr.to_vec().unwrap());
    for i in 0..x.len() {
        // The f32 kernel's own steps in f32 equal NumPy's in f32; the f64 reference checks the
        // result to f32's precision, and the signs of zeros exactly.
        let (q, m) = npy_divmod(f64::from(x[i]), f64::from(y[i]));
        let what = format!("({}, {}) element {i}", x[i], y[i]);
        assert!(close(fd[i], q, 1e-6, 1e-6), "floor_divide{what}: {} vs {q}", fd[i]);
        assert!(close(rm[i], m, 1e-5, 1e-5), "remainder{what}: {} vs {m}", rm[i]);
        if q == 0.0 {
            assert_eq!(fd[i].is_sign_negative(), q.is_sign_negative(), "floor_divide{what}: sign of zero");
        }
        if m == 0.0 {
            assert_eq!(rm[i].is_sign_negative(), m.is_sign_negative(), "remainder{what}: sign of zero");
        }
        let want_fmod = x[i] % y[i];
        assert!(fm[i] == want_fmod || (fm[i].is_nan() && want_fmod.is_nan()), "fmod{what}: {} vs {want_fmod}", fm[i]);
        // The remainder from the exact fmod, in f32 as the kernel takes it: equal bits.
        let want_rm = if y[i] == 0.0 {
            want_fmod
        } else if want_fmod != 0.0 {
            if (y[i] < 0.0) != (want_fmod < 0.0) { want_fmod + y[i] } else { want_fmod }
        } else {
            0.0f32.copysign(y[i])
        };
        assert!(rm[i].to_bits() == want_rm.to_bits() || (rm[i].is_nan() && want_rm.is_nan()), "remainder{what}: {} vs {want_rm}", rm[i]);
        assert_eq!(dq[i].to_bits(), fd[i].to_bits(), "divmod's quotient{what}");
        assert_eq!(dr[i].to_bits(), rm[i].to_bits(), "divmod's remainder{what}");
    }
    // Integers: floored, by zero 0, MIN // -1 wraps.
    let mut xi: Vec<i64> = (0..2000).map(|_| r.int(-1000, 1000)).collect();
    let mut yi: Vec<i64> = (0..2000).map(|_| r.int(-30, 30)).collect();
    for (p, q) in [(7, 0), (-7, 0), (i64::MIN, -1), (i64::MIN, 1), (-7, 2), (7, -2), (-8, 2)] {
        xi.push(p);
        yi.push(q);
    }
    let (a, b) = (Array::from_slice(&xi).unwrap(), Array::from_slice(&yi).unwrap());
    let fd = a.floor_divide(&b).unwrap().to_vec().unwrap();
    let rm = a.remainder(&b).unwrap().to_vec().unwrap();
    let (dq, dr) = a.divmod(&b).unwrap();
    let (dq, dr) = (dq.to_vec().unwrap(), dr.to_vec().unwrap());
    for i in 0..xi.len() {
        let (p, q) = (xi[i], yi[i]);
        let (wq, wr) = if q == 0 {
            (0, 0)
        } else if p == i64::MIN && q == -1 {
            (i64::MIN, 0)
        } else {
            // The floor of the exact quotient (both below 2^53 in magnitude, so f64 is exact
            // enough: the quotient is never within an ulp of an integer it is not).
            let f = (p as f64 / q as f64).floor() as i64;
            (f, p - f * q)
        };
        assert_eq!((fd[i], rm[i]), (wq, wr), "floor_divide/remainder ({p}, {q})");
        assert_eq!((dq[i], dr[i]), (wq, wr), "divmod ({p}, {q})");
    }
    // Python's examples.
    let a = Array::from_slice(&[7i32, -7, 7, -7]).unwrap();
    let b = Array::from_slice(&[2i32, 2, -2, -2]).unwrap();
    assert_eq!(a.floor_divide(&b).unwrap().to_vec().unwrap(), [3, -4, -4, 3]);
    assert_eq!(a.remainder(&b).unwrap().to_vec().unwrap(), [1, 1, -1, -1]);
    assert_eq!(a.fmod(&b).unwrap().to_vec().unwrap(), [1, -1, 1, -1]);
}

fn integer_arithmetic_wraps_as_documented() {
    let r = &mut Rng::new();
    let x: Vec<i64> = (0..500).map(|_| r.int(-50, 50)).collect();
    let e: Vec<i64> = (0..500).map(|_| r.int(0, 70)).collect();
    let (a, b) = (Array::from_slice(&x).unwrap(), Array::from_slice(&e).unwrap());
    let got = a.power(&b).unwrap().to_vec().unwrap();
    for i in 0..x.len() {
        assert_eq!(got[i], x[i].wrapping_pow(e[i] as u32), "power({}, {})", x[i], e[i]);
    }
    // Negative exponents: the truncated 1 / x^-y.
    let a = Array::from_slice(&[1i32, -1, -1, 2, 0, 5]).unwrap();
    let b = Array::from_slice(&[-3i32, -3, -2, -1, -1, -2]).unwrap();
    assert_eq!(a.power(&b).unwrap().to_vec().unwrap(), [1, -1, 1, 0, 0, 0]);
    // u8: wrapping square, sign of unsigned, reciprocal of integers.
    let u = Array::from_slice(&[0u8, 1, 2, 16, 200, 255]).unwrap();
    assert_eq!(u.square().unwrap().to_vec().unwrap(), [0, 1, 4, 0, 64, 1]);
    assert_eq!(u.sign().unwrap().to_vec().unwrap(), [0, 1, 1, 1, 1, 1]);
    assert_eq!(u.power(3).unwrap().to_vec().unwrap(), [0, 1, 8, 0, 0, 255]); // 200^3 = 31250 * 256
    let s = Array::from_slice(&[i8::MIN, -3, -1, 0, 1, 3, i8::MAX]).unwrap();
    assert_eq!(s.reciprocal().unwrap().to_vec().unwrap(), [0, 0, -1, 0, 1, 0, 0]);
    assert_eq!(s.sign().unwrap().to_vec().unwrap(), [-1, -1, -1, 0, 1, 1, 1]);
    assert_eq!(s.absolute().unwrap().to_vec().unwrap(), [i8::MIN, 3, 1, 0, 1, 3, i8::MAX]);
    assert_eq!(s.negative().unwrap().to_vec().unwrap(), [i8::MIN, 3, 1, 0, -1, -3, -i8::MAX]);
}

fn rint_rounds_half_to_even() {
    let x = [0.5f32, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, 0.49999997, 2.4, -2.6, 8388607.5, 16777216.0, -0.0, f32::INFINITY, f32::NAN];
    let want = [0.0f32, 2.0, 2.0, -0.0, -2.0, -2.0, 4.0, 0.0, 2.0, -3.0, 8388608.0, 16777216.0, -0.0, f32::INFINITY, f32::NAN];
    let got = Array::from_slice(&x).unwrap().rint().unwrap().to_vec().unwrap();
    for i in 0..x.len() {
        assert!(got[i].to_bits() == want[i].to_bits() || (got[i].is_nan() && want[i].is_nan()), "rint({}) = {}, want {}", x[i], got[i], want[i]);
    }
    let r = &mut Rng::new();
    let y: Vec<f64> = (0..1000).map(|_| (r.int(-2000, 2000) as f64) * 0.5 + if r.next().is_multiple_of(2) { 0.0 } else { r.range(-0.4, 0.4) }).collect();
    let got = Array::from_slice(&y).unwrap().rint().unwrap().to_vec().unwrap();
    for (g, v) in got.iter().zip(&y) {
        assert_eq!(g.to_bits(), v.round_ties_even().to_bits(), "rint f64({v})");
    }
}

fn floating_point_functions() {
    let r = &mut Rng::new();
    let mut x = random_f32(r, 1000, -1e6, 1e6);
    x.extend([f32::MIN_POSITIVE, f32::MIN_POSITIVE / 8.0, -1e-44, f32::MAX, 1.0, 0.75]);
    let a = Array::from_slice(&x).unwrap();
    // frexp: x = m * 2^e with |m| in [0.5, 1), and ldexp inverts it exactly.
    let (m, e) = a.frexp().unwrap();
    let (mv, ev) = (m.to_vec().unwrap(), e.to_vec().unwrap());
    for i in 0..x.len() {
        if x[i] == 0.0 || !x[i].is_finite() {
            assert!(mv[i].to_bits() == x[i].to_bits() || (x[i].is_nan() && mv[i].is_nan()), "frexp({}) mantissa", x[i]);
            assert_eq!(ev[i], 0, "frexp({}) exponent", x[i]);
        } else {
            assert!((0.5..1.0).contains(&mv[i].abs()), "frexp({}) mantissa {}", x[i], mv[i]);
            assert_eq!(f64::from(mv[i]) * 2f64.powi(ev[i]), f64::from(x[i]), "frexp({}) = ({}, {})", x[i], mv[i], ev[i]);
        }
    }
    let back = m.ldexp(&e).unwrap().to_vec().unwrap();
    for i in 0..x.len() {
        assert!(back[i].to_bits() == x[i].to_bits() || x[i].is_nan(), "ldexp(frexp({})) = {}", x[i], back[i]);
    }
    // ldexp with a scalar exponent: overflow to inf, gradual underflow (rounded once), large counts.
    let v = Array::from_slice(&[1.0f32, 1.5, -3.0, 0.75]).unwrap();
    for n in [0i32, 1, -1, 127, 128, -126, -149, -150, -151, 300, -300, i32::MAX, i32::MIN] {
        let got = v.ldexp(n).unwrap().to_vec().unwrap();
        for (k, &b) in [1.0f64, 1.5, -3.0, 0.75].iter().enumerate() {
            let want = (b * 2f64.powi(n.clamp(-1100, 1100))) as f32;
            assert_eq!(got[k].to_bits(), want.to_bits(), "ldexp({b}, {n})");
        }
    }
    let big = Array::from_slice(&[1.0f64, f64::MIN_POSITIVE, 3.0]).unwrap();
    let got = big.ldexp(&Array::from_slice(&[-1074i32, 1000, -1075]).unwrap()).unwrap().to_vec().unwrap();
    assert_eq!(got, [f64::from_bits(1), f64::MIN_POSITIVE * 2f64.powi(1000), f64::from_bits(2)]);
    // signbit, nextafter, modf.
    let s = Array::from_slice(&[-0.0f32, 0.0, -1.0, 2.0, -f32::NAN, f32::NAN]).unwrap();
    assert_eq!(s.signbit().unwrap().to_vec().unwrap(), [true, false, true, false, true, false]);
    let from = Array::from_slice(&[1.0f32, 1.0, 0.0, 0.0, -0.0, f32::MAX, 3.0, f32::NAN]).unwrap();
    let to = Array::from_slice(&[2.0f32, 0.0, 1.0, -1.0, 0.0, f32::INFINITY, 3.0, 1.0]).unwrap();
    let got = from.nextafter(&to).unwrap().to_vec().unwrap();
    let want = [1.0f32.next_up(), 1.0f32.next_down(), f32::from_bits(1), -f32::from_bits(1), 0.0, f32::INFINITY, 3.0, f32::NAN];
    for i in 0..want.len() {
        assert!(got[i].to_bits() == want[i].to_bits() || (want[i].is_nan() && got[i].is_nan()), "nextafter element {i}: {} vs {}", got[i], want[i]);
    }
    let got64 = Array::from_slice(&[1.0f64, -2.0]).unwrap().nextafter(0.0).unwrap().to_vec().unwrap();
    assert_eq!(got64, [1.0f64.next_down(), (-2.0f64).next_up()]);
    let e = Array::from_slice(&[half::f16::ONE]).unwrap().nextafter(half::f16::ZERO).unwrap_err();
    assert!(e.to_string().contains("only f32 and f64"), "{e}");
    let (frac, int) = Array::from_slice(&[2.75f32, -2.75, -2.0, f32::INFINITY, f32::NEG_INFINITY]).unwrap().modf().unwrap();
    let (frac, int) = (frac.to_vec().unwrap(), int.to_vec().unwrap());
    assert_eq!(int, [2.0, -2.0, -2.0, f32::INFINITY, f32::NEG_INFINITY]);
    let want = [0.75f32, -0.75, -0.0, 0.0, -0.0];
    for i in 0..want.len() {
        assert_eq!(frac[i].to_bits(), want[i].to_bits(), "modf fractional part {i}: {}", frac[i]);
    }
}

fn maximum_propagates_nan_fmax_ignores_it() {
    let x = Array::from_slice(&[1.0f32, f32::NAN, 3.0, f32::NAN, -0.0]).unwrap();
    let y = Array::from_slice(&[2.0f32, 1.0, f32::NAN, f32::NAN, 0.0]).unwrap();
    let nan_eq = |a: &[f32], b: &[f32]| a.iter().zip(b).all(|(p, q)| p.to_bits() == q.to_bits() || (p.is_nan() && q.is_nan()));
    let n = f32::NAN;
    assert!(nan_eq(&x.maximum(&y).unwrap().to_vec().unwrap(), &[2.0, n, n, n, -0.0]));
    assert!(nan_eq(&x.minimum(&y).unwrap().to_vec().unwrap(), &[1.0, n, n, n, -0.0]));
    assert!(nan_eq(&x.fmax(&y).unwrap().to_vec().unwrap()[..4], &[2.0, 1.0, 3.0, n]));
    assert!(nan_eq(&x.fmin(&y).unwrap().to_vec().unwrap()[..4], &[1.0, 1.0, 3.0, n]));
    let i = Array::from_slice(&[3i64, -5, 7]).unwrap();
    assert_eq!(i.maximum(0).unwrap().to_vec().unwrap(), [3, 0, 7]);
    assert_eq!(i.fmin(0).unwrap().to_vec().unwrap(), [0, -5, 0]);
}

fn logic_functions() {
    let r = &mut Rng::new();
    let x = random_f32(r, 500, -2.0, 2.0);
    let y: Vec<f32> = x.iter().map(|&v| if r.next().is_multiple_of(3) { v } else { r.range(-2.0, 2.0) as f32 }).collect();
    let (a, b) = (Array::from_slice(&x).unwrap(), Array::from_slice(&y).unwrap());
    let each = |got: Result<Array<bool>>, f: &dyn Fn(f32, f32) -> bool, name: &str| {
        let got = got.unwrap().to_vec().unwrap();
        for i in 0..x.len() {
            assert_eq!(got[i], f(x[i], y[i]), "{name}({}, {})", x[i], y[i]);
        }
    };
    each(a.isnan(), &|p, _| p.is_nan(), "isnan");
    each(a.isinf(), &|p, _| p.is_infinite(), "isinf");
    each(a.isfinite(), &|p, _| p.is_finite(), "isfinite");
    each(a.greater(&b), &|p, q| p > q, "greater");
    each(a.greater_equal(&b), &|p, q| p >= q, "greater_equal");
    each(a.less(&b), &|p, q| p < q, "less");
    each(a.less_equal(&b), &|p, q| p <= q, "less_equal");
    each(a.equal(&b), &|p, q| p == q, "equal");
    each(a.not_equal(&b), &|p, q| p != q, "not_equal");
    // Truth of numbers is "non-zero" (NaN is true, -0.0 false).
    each(a.logical_and(&b), &|p, q| p != 0.0 && q != 0.0, "logical_and");
    each(a.logical_or(&b), &|p, q| p != 0.0 || q != 0.0, "logical_or");
    each(a.logical_xor(&b), &|p, q| (p != 0.0) != (q != 0.0), "logical_xor");
    each(a.logical_not(), &|p, _| p == 0.0, "logical_not");
    let p: Vec<bool> = (0..300).map(|_| r.next().is_multiple_of(2)).collect();
    let q: Vec<bool> = (0..300).map(|_| r.next().is_multiple_of(2)).collect();
    let (pa, qa) = (Array::from_slice(&p).unwrap(), Array::from_slice(&q).unwrap());
    let and = pa.logical_and(&qa).unwrap().to_vec().unwrap();
    let xor = pa.logical_xor(&qa).unwrap().to_vec().unwrap();
    let not = pa.logical_not().unwrap().to_vec().unwrap();
    let or = pa.logical_or(true).unwrap().to_vec().unwrap();
    for i in 0..p.len() {
        assert_eq!((and[i], xor[i], not[i], or[i]), (p[i] && q[i], p[i] != q[i], !p[i], true), "bool element {i}");
    }
    let ints = Array::from_slice(&[0i32, 3, -1, 0]).unwrap();
    assert_eq!(ints.logical_or(&Array::from_slice(&[0i32, 0, 0, 5]).unwrap()).unwrap().to_vec().unwrap(), [false, true, true, true]);
}

fn bitwise_operators_and_shifts() {
    let r = &mut Rng::new();
    let x: Vec<i64> = (0..1000).map(|_| r.next() as i64).collect();
    let y: Vec<i64> = (0..1000).map(|_| r.next() as i64).collect();
    let n: Vec<i64> = (0..1000).map(|_| r.int(-70, 140)).collect();
    let (a, b, s) = (Array::from_slice(&x).unwrap(), Array::from_slice(&y).unwrap(), Array::from_slice(&n).unwrap());
    let and = (&a & &b).unwrap().to_vec().unwrap();
    let or = (&a | &b).unwrap().to_vec().unwrap();
    let xor = (a.clone() ^ &b).unwrap().to_vec().unwrap();
    let not = (!&a).unwrap().to_vec().unwrap();
    let shl = (&a << &s).unwrap().to_vec().unwrap();
    let shr = (&a >> &s).unwrap().to_vec().unwrap();
    let shr3 = (&a >> 3).unwrap().to_vec().unwrap();
    for i in 0..x.len() {
        assert_eq!(and[i], x[i] & y[i]);
        assert_eq!(or[i], x[i] | y[i]);
        assert_eq!(xor[i], x[i] ^ y[i]);
        assert_eq!(not[i], !x[i]);
        // The amount modulo 64 (Rust's wrapping shifts; a negative amount too).
        assert_eq!(shl[i], x[i].wrapping_shl(n[i] as u32), "{} << {}", x[i], n[i]);
        assert_eq!(shr[i], x[i].wrapping_shr(n[i] as u32), "{} >> {}", x[i], n[i]);
        assert_eq!(shr3[i], x[i] >> 3);
    }
    assert_eq!(a.bitwise_and(&b).unwrap().to_vec().unwrap(), and);
    assert_eq!(a.bitwise_or(&b).unwrap().to_vec().unwrap(), or);
    assert_eq!(a.bitwise_xor(&b).unwrap().to_vec().unwrap(), xor);
    assert_eq!(a.invert().unwrap().to_vec().unwrap(), not);
    assert_eq!(a.left_shift(&s).unwrap().to_vec().unwrap(), shl);
    assert_eq!(a.right_shift(&s).unwrap().to_vec().unwrap(), shr);
    // Narrow and unsigned types: shifts are logical for unsigned, masked by the width.
    let u = Array::from_slice(&[0x80u8, 0xff, 1, 0x0f]).unwrap();
    assert_eq!((&u >> 9u8).unwrap().to_vec().unwrap(), [0x40, 0x7f, 0, 0x07]);
    assert_eq!((&u << 4u8).unwrap().to_vec().unwrap(), [0, 0xf0, 0x10, 0xf0]);
    assert_eq!((!&u).unwrap().to_vec().unwrap(), [0x7f, 0, 0xfe, 0xf0]);
    let i = Array::from_slice(&[i32::MIN, -1, 5]).unwrap();
    assert_eq!((&i >> 31).unwrap().to_vec().unwrap(), [-1, -1, 0]);
    assert_eq!((&i ^ -1).unwrap().to_vec().unwrap(), [i32::MAX, 0, -6]);
    // bool: logical.
    let p = Array::from_slice(&[true, true, false, false]).unwrap();
    let q = Array::from_slice(&[true, false, true, false]).unwrap();
    assert_eq!((&p & &q).unwrap().to_vec().unwrap(), [true, false, false, false]);
    assert_eq!((&p | &q).unwrap().to_vec().unwrap(), [true, true, true, false]);
    assert_eq!((&p ^ true).unwrap().to_vec().unwrap(), [false, false, true, true]);
    assert_eq!((!p.clone()).unwrap().to_vec().unwrap(), [false, false, true, true]);
    assert_eq!(p.invert().unwrap().to_vec().unwrap(), [false, false, true, true]);
}

fn in_place_forms() {
    let r = &mut Rng::new();
    let x: Vec<f32> = (0..12).map(|_| r.range(-10.0, 10.0) as f32).collect();
    let row: Vec<f32> = (0..4).map(|_| r.range(1.0, 3.0) as f32).collect();
    let mut a = Array::from_shape_vec([3, 4], x.clone()).unwrap();
    let rows = Array::from_slice(&row).unwrap();
    a.add_assign(&rows).unwrap();
    a.mul_assign(2.0).unwrap();
    a.sub_assign(1.0).unwrap();
    a.div_assign(&rows).unwrap();
    a.pow_assign(2.0).unwrap();
    a.floor_divide_assign(0.75).unwrap();
    let got = a.to_vec().unwrap();
    for k in 0..12 {
        let v = ((x[k] + row[k % 4]) * 2.0 - 1.0) / row[k % 4];
        let v = f64::from(v.powf(2.0));
        let want = npy_divmod(v, 0.75).0;
        assert!(close(got[k], want, 1e-5, 1e-5), "element {k}: {} vs {want}", got[k]);
    }
    let mut m = Array::from_slice(&[7.5f32, -7.5]).unwrap();
    m.rem_assign(2.0).unwrap();
    assert_eq!(m.to_vec().unwrap(), [1.5, -1.5]);
    let mut m = Array::from_slice(&[7.5f32, -7.5]).unwrap();
    m.remainder_assign(2.0).unwrap();
    assert_eq!(m.to_vec().unwrap(), [1.5, 0.5]);
    // Integers, bitwise and shifts, with wrapping.
    let mut i = Array::from_slice(&[i64::MAX, 6, -8]).unwrap();
    i.add_assign(1).unwrap();
    assert_eq!(i.to_vec().unwrap(), [i64::MIN, 7, -7]);
    i.bitand_assign(0xff).unwrap();
    i.bitor_assign(0x100).unwrap();
    i.bitxor_assign(1).unwrap();
    i.shl_assign(2).unwrap();
    i.shr_assign(1).unwrap();
    let want: Vec<i64> = [i64::MIN, 7, -7].iter().map(|v| ((((v & 0xff) | 0x100) ^ 1) << 2) >> 1).collect();
    assert_eq!(i.to_vec().unwrap(), want);
    let mut b = Array::from_slice(&[true, false, true]).unwrap();
    b.bitand_assign(&Array::from_slice(&[true, true, false]).unwrap()).unwrap();
    b.bitor_assign(false).unwrap();
    b.bitxor_assign(true).unwrap();
    assert_eq!(b.to_vec().unwrap(), [false, true, true]);
    // `a += a` and overlapping views of the same buffer read the values from before.
    let base: Vec<i64> = (1..=6).collect();
    let mut s = Array::from_slice(&base).unwrap();
    let same = s.clone();
    s.add_assign(&same).unwrap();
    assert_eq!(s.to_vec().unwrap(), [2, 4, 6, 8, 10, 12]);
    let whole = Array::from_slice(&base).unwrap();
    let mut tail = whole.slice(0, 1..6).unwrap();
    let head = whole.slice(0, 0..5).unwrap();
    tail.add_assign(&head).unwrap();
    assert_eq!(whole.to_vec().unwrap(), [1, 3, 5, 7, 9, 11], "a[1:] += a[:-1] reads a as it was");
    let sq = Array::from_shape_vec([2, 2], vec![1i64, 2, 3, 4]).unwrap();
    let mut sq_view = sq.clone();
    sq_view.add_assign(&sq.transpose()).unwrap();
    assert_eq!(sq.to_vec().unwrap(), [2, 5, 5, 8], "a += a.T");
}

fn views_and_broadcasting() {
    let r = &mut Rng::new();
    let x: Vec<f32> = (0..24).map(|_| r.range(-3.0, 3.0) as f32).collect();
    let a = Array::from_shape_vec([4, 6], x.clone()).unwrap();
    // A transposed, sliced view against a broadcast column.
    let t = a.transpose().slice(0, cuprum_runtime::Slice::new(Some(1), None, 2)).unwrap(); // (3, 4)
    let col = Array::from_shape_vec([3, 1], vec![0.5f32, -1.5, 2.0]).unwrap();
    let got = t.arctan2(&col).unwrap();
    assert_eq!(got.shape(), &[3, 4]);
    let got = got.to_vec().unwrap();
    for i in 0..3 {
        for j in 0..4 {
            let v = x[j * 6 + 1 + 2 * i];
            let want = f64::from(v).atan2(f64::from([0.5f32, -1.5, 2.0][i]));
            assert!(close(got[i * 4 + j], want, 4e-6, 0.0), "({i}, {j})");
        }
    }
    // 0-d and empty arrays.
    let z = Array::from_shape_vec(Vec::<usize>::new(), vec![2.5f32]).unwrap();
    assert_eq!(z.rint().unwrap().to_vec().unwrap(), [2.0]);
    assert_eq!(z.rint().unwrap().shape(), &[] as &[usize]);
    let e = Array::<f32>::zeros([0, 3]).unwrap();
    assert_eq!(e.logaddexp(1.0).unwrap().shape(), &[0, 3]);
    assert_eq!(e.isnan().unwrap().shape(), &[0, 3]);
    let ei = Array::<i64>::zeros([2, 0]).unwrap();
    assert_eq!((&ei << 1).unwrap().shape(), &[2, 0]);
}

fn bad_input_is_an_error_and_writes_nothing() {
    let a = Array::from_slice(&[1.0f32, 2.0, 3.0]).unwrap();
    let b = Array::from_slice(&[1.0f32, 2.0]).unwrap();
    assert!(matches!(a.hypot(&b), Err(Error::Broadcast { .. })), "shapes (3,) and (2,)");
    let i = Array::from_slice(&[1i64, 2, 3]).unwrap();
    let j = Array::from_slice(&[1i64, 2]).unwrap();
    assert!(matches!(&i & &j, Err(Error::Broadcast { .. })));
    // In place: an operand that would widen `self` is an error, and nothing is written.
    let mut small = Array::from_slice(&[1.0f32, 2.0, 3.0]).unwrap();
    let wide = Array::from_shape_vec([2, 3], vec![1.0f32; 6]).unwrap();
    let e = small.add_assign(&wide).unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { .. } | Error::Broadcast { .. }), "{e}");
    assert_eq!(small.to_vec().unwrap(), [1.0, 2.0, 3.0], "nothing written");
    // A broadcast view as `self` is refused.
    let mut bcast = Array::from_slice(&[1i64]).unwrap().broadcast_to([4]).unwrap();
    assert!(bcast.add_assign(1).is_err());
}
