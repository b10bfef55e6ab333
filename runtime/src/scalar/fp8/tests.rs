//! Exhaustive checks of the 8-bit floats against a reference written independently: every code
//! decoded from its fields with `f64::powi`, every conversion found by searching the sorted
//! finite values for the nearest one (ties to the even code), saturating at the largest.

use super::*;

/// One format as the reference sees it: field widths only.
#[derive(Clone, Copy)]
struct Spec {
    mant_bits: i32,
    bias: i32,
    /// e4m3fn: only `S.1111.111` is NaN, no infinities; e5m2: IEEE.
    fn_style: bool,
}

const SPEC_E4M3: Spec = Spec {
    mant_bits: 3,
    bias: 7,
    fn_style: true,
};
const SPEC_E5M2: Spec = Spec {
    mant_bits: 2,
    bias: 15,
    fn_style: false,
};

/// The value of `code` from its fields.
fn decode(code: u8, s: Spec) -> f64 {
    let sign = if code & 0x80 != 0 { -1.0 } else { 1.0 };
    let e = i32::from((code & 0x7f) >> s.mant_bits);
    let m = f64::from(code & ((1 << s.mant_bits) - 1));
    let max_e = (1 << (7 - s.mant_bits)) - 1;
    if s.fn_style && code & 0x7f == 0x7f {
        return f64::NAN;
    }
    if !s.fn_style && e == max_e {
        return if m == 0.0 { sign * f64::INFINITY } else { f64::NAN };
    }
    let scale = 2f64.powi(s.mant_bits);
    if e == 0 {
        sign * m / scale * 2f64.powi(1 - s.bias)
    } else {
        sign * (1.0 + m / scale) * 2f64.powi(e - s.bias)
    }
}

/// The finite non-negative values, by code (codes `0..=max`).
fn finite_positive(s: Spec) -> Vec<f64> {
    (0u8..0x80).map(|c| decode(c, s)).take_while(|v| v.is_finite()).collect()
}

/// The code the conversion rule gives for `x` (`None` for NaN: any NaN code is right).
fn reference(x: f64, s: Spec) -> Option<u8> {
    if x.is_nan() {
        return None;
    }
    let values = finite_positive(s);
    let sign = if x.is_sign_negative() { 0x80u8 } else { 0 };
    let mag = x.abs();
    let last = values.len() - 1;
    let code = if mag >= values[last] {
        last
    } else {
        let c = values.iter().rposition(|&v| v <= mag).unwrap();
        let (lo, hi) = (mag - values[c], values[c + 1] - mag);
        if lo < hi || (lo == hi && c % 2 == 0) { c } else { c + 1 }
    };
    Some(code as u8 | sign)
}

fn check(x: f64, s: Spec, got: u8, what: &str) {
    match reference(x, s) {
        Some(want) => assert_eq!(got, want, "{what}: {x:e} ({:#018x}) gave {got:#04x}, want {want:#04x}", x.to_bits()),
        None => assert!(decode(got, s).is_nan(), "{what}: NaN gave {got:#04x}, not a NaN"),
    }
}

#[test]
fn every_code_decodes_to_its_value_and_back() {
    for code in 0..=255u8 {
        for (s, got, back) in [
            (
                SPEC_E4M3,
                f8e4m3::from_bits(code).to_f64(),
                f8e4m3::from_f64(f8e4m3::from_bits(code).to_f64()).to_bits(),
            ),
            (
                SPEC_E5M2,
                f8e5m2::from_bits(code).to_f64(),
                f8e5m2::from_f64(f8e5m2::from_bits(code).to_f64()).to_bits(),
            ),
        ] {
            let want = decode(code, s);
            if want.is_nan() {
                assert!(got.is_nan(), "code {code:#04x} should be NaN, got {got}");
                assert!(decode(back, s).is_nan());
                continue;
            }
            assert_eq!(got.to_bits(), want.to_bits(), "code {code:#04x}");
            if want.is_infinite() {
                // Saturating: an infinity converts to the largest finite value of its sign.
                assert_eq!(back, 0x7b | (code & 0x80), "code {code:#04x}");
            } else {
                assert_eq!(back, code, "code {code:#04x} does not round-trip");
            }
        }
        // Through every wider type: exact both ways.
        let a = f8e4m3::from_bits(code);
        let b = f8e5m2::from_bits(code);
        if !a.is_nan() {
            assert_eq!(f8e4m3::from_f32(a.to_f32()).to_bits(), code);
            assert_eq!(f8e4m3::from_f16(a.to_f16()).to_bits(), code);
            assert_eq!(f8e4m3::from_bf16(a.to_bf16()).to_bits(), code);
            assert_eq!(a.to_f16().to_f64(), a.to_f64());
            assert_eq!(a.to_bf16().to_f64(), a.to_f64());
        }
        if b.to_f64().is_finite() {
            assert_eq!(f8e5m2::from_f32(b.to_f32()).to_bits(), code);
            assert_eq!(f8e5m2::from_f16(b.to_f16()).to_bits(), code);
            assert_eq!(f8e5m2::from_bf16(b.to_bf16()).to_bits(), code);
            // e5m2 is the top byte of f16.
            assert_eq!(b.to_f16().to_bits(), u16::from(code) << 8);
        }
    }
}

#[test]
fn nan_codes_and_widened_nan() {
    let e4m3_nans: Vec<u8> = (0..=255u8).filter(|&c| f8e4m3::from_bits(c).is_nan()).collect();
    assert_eq!(e4m3_nans, [0x7f, 0xff]);
    let e5m2_nans: Vec<u8> = (0..=255u8).filter(|&c| f8e5m2::from_bits(c).is_nan()).collect();
    assert_eq!(e5m2_nans, [0x7d, 0x7e, 0x7f, 0xfd, 0xfe, 0xff]);
    for c in e4m3_nans {
        assert_eq!(f8e4m3::from_bits(c).to_f32().to_bits(), 0x7fff_e000);
    }
    for c in e5m2_nans {
        assert_eq!(f8e5m2::from_bits(c).to_f32().to_bits(), 0x7fff_e000);
    }
    // NaN in: CUDA's codes, sign kept.
    assert_eq!(f8e4m3::from_f32(f32::NAN).to_bits(), 0x7f);
    assert_eq!(f8e4m3::from_f32(-f32::NAN).to_bits(), 0xff);
    assert_eq!(f8e5m2::from_f32(f32::NAN).to_bits(), 0x7e);
    assert_eq!(f8e5m2::from_f32(-f32::NAN).to_bits(), 0xfe);
    assert_eq!(f8e5m2::from_f64(f64::from_bits(0x7ff4_0000_0000_0000)).to_bits(), 0x7f);
    assert!(f8e4m3::NAN.is_nan() && f8e5m2::NAN.is_nan());
    assert!(f8e4m3::NAN != f8e4m3::NAN);
}

#[test]
fn constants() {
    assert_eq!(f8e4m3::MAX.to_f32(), 448.0);
    assert_eq!(f8e4m3::MIN.to_f32(), -448.0);
    assert_eq!(f8e5m2::MAX.to_f32(), 57344.0);
    assert_eq!(f8e5m2::MIN.to_f32(), -57344.0);
    assert_eq!(f8e4m3::MIN_POSITIVE.to_f32(), 2f32.powi(-6));
    assert_eq!(f8e5m2::MIN_POSITIVE.to_f32(), 2f32.powi(-14));
    assert_eq!(f8e4m3::EPSILON.to_f32(), 0.125);
    assert_eq!(f8e5m2::EPSILON.to_f32(), 0.25);
    assert_eq!(f8e4m3::ONE.to_f32(), 1.0);
    assert_eq!(f8e5m2::ONE.to_f32(), 1.0);
    assert_eq!(f8e5m2::INFINITY.to_f32(), f32::INFINITY);
    assert_eq!(f8e5m2::NEG_INFINITY.to_f32(), f32::NEG_INFINITY);
    assert_eq!(f8e4m3::INFINITY, f8e4m3::MAX);
    assert_eq!(f8e4m3::from_bits(1).to_f32(), 2f32.powi(-9));
    assert_eq!(f8e5m2::from_bits(1).to_f32(), 2f32.powi(-16));
}

/// Every adjacent pair of finite values: the midpoint ties to the even code, and one `f32` step
/// either side goes to the nearer value; the same negated.
#[test]
fn midpoints_round_to_nearest_even() {
    for s in [SPEC_E4M3, SPEC_E5M2] {
        let values = finite_positive(s);
        for pair in values.windows(2) {
            let mid = (pair[0] + pair[1]) / 2.0;
            let mid32 = mid as f32;
            assert_eq!(f64::from(mid32), mid, "midpoints are f32 values");
            for x in [mid32, f32::from_bits(mid32.to_bits() - 1), f32::from_bits(mid32.to_bits() + 1)] {
                for x in [x, -x] {
                    let (a, b) = if s.mant_bits == 3 {
                        (f8e4m3::from_f32(x).to_bits(), f8e4m3::from_f64(f64::from(x)).to_bits())
                    } else {
                        (f8e5m2::from_f32(x).to_bits(), f8e5m2::from_f64(f64::from(x)).to_bits())
                    };
                    check(f64::from(x), s, a, "from_f32");
                    check(f64::from(x), s, b, "from_f64");
                }
            }
        }
    }
}

#[test]
fn overflow_saturates_to_the_largest_finite_value() {
    for (x, want) in [
        (448.0, 0x7e),
        (464.0, 0x7e), // the midpoint to the next (missing) step: the even code 0x7e
        (464.0001, 0x7e),
        (1e30, 0x7e),
        (f64::MAX, 0x7e),
        (f64::INFINITY, 0x7e),
        (f64::NEG_INFINITY, 0xfe),
        (-500.0, 0xfe),
    ] {
        assert_eq!(f8e4m3::from_f64(x).to_bits(), want, "e4m3 of {x}");
        assert_eq!(f8e4m3::from_f32(x as f32).to_bits(), want, "e4m3 of {x} as f32");
    }
    for (x, want) in [
        (57344.0, 0x7b),
        (61439.0, 0x7b),
        (61440.0, 0x7b), // the midpoint to infinity rounds up, then saturates
        (1e10, 0x7b),
        (f64::INFINITY, 0x7b),
        (f64::NEG_INFINITY, 0xfb),
        (-65536.0, 0xfb),
    ] {
        assert_eq!(f8e5m2::from_f64(x).to_bits(), want, "e5m2 of {x}");
        assert_eq!(f8e5m2::from_f32(x as f32).to_bits(), want, "e5m2 of {x} as f32");
    }
    assert_eq!(f8e4m3::from_f16(f16::INFINITY).to_bits(), 0x7e);
    assert_eq!(f8e5m2::from_bf16(bf16::NEG_INFINITY).to_bits(), 0xfb);
}

#[test]
fn subnormals_zeros_and_underflow() {
    // Half the smallest subnormal ties to zero (even); just above, to the smallest subnormal.
    let sub = 2f64.powi(-9);
    assert_eq!(f8e4m3::from_f64(sub / 2.0).to_bits(), 0);
    assert_eq!(f8e4m3::from_f64(-sub / 2.0).to_bits(), 0x80);
    assert_eq!(f8e4m3::from_f64(sub / 2.0 * (1.0 + f64::EPSILON)).to_bits(), 1);
    assert_eq!(f8e4m3::from_f64(sub * 1.5).to_bits(), 2, "1.5 ulp ties to the even code 2");
    assert_eq!(f8e4m3::from_f64(sub * 2.5).to_bits(), 2);
    assert_eq!(f8e5m2::from_f64(2f64.powi(-17)).to_bits(), 0);
    assert_eq!(f8e5m2::from_f64(2f64.powi(-17) * (1.0 + f64::EPSILON)).to_bits(), 1);
    assert_eq!(f8e5m2::from_f64(-3.0 * 2f64.powi(-17)).to_bits(), 0x82);
    // f32 subnormals and the smallest f64 vanish to zeros of their sign.
    for x in [f32::from_bits(1), f32::from_bits(0x007f_ffff), f32::MIN_POSITIVE] {
        assert_eq!(f8e4m3::from_f32(x).to_bits(), 0);
        assert_eq!(f8e4m3::from_f32(-x).to_bits(), 0x80);
        assert_eq!(f8e5m2::from_f32(x).to_bits(), 0);
        assert_eq!(f8e5m2::from_f32(-x).to_bits(), 0x80);
    }
    assert_eq!(f8e4m3::from_f64(f64::from_bits(1)).to_bits(), 0);
    // -0.0 stays -0.0 both ways.
    assert_eq!(f8e4m3::from_f32(-0.0).to_bits(), 0x80);
    assert_eq!(f8e5m2::from_f32(-0.0).to_bits(), 0x80);
    assert_eq!(f8e4m3::from_bits(0x80).to_f32().to_bits(), (-0.0f32).to_bits());
    assert_eq!(f8e5m2::from_bits(0x80).to_f32().to_bits(), (-0.0f32).to_bits());
    assert_eq!(f8e4m3::NEG_ZERO, f8e4m3::ZERO);
}

/// Every `f16` and every `bf16` (all their midpoints to both formats included) against the
/// reference.
#[test]
fn every_f16_and_bf16_converts_by_the_rule() {
    for bits in 0..=u16::MAX {
        let h = f16::from_bits(bits);
        check(h.to_f64(), SPEC_E4M3, f8e4m3::from_f16(h).to_bits(), "e4m3 from f16");
        check(h.to_f64(), SPEC_E5M2, f8e5m2::from_f16(h).to_bits(), "e5m2 from f16");
        let b = bf16::from_bits(bits);
        check(b.to_f64(), SPEC_E4M3, f8e4m3::from_bf16(b).to_bits(), "e4m3 from bf16");
        check(b.to_f64(), SPEC_E5M2, f8e5m2::from_bf16(b).to_bits(), "e5m2 from bf16");
    }
}

/// A strided sweep over `f32` bit patterns (every 4099th, both signs) against the reference.
#[test]
fn sampled_f32_convert_by_the_rule() {
    let mut bits = 0u32;
    while bits < 0x8000_0000 {
        for x in [f32::from_bits(bits), -f32::from_bits(bits)] {
            check(f64::from(x), SPEC_E4M3, f8e4m3::from_f32(x).to_bits(), "e4m3 from f32");
            check(f64::from(x), SPEC_E5M2, f8e5m2::from_f32(x).to_bits(), "e5m2 from f32");
        }
        bits += 4099;
    }
}

#[test]
fn arithmetic_and_ordering_go_through_f32() {
    let a = f8e4m3::from_f32(1.5);
    let b = f8e4m3::from_f32(0.25);
    assert_eq!((a + b).to_f32(), 1.75);
    assert_eq!((a * a).to_f32(), 2.25);
    assert_eq!((a / b).to_f32(), 6.0);
    // 1 + 1/16 is the midpoint of 1 and 1.125: ties to even (1.0).
    assert_eq!((f8e4m3::ONE + f8e4m3::from_f32(0.0625)).to_f32(), 1.0);
    assert_eq!((f8e4m3::MAX + f8e4m3::MAX).to_bits(), 0x7e, "saturates");
    assert_eq!((f8e5m2::MAX * f8e5m2::MAX).to_bits(), 0x7b, "saturates");
    assert_eq!((-a).to_bits(), a.to_bits() | 0x80);
    let mut c = a;
    c -= b;
    assert_eq!(c.to_f32(), 1.25);
    assert!(b < a && f8e4m3::MIN < b && f8e4m3::NEG_ZERO == f8e4m3::ZERO);
    assert!(f8e5m2::NEG_INFINITY < f8e5m2::MIN);
    assert_eq!(format!("{a} {:?}", f8e5m2::from_f32(-3.0)), "1.5 -3.0");
}
