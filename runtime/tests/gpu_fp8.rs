//! Arrays of the 8-bit floats `f8e4m3` and `f8e5m2` on each device: every code host -> device ->
//! host, creation, `astype` to and from every float type and integers against the host
//! definitions bit for bit (the conversion rule of `runtime/src/scalar/fp8.rs`: round to nearest
//! even, saturate to the largest finite value, NaN kept), arithmetic, views, and the clear error
//! of saving one to a `.npy` file. Each runs on the CPU device (in CI) and on CUDA device 0
//! (ignored without a GPU; run on a GPU machine with
//! `cargo test -p cuprum-runtime --test gpu_fp8 -- --include-ignored`).

mod support;
use support::Rng;

use cuprum_runtime::prelude::{f8e4m3, f8e5m2};
use cuprum_runtime::{Array, Error};
use half::{bf16, f16};

on_both_devices!(
    cuprum_runtime::Device;
    every_code_round_trips_and_creation,
    astype_from_wider_floats_matches_the_host_rule,
    astype_to_wider_floats_is_exact,
    astype_between_the_two_formats_and_from_integers,
    arithmetic_rounds_like_the_host,
    strided_views_and_empty_arrays_convert,
    saving_to_npy_is_a_clear_error,
    matrix_products_are_a_clear_error,
);

/// Random f32 values over the whole range the formats cover and past it, with the edge cases:
/// midpoints (ties), overflow, subnormals, zeros, NaN, infinities.
fn edge_and_random_f32(r: &mut Rng) -> Vec<f32> {
    let mut v: Vec<f32> = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        448.0,
        464.0,
        465.0,
        -480.0,
        57344.0,
        61440.0,
        61439.0,
        -1e9,
        1e30,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -f32::NAN,
        f32::MIN_POSITIVE,
        -f32::from_bits(1),
        // e4m3 subnormal ties: half the smallest (to 0), 1.5 and 2.5 of it (to even codes).
        2f32.powi(-10),
        1.5 * 2f32.powi(-9),
        2.5 * 2f32.powi(-9),
        1.0625,
        1.125 + 0.0625,
        // e5m2: half the smallest subnormal, a tie between 1 and 1.25.
        2f32.powi(-17),
        1.125,
        -1.375,
    ];
    for _ in 0..2000 {
        let mag = 2f64.powf(r.range(-20.0, 18.0));
        let x = if r.next() & 1 == 1 { -mag } else { mag };
        v.push(x as f32);
    }
    v
}

fn bits4(v: &[f8e4m3]) -> Vec<u8> {
    v.iter().map(|x| x.to_bits()).collect()
}
fn bits5(v: &[f8e5m2]) -> Vec<u8> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn every_code_round_trips_and_creation() {
    let codes: Vec<u8> = (0..=255).collect();
    let a4 = Array::from_vec(codes.iter().map(|&c| f8e4m3::from_bits(c)).collect()).unwrap();
    assert_eq!(bits4(&a4.to_vec().unwrap()), codes);
    let a5 = Array::from_shape_vec([16, 16], codes.iter().map(|&c| f8e5m2::from_bits(c)).collect()).unwrap();
    assert_eq!(bits5(&a5.to_vec().unwrap()), codes);
    assert_eq!(bits4(&Array::<f8e4m3>::zeros([3, 2]).unwrap().to_vec().unwrap()), vec![0; 6]);
    let full = Array::<f8e5m2>::full([5], f8e5m2::from_f32(-1.5)).unwrap();
    assert_eq!(bits5(&full.to_vec().unwrap()), vec![0xbe; 5]);
    let mut filled = Array::<f8e4m3>::zeros(7).unwrap();
    filled.fill(f8e4m3::MAX).unwrap();
    assert_eq!(bits4(&filled.to_vec().unwrap()), vec![0x7e; 7]);
    assert_eq!(Array::<f8e4m3>::zeros(4).unwrap().dtype(), cuprum_runtime::DType::F8E4M3);
}

fn astype_from_wider_floats_matches_the_host_rule() {
    let mut r = Rng::new();
    let xs = edge_and_random_f32(&mut r);
    let x32 = Array::from_vec(xs.clone()).unwrap();
    let want4: Vec<u8> = xs.iter().map(|&v| f8e4m3::from_f32(v).to_bits()).collect();
    let want5: Vec<u8> = xs.iter().map(|&v| f8e5m2::from_f32(v).to_bits()).collect();
    assert_eq!(bits4(&x32.astype::<f8e4m3>().unwrap().to_vec().unwrap()), want4, "f32 -> f8e4m3");
    assert_eq!(bits5(&x32.astype::<f8e5m2>().unwrap().to_vec().unwrap()), want5, "f32 -> f8e5m2");
    // f64: rounded once from the f64 (values between f32s included).
    let x64: Vec<f64> = xs.iter().map(|&v| f64::from(v) * (1.0 + 2f64.powi(-40))).collect();
    let got = Array::from_vec(x64.clone()).unwrap().astype::<f8e4m3>().unwrap().to_vec().unwrap();
    assert_eq!(
        bits4(&got),
        x64.iter().map(|&v| f8e4m3::from_f64(v).to_bits()).collect::<Vec<_>>(),
        "f64 -> f8e4m3"
    );
    let got = Array::from_vec(x64.clone()).unwrap().astype::<f8e5m2>().unwrap().to_vec().unwrap();
    assert_eq!(
        bits5(&got),
        x64.iter().map(|&v| f8e5m2::from_f64(v).to_bits()).collect::<Vec<_>>(),
        "f64 -> f8e5m2"
    );
    // f16 and bf16: every value of each (their midpoints to both formats included).
    let h: Vec<f16> = (0..=u16::MAX).map(f16::from_bits).collect();
    let got = Array::from_vec(h.clone()).unwrap().astype::<f8e4m3>().unwrap().to_vec().unwrap();
    assert_eq!(
        bits4(&got),
        h.iter().map(|&v| f8e4m3::from_f16(v).to_bits()).collect::<Vec<_>>(),
        "f16 -> f8e4m3"
    );
    let b: Vec<bf16> = (0..=u16::MAX).map(bf16::from_bits).collect();
    let got = Array::from_vec(b.clone()).unwrap().astype::<f8e5m2>().unwrap().to_vec().unwrap();
    assert_eq!(
        bits5(&got),
        b.iter().map(|&v| f8e5m2::from_bf16(v).to_bits()).collect::<Vec<_>>(),
        "bf16 -> f8e5m2"
    );
}

/// `got` equals `want` bit for bit, or both are NaN (a NaN's payload in a wider type is the
/// device's own: PTX canonicalises NaNs in conversions).
fn same<T: Copy + std::fmt::Debug>(got: &[T], want: &[T], is_nan: impl Fn(T) -> bool, bits: impl Fn(T) -> u64, what: &str) {
    assert_eq!(got.len(), want.len());
    for (k, (&g, &w)) in got.iter().zip(want).enumerate() {
        if is_nan(w) {
            assert!(is_nan(g), "{what}: code {k}: {g:?} is not NaN");
        } else {
            assert_eq!(bits(g), bits(w), "{what}: code {k}: {g:?} != {w:?}");
        }
    }
}

fn astype_to_wider_floats_is_exact() {
    let c4: Vec<f8e4m3> = (0..=255u8).map(f8e4m3::from_bits).collect();
    let c5: Vec<f8e5m2> = (0..=255u8).map(f8e5m2::from_bits).collect();
    let (a4, a5) = (Array::from_vec(c4.clone()).unwrap(), Array::from_vec(c5.clone()).unwrap());
    let w32: Vec<f32> = c4.iter().map(|x| x.to_f32()).collect();
    same(
        &a4.astype::<f32>().unwrap().to_vec().unwrap(),
        &w32,
        f32::is_nan,
        |v| v.to_bits().into(),
        "f8e4m3 -> f32",
    );
    let w32: Vec<f32> = c5.iter().map(|x| x.to_f32()).collect();
    same(
        &a5.astype::<f32>().unwrap().to_vec().unwrap(),
        &w32,
        f32::is_nan,
        |v| v.to_bits().into(),
        "f8e5m2 -> f32",
    );
    let w64: Vec<f64> = c4.iter().map(|x| x.to_f64()).collect();
    same(
        &a4.astype::<f64>().unwrap().to_vec().unwrap(),
        &w64,
        f64::is_nan,
        f64::to_bits,
        "f8e4m3 -> f64",
    );
    let w16: Vec<f16> = c5.iter().map(|x| x.to_f16()).collect();
    same(
        &a5.astype::<f16>().unwrap().to_vec().unwrap(),
        &w16,
        |v| v.is_nan(),
        |v| v.to_bits().into(),
        "f8e5m2 -> f16",
    );
    let wb: Vec<bf16> = c4.iter().map(|x| x.to_bf16()).collect();
    same(
        &a4.astype::<bf16>().unwrap().to_vec().unwrap(),
        &wb,
        |v| v.is_nan(),
        |v| v.to_bits().into(),
        "f8e4m3 -> bf16",
    );
    // Exact: every finite value is its f64 (an independent decode: sign, exponent, mantissa).
    for (k, v) in a4.astype::<f64>().unwrap().to_vec().unwrap().into_iter().enumerate() {
        let (s, e, m) = ((k >> 7) & 1, ((k >> 3) & 0xf) as i32, (k & 7) as f64);
        if k & 0x7f == 0x7f {
            continue;
        }
        let mag = if e == 0 {
            m / 8.0 * 2f64.powi(-6)
        } else {
            (1.0 + m / 8.0) * 2f64.powi(e - 7)
        };
        assert_eq!(v, if s == 1 { -mag } else { mag }, "code {k:#04x}");
    }
}

fn astype_between_the_two_formats_and_from_integers() {
    let c4: Vec<f8e4m3> = (0..=255u8).map(f8e4m3::from_bits).collect();
    let got = Array::from_vec(c4.clone()).unwrap().astype::<f8e5m2>().unwrap().to_vec().unwrap();
    let want: Vec<u8> = c4.iter().map(|x| f8e5m2::from_f64(x.to_f64()).to_bits()).collect();
    assert_eq!(bits5(&got), want);
    let c5: Vec<f8e5m2> = (0..=255u8).map(f8e5m2::from_bits).collect();
    let got = Array::from_vec(c5.clone()).unwrap().astype::<f8e4m3>().unwrap().to_vec().unwrap();
    let want: Vec<u8> = c5.iter().map(|x| f8e4m3::from_f64(x.to_f64()).to_bits()).collect();
    assert_eq!(bits4(&got), want, "e5m2 -> e4m3 saturates at 448 and keeps NaN");
    assert_eq!(want[0x7c], 0x7e, "e5m2 infinity -> e4m3 max");
    // Integers: exact where representable, rounded to even, saturated beyond the largest.
    let mut r = Rng::new();
    let mut ints: Vec<i32> = vec![0, 1, -1, 17, 19, 448, 449, 464, 465, 1 << 20, i32::MIN, i32::MAX];
    ints.extend((0..500).map(|_| r.int(-100_000, 100_000) as i32));
    let got = Array::from_vec(ints.clone()).unwrap().astype::<f8e4m3>().unwrap().to_vec().unwrap();
    assert_eq!(
        bits4(&got),
        ints.iter().map(|&v| f8e4m3::from_f64(f64::from(v)).to_bits()).collect::<Vec<_>>()
    );
    // 17 and 19 are ties (16 | 18, 18 | 20): to the even mantissas, 16 and 20.
    assert_eq!(bits4(&got[..6]), [0x00, 0x38, 0xb8, 0x58, 0x5a, 0x7e]);
    // f8 -> integers: Rust's `as` (truncated toward zero, saturated, NaN to 0).
    let got = Array::from_vec(c4.clone()).unwrap().astype::<i16>().unwrap().to_vec().unwrap();
    assert_eq!(got, c4.iter().map(|x| x.to_f64() as i16).collect::<Vec<_>>());
    let got = Array::from_vec(c5.clone()).unwrap().astype::<u8>().unwrap().to_vec().unwrap();
    assert_eq!(got, c5.iter().map(|x| x.to_f64() as u8).collect::<Vec<_>>());
    // To bool: non-zero (NaN included), -0.0 is false.
    let got = Array::from_vec(c4.clone()).unwrap().astype::<bool>().unwrap().to_vec().unwrap();
    assert_eq!(got, c4.iter().map(|x| x.to_bits() & 0x7f != 0).collect::<Vec<_>>());
}

fn arithmetic_rounds_like_the_host() {
    let mut r = Rng::new();
    let xs: Vec<f8e4m3> = (0..3000).map(|_| f8e4m3::from_f64(r.range(-300.0, 300.0))).collect();
    let ys: Vec<f8e4m3> = (0..3000).map(|_| f8e4m3::from_f64(r.range(-20.0, 20.0))).collect();
    let (x, y) = (Array::from_vec(xs.clone()).unwrap(), Array::from_vec(ys.clone()).unwrap());
    let sum = (&x + &y).unwrap().to_vec().unwrap();
    let prod = (&x * &y).unwrap().to_vec().unwrap();
    // The reference in f64: each value exact, the f32 sum and product exact too (few bits),
    // then one rounding by the rule.
    let want_sum: Vec<u8> = xs
        .iter()
        .zip(&ys)
        .map(|(a, b)| f8e4m3::from_f64(a.to_f64() + b.to_f64()).to_bits())
        .collect();
    let want_prod: Vec<u8> = xs
        .iter()
        .zip(&ys)
        .map(|(a, b)| f8e4m3::from_f64(a.to_f64() * b.to_f64()).to_bits())
        .collect();
    assert_eq!(bits4(&sum), want_sum);
    assert_eq!(bits4(&prod), want_prod, "products beyond 448 saturate");
    assert!(prod.iter().any(|v| v.to_bits() & 0x7f == 0x7e), "some products saturate");
    // A scalar on either side.
    let two = f8e4m3::from_f32(2.0);
    let lhs = (two - &x).unwrap().to_vec().unwrap();
    assert_eq!(bits4(&lhs), xs.iter().map(|a| f8e4m3::from_f64(2.0 - a.to_f64()).to_bits()).collect::<Vec<_>>());
    let rhs = (&x * two).unwrap().to_vec().unwrap();
    assert_eq!(bits4(&rhs), xs.iter().map(|a| f8e4m3::from_f64(2.0 * a.to_f64()).to_bits()).collect::<Vec<_>>());
    let zs: Vec<f8e5m2> = (0..1000).map(|_| f8e5m2::from_f64(r.range(-1e4, 1e4))).collect();
    let z = Array::from_vec(zs.clone()).unwrap();
    let neg = (-&z).unwrap().to_vec().unwrap();
    assert_eq!(bits5(&neg), zs.iter().map(|v| v.to_bits() ^ 0x80).collect::<Vec<_>>());
}

fn strided_views_and_empty_arrays_convert() {
    let mut r = Rng::new();
    let xs: Vec<f32> = (0..40 * 30).map(|_| r.range(-600.0, 600.0) as f32).collect();
    let a = Array::from_shape_vec([40, 30], xs.clone()).unwrap();
    let t = a.transpose();
    let got = t.astype::<f8e4m3>().unwrap();
    assert_eq!(got.shape(), &[30, 40]);
    let host_t = t.to_vec().unwrap();
    assert_eq!(
        bits4(&got.to_vec().unwrap()),
        host_t.iter().map(|&v| f8e4m3::from_f32(v).to_bits()).collect::<Vec<_>>()
    );
    // And back from a strided 8-bit view.
    let back = got.transpose().astype::<f32>().unwrap().to_vec().unwrap();
    assert_eq!(back, xs.iter().map(|&v| f8e4m3::from_f32(v).to_f32()).collect::<Vec<_>>());
    // Empty and 0-d arrays.
    let e = Array::<f32>::zeros([0, 3]).unwrap().astype::<f8e5m2>().unwrap();
    assert_eq!((e.shape(), e.len()), (&[0usize, 3][..], 0));
    let s = Array::from_shape_vec(Vec::<usize>::new(), vec![-70000.0f32])
        .unwrap()
        .astype::<f8e5m2>()
        .unwrap();
    assert_eq!(bits5(&s.to_vec().unwrap()), [0xfb]);
}

fn saving_to_npy_is_a_clear_error() {
    let dir = std::env::temp_dir().join(format!("cuprum-fp8-npy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("x.npy");
    let a = Array::from_vec(vec![f8e4m3::ONE; 4]).unwrap();
    match cuprum_runtime::array::save(&path, &a) {
        Err(Error::Unsupported { what }) => assert!(what.contains("f8e4m3") && what.contains("astype"), "{what}"),
        other => panic!("saving f8e4m3 to .npy: {other:?}"),
    }
    assert!(!path.exists(), "nothing is written");
    std::fs::remove_dir_all(&dir).unwrap();
}

fn matrix_products_are_a_clear_error() {
    let a = Array::from_shape_vec([2, 2], vec![f8e4m3::ONE; 4]).unwrap();
    match a.matmul(&a) {
        Err(Error::Unsupported { what }) => assert!(what.contains("f8e4m3") && what.contains("astype"), "{what}"),
        other => panic!("matmul of f8e4m3: {other:?}"),
    }
}
