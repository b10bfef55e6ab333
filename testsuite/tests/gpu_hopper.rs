//! Hopper's mbarriers, TMA tile copies and warpgroup MMA end to end (`compiler/tests/in/hopper.rs`, built
//! for sm_90a), on the CPU device (in CI) and on the GPU (`on_both_devices!`): the box a TMA copy
//! writes (its 128-byte swizzle, zeros outside the array) against the host's layout; each
//! `wgmma_m64nNk16` shape against an f64 host product of fresh random inputs, outputs poisoned
//! before the launch; a barrier ring reused for many phases; the warp-specialised GEMM of
//! examples/kernels_sm90a/gemm_wgmma.rs and the FP8 one of examples/kernels_sm90a/gemm_fp8.rs;
//! each FP8 `wgmma_m64nNk32` shape; and the misaligned operands the helpers report instead
//! of faulting or hanging.

#[path = "../../runtime/tests/support/mod.rs"]
mod support;
use support::Rng;

#[path = "../../compiler/tests/in/hopper.rs"]
mod hopper_kernels;
#[path = "../../examples/kernels_sm90a/gemm_wgmma.rs"]
mod gemm_kernel;
#[path = "../kernels/every_intrinsic_sm90a.rs"]
mod intrinsic_kernels;
#[path = "../../examples/kernels_sm90a/gemm_fp8.rs"]
mod gemm_fp8_kernel;

use std::sync::{Mutex, MutexGuard};

use cuprum::runtime::{Array, Error, LaunchConfig, Swizzle, TensorMap};
use half::{bf16, f16};
use hopper_kernels as k;

on_both_devices!(
    cuprum::runtime::Device;
    tma_copies_a_swizzled_box_with_zeros_outside,
    tma_copies_f32_boxes,
    tma_misaligned_destination_is_reported_without_a_hang,
    mbarrier_ring_reuses_its_phases,
    wgmma_m64n64k16_accumulates_a_tile,
    wgmma_m64n128k16_f16,
    wgmma_m64n256k16_from_tma,
    wgmma_misaligned_operand_is_reported,
    wgmma_fp8_tiles_match_the_host_definition,
    fp8_gemm_matches_the_host,
    warp_specialised_gemm_matches_the_host
);

fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

fn up<T: cuprum::runtime::Scalar>(v: &[T]) -> Array<T> {
    Array::from_slice(v).unwrap()
}

/// The index where the 128-byte swizzle puts element `c` of row `r` of a box whose rows hold
/// `row` elements of `size` bytes (from a 1024-byte aligned start).
fn swizzled(r: usize, c: usize, row: usize, size: usize) -> usize {
    let o = (r * row + c) * size;
    (o ^ (((o >> 7) & 7) << 4)) / size
}

/// Element (r, c) of a 64-wide swizzled tile (`lang::hopper::swizzled`).
fn tile(r: usize, c: usize) -> usize {
    swizzled(r, c, 64, 2)
}

fn tma_copies_a_swizzled_box_with_zeros_outside() {
    let _serial = serial();
    let mut r = Rng::new();
    let (rows, cols) = (100usize, 192usize);
    let host: Vec<bf16> = (0..rows * cols).map(|_| bf16::from_f64(r.range(1.0, 2.0))).collect();
    let a = up(&host).reshape([rows, cols]).unwrap();
    let map = TensorMap::new(&a, [64, 64], Swizzle::B128).unwrap();
    assert_eq!(map.box_bytes(), 64 * 64 * 2);
    // Inside, and hanging over the bottom and right edges (rows 80..144, columns 160..224).
    for (x, y) in [(64i32, 0i32), (160, 80)] {
        let mut out = up(&vec![bf16::from_f32(-7.0); 4096]);
        k::tma_box_bf16::launch(&LaunchConfig::new(1u32, 128u32), &map, x, y, 4096, &mut out).unwrap();
        let got = out.to_vec().unwrap();
        for rr in 0..64 {
            for c in 0..64 {
                let (gr, gc) = (y as usize + rr, x as usize + c);
                let want = if gr < rows && gc < cols { host[gr * cols + gc] } else { bf16::ZERO };
                assert_eq!(got[tile(rr, c)], want, "box at ({x}, {y}): element ({rr}, {c})");
            }
        }
    }
}

fn tma_copies_f32_boxes() {
    let _serial = serial();
    let mut r = Rng::new();
    let (rows, cols) = (64usize, 96usize);
    let host: Vec<f32> = (0..rows * cols).map(|_| r.range(-1.0, 1.0) as f32).collect();
    let a = up(&host).reshape([rows, cols]).unwrap();
    // 128-byte rows of 32 floats, swizzled; and 64-byte rows without a swizzle.
    for (bx, sw) in [(32u32, Swizzle::B128), (16, Swizzle::None)] {
        let map = TensorMap::new(&a, [32, bx], sw).unwrap();
        let n = 32 * bx as usize;
        let mut out = up(&vec![f32::NAN; n]);
        k::tma_box_f32::launch(&LaunchConfig::new(1u32, 64u32), &map, 32, 16, n as u32, 0, &mut out).unwrap();
        let got = out.to_vec().unwrap();
        for rr in 0..32 {
            for c in 0..bx as usize {
                let at = if sw == Swizzle::B128 { swizzled(rr, c, 32, 4) } else { rr * bx as usize + c };
                assert_eq!(got[at], host[(16 + rr) * cols + 32 + c], "box {bx} wide: element ({rr}, {c})");
            }
        }
    }
}

fn tma_misaligned_destination_is_reported_without_a_hang() {
    let _serial = serial();
    let a = up(&vec![1.0f32; 64 * 32]).reshape([64, 32]).unwrap();
    let map = TensorMap::new(&a, [32, 32], Swizzle::B128).unwrap();
    let mut out = up(&vec![0.0f32; 1024]);
    // Index 4: 16 bytes in, where the swizzled box needs 1024-byte alignment (256 floats).
    k::tma_box_f32::launch(&LaunchConfig::new(1u32, 32u32), &map, 0, 0, 1024, 4, &mut out).unwrap();
    match out.to_vec() {
        Err(Error::IndexMisaligned { kernel, index, align, .. }) => assert_eq!((kernel.as_str(), index, align), ("tma_box_f32", 4, 256)),
        other => panic!("expected Error::IndexMisaligned, got {other:?}"),
    }
}

fn mbarrier_ring_reuses_its_phases() {
    let _serial = serial();
    let mut r = Rng::new();
    let rounds = 1000usize;
    let values: Vec<u32> = (0..rounds).map(|_| (r.range(1.0, 1e6)) as u32).collect();
    let mut out = up(&vec![0u32; rounds]);
    k::mbarrier_ring::launch(&LaunchConfig::new(1u32, 64u32), &up(&values), rounds as u32, &mut out).unwrap();
    let want: Vec<u32> = values.iter().map(|v| v * 2).collect();
    assert_eq!(out.to_vec().unwrap(), want);
}

/// Thread t's accumulator i: element (row, column) of the 64 x N tile.
fn acc_at(t: usize, i: usize) -> (usize, usize) {
    let (q, l, j, h, e) = (t / 32, t % 32, i / 4, (i / 2) % 2, i % 2);
    (16 * q + l / 4 + 8 * h, 8 * j + 2 * (l % 4) + e)
}

/// A (64 x 64) and B (64 x n) as random values, and their swizzled shared-memory images: A one
/// tile, B n / 64 tiles of 64 x 64.
fn operands<T: Copy>(r: &mut Rng, n: usize, make: impl Fn(f64) -> T, back: impl Fn(T) -> f64) -> (Vec<f64>, Vec<f64>, Vec<T>, Vec<T>) {
    let a: Vec<T> = (0..64 * 64).map(|_| make(r.range(-2.0, 2.0))).collect();
    let b: Vec<T> = (0..64 * n).map(|_| make(r.range(-2.0, 2.0))).collect();
    let mut sa = vec![make(0.0); 4096];
    let mut sb = vec![make(0.0); 64 * n];
    for rr in 0..64 {
        for c in 0..64 {
            sa[tile(rr, c)] = a[rr * 64 + c];
        }
        for c in 0..n {
            sb[4096 * (c / 64) + tile(rr, c % 64)] = b[rr * n + c];
        }
    }
    (a.iter().map(|&x| back(x)).collect(), b.iter().map(|&x| back(x)).collect(), sa, sb)
}

#[track_caller]
fn check_tile(got: &[f32], a: &[f64], b: &[f64], c0: &[f32], n: usize, what: &str) {
    let per = n / 2;
    for t in 0..128 {
        for i in 0..per {
            let (row, col) = acc_at(t, i);
            let want = c0[t * per + i] as f64 + (0..64).map(|p| a[row * 64 + p] * b[p * n + col]).sum::<f64>();
            let g = got[t * per + i] as f64;
            assert!((g - want).abs() <= 1e-4 * (1.0 + want.abs()), "{what}: element ({row}, {col}) is {g}, want {want}");
        }
    }
}

fn wgmma_m64n64k16_accumulates_a_tile() {
    let _serial = serial();
    let mut r = Rng::new();
    let (a, b, sa, sb) = operands(&mut r, 64, bf16::from_f64, |x: bf16| x.to_f64());
    let c0: Vec<f32> = (0..128 * 32).map(|_| r.range(-1.0, 1.0) as f32).collect();
    let mut out = up(&vec![f32::NAN; 128 * 32]);
    k::wgmma_n64::launch(&LaunchConfig::new(1u32, 128u32), &up(&sa), &up(&sb), &up(&c0), 0, &mut out).unwrap();
    check_tile(&out.to_vec().unwrap(), &a, &b, &c0, 64, "wgmma_m64n64k16 bf16");
}

fn wgmma_m64n128k16_f16() {
    let _serial = serial();
    let mut r = Rng::new();
    let (a, b, sa, sb) = operands(&mut r, 128, f16::from_f64, |x: f16| x.to_f64());
    let mut out = up(&vec![f32::NAN; 128 * 64]);
    k::wgmma_n128_f16::launch(&LaunchConfig::new(1u32, 128u32), &up(&sa), &up(&sb), &mut out).unwrap();
    check_tile(&out.to_vec().unwrap(), &a, &b, &vec![0.0; 128 * 64], 128, "wgmma_m64n128k16 f16");
}

fn wgmma_m64n256k16_from_tma() {
    let _serial = serial();
    let mut r = Rng::new();
    let a: Vec<bf16> = (0..64 * 64).map(|_| bf16::from_f64(r.range(-2.0, 2.0))).collect();
    let b: Vec<bf16> = (0..64 * 256).map(|_| bf16::from_f64(r.range(-2.0, 2.0))).collect();
    let (da, db) = (up(&a).reshape([64, 64]).unwrap(), up(&b).reshape([64, 256]).unwrap());
    let ma = TensorMap::new(&da, [64, 64], Swizzle::B128).unwrap();
    let mb = TensorMap::new(&db, [64, 64], Swizzle::B128).unwrap();
    let mut out = up(&vec![f32::NAN; 128 * 128]);
    let cfg = LaunchConfig::new(1u32, 128u32).shared_mem(20480 * 2 + 8);
    k::wgmma_tma_n256::launch(&cfg, &ma, &mb, &mut out).unwrap();
    let f = |v: &[bf16]| v.iter().map(|x| x.to_f64()).collect::<Vec<_>>();
    check_tile(&out.to_vec().unwrap(), &f(&a), &f(&b), &vec![0.0; 128 * 128], 256, "wgmma_m64n256k16 from TMA");
}

fn wgmma_misaligned_operand_is_reported() {
    let _serial = serial();
    let mut r = Rng::new();
    let (_, _, sa, sb) = operands(&mut r, 64, bf16::from_f64, |x: bf16| x.to_f64());
    let mut out = up(&vec![0.0f32; 128 * 32]);
    // A's columns start at 8: not one of a tile's 16-wide k-steps.
    k::wgmma_n64::launch(&LaunchConfig::new(1u32, 128u32), &up(&sa), &up(&sb), &up(&vec![0.0; 128 * 32]), 8, &mut out).unwrap();
    match out.to_vec() {
        Err(Error::IndexMisaligned { kernel, index, align, .. }) => assert_eq!((kernel.as_str(), index, align), ("wgmma_n64", 8, 16)),
        other => panic!("expected Error::IndexMisaligned, got {other:?}"),
    }
}

fn warp_specialised_gemm_matches_the_host() {
    let _serial = serial();
    let mut r = Rng::new();
    let (m, n, kk) = (256usize, 512usize, 192usize);
    let a: Vec<bf16> = (0..m * kk).map(|_| bf16::from_f64(r.range(-1.0, 1.0))).collect();
    let b: Vec<bf16> = (0..kk * n).map(|_| bf16::from_f64(r.range(-1.0, 1.0))).collect();
    let (da, db) = (up(&a).reshape([m, kk]).unwrap(), up(&b).reshape([kk, n]).unwrap());
    let ma = TensorMap::new(&da, [gemm_kernel::BM, gemm_kernel::BK], Swizzle::B128).unwrap();
    let mb = TensorMap::new(&db, [gemm_kernel::BK, 64], Swizzle::B128).unwrap();
    let mut c = up(&vec![f32::NAN; m * n]);
    // Three blocks for four tiles: the first takes two, so its barriers go on across tiles.
    let cfg = LaunchConfig::new(3u32, gemm_kernel::THREADS).shared_mem(gemm_kernel::SHARED_BYTES);
    gemm_kernel::gemm_wgmma::launch(&cfg, m as u32, n as u32, kk as u32, &ma, &mb, &mut c).unwrap();
    let got = c.to_vec().unwrap();
    for i in 0..m {
        for j in 0..n {
            let want: f64 = (0..kk).map(|p| a[i * kk + p].to_f64() * b[p * n + j].to_f64()).sum();
            let g = got[i * n + j] as f64;
            assert!((g - want).abs() <= 1e-4 * (1.0 + want.abs()), "C[{i}][{j}] is {g}, want {want}");
        }
    }
}

/// Every FP8 shape (`wgmma_m64nNk32`, checked at k = 0 then unchecked at k = 64, e4m3) on fresh
/// random operands against the f64 product of the host definition (`lang::hopper`): A one tile
/// of 64 x 128, B^T four tiles of 64 x 128 (256 rows n), swizzled as the module docs say. The GPU
/// accumulates FP8 products with fewer bits than f32 keeps: the bound is relative to the sum of
/// |terms|.
fn wgmma_fp8_tiles_match_the_host_definition() {
    use cuprum::prelude::f8e4m3;
    let _serial = serial();
    let mut r = Rng::new();
    let fp8_tile = |row: usize, c: usize| row * 128 + (((c / 16) ^ (row % 8)) * 16) + c % 16;
    let a: Vec<f8e4m3> = (0..64 * 128).map(|_| f8e4m3::from_f64(r.range(-2.0, 2.0))).collect();
    let bt: Vec<f8e4m3> = (0..256 * 128).map(|_| f8e4m3::from_f64(r.range(-2.0, 2.0))).collect();
    let mut sa = vec![f8e4m3::ZERO; 8192];
    let mut sb = vec![f8e4m3::ZERO; 32768];
    for row in 0..64 {
        for c in 0..128 {
            sa[fp8_tile(row, c)] = a[row * 128 + c];
        }
    }
    for row in 0..256 {
        for c in 0..128 {
            sb[fp8_tile(row, c)] = bt[row * 128 + c];
        }
    }
    let mut out = up(&vec![f32::NAN; 224 * 128]);
    intrinsic_kernels::wgmma_fp8_all::launch(&LaunchConfig::new(1u32, 128u32), &up(&sa), &up(&sb), 0.25, 0, 64, &mut out).unwrap();
    let got = out.to_vec().unwrap();
    for t in 0..128 {
        for (i, &g) in got[224 * t..224 * (t + 1)].iter().enumerate() {
            let (shape, j) = if i < 32 { ("m64n64k32", i) } else if i < 96 { ("m64n128k32", i - 32) } else { ("m64n256k32", i - 96) };
            let (row, col) = acc_at(t, j);
            let terms: Vec<f64> = [0usize, 64]
                .iter()
                .flat_map(|&k0| (0..32).map(move |k| k0 + k))
                .map(|k| a[row * 128 + k].to_f64() * bt[col * 128 + k].to_f64())
                .collect();
            let want = 0.25 + terms.iter().sum::<f64>();
            let size = 0.25 + terms.iter().map(|x| x.abs()).sum::<f64>();
            assert!((g as f64 - want).abs() <= 1e-3 * size, "wgmma_{shape} e4m3: element ({row}, {col}) of thread {t} is {g}, want {want}");
        }
    }
}

/// The FP8 GEMM of examples/kernels_sm90a/gemm_fp8.rs (C bf16 = sa sb A B, B given as B^T) on
/// fresh random e4m3 operands against an f64 host product: 3 blocks for 4 tiles of 128 x 256,
/// three k-steps of 128 each, so the first block's ring of 4 stages goes round across tiles.
fn fp8_gemm_matches_the_host() {
    use cuprum::prelude::f8e4m3;
    let _serial = serial();
    let mut r = Rng::new();
    let (m, n, kk) = (256usize, 512usize, 384usize);
    let a: Vec<f8e4m3> = (0..m * kk).map(|_| f8e4m3::from_f64(r.range(-8.0, 8.0))).collect();
    let bt: Vec<f8e4m3> = (0..n * kk).map(|_| f8e4m3::from_f64(r.range(-8.0, 8.0))).collect();
    let (sa, sb) = (0.5f32, 0.125f32);
    let (da, db) = (up(&a).reshape([m, kk]).unwrap(), up(&bt).reshape([n, kk]).unwrap());
    let ma = TensorMap::new(&da, [gemm_fp8_kernel::BM, gemm_fp8_kernel::BK], Swizzle::B128).unwrap();
    let mb = TensorMap::new(&db, [gemm_fp8_kernel::BN, gemm_fp8_kernel::BK], Swizzle::B128).unwrap();
    let mut c = up(&vec![bf16::NAN; m * n]);
    let cfg = LaunchConfig::new(3u32, gemm_fp8_kernel::THREADS).shared_mem(gemm_fp8_kernel::SHARED_BYTES);
    gemm_fp8_kernel::gemm_fp8::launch(&cfg, m as u32, n as u32, kk as u32, &ma, &mb, sa, sb, &mut c).unwrap();
    let got = c.to_vec().unwrap();
    let alpha = sa as f64 * sb as f64;
    for i in 0..m {
        for j in 0..n {
            let terms = (0..kk).map(|p| a[i * kk + p].to_f64() * bt[j * kk + p].to_f64() * alpha);
            let (want, size) = terms.fold((0.0, 0.0), |(w, s), t| (w + t, s + t.abs()));
            let g = got[i * n + j].to_f64();
            // bf16's rounding of the result, and the GPU's FP8 accumulation.
            assert!((g - want).abs() <= want.abs() / 256.0 + 1e-3 * size + 1e-30, "C[{i}][{j}] is {g}, want {want}");
        }
    }
}
