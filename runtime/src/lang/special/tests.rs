//! The host definitions against values computed with 50 digits (mpmath), their special values,
//! and round trips through libm's `erf`/`erfc`.

use half::{bf16, f16};

use super::*;

/// The distance of `got` from `want` in ulps of `want` (of its binade; subnormals by the
/// smallest step).
fn ulps(got: f64, want: f64) -> f64 {
    let ulp = if want == 0.0 { f64::from_bits(1) } else { (f64::from_bits(want.abs().to_bits() + 1) - want.abs()).max(f64::from_bits(1)) };
    (got - want).abs() / ulp
}

fn close(name: &str, x: f64, got: f64, want: f64, max_ulps: f64) {
    let e = ulps(got, want);
    assert!(e <= max_ulps, "{name}({x:e}) = {got:e}, want {want:e}: {e:.1} ulps (at most {max_ulps})");
}

#[test]
fn known_values() {
    // (x, f(x)) from mpmath at 50 digits, rounded to f64.
    let erf_ = [(0.5, 0.5204998778130465), (-1e-3, -0.0011283787909692365), (2.5, 0.999593047982555), (5.9, 0.9999999999999999)];
    let erfc_ = [(3.0, 2.209049699858544e-05), (-0.5, 1.5204998778130465), (10.0, 2.088487583762545e-45), (26.0, 5.663192408856143e-296)];
    let erfinv_ = [(0.5, 0.4769362762044699), (-0.9, -1.1630871536766743), (0.999999, 3.458910737275499), (1e-20, 8.86226925452758e-21)];
    let erfcinv_ = [
        (1e-10, 4.572824967389486),
        (1e-100, 15.065574702592645),
        (1e-300, 26.209469960516124),
        // The smallest normal and the smallest subnormal: the asymptotic series' region.
        (f64::MIN_POSITIVE, 26.54325845425098),
        (f64::from_bits(1), 27.21329321081295),
        (0.3, 0.7328690779592169),
        (1.7, -0.7328690779592169),
    ];
    let normcdf_ = [(-1.0, 0.15865525393145705), (0.3, 0.6179114221889527), (-20.0, 2.7536241186062337e-89), (-37.5, 4.605353009581955e-308)];
    let normcdfinv_ = [(0.025, -1.9599639845400543), (0.975, 1.9599639845400543), (1e-300, -37.0470962993612)];
    for (x, want) in erf_ {
        close("erf", x, erf(x), want, 2.0);
    }
    for (x, want) in erfc_ {
        close("erfc", x, erfc(x), want, 2.0);
    }
    for (x, want) in erfinv_ {
        close("erfinv", x, erfinv(x), want, 3.0);
    }
    for (x, want) in erfcinv_ {
        close("erfcinv", x, erfcinv(x), want, 3.0);
    }
    for (x, want) in normcdf_ {
        close("normcdf", x, normcdf(x), want, 4.0);
    }
    for (x, want) in normcdfinv_ {
        close("normcdfinv", x, normcdfinv(x), want, 4.0);
    }
}

#[test]
fn special_values() {
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    assert_eq!((erf(inf), erf(-inf), erfc(inf), erfc(-inf)), (1.0, -1.0, 0.0, 2.0));
    assert_eq!((erfinv(1.0), erfinv(-1.0)), (inf, -inf));
    assert_eq!((erfcinv(0.0), erfcinv(2.0), erfcinv(1.0)), (inf, -inf, 0.0));
    assert_eq!((normcdf(-inf), normcdf(inf), normcdf(0.0)), (0.0, 1.0, 0.5));
    assert_eq!((normcdfinv(0.0), normcdfinv(1.0), normcdfinv(0.5)), (-inf, inf, 0.0));
    // Zeros keep their sign, as CUDA's do.
    assert!(erfinv(-0.0f64) == 0.0 && erfinv(-0.0f64).is_sign_negative());
    assert!(erf(-0.0f64).is_sign_negative());
    for x in [1.0 + f64::EPSILON, -1.0 - f64::EPSILON, 5.0, -inf, inf, nan] {
        assert!(erfinv(x).is_nan(), "erfinv({x})");
    }
    for y in [-f64::from_bits(1), -1.0, 2.0 + 2.0 * f64::EPSILON, inf, -inf, nan] {
        assert!(erfcinv(y).is_nan(), "erfcinv({y})");
    }
    for p in [-1e-300, 1.0 + f64::EPSILON, nan] {
        assert!(normcdfinv(p).is_nan(), "normcdfinv({p})");
    }
    assert!(erf(nan).is_nan() && erfc(nan).is_nan() && normcdf(nan).is_nan());
}

/// A reproducible stream of uniform numbers in [0, 1).
fn uniforms(seed: u64) -> impl FnMut() -> f64 {
    let mut s = seed;
    move || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (s >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[test]
fn round_trips() {
    let mut u = uniforms(7);
    let eps = f64::EPSILON;
    for _ in 0..20_000 {
        // erfc(erfcinv(y)) = y, for y from 1e-320 to 2: a relative error e of z is one of about
        // (1 + 2 z^2) e in erfc(z).
        let y = if u() < 0.5 { 10f64.powf(-320.0 * u()) } else { 2.0 * u() };
        let z = erfcinv(y);
        let back = erfc(z);
        let tol = if y < f64::MIN_POSITIVE { 2e-3 } else { 8.0 * eps * (1.0 + 2.0 * z * z) };
        assert!(((back - y) / y).abs() <= tol, "erfc(erfcinv({y:e})) = {back:e} (z = {z})");
        // erf(erfinv(x)) = x, and erfinv(erfc's complement) agrees with erfcinv.
        let x = 2.0 * u() - 1.0;
        let z = erfinv(x);
        assert!((erf(z) - x).abs() <= 8.0 * eps * x.abs().max(1e-300) * (1.0 + 2.0 * z * z), "erf(erfinv({x:e}))");
        assert!(ulps(erfcinv(1.0 - x), z) <= 4.0, "erfcinv(1 - {x:e}) = {}, erfinv {z}", erfcinv(1.0 - x));
        // normcdf(normcdfinv(p)) = p.
        let p = u();
        let q = normcdfinv(p);
        let tol = 8.0 * eps * (1.0 + q * q);
        assert!(((normcdf(q) - p) / p).abs() <= tol, "normcdf(normcdfinv({p:e})) = {:e}", normcdf(q));
    }
}

#[test]
fn narrow_types_round_once_from_f64() {
    // NaN (erfcinv and normcdfinv of -0.3) compares by its bits.
    let same = |a: f32, b: f64| assert_eq!(a.to_bits(), (b as f32).to_bits(), "{a} against {b}");
    for x in [0.5, -0.3, 0.999, 0.001] {
        let w = (x as f32) as f64;
        same(erf(x as f32), erf(w));
        same(erfc(x as f32), erfc(w));
        same(erfinv(x as f32), erfinv(w));
        same(erfcinv(x as f32), erfcinv(w));
        same(normcdf(x as f32), normcdf(w));
        same(normcdfinv(x as f32), normcdfinv(w));
        let h = f16::from_f64(x);
        assert_eq!(erfinv(h), f16::from_f64(erfinv(h.to_f64())));
        let b = bf16::from_f64(x);
        assert_eq!(erfc(b), bf16::from_f64(erfc(b.to_f64())));
    }
    assert_eq!(erf(0.5f32), 0.5204999f32);
    assert_eq!(erfcinv(f32::from_bits(1)), erfcinv(f32::from_bits(1) as f64) as f32);
    assert!(erfinv(f16::ONE).is_infinite());
}
