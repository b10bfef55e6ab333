//! docs/semantics.md, executed: each kernel of `semantics_kernels.rs` runs on the GPU (translated
//! by cuprum's compiler, JIT-compiled by NVRTC) and must equal the same Rust function run on the
//! host, element by element, on fresh random inputs mixed with edge values, with the outputs
//! poisoned before the launch. Host references assume release semantics (overflow wraps): run
//! with `--release` (the GPU machine's runner does), the tests refuse to run otherwise.

#[path = "../../runtime/tests/support/mod.rs"]
mod support;
use support::Rng;

mod semantics_kernels;

use std::sync::OnceLock;

use cuprum::runtime::{Array, LaunchConfig, SliceArg, RawKernel, RawModule, Scalar};
use half::f16;
use semantics_kernels as host;

const SOURCE: &str = include_str!("semantics_kernels.rs");

fn arg<T: Scalar>(a: &Array<T>) -> SliceArg {
    SliceArg::of(a)
}

fn module() -> &'static RawModule {
    static M: OnceLock<RawModule> = OnceLock::new();
    M.get_or_init(|| {
        let c = cuprum_compiler::compile_source(SOURCE).unwrap_or_else(|e| panic!("translation failed: {e}"));
        RawModule::new(c.unit.source)
    })
}

fn kernel(name: &str) -> RawKernel {
    assert!(!cfg!(debug_assertions), "GPU semantics tests compare with release-build host code: run with --release");
    let sym = cuprum_compiler::mangle::kernel_symbol(cuprum_compiler::abi::KernelKind::RawKernel, name, None, &[]);
    module().get_function(&sym).unwrap_or_else(|e| panic!("{sym}: {e}"))
}


const N: usize = 4099;

fn cfg() -> LaunchConfig<'static> {
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

#[test]
#[ignore = "needs a CUDA GPU"]
fn integer_arithmetic_wraps() {
    let mut r = Rng::new();
    let a = ints(&mut r, &[i32::MAX, i32::MIN, -1, 0], |x| x as i32);
    let b = ints(&mut r, &[i32::MAX, -1, i32::MIN, 7], |x| (x >> 17) as i32);
    let (da, db, out) = (up(&a), up(&b), poisoned(0x5a5a5a5ai32));
    // SAFETY: arguments match `k_wrap_i32(&[i32], &[i32], &mut [i32])`.
    unsafe { kernel("k_wrap_i32").launch(&cfg(), (arg(&da), arg(&db), arg(&out))).unwrap() };
    let got = out.to_vec().unwrap();
    for i in 0..N {
        assert_eq!(got[i], host::wrap_i32(a[i], b[i]), "wrap_i32({}, {})", a[i], b[i]);
    }
    let a = ints(&mut r, &[i64::MAX, i64::MIN], |x| x as i64);
    let b = ints(&mut r, &[3, i64::MAX], |x| x as i64);
    let (da, db, out) = (up(&a), up(&b), poisoned(0x5a5ai64));
    // SAFETY: arguments match `k_wrap_i64`.
    unsafe { kernel("k_wrap_i64").launch(&cfg(), (arg(&da), arg(&db), arg(&out))).unwrap() };
    let got = out.to_vec().unwrap();
    for i in 0..N {
        assert_eq!(got[i], host::wrap_i64(a[i], b[i]), "wrap_i64({}, {})", a[i], b[i]);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn narrow_integers_do_not_promote() {
    let mut r = Rng::new();
    let a = ints(&mut r, &[255, 0, 128], |x| x as u8);
    let b = ints(&mut r, &[255, 255, 128], |x| (x >> 8) as u8);
    let c = ints(&mut r, &[-128, 127, -1], |x| x as i8);
    let d = ints(&mut r, &[-128, 127, -128], |x| (x >> 8) as i8);
    let (da, db, dc, dd) = (up(&a), up(&b), up(&c), up(&d));
    let (o1, o2) = (poisoned(0xa5u8), poisoned(0x5ai8));
    // SAFETY: arguments match `k_narrow`.
    unsafe { kernel("k_narrow").launch(&cfg(), (arg(&da), arg(&db), arg(&dc), arg(&dd), arg(&o1), arg(&o2))).unwrap() };
    let (g1, g2) = (o1.to_vec().unwrap(), o2.to_vec().unwrap());
    for i in 0..N {
        assert_eq!(g1[i], host::narrow_u8(a[i], b[i]), "narrow_u8({}, {})", a[i], b[i]);
        assert_eq!(g2[i], host::narrow_i8(c[i], d[i]), "narrow_i8({}, {})", c[i], d[i]);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn integer_division() {
    let mut r = Rng::new();
    let a = ints(&mut r, &[i32::MIN, 7, -7, 5], |x| x as i32);
    let b = ints(&mut r, &[-1, -2, 2, 0], |x| ((x >> 40) as i32) % 1000);
    let (da, db, out) = (up(&a), up(&b), poisoned(0x5a5ai32));
    // SAFETY: arguments match `k_divs`.
    unsafe { kernel("k_divs").launch(&cfg(), (arg(&da), arg(&db), arg(&out))).unwrap() };
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

#[test]
#[ignore = "needs a CUDA GPU"]
fn shifts_mask_the_amount() {
    let mut r = Rng::new();
    let a = ints(&mut r, &[-1, i32::MIN, 1], |x| x as i32);
    let s = ints(&mut r, &[31, 32, 33], |x| (x % 70) as u32);
    let b = ints(&mut r, &[255, 1, 128], |x| x as u8);
    let (da, ds, db) = (up(&a), up(&s), up(&b));
    let (o1, o2) = (poisoned(0x5a5ai32), poisoned(0xa5u8));
    // SAFETY: arguments match `k_shifts`.
    unsafe { kernel("k_shifts").launch(&cfg(), (arg(&da), arg(&ds), arg(&db), arg(&o1), arg(&o2))).unwrap() };
    let (g1, g2) = (o1.to_vec().unwrap(), o2.to_vec().unwrap());
    for i in 0..N {
        assert_eq!(g1[i], a[i].wrapping_shl(s[i]) ^ a[i].wrapping_shr(s[i]), "shifts({}, {})", a[i], s[i]);
        assert_eq!(g1[i], host::shifts(a[i], s[i]));
        assert_eq!(g2[i], host::shifts_u8(b[i], s[i]), "shifts_u8({}, {})", b[i], s[i]);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn float_to_int_casts_saturate() {
    int_casts();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn int_casts() {
    let mut r = Rng::new();
    let x = ints(&mut r, &[f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 3e9, -3e9, -0.9, 2147483520.0], |v| {
        ((v as i64 >> 20) as f32) * 0.37
    });
    let y = ints(&mut r, &[f64::NAN, 255.9, 256.0, -1.0, 1e300], |v| ((v >> 40) as f64) * 0.013 - 100.0);
    let a = ints(&mut r, &[i64::MAX, i64::MIN, 255, -1], |v| v as i64);
    let (dx, dy, da) = (up(&x), up(&y), up(&a));
    let (o1, o2, o3) = (poisoned(0x5a5ai32), poisoned(0xa5u8), poisoned(0x5a5ai32));
    // SAFETY: arguments match `k_casts`.
    unsafe { kernel("k_casts").launch(&cfg(), (arg(&dx), arg(&dy), arg(&da), arg(&o1), arg(&o2), arg(&o3))).unwrap() };
    let (g1, g2, g3) = (o1.to_vec().unwrap(), o2.to_vec().unwrap(), o3.to_vec().unwrap());
    for i in 0..N {
        assert_eq!(g1[i], host::f2i(x[i]), "{} as i32", x[i]);
        assert_eq!(g2[i], host::f2u8(y[i]), "{} as u8", y[i]);
        assert_eq!(g3[i], host::icasts(a[i]), "icasts({})", a[i]);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn half_arithmetic() {
    let mut r = Rng::new();
    let mk = |v: u64| f16::from_f32(((v >> 40) as f32) / 1e5 - 80.0);
    let a = ints(&mut r, &[f16::from_f32(65504.0), f16::from_f32(1e-7)], mk);
    let b = ints(&mut r, &[f16::from_f32(2.0), f16::from_f32(3.0)], mk);
    let (da, db, out) = (up(&a), up(&b), poisoned(f16::from_f32(-12345.0)));
    // SAFETY: arguments match `k_half`.
    unsafe { kernel("k_half").launch(&cfg(), (arg(&da), arg(&db), arg(&out))).unwrap() };
    let got = out.to_vec().unwrap();
    for i in 0..N {
        let want = host::half_ops(a[i], b[i]);
        assert!(got[i] == want || (got[i].is_nan() && want.is_nan()), "half_ops({}, {}) = {} want {}", a[i], b[i], got[i], want);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn float_methods() {
    let mut r = Rng::new();
    let mk = |v: u64| ((v >> 40) as f32) / 1e5 - 80.0;
    let x = ints(&mut r, &[f32::NAN, 0.0, -0.0, 2.5, -2.5, 0.5], mk);
    let y = ints(&mut r, &[1.0, f32::NAN, 1.0, 1.0, 1.0, 1.0], mk);
    let (dx, dy, out) = (up(&x), up(&y), poisoned(-12345.0f32));
    // SAFETY: arguments match `k_float_methods`.
    unsafe { kernel("k_float_methods").launch(&cfg(), (arg(&dx), arg(&dy), arg(&out))).unwrap() };
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

#[test]
#[ignore = "needs a CUDA GPU"]
fn range_loops_at_type_limits() {
    labelled_loops();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn labelled_loops() {
    let mut r = Rng::new();
    let lo = ints(&mut r, &[0, 255, 250, 10], |v| v as u8);
    let hi = ints(&mut r, &[255, 255, 249, 10], |v| (v >> 8) as u8);
    let s = ints(&mut r, &[1, 2, 7, 1000], |v| (v % 9) as u32 + 1);
    let (dl, dh, ds) = (up(&lo), up(&hi), up(&s));
    let (o1, o2, o3) = (poisoned(0xa5a5u32), poisoned(0x5a5ai32), poisoned(0xa5a5u32));
    // SAFETY: arguments match `k_loops`.
    unsafe { kernel("k_loops").launch(&cfg(), (arg(&dl), arg(&dh), arg(&ds), arg(&o1), arg(&o2), arg(&o3))).unwrap() };
    let (g1, g2, g3) = (o1.to_vec().unwrap(), o2.to_vec().unwrap(), o3.to_vec().unwrap());
    for i in 0..N {
        assert_eq!(g1[i], host::range_incl(lo[i], hi[i]), "range_incl({}, {})", lo[i], hi[i]);
        assert_eq!(g2[i], host::rev_step(lo[i] as i32 - 100, hi[i] as i32, s[i]), "rev_step({}, {}, {})", lo[i], hi[i], s[i]);
        assert_eq!(g3[i], host::labelled(s[i] + 3), "labelled({})", s[i] + 3);
    }
}
