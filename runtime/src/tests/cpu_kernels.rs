//! The GPU's scan and radix-sort kernels (`kernels/scan.rs`, `kernels/sort.rs`) run on the CPU
//! device, against the CPU device's host versions of them (`cpu/scan.rs`, `cpu/sort.rs`), which
//! `runtime/tests/gpu_scan_count.rs` and `gpu_sort.rs` check against host references: the
//! routines call the host versions on the CPU device, so without these tests the kernels' logic
//! would be checked only on a GPU.

use super::support::Rng;
use crate::cpu::with_kernels;
use crate::{Array, Device};

fn on_cpu() -> crate::DeviceGuard {
    Device::cpu().use_scoped().unwrap()
}

#[test]
fn scan_kernel_matches_the_host_scan() {
    let _cpu = on_cpu();
    let r = &mut Rng::new();
    // Each CUDA thread of the kernel's tiles runs on the host: few tiles (an unoptimised build).
    for (rows, n) in [(1usize, 1usize), (1, 8193), (1, 3 * 8192 + 5), (5, 300), (2, 17000)] {
        let v: Vec<i64> = (0..rows * n).map(|_| r.int(-1 << 40, 1 << 40)).collect();
        let x = Array::<i64>::from_shape_vec([rows, n], v).unwrap();
        let axes: &[Option<isize>] = if n <= 300 { &[None, Some(1), Some(0)] } else { &[None, Some(1)] };
        for &axis in axes {
            let host = x.cumsum(axis).unwrap().to_vec().unwrap();
            let kernel = with_kernels(|| x.cumsum(axis)).unwrap().to_vec().unwrap();
            assert_eq!(kernel, host, "cumsum of {rows} x {n} along {axis:?}");
        }
        let small: Vec<i32> = (0..rows * n).map(|_| r.int(-3, 3) as i32).collect();
        let y = Array::<i32>::from_shape_vec([rows, n], small).unwrap();
        let host = y.cumprod(Some(1)).unwrap().to_vec().unwrap();
        assert_eq!(with_kernels(|| y.cumprod(Some(1))).unwrap().to_vec().unwrap(), host, "cumprod of {rows} x {n}");
        // All 32 bits of a u32 (sums wrap past 2^32), and f32's negative zeros (a row of them
        // sums to -0) and NaN, through the look-back's published totals.
        let big: Vec<u32> = (0..rows * n).map(|_| r.int(1 << 31, u32::MAX as i64) as u32).collect();
        let u = Array::<u32>::from_shape_vec([rows, n], big).unwrap();
        assert_eq!(with_kernels(|| u.cumsum(Some(1))).unwrap().to_vec().unwrap(), u.cumsum(Some(1)).unwrap().to_vec().unwrap(), "cumsum of {rows} x {n} u32");
        let mut floats: Vec<f32> = (0..rows * n).map(|_| r.int(-1000, 1000) as f32 * 0.25).collect();
        floats[..n.min(5000)].iter_mut().for_each(|f| *f = -0.0);
        if rows > 1 {
            floats[n + n / 2] = f32::NAN;
        }
        let f = Array::<f32>::from_shape_vec([rows, n], floats).unwrap();
        let bits = |a: Array<f32>| a.to_vec().unwrap().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(with_kernels(|| f.cumsum(Some(1))).unwrap()), bits(f.cumsum(Some(1)).unwrap()), "cumsum of {rows} x {n} f32");
    }
}

/// Sequential inclusive scans of each row of `v` (rows of `n`), the references of
/// `scan_kernel_combines_many_tiles`.
fn row_scan<T: Copy>(v: &[T], n: usize, ident: T, f: impl Fn(T, T) -> T) -> Vec<T> {
    let mut out = Vec::with_capacity(v.len());
    for row in v.chunks(n) {
        let mut acc = ident;
        for &x in row {
            acc = f(acc, x);
            out.push(acc);
        }
    }
    out
}

#[test]
fn scan_kernel_combines_many_tiles() {
    // Many tiles (one block each; the CPU device runs one block per host thread at a time, so
    // most look-backs meet predecessors of other threads, finished or not), rows shorter and
    // longer than a tile. A tile whose look-back skipped, repeated or misplaced
    // a predecessor's total shifts every later element of its row by at least one element's
    // value: the i64 and f64 sums are exact, the product of values just above 1 is off by a
    // whole tile's product (about e^0.2).
    let _cpu = on_cpu();
    let r = &mut Rng::new();
    let blocks = Device::cpu().multiprocessor_count() as usize * 6;
    for (rows, n) in [(1usize, (blocks + 7) * 8192 + 17), (3, 5 * 8192 - 1), (2 * blocks + 3, 100), (blocks + 1, 8192)] {
        let v: Vec<i64> = (0..rows * n).map(|_| r.int(i64::MIN, i64::MAX)).collect();
        let x = Array::<i64>::from_shape_vec([rows, n], v.clone()).unwrap();
        let got = with_kernels(|| x.cumsum(Some(1))).unwrap().to_vec().unwrap();
        assert_eq!(got, row_scan(&v, n, 0, i64::wrapping_add), "i64 cumsum of {rows} x {n}");
        // Integers below 2^31 and one of 2^52 at the start of each row: every sum is exact.
        let mut d: Vec<f64> = (0..rows * n).map(|_| r.int(-1 << 31, 1 << 31) as f64).collect();
        d.iter_mut().step_by(n).for_each(|e| *e = 4_503_599_627_370_496.0);
        let y = Array::<f64>::from_shape_vec([rows, n], d.clone()).unwrap();
        let got = with_kernels(|| y.cumsum(Some(1))).unwrap().to_vec().unwrap();
        assert_eq!(got, row_scan(&d, n, 0.0, |a, b| a + b), "f64 cumsum of {rows} x {n}");
        let f: Vec<f32> = (0..rows * n).map(|_| r.int(-3, 3) as f32).collect();
        let z = Array::<f32>::from_shape_vec([rows, n], f.clone()).unwrap();
        let got = with_kernels(|| z.cumsum(Some(1))).unwrap().to_vec().unwrap();
        assert_eq!(got, row_scan(&f, n, 0.0, |a, b| a + b), "f32 cumsum of {rows} x {n}");
        let p: Vec<f64> = (0..rows * n).map(|_| 1.0 + r.range(0.0, 1e-4)).collect();
        let w = Array::<f64>::from_shape_vec([rows, n], p.clone()).unwrap();
        let got = with_kernels(|| w.cumprod(Some(1))).unwrap().to_vec().unwrap();
        let want = row_scan(&p, n, 1.0, |a, b| a * b);
        for (i, (g, e)) in got.iter().zip(&want).enumerate() {
            assert!((g - e).abs() <= 1e-12 * e * ((i % n) as f64 + 1.0).sqrt(), "f64 cumprod of {rows} x {n} at {i}: {g} against {e}");
        }
    }
}

#[test]
fn sort_kernels_match_the_host_sort() {
    let _cpu = on_cpu();
    let r = &mut Rng::new();
    let specials = [0.0f32, -0.0, f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY];
    // Around the scatter's tile (`TILE`, 4096 keys) and across tiles.
    let t = crate::sort::TILE;
    for n in [1usize, 511, t - 1, t, t + 1, 3 * t + 7, 9001] {
        let f: Vec<f32> = (0..n)
            .map(|_| if r.int(0, 3) == 0 { specials[r.int(0, 5) as usize] } else { r.range(-1e3, 1e3) as f32 })
            .collect();
        let x = Array::<f32>::from_vec(f).unwrap();
        let bits = |a: Array<f32>| a.to_vec().unwrap().iter().map(|v| v.to_bits()).collect::<Vec<u32>>();
        assert_eq!(bits(with_kernels(|| x.sort(None)).unwrap()), bits(x.sort(None).unwrap()), "sort of {n} f32");
        assert_eq!(with_kernels(|| x.argsort(None)).unwrap().to_vec().unwrap(), x.argsort(None).unwrap().to_vec().unwrap(), "argsort of {n} f32");
        let i: Vec<i64> = (0..n).map(|_| r.int(-1000, 1000)).collect();
        let y = Array::<i64>::from_vec(i).unwrap();
        assert_eq!(with_kernels(|| y.argsort(None)).unwrap().to_vec().unwrap(), y.argsort(None).unwrap().to_vec().unwrap(), "argsort of {n} i64");
        let u = with_kernels(|| y.unique_all()).unwrap();
        let h = y.unique_all().unwrap();
        for (what, k, h) in [("indices", &u.indices, &h.indices), ("inverse", &u.inverse, &h.inverse), ("counts", &u.counts, &h.counts)] {
            assert_eq!(k.to_vec().unwrap(), h.to_vec().unwrap(), "unique_all of {n} i64: {what}");
        }
        // Rows: the two sorts over the whole array (by key, then by row).
        let m = y.reshape([1, n]).unwrap().broadcast_to([3, n]).unwrap().copy().unwrap();
        assert_eq!(with_kernels(|| m.argsort(Some(1))).unwrap().to_vec().unwrap(), m.argsort(Some(1)).unwrap().to_vec().unwrap(), "argsort of 3 rows of {n}");
    }
}

/// The radix sort's kernels over many tiles with skewed digits (each pass's look-back then adds,
/// for most digits, zero counts over every tile before, and meets the same digit in every tile):
/// all keys equal, two distinct values, sorted and reverse-sorted input, and random keys, against
/// the host's sort. Each tile's position comes from the tiles before it, so a wrong look-back
/// puts whole tiles in the wrong place.
#[test]
fn sort_kernels_with_skewed_digits_over_many_tiles() {
    let _cpu = on_cpu();
    let r = &mut Rng::new();
    let n = 24 * crate::sort::TILE + 5;
    let cases: [(&str, Vec<f32>); 5] = [
        ("all equal", vec![-2.5; n]),
        ("two values", (0..n).map(|_| if r.int(0, 1) == 0 { 1.0 } else { -0.0 }).collect()),
        ("sorted", (0..n).map(|i| i as f32 * 0.25 - 1e3).collect()),
        ("reverse-sorted", (0..n).map(|i| 1e3 - i as f32 * 0.25).collect()),
        ("random", (0..n).map(|_| r.range(-1e3, 1e3) as f32).collect()),
    ];
    let bits = |a: Array<f32>| a.to_vec().unwrap().iter().map(|v| v.to_bits()).collect::<Vec<u32>>();
    for (what, f) in cases {
        let x = Array::<f32>::from_vec(f).unwrap();
        assert_eq!(bits(with_kernels(|| x.sort(None)).unwrap()), bits(x.sort(None).unwrap()), "sort of {n} f32, {what}");
        if what != "random" {
            assert_eq!(
                with_kernels(|| x.argsort(None)).unwrap().to_vec().unwrap(),
                x.argsort(None).unwrap().to_vec().unwrap(),
                "argsort of {n} f32, {what}"
            );
        }
    }
    // 8-byte keys: every digit but the lowest few skipped (i64) or all 13 passes (f64).
    let down: Vec<i64> = (0..n as i64).rev().collect();
    let y = Array::<i64>::from_vec(down).unwrap();
    assert_eq!(with_kernels(|| y.argsort(None)).unwrap().to_vec().unwrap(), y.argsort(None).unwrap().to_vec().unwrap(), "argsort of {n} reverse-sorted i64");
    let two: Vec<f64> = (0..n).map(|_| if r.int(0, 1) == 0 { f64::NAN } else { -3.0 }).collect();
    let z = Array::<f64>::from_vec(two).unwrap();
    assert_eq!(with_kernels(|| z.argsort(None)).unwrap().to_vec().unwrap(), z.argsort(None).unwrap().to_vec().unwrap(), "argsort of {n} f64, NaN and -3");
}

/// The look-back's walk over tiles that have published only their counts (flag "aggregate"). On
/// the CPU device a launch's blocks run in order, so each tile finds the one before it finished
/// (its inclusive prefix published); here the tiles before `t0` are published by hand, tile 0
/// with its inclusive prefix and tiles 1 to `t0 - 1` with their counts alone, and the blocks
/// start at tile `t0` (`counter[pass] = t0`): the first walks back over all of them, adding
/// their counts, and the keys of tiles `t0..` must land where a stable sort by the digit puts
/// them, with `radix_scatter` and with `radix_scatter_keys` (keys alone).
#[test]
fn sort_scatter_walks_back_over_published_counts() {
    let _cpu = on_cpu();
    let r = &mut Rng::new();
    let (tile, tiles, pass, shift) = (crate::sort::TILE, 9usize, 2u32, 5u32);
    let n = tiles * tile - 100;
    // Walks of 1, 4, 5 and 8 tiles (the look-back reads 4 at a time).
    for t0 in [1usize, 4, 5, 8] {
        for alone in [false, true] {
            scatter_after_published_counts(r, tile, tiles, n, t0, pass, shift, alone);
        }
    }
}

/// `sort_scatter_walks_back_over_published_counts` with the blocks starting at tile `t0`, by
/// `radix_scatter_keys` when `alone`, else by `radix_scatter`.
#[allow(clippy::too_many_arguments)]
fn scatter_after_published_counts(r: &mut Rng, tile: usize, tiles: usize, n: usize, t0: usize, pass: u32, shift: u32, alone: bool) {
    use crate::launch::LaunchConfig;
    use crate::sort::kernels::{radix_scatter, radix_scatter_keys};
    // Skewed digits: most keys in a few digits, some digits in no tile.
    let keys: Vec<u32> = (0..n).map(|_| if r.int(0, 3) == 0 { r.int(0, 1 << 12) as u32 } else { (r.int(0, 3) as u32) << 6 }).collect();
    let digit = |k: u32| ((k >> shift) & 31) as usize;
    let mut total = [0u64; 32];
    let mut per_tile = vec![[0u64; 32]; tiles];
    for (i, &k) in keys.iter().enumerate() {
        total[digit(k)] += 1;
        per_tile[i / tile][digit(k)] += 1;
    }
    let (agg, inc) = ((2 * pass + 1) as u64, (2 * pass + 2) as u64);
    let mut status = vec![0u64; tiles * 32];
    for t in 0..t0 {
        for d in 0..32 {
            status[t * 32 + d] = (if t == 0 { inc } else { agg }) << 56 | per_tile[t][d];
        }
    }
    // Where a stable sort by the digit puts each key.
    let mut start = [0u64; 32];
    for d in 1..32 {
        start[d] = start[d - 1] + total[d - 1];
    }
    let mut want = vec![u32::MAX; n];
    for &k in &keys {
        want[start[digit(k)] as usize] = k;
        start[digit(k)] += 1;
    }
    let src = Array::<u32>::from_vec(keys).unwrap();
    let mut dst = Array::<u32>::from_vec(vec![u32::MAX; n]).unwrap();
    let vals = Array::<i64>::from_vec(vec![0]).unwrap();
    let mut vals_out = vals.copy().unwrap();
    let hist = Array::<u64>::from_vec(total.to_vec()).unwrap();
    let mut status_a = Array::<u64>::from_vec(status).unwrap();
    let mut counter = Array::<u32>::from_vec(vec![0, 0, t0 as u32]).unwrap();
    let cfg = LaunchConfig::new((tiles - t0) as u32, crate::sort::THREADS).shared_mem(crate::sort::scatter_shared_bytes(4, false));
    // SAFETY: `radix_scatter` is unchecked: `tiles - t0` blocks take the tiles `t0..tiles` (from
    // `counter[2] = t0`), reading keys below `n` and the status words of tiles below `tiles`;
    // each key goes to a slot below `n` of `dst` (the positions of a permutation); no values.
    // `radix_scatter_keys` has the same contract.
    let (sign, inf) = (1u32 << 31, f32::INFINITY.to_bits());
    if alone {
        // SAFETY: as above.
        unsafe {
            radix_scatter_keys::launch(&cfg, &src, &mut dst, &vals, &mut vals_out, 0, n as u64, shift, 0, sign, inf, &hist, 0, pass, &mut status_a, &mut counter)
        }
        .unwrap();
    } else {
        // SAFETY: as above.
        unsafe { radix_scatter::launch(&cfg, &src, &mut dst, &vals, &mut vals_out, 0, n as u64, shift, 0, sign, inf, &hist, 0, pass, &mut status_a, &mut counter) }
            .unwrap();
    }
    let got = dst.to_vec().unwrap();
    // Only the keys of tiles `t0..` were written; their slots must hold what the sort puts there.
    let written: Vec<usize> = (0..n).filter(|&i| got[i] != u32::MAX).collect();
    assert_eq!(written.len(), n - t0 * tile, "every key of tiles {t0}.. written once (alone: {alone})");
    for &i in &written {
        assert_eq!(got[i], want[i], "slot {i} (blocks from tile {t0})");
    }
    let st = status_a.to_vec().unwrap();
    for d in 0..32 {
        let before: u64 = (0..tiles).map(|t| per_tile[t][d]).sum();
        assert_eq!(st[(tiles - 1) * 32 + d], inc << 56 | before, "the last tile's inclusive count of digit {d}");
    }
}
