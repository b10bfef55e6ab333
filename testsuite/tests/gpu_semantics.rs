//! docs/semantics.md, executed: each kernel of `semantics_kernels.rs` runs on the CPU device (in
//! CI) and on the GPU (`on_both_devices!`; translated by cuprum's compiler, compiled by nvcc) and
//! must equal the same Rust function run on the host, element by element, on fresh random inputs
//! mixed with edge values, with the outputs poisoned before the launch. The host references
//! assume release semantics (overflow wraps): the testsuite is built without overflow checks in
//! every profile (the workspace's `Cargo.toml`), and the tests refuse to run otherwise. On the CPU
//! device the kernels' host code computes the GPU's arithmetic in every profile (docs/cpu.md).

#[path = "../../runtime/tests/support/mod.rs"]
mod support;
use support::Rng;

mod semantics_kernels;

use cuprum::runtime::{Array, LaunchConfig, Scalar};
use half::f16;
use semantics_kernels as host;

on_both_devices!(
    cuprum::runtime::Device;
    integer_arithmetic_wraps,
    narrow_integers_do_not_promote,
    integer_division,
    shifts_mask_the_amount,
    float_to_int_casts_saturate,
    int_casts,
    half_arithmetic,
    half_conversions,
    float_methods,
    range_loops_at_type_limits,
    labelled_loops
);

/// Whether this build's integer overflow wraps (the references' release semantics).
fn overflow_wraps() -> bool {
    std::panic::catch_unwind(|| std::hint::black_box(i32::MAX) + std::hint::black_box(1)).is_ok()
}

const N: usize = 4099;

fn cfg() -> LaunchConfig<'static> {
    assert!(overflow_wraps(), "the semantics tests compare with host code in release semantics: build the testsuite without overflow checks");
    LaunchConfig::for_elements(N, 128)
}

fn up<T: Scalar>(v: &[T]) -> Array<T> {
    Array::from_slice(v).unwrap()
}

fn poisoned<T: Scalar>(v: T) -> Array<T> {
    Array::from_vec(vec![v; N]).unwrap()
}

fn ints<T>(rng: &mut Rng, edges: &[T], f: impl Fn(u64) -> T) -> Vec<T>
where
    T: Copy,
{
    (0..N).map(|i| if i < edges.len() { edges[i] } else { f(rng.next()) }).collect()
}

fn integer_arithmetic_wraps() {
    let mut r = Rng::new();
    let a = ints(&mut r, &[i32::MAX, i32::MIN, -1, 0], |x| x as i32);
    let b = ints(&mut r, &[i32::MAX, -1, i32::MIN, 7], |x| (x >> 17) as i32);
    let (da, db, mut out) = (up(&a), up(&b), poisoned(0x5a5a5a5ai32));
    host::k_wrap_i32::launch(&cfg(), &da, &db, &mut out).unwrap();
    let got = out.to_vec().unwrap();
    for i in 0..N {
        assert_eq!(got[i], host::wrap_i32(a[i], b[i]), "wrap_i32({}, {})", a[i], b[i]);
    }
    let a = ints(&mut r, &[i64::MAX, i64::MIN], |x| x as i64);
    let b = ints(&mut r, &[3, i64::MAX], |x| x as i64);
    let (da, db, mut out) = (up(&a), up(&b), poisoned(0x5a5ai64));
    host::k_wrap_i64::launch(&cfg(), &da, &db, &mut out).unwrap();
    let got = out.to_vec().unwrap();
    for i in 0..N {
        assert_eq!(got[i], host::wrap_i64(a[i], b[i]), "wrap_i64({}, {})", a[i], b[i]);
    }
}

fn narrow_integers_do_not_promote() {
    let mut r = Rng::new();
    let a = ints(&mut r, &[255, 0, 128], |x| x as u8);
    let b = ints(&mut r, &[255, 255, 128], |x| (x >> 8) as u8);
    let c = ints(&mut r, &[-128, 127, -1], |x| x as i8);
    let d = ints(&mut r, &[-128, 127, -128], |x| (x >> 8) as i8);
    let (da, db, dc, dd) = (up(&a), up(&b), up(&c), up(&d));
    let (mut o1, mut o2) = (poisoned(0xa5u8), poisoned(0x5ai8));
    host::k_narrow::launch(&cfg(), &da, &db, &dc, &dd, &mut o1, &mut o2).unwrap();
    let (g1, g2) = (o1.to_vec().unwrap(), o2.to_vec().unwrap());
    for i in 0..N {
        assert_eq!(g1[i], host::narrow_u8(a[i], b[i]), "narrow_u8({}, {})", a[i], b[i]);
        assert_eq!(g2[i], host::narrow_i8(c[i], d[i]), "narrow_i8({}, {})", c[i], d[i]);
    }
}

fn integer_division() {
    let mut r = Rng::new();
    let a = ints(&mut r, &[i32::MIN, 7, -7, 5], |x| x as i32);
    let b = ints(&mut r, &[-1, -2, 2, 0], |x| ((x >> 40) as i32) % 1000);
    let (da, db, mut out) = (up(&a), up(&b), poisoned(0x5a5ai32));
    host::k_divs::launch(&cfg(), &da, &db, &mut out).unwrap();
    let got = out.to_vec().unwrap();
    for i in 0..N {
        // Division by zero gives 0 on the GPU (Rust panics); MIN / -1 wraps.
        let want = if b[i] == 0 { 0 } else { a[i].wrapping_div(b[i]).wrapping_add(a[i].wrapping_rem(b[i])) };
        assert_eq!(got[i], want, "divs({}, {})", a[i], b[i]);
        if b[i] != 0 && !(a[i] == i32::MIN && b[i] == -1) {
            assert_eq!(got[i], host::divs(a[i], b[i]));
        }
    }
}

fn shifts_mask_the_amount() {
    let mut r = Rng::new();
    let a = ints(&mut r, &[-1, i32::MIN, 1], |x| x as i32);
    let s = ints(&mut r, &[31, 32, 33], |x| (x % 70) as u32);
    let b = ints(&mut r, &[255, 1, 128], |x| x as u8);
    let (da, ds, db) = (up(&a), up(&s), up(&b));
    let (mut o1, mut o2) = (poisoned(0x5a5ai32), poisoned(0xa5u8));
    host::k_shifts::launch(&cfg(), &da, &ds, &db, &mut o1, &mut o2).unwrap();
    let (g1, g2) = (o1.to_vec().unwrap(), o2.to_vec().unwrap());
    for i in 0..N {
        assert_eq!(g1[i], a[i].wrapping_shl(s[i]) ^ a[i].wrapping_shr(s[i]), "shifts({}, {})", a[i], s[i]);
        assert_eq!(g1[i], host::shifts(a[i], s[i]));
        assert_eq!(g2[i], host::shifts_u8(b[i], s[i]), "shifts_u8({}, {})", b[i], s[i]);
    }
}

fn float_to_int_casts_saturate() {
    int_casts();
}

fn int_casts() {
    let mut r = Rng::new();
    let x = ints(&mut r, &[f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 3e9, -3e9, -0.9, 2147483520.0], |v| {
        ((v as i64 >> 20) as f32) * 0.37
    });
    let y = ints(&mut r, &[f64::NAN, 255.9, 256.0, -1.0, 1e300], |v| ((v >> 40) as f64) * 0.013 - 100.0);
    let a = ints(&mut r, &[i64::MAX, i64::MIN, 255, -1], |v| v as i64);
    let (dx, dy, da) = (up(&x), up(&y), up(&a));
    let (mut o1, mut o2, mut o3) = (poisoned(0x5a5ai32), poisoned(0xa5u8), poisoned(0x5a5ai32));
    host::k_casts::launch(&cfg(), &dx, &dy, &da, &mut o1, &mut o2, &mut o3).unwrap();
    let (g1, g2, g3) = (o1.to_vec().unwrap(), o2.to_vec().unwrap(), o3.to_vec().unwrap());
    for i in 0..N {
        assert_eq!(g1[i], host::f2i(x[i]), "{} as i32", x[i]);
        assert_eq!(g2[i], host::f2u8(y[i]), "{} as u8", y[i]);
        assert_eq!(g3[i], host::icasts(a[i]), "icasts({})", a[i]);
    }
}

fn half_arithmetic() {
    let mut r = Rng::new();
    let mk = |v: u64| f16::from_f32(((v >> 40) as f32) / 1e5 - 80.0);
    let a = ints(&mut r, &[f16::from_f32(65504.0), f16::from_f32(1e-7)], mk);
    let b = ints(&mut r, &[f16::from_f32(2.0), f16::from_f32(3.0)], mk);
    let (da, db, mut out) = (up(&a), up(&b), poisoned(f16::from_f32(-12345.0)));
    host::k_half::launch(&cfg(), &da, &db, &mut out).unwrap();
    let got = out.to_vec().unwrap();
    for i in 0..N {
        let want = host::half_ops(a[i], b[i]);
        assert!(got[i] == want || (got[i].is_nan() && want.is_nan()), "half_ops({}, {}) = {} want {}", a[i], b[i], got[i], want);
    }
}

/// `bf16::from_f32` (on the GPU the conversion instruction, NaNs through the bit arithmetic so
/// that they keep their sign and payload), `f16::from_f32` / `from_f64` (a NaN only as a NaN)
/// and `from_f32_pair` of both 16-bit types (every NaN the NaN 0x7fff) give the host's bits:
/// random values around 1 (ties, by the low bits), huge and tiny values (overflow, subnormals),
/// and NaNs of both signs and several payloads.
fn half_conversions() {
    let mut r = Rng::new();
    let mk = |v: u64| f32::from_bits(match v % 4 {
        0 => 0x3f80_0000 | (v >> 40) as u32 & 0xffff,
        1 => (v >> 32) as u32,
        2 => (v >> 41) as u32,
        _ => 0x4780_0000 ^ ((v >> 44) as u32 & 0x00ff_ffff),
    });
    let edges = [
        f32::NAN, -f32::NAN, f32::from_bits(0x7fa1_2345), f32::from_bits(0xffb5_4321), f32::from_bits(0x7f80_0001), f32::INFINITY, f32::NEG_INFINITY,
        0.0, -0.0, 1.0 + 1.0 / 256.0, 1.0 + 3.0 / 256.0, f32::MAX, 65520.0, 1e-40, -1e-45, f32::from_bits(0x0000_8000),
    ];
    let x = ints(&mut r, &edges, mk);
    let mut y = ints(&mut r, &edges, mk);
    y.rotate_left(3);
    let (dx, dy, mut out, mut out_f16) = (up(&x), up(&y), poisoned(0xa5a5_a5a5_a5a5_a5a5u64), poisoned(0xa5a5_a5a5_a5a5_a5a5u64));
    host::k_half_conversions::launch(&cfg(), &dx, &dy, &mut out, &mut out_f16).unwrap();
    let (got, got_f16) = (out.to_vec().unwrap(), out_f16.to_vec().unwrap());
    let on_cpu = cuprum::runtime::Device::current().unwrap().is_cpu();
    for i in 0..N {
        let want = host::half_conversions(x[i], y[i]);
        assert_eq!(got[i], want, "half_conversions({:#010x}, {:#010x}): {:#018x} want {want:#018x}", x[i].to_bits(), y[i].to_bits(), got[i]);
        // `f16::from_f32` / `from_f64` (fields 0, 1, 3) give every NaN as 0x7fff on the GPU, the
        // host keeps its payload (docs/kernel-language.md): a NaN there is compared as a NaN.
        // Field 3 is `f16::from_f64` of an f64 made of both words: on the GPU one rounding, as
        // `Number::from_f64` rounds on the host (the `half` crate's `f16::from_f64`, which the
        // host code of the kernel calls, rounds through f32 on a CPU with F16C: last bits may
        // differ, docs/kernel-language.md).
        let bits = ((x[i].to_bits() as u64) << 32) | y[i].to_bits() as u64;
        let d = f64::from_bits(if x[i].is_nan() { bits | 0x7ff0_0000_0000_0000 } else { bits });
        let once = <f16 as cuprum::prelude::Number>::from_f64(d).to_bits() as u64;
        let host_f16 = host::half_conversions_f16(x[i], y[i]);
        let want = if on_cpu { host_f16 } else { (host_f16 & 0x0000_ffff_ffff_ffff) | (once << 48) };
        let field = |v: u64, k: u32| (v >> (16 * k)) as u16;
        let is_nan = |h: u16| h & 0x7fff > 0x7c00;
        for k in 0..4 {
            let (g, w) = (field(got_f16[i], k), field(want, k));
            let ok = g == w || (k != 2 && is_nan(g) && is_nan(w));
            assert!(ok, "half_conversions_f16({:#010x}, {:#010x}) field {k}: {g:#06x} want {w:#06x}", x[i].to_bits(), y[i].to_bits());
        }
    }
}

fn float_methods() {
    let mut r = Rng::new();
    let mk = |v: u64| ((v >> 40) as f32) / 1e5 - 80.0;
    let x = ints(&mut r, &[f32::NAN, 0.0, -0.0, 2.5, -2.5, 0.5], mk);
    let y = ints(&mut r, &[1.0, f32::NAN, 1.0, 1.0, 1.0, 1.0], mk);
    let (dx, dy, mut out) = (up(&x), up(&y), poisoned(-12345.0f32));
    host::k_float_methods::launch(&cfg(), &dx, &dy, &mut out).unwrap();
    let got = out.to_vec().unwrap();
    for i in 0..N {
        let want = host::float_methods(x[i], y[i]);
        // `powi` may round differently (Rust does not fix its sequence of roundings): compare
        // with a tolerance relative to the largest term, not to the (possibly cancelled) sum.
        let scale = x[i].abs().powi(3) + x[i].abs() + y[i].abs() + 5.0;
        let ok = (got[i].is_nan() && want.is_nan()) || got[i] == want || (got[i] - want).abs() <= 1e-6 * scale;
        assert!(ok, "float_methods({}, {}) = {} want {want}", x[i], y[i], got[i]);
    }
}

fn range_loops_at_type_limits() {
    labelled_loops();
}

fn labelled_loops() {
    let mut r = Rng::new();
    let lo = ints(&mut r, &[0, 255, 250, 10], |v| v as u8);
    let hi = ints(&mut r, &[255, 255, 249, 10], |v| (v >> 8) as u8);
    let s = ints(&mut r, &[1, 2, 7, 1000], |v| (v % 9) as u32 + 1);
    let (dl, dh, ds) = (up(&lo), up(&hi), up(&s));
    let (mut o1, mut o2, mut o3) = (poisoned(0xa5a5u32), poisoned(0x5a5ai32), poisoned(0xa5a5u32));
    host::k_loops::launch(&cfg(), &dl, &dh, &ds, &mut o1, &mut o2, &mut o3).unwrap();
    let (g1, g2, g3) = (o1.to_vec().unwrap(), o2.to_vec().unwrap(), o3.to_vec().unwrap());
    for i in 0..N {
        assert_eq!(g1[i], host::range_incl(lo[i], hi[i]), "range_incl({}, {})", lo[i], hi[i]);
        assert_eq!(g2[i], host::rev_step(lo[i] as i32 - 100, hi[i] as i32, s[i]), "rev_step({}, {}, {})", lo[i], hi[i], s[i]);
        assert_eq!(g3[i], host::labelled(s[i] + 3), "labelled({})", s[i] + 3);
    }
}
