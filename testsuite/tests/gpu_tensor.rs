//! Tensor cores, `ldmatrix` and `cp_async` end to end (the kernels of
//! `compiler/tests/in/tensor_cores.rs`: one warp multiplies one tile, its fragments gathered by hand
//! in the documented layouts or loaded with `cp_async` and `ldmatrix_*`; every matrix row-major, A
//! 16 x K, B K x 8, C and D 16 x 8), on the CPU device (in CI) and on the GPU (`on_both_devices!`):
//! each `mma_*` shape against an f64 (or exact integer) host product of fresh random inputs, the
//! outputs poisoned before the launch; the shared-memory path (`cp_async` + `ldmatrix_*`); and the
//! misaligned and out-of-range rows the helpers report instead of faulting.

#[path = "../../runtime/tests/support/mod.rs"]
mod support;
use support::Rng;

#[path = "../../compiler/tests/in/tensor_cores.rs"]
mod tensor_kernels;
#[path = "../../compiler/tests/in/tensor_dynamic_shared.rs"]
mod dynamic_kernels;

use std::sync::{Mutex, MutexGuard};

use cuprum::runtime::{Array, Error, LaunchConfig};
use half::{bf16, f16};
use tensor_kernels as k;

on_both_devices!(
    cuprum::runtime::Device;
    mma_bf16_tile,
    mma_f16_tile,
    mma_tf32_tile,
    mma_i8_tile,
    cp_async_and_ldmatrix_feed_mma,
    dynamic_shared_feeds_ldmatrix_and_mma,
    dynamic_shared_too_small_is_reported,
    ldmatrix_rows_in_range_and_transposed_layout,
    ldmatrix_misaligned_row_is_reported,
    ldmatrix_row_past_the_end_is_reported,
    cp_async_misaligned_source_is_reported,
    cp_async_unchecked_checks_its_source_on_entry
);

/// The record of index violations is one per device: the tests take turns, so that one test's
/// violation is not reported by another's synchronisation.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

fn warp() -> LaunchConfig<'static> {
    LaunchConfig::new(1u32, 32u32)
}

fn up<T: cuprum::runtime::Scalar>(v: &[T]) -> Array<T> {
    Array::from_slice(v).unwrap()
}

/// D = A * B + C over row-major (16 x K) * (K x 8) in f64.
fn reference(a: &[f64], b: &[f64], c: &[f64], kk: usize) -> Vec<f64> {
    (0..16 * 8).map(|q| (0..kk).map(|p| a[(q / 8) * kk + p] * b[p * 8 + q % 8]).sum::<f64>() + c[q]).collect()
}

#[track_caller]
fn assert_close(got: &[f32], want: &[f64], rel: f64, what: &str) {
    assert_eq!(got.len(), want.len());
    for (q, (&g, &w)) in got.iter().zip(want).enumerate() {
        let tol = rel * (1.0 + w.abs());
        assert!((g as f64 - w).abs() <= tol, "{what}: element ({}, {}) is {g}, want {w}", q / 8, q % 8);
    }
}

fn mma_bf16_tile() {
    let _serial = serial();
    let mut r = Rng::new();
    let a: Vec<bf16> = (0..256).map(|_| bf16::from_f64(r.range(-2.0, 2.0))).collect();
    let b: Vec<bf16> = (0..128).map(|_| bf16::from_f64(r.range(-2.0, 2.0))).collect();
    let c: Vec<f32> = (0..128).map(|_| r.range(-1.0, 1.0) as f32).collect();
    let mut d = up(&vec![f32::NAN; 128]);
    k::mma_bf16::launch(&warp(), &up(&a), &up(&b), &up(&c), &mut d).unwrap();
    let f = |v: &[bf16]| v.iter().map(|x| x.to_f64()).collect::<Vec<_>>();
    let want = reference(&f(&a), &f(&b), &c.iter().map(|&x| x as f64).collect::<Vec<_>>(), 16);
    // bf16 products are exact in f32; only the f32 sums round.
    assert_close(&d.to_vec().unwrap(), &want, 1e-5, "mma_m16n8k16 bf16");
}

fn mma_f16_tile() {
    let _serial = serial();
    let mut r = Rng::new();
    let a: Vec<f16> = (0..256).map(|_| f16::from_f64(r.range(-2.0, 2.0))).collect();
    let b: Vec<f16> = (0..128).map(|_| f16::from_f64(r.range(-2.0, 2.0))).collect();
    let c: Vec<f32> = (0..128).map(|_| r.range(-1.0, 1.0) as f32).collect();
    let mut d = up(&vec![f32::NAN; 128]);
    k::mma_f16::launch(&warp(), &up(&a), &up(&b), &up(&c), &mut d).unwrap();
    let f = |v: &[f16]| v.iter().map(|x| x.to_f64()).collect::<Vec<_>>();
    let want = reference(&f(&a), &f(&b), &c.iter().map(|&x| x as f64).collect::<Vec<_>>(), 16);
    assert_close(&d.to_vec().unwrap(), &want, 1e-5, "mma_m16n8k16 f16");
}

fn mma_tf32_tile() {
    let _serial = serial();
    let mut r = Rng::new();
    let a: Vec<f32> = (0..128).map(|_| r.range(-2.0, 2.0) as f32).collect();
    let b: Vec<f32> = (0..64).map(|_| r.range(-2.0, 2.0) as f32).collect();
    let c: Vec<f32> = (0..128).map(|_| r.range(-1.0, 1.0) as f32).collect();
    let mut d = up(&vec![f32::NAN; 128]);
    k::mma_tf32::launch(&warp(), &up(&a), &up(&b), &up(&c), &mut d).unwrap();
    let tf = |v: &[f32]| v.iter().map(|&x| cuprum::__workspace::lang::tensor::round_tf32(x) as f64).collect::<Vec<_>>();
    let want = reference(&tf(&a), &tf(&b), &c.iter().map(|&x| x as f64).collect::<Vec<_>>(), 8);
    assert_close(&d.to_vec().unwrap(), &want, 1e-5, "mma_m16n8k8_tf32");
    // Not the f32 product: the inputs were rounded (a check that fails if they were not).
    let exact = reference(
        &a.iter().map(|&x| x as f64).collect::<Vec<_>>(),
        &b.iter().map(|&x| x as f64).collect::<Vec<_>>(),
        &c.iter().map(|&x| x as f64).collect::<Vec<_>>(),
        8,
    );
    let got = d.to_vec().unwrap();
    assert!(got.iter().zip(&exact).any(|(&g, &w)| (g as f64 - w).abs() > 1e-4), "the TF32 rounding is missing");
}

fn mma_i8_tile() {
    let _serial = serial();
    let mut r = Rng::new();
    let a: Vec<i8> = (0..16 * 32).map(|_| r.int(-128, 127) as i8).collect();
    let b: Vec<i8> = (0..32 * 8).map(|_| r.int(-128, 127) as i8).collect();
    let c: Vec<i32> = (0..128).map(|_| r.int(-1 << 30, 1 << 30) as i32).collect();
    let mut d = up(&vec![i32::MIN; 128]);
    k::mma_i8::launch(&warp(), &up(&a), &up(&b), &up(&c), &mut d).unwrap();
    let want: Vec<i32> =
        (0..128).map(|q| (0..32).fold(c[q], |s, p| s.wrapping_add(a[(q / 8) * 32 + p] as i32 * b[p * 8 + q % 8] as i32))).collect();
    assert_eq!(d.to_vec().unwrap(), want);
}

fn cp_async_and_ldmatrix_feed_mma() {
    let _serial = serial();
    let mut r = Rng::new();
    let a: Vec<bf16> = (0..256).map(|_| bf16::from_f64(r.range(-2.0, 2.0))).collect();
    let b: Vec<bf16> = (0..128).map(|_| bf16::from_f64(r.range(-2.0, 2.0))).collect();
    let mut d = up(&vec![f32::NAN; 128]);
    k::mma_shared_bf16::launch(&warp(), &up(&a), &up(&b), &mut d).unwrap();
    let f = |v: &[bf16]| v.iter().map(|x| x.to_f64()).collect::<Vec<_>>();
    let want = reference(&f(&a), &f(&b), &[0.0; 128], 16);
    assert_close(&d.to_vec().unwrap(), &want, 1e-5, "cp_async + ldmatrix + mma");
}

/// `cp_async` and `ldmatrix_*` on `dynamic_shared` memory, checked and unchecked: D = A A[.., ..8]
/// for a 16 x 16 tile A.
fn dynamic_shared_feeds_ldmatrix_and_mma() {
    let _serial = serial();
    let mut r = Rng::new();
    let a: Vec<bf16> = (0..256).map(|_| bf16::from_f64(r.range(-2.0, 2.0))).collect();
    let f: Vec<f64> = a.iter().map(|x| x.to_f64()).collect();
    let b: Vec<f64> = (0..128).map(|q| f[(q / 8) * 16 + q % 8]).collect();
    let want = reference(&f, &b, &[0.0; 128], 16);
    let cfg = warp().shared_mem(512);
    let mut d = up(&vec![f32::NAN; 128]);
    dynamic_kernels::dynamic_tile::launch(&cfg, &up(&a), &mut d).unwrap();
    assert_close(&d.to_vec().unwrap(), &want, 1e-5, "dynamic_shared: cp_async + ldmatrix + mma");
    let mut d = up(&vec![f32::NAN; 128]);
    dynamic_kernels::dynamic_tile_unchecked::launch(&cfg, &up(&a), &mut d).unwrap();
    assert_close(&d.to_vec().unwrap(), &want, 1e-5, "dynamic_shared: the unchecked forms");
}

/// The checks of `cp_async` and `ldmatrix_*` on `dynamic_shared` memory use the launch's length:
/// 256 bytes hold 128 of the 256 elements the warp copies.
fn dynamic_shared_too_small_is_reported() {
    let _serial = serial();
    let a = up(&vec![bf16::from_f64(1.0); 256]);
    let mut d = up(&vec![f32::NAN; 128]);
    dynamic_kernels::dynamic_tile::launch(&warp().shared_mem(256), &a, &mut d).unwrap();
    match d.to_vec() {
        Err(Error::IndexOutOfBounds { kernel, index, len, .. }) => {
            assert_eq!((kernel.as_str(), len), ("dynamic_tile", 128), "index {index}");
            assert!((128..256).contains(&index), "index {index}");
        }
        other => panic!("expected Error::IndexOutOfBounds, got {other:?}"),
    }
}

/// `ldmatrix_x1` of rows `offset + 8 r`: lane `l` gets row `l / 4`, columns `2 (l % 4)` and the next.
fn ldmatrix_rows_in_range_and_transposed_layout() {
    let _serial = serial();
    let mut r = Rng::new();
    let x: Vec<u16> = (0..72).map(|_| r.int(1, 65535) as u16).collect();
    for offset in [0u32, 8] {
        let mut out = up(&vec![0u16; 64]);
        k::ldmatrix_rows::launch(&warp(), &up(&x), offset, &mut out).unwrap();
        let got = out.to_vec().unwrap();
        for l in 0..32usize {
            let row = offset as usize + 8 * (l / 4) + 2 * (l % 4);
            assert_eq!(&got[2 * l..2 * l + 2], &x[row..row + 2], "lane {l}, offset {offset}");
        }
    }
}

fn ldmatrix_misaligned_row_is_reported() {
    let _serial = serial();
    let x: Vec<u16> = (1..=72).collect();
    let mut out = up(&vec![0u16; 64]);
    k::ldmatrix_rows::launch(&warp(), &up(&x), 4, &mut out).unwrap();
    match out.to_vec() {
        Err(Error::IndexMisaligned { kernel, index, align, .. }) => {
            assert_eq!((kernel.as_str(), index % 8, align), ("ldmatrix_rows", 4, 8));
        }
        other => panic!("expected Error::IndexMisaligned, got {other:?}"),
    }
}

fn ldmatrix_row_past_the_end_is_reported() {
    let _serial = serial();
    let x: Vec<u16> = (1..=72).collect();
    let mut out = up(&vec![0u16; 64]);
    // Lane 7's row, 16 + 8 * 7 = 72, starts past the 72 elements of the shared array (a row that
    // starts inside but passes the end reports its last element).
    k::ldmatrix_rows::launch(&warp(), &up(&x), 16, &mut out).unwrap();
    match out.to_vec() {
        Err(Error::IndexOutOfBounds { kernel, index, len, .. }) => {
            assert_eq!((kernel.as_str(), index, len), ("ldmatrix_rows", 72, 72));
        }
        other => panic!("expected Error::IndexOutOfBounds, got {other:?}"),
    }
}

fn cp_async_misaligned_source_is_reported() {
    let _serial = serial();
    let x: Vec<f32> = (1..=16).map(|v| v as f32).collect();
    let mut out = up(&vec![f32::NAN; 4]);
    k::cp_async_from::launch(&warp(), &up(&x), 4, &mut out).unwrap();
    assert_eq!(out.to_vec().unwrap(), &x[4..8], "an aligned copy");
    k::cp_async_from::launch(&warp(), &up(&x), 2, &mut out).unwrap();
    match out.to_vec() {
        Err(Error::IndexMisaligned { kernel, index, align, .. }) => {
            assert_eq!((kernel.as_str(), index, align), ("cp_async_from", 2, 4));
        }
        other => panic!("expected Error::IndexMisaligned, got {other:?}"),
    }
}

fn cp_async_unchecked_checks_its_source_on_entry() {
    let _serial = serial();
    let x: Vec<f32> = (1..=16).map(|v| v as f32).collect();
    let whole = up(&x);
    let mut out = up(&vec![f32::NAN; 4]);
    k::cp_async_unchecked_from::launch(&warp(), &whole, 8, &mut out).unwrap();
    assert_eq!(out.to_vec().unwrap(), &x[8..12], "an aligned copy");
    // A view one element in: its start is 4 bytes past a 16-byte boundary.
    let shifted = whole.slice(0, 1..13).unwrap();
    let mut out = up(&vec![f32::NAN; 4]);
    k::cp_async_unchecked_from::launch(&warp(), &shifted, 0, &mut out).unwrap();
    match out.to_vec() {
        Err(Error::IndexMisaligned { kernel, index, align, .. }) => {
            assert_eq!((kernel.as_str(), index, align), ("cp_async_unchecked_from", 0, 4));
        }
        other => panic!("expected Error::IndexMisaligned, got {other:?}"),
    }
    // The GPU's kernel returned on entry (`out` keeps its poison); the CPU device checks the copy
    // itself and skips it (`out` gets the shared array's zeros). Neither copied x[1..5].
    let got = out.to_vec().unwrap();
    assert!(got.iter().all(|v| v.is_nan() || *v == 0.0), "nothing was copied: {got:?}");
}
