//! `cumsum`/`cumprod`, `bincount`, `histogram`, `searchsorted` and `nonzero`/`flatnonzero`/
//! `argwhere` on each device, against host
//! references written out here (issue 36, item 2). Each test runs on the CPU device (in CI) and on
//! CUDA device 0 (ignored without a GPU; `cargo test -p cuprum-runtime --test gpu_scan_count --
//! --include-ignored` on a GPU machine).

mod support;
use support::Rng;

use cuprum_runtime::{Array, Error, Side, Slice};

on_both_devices!(
    cuprum_runtime::Device;
    cumsum_matches_a_sequential_sum,
    cumsum_along_every_axis,
    cumprod_matches_a_sequential_product,
    scans_of_edge_cases_and_bad_input,
    bincount_of_bytes,
    bincount_of_wider_integers,
    histogram_matches_the_edges,
    searchsorted_both_sides_with_nan,
    nonzero_matches_the_host,
    nonzero_of_views,
    nonzero_edge_cases_and_bad_input,
);

/// Lengths around the kernel's tile of 8192 (and the earlier 4096) and across many tiles, and past
/// the CPU device's switch to threads (2^15 elements; runtime/src/cpu/scan.rs); the GPU adds
/// millions (2^24 + 5: 2049 tiles, about four times the blocks resident at once).
fn lengths() -> Vec<usize> {
    let mut n = vec![1, 31, 4095, 4096, 4097, 8191, 8192, 8193, 3 * 8192 + 5, 70_001];
    if !cuprum_runtime::Device::current().unwrap().is_cpu() {
        n.extend([1 << 20, (1 << 22) + 3, (1 << 24) + 5]);
    }
    n
}

fn cumsum_matches_a_sequential_sum() {
    let r = &mut Rng::new();
    for n in lengths() {
        // Integer values in f32 and f64: every prefix sum is exact, so the parallel order
        // cannot change a bit and the comparison is exact.
        let ints: Vec<i64> = (0..n).map(|_| r.int(-8, 9)).collect();
        let mut want = Vec::with_capacity(n);
        let mut s = 0i64;
        for &v in &ints {
            s += v;
            want.push(s);
        }
        let xf = Array::<f32>::from_vec(ints.iter().map(|&v| v as f32).collect()).unwrap();
        let got = xf.cumsum(None).unwrap().to_vec().unwrap();
        assert!(got.iter().zip(&want).all(|(g, w)| *g as i64 == *w), "f32 cumsum of {n}");
        let xd = Array::<f64>::from_vec(ints.iter().map(|&v| v as f64).collect()).unwrap();
        let got = xd.cumsum(None).unwrap().to_vec().unwrap();
        assert!(got.iter().zip(&want).all(|(g, w)| *g as i64 == *w), "f64 cumsum of {n}");
        let xi = Array::<i64>::from_vec(ints.clone()).unwrap();
        assert_eq!(xi.cumsum(None).unwrap().to_vec().unwrap(), want, "i64 cumsum of {n}");
        // Non-integer values: within rounding of an f64 reference.
        let vals: Vec<f32> = (0..n).map(|_| r.range(0.5, 1.5) as f32).collect();
        let got = Array::<f32>::from_vec(vals.clone()).unwrap().cumsum(None).unwrap().to_vec().unwrap();
        let mut s = 0f64;
        for (i, (&v, g)) in vals.iter().zip(&got).enumerate() {
            s += v as f64;
            assert!(((*g as f64) - s).abs() <= 1e-5 * s + 1e-6, "f32 cumsum of {n} at {i}: {g} against {s}");
        }
    }
    // Wrapping integers, u32 and i32 (NVRTC instances on a GPU).
    let big = Array::<i64>::from_vec(vec![i64::MAX, 1, 1]).unwrap();
    assert_eq!(big.cumsum(None).unwrap().to_vec().unwrap(), [i64::MAX, i64::MIN, i64::MIN + 1]);
    let u: Vec<u32> = (0..10_000).map(|_| r.int(0, 1 << 31) as u32).collect();
    let mut s = 0u32;
    let want: Vec<u32> = u.iter().map(|&v| { s = s.wrapping_add(v); s }).collect();
    assert_eq!(Array::<u32>::from_vec(u).unwrap().cumsum(None).unwrap().to_vec().unwrap(), want);
    // Negative i32 values over many tiles: 4-byte types pass a tile's total through its status
    // word as bits (runtime/kernels/scan.rs), which must come back with their sign.
    let v: Vec<i32> = (0..300_001).map(|_| r.int(-1 << 20, 1 << 20) as i32).collect();
    let mut s = 0i32;
    let want: Vec<i32> = v.iter().map(|&x| { s = s.wrapping_add(x); s }).collect();
    assert_eq!(Array::<i32>::from_vec(v).unwrap().cumsum(None).unwrap().to_vec().unwrap(), want, "i32 cumsum of 300001");
    // Negative zeros stay negative, as in a sequential sum (one tile, then 13 tiles whose
    // totals, -0.0, pass through the status words).
    for n in [5000, 100_000] {
        let z = Array::<f32>::from_vec(vec![-0.0; n]).unwrap().cumsum(None).unwrap().to_vec().unwrap();
        assert!(z.iter().all(|v| *v == 0.0 && v.is_sign_negative()), "a sum of {n} -0.0 is -0.0");
    }
}

fn cumsum_along_every_axis() {
    let r = &mut Rng::new();
    // [1500, 5000]: rows longer than a tile, 3000 tiles (more than a GPU's scan grid has blocks).
    for shape in [vec![5usize, 4500], vec![3, 4, 5], vec![7, 1, 301], vec![2, 3, 4, 5], vec![1500, 5000]] {
        let n: usize = shape.iter().product();
        let host: Vec<i64> = (0..n).map(|_| r.int(-100, 100)).collect();
        let x = Array::<i64>::from_shape_vec(shape.clone(), host.clone()).unwrap();
        for axis in 0..shape.len() {
            let got = x.cumsum(Some(axis as isize)).unwrap();
            assert_eq!(got.shape(), &shape[..]);
            assert!(got.is_c_contiguous());
            let got = got.to_vec().unwrap();
            // Reference: running sums along `axis` in C order.
            let inner: usize = shape[axis + 1..].iter().product();
            let len = shape[axis];
            let mut want = host.clone();
            for outer in 0..n / (inner * len) {
                for i in 0..inner {
                    for k in 1..len {
                        let at = (outer * len + k) * inner + i;
                        want[at] += want[at - inner];
                    }
                }
            }
            assert_eq!(got, want, "shape {shape:?} axis {axis}");
            let neg = x.cumsum(Some(axis as isize - shape.len() as isize)).unwrap().to_vec().unwrap();
            assert_eq!(neg, want, "negative axis");
        }
    }
    // A transposed (non-contiguous) view.
    let host: Vec<f64> = (0..600).map(|_| r.int(-50, 50) as f64).collect();
    let x = Array::<f64>::from_shape_vec([20, 30], host.clone()).unwrap();
    let t = x.transpose();
    let got = t.cumsum(Some(1)).unwrap().to_vec().unwrap();
    for i in 0..30 {
        let mut s = 0.0;
        for j in 0..20 {
            s += host[j * 30 + i];
            assert_eq!(got[i * 20 + j], s, "transposed view at ({i}, {j})");
        }
    }
}

fn cumprod_matches_a_sequential_product() {
    let r = &mut Rng::new();
    for n in [1usize, 4097, 70_001, 1 << 20].into_iter().filter(|&n| n < 100_000 || !cuprum_runtime::Device::current().unwrap().is_cpu()) {
        let vals: Vec<f64> = (0..n).map(|_| 1.0 + r.range(-1e-5, 1e-5)).collect();
        let got = Array::<f64>::from_vec(vals.clone()).unwrap().cumprod(None).unwrap().to_vec().unwrap();
        let mut p = 1f64;
        for (i, (&v, g)) in vals.iter().zip(&got).enumerate() {
            p *= v;
            assert!((g - p).abs() <= 1e-12 * p.abs() * (1.0 + (i as f64).sqrt()), "f64 cumprod of {n} at {i}");
        }
        // Integers wrap exactly.
        let ints: Vec<i64> = (0..n).map(|_| r.int(-3, 4)).collect();
        let mut p = 1i64;
        let want: Vec<i64> = ints.iter().map(|&v| { p = p.wrapping_mul(v); p }).collect();
        assert_eq!(Array::<i64>::from_vec(ints).unwrap().cumprod(None).unwrap().to_vec().unwrap(), want);
    }
    let x = Array::<f32>::from_shape_vec([2, 3], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    assert_eq!(x.cumprod(Some(0)).unwrap().to_vec().unwrap(), [1.0, 2.0, 3.0, 4.0, 10.0, 18.0]);
}

fn scans_of_edge_cases_and_bad_input() {
    let e = Array::<f32>::from_vec(Vec::new()).unwrap();
    assert!(e.cumsum(None).unwrap().is_empty());
    let e2 = Array::<f32>::from_shape_vec([3, 0], Vec::new()).unwrap();
    assert_eq!(e2.cumsum(Some(0)).unwrap().shape(), &[3, 0]);
    let s = Array::<i64>::from_shape_vec([0usize; 0], vec![7]).unwrap();
    assert_eq!(s.cumsum(None).unwrap().to_vec().unwrap(), [7]);
    assert!(matches!(s.cumsum(Some(0)), Err(Error::InvalidAxis { .. })));
    let x = Array::<f32>::zeros([2, 3]).unwrap();
    assert!(matches!(x.cumsum(Some(2)), Err(Error::InvalidAxis { .. })));
    assert!(matches!(x.cumsum(Some(-3)), Err(Error::InvalidAxis { .. })));
    let small = Array::<i8>::zeros(4).unwrap();
    match small.cumsum(None) {
        Err(Error::Unsupported { what }) => assert!(what.contains("astype"), "{what}"),
        other => panic!("i8 cumsum: {other:?}"),
    }
    // NaN and infinities propagate as in a sequential sum.
    let y = Array::<f64>::from_vec(vec![1.0, f64::NAN, 2.0]).unwrap().cumsum(None).unwrap().to_vec().unwrap();
    assert!(y[0] == 1.0 && y[1].is_nan() && y[2].is_nan());
    let y = Array::<f64>::from_vec(vec![1.0, f64::INFINITY, -1.0]).unwrap().cumsum(None).unwrap().to_vec().unwrap();
    assert_eq!(y, [1.0, f64::INFINITY, f64::INFINITY]);
}

fn bincount_of_bytes() {
    let r = &mut Rng::new();
    for n in [0usize, 1, 3, 5, 7, 15, 16, 17, 63, 64, 65, 100_003, 1 << 22] {
        let host: Vec<u8> = (0..n).map(|_| r.int(0, 200) as u8).collect();
        let x = Array::<u8>::from_vec(host.clone()).unwrap();
        // At every alignment of the first byte against the kernel's 16-byte loads.
        let skips: Vec<usize> = if n > 1 << 20 { vec![0, 3, 8, 15] } else { (0..17.min(n + 1)).collect() };
        for skip in skips {
            let v = x.slice(0, Slice::from(skip as isize..)).unwrap();
            let mut want = vec![0i64; 256];
            for &b in &host[skip..] {
                want[b as usize] += 1;
            }
            let used = want.iter().rposition(|&c| c != 0).map_or(0, |i| i + 1);
            want.truncate(used);
            assert_eq!(v.bincount(0).unwrap().to_vec().unwrap(), want, "{n} bytes from {skip}");
            let mut longer = want.clone();
            longer.resize(300, 0);
            assert_eq!(v.bincount(300).unwrap().to_vec().unwrap(), longer, "minlength 300");
        }
    }
    // Every byte the same value (the bins' contention) and the value 255.
    let same = Array::<u8>::from_vec(vec![255; 123_457]).unwrap();
    let got = same.bincount(0).unwrap().to_vec().unwrap();
    assert_eq!(got.len(), 256);
    assert_eq!(got[255], 123_457);
    assert!(got[..255].iter().all(|&c| c == 0));
    // A strided view is counted from a copy.
    let strided = Array::<u8>::from_vec((0..=255).collect()).unwrap().slice(0, Slice::new(None, None, 2)).unwrap();
    let got = strided.bincount(0).unwrap().to_vec().unwrap();
    assert_eq!(got.len(), 255);
    assert!(got.iter().enumerate().all(|(i, &c)| c == if i % 2 == 0 { 1 } else { 0 }));
}

fn bincount_of_wider_integers() {
    let r = &mut Rng::new();
    for (hi, n) in [(100i64, 50_000usize), (5000, 200_001), (70_000, 10_000)] {
        let host: Vec<i32> = (0..n).map(|_| r.int(0, hi) as i32).collect();
        let mut want = vec![0i64; *host.iter().max().unwrap() as usize + 1];
        for &v in &host {
            want[v as usize] += 1;
        }
        let x = Array::<i32>::from_vec(host.clone()).unwrap();
        assert_eq!(x.bincount(0).unwrap().to_vec().unwrap(), want, "values below {hi}");
        // Weights: f64 sums within rounding.
        let w: Vec<f64> = (0..n).map(|_| r.range(-1.0, 1.0)).collect();
        let mut want_w = vec![0f64; want.len() + 10];
        for (&v, &wi) in host.iter().zip(&w) {
            want_w[v as usize] += wi;
        }
        let got = x.bincount_weighted(&Array::<f64>::from_vec(w).unwrap(), want.len() + 10).unwrap().to_vec().unwrap();
        assert_eq!(got.len(), want_w.len());
        assert!(got.iter().zip(&want_w).all(|(g, w)| (g - w).abs() <= 1e-9), "weighted sums");
    }
    let u = Array::<u64>::from_vec(vec![3, 0, 3]).unwrap();
    assert_eq!(u.bincount(2).unwrap().to_vec().unwrap(), [1, 0, 0, 2]);
    let e = Array::<i64>::from_vec(Vec::new()).unwrap();
    assert_eq!(e.bincount(3).unwrap().to_vec().unwrap(), [0, 0, 0]);
    // Bad input: a clear error.
    let neg = Array::<i64>::from_vec(vec![1, -2, 3]).unwrap();
    assert!(matches!(neg.bincount(0), Err(Error::InvalidValue { .. })));
    let two_d = Array::<i64>::zeros([2, 2]).unwrap();
    assert!(matches!(two_d.bincount(0), Err(Error::InvalidShape { .. })));
    let x = Array::<i64>::from_vec(vec![1, 2]).unwrap();
    assert!(matches!(x.bincount_weighted(&Array::<f64>::zeros(3).unwrap(), 0), Err(Error::InvalidShape { .. })));
}

/// The bin of `v` among `edges` (the last bin closed), or None outside: by comparison with the
/// edges, which is what NumPy's arithmetic plus correction gives.
fn bin_of<T: PartialOrd + Copy>(v: T, edges: &[T]) -> Option<usize> {
    let bins = edges.len() - 1;
    if !(v >= edges[0] && v <= edges[bins]) {
        return None;
    }
    if v >= edges[bins - 1] {
        return Some(bins - 1);
    }
    (0..bins).find(|&b| v >= edges[b] && v < edges[b + 1])
}

fn histogram_matches_the_edges() {
    let r = &mut Rng::new();
    for bins in [1usize, 10, 333, 5000] {
        let host: Vec<f32> = (0..100_000).map(|_| (r.range(-3.0, 3.0) * r.unit()) as f32).collect();
        let x = Array::<f32>::from_vec(host.clone()).unwrap();
        for range in [None, Some((-1.0, 2.5))] {
            let (counts, edges) = x.histogram(bins, range).unwrap();
            let edges = edges.to_vec().unwrap();
            assert_eq!(edges.len(), bins + 1);
            let (lo, hi) = range.unwrap_or_else(|| {
                let lo = host.iter().cloned().fold(f32::INFINITY, f32::min) as f64;
                let hi = host.iter().cloned().fold(f32::NEG_INFINITY, f32::max) as f64;
                (lo, hi)
            });
            assert_eq!(edges[0], lo as f32);
            assert_eq!(edges[bins], hi as f32);
            let mut want = vec![0i64; bins];
            for &v in &host {
                if let Some(b) = bin_of(v, &edges) {
                    want[b] += 1;
                }
            }
            assert_eq!(counts.to_vec().unwrap(), want, "{bins} bins over {range:?}");
        }
    }
    // Values on the edges, NaN and values outside an explicit range, f64.
    let x = Array::<f64>::from_vec(vec![0.0, 1.0, 2.0, 3.0, f64::NAN, -1.0, 4.0, 3.0]).unwrap();
    let (counts, edges) = x.histogram(3, Some((0.0, 3.0))).unwrap();
    assert_eq!(edges.to_vec().unwrap(), [0.0, 1.0, 2.0, 3.0]);
    assert_eq!(counts.to_vec().unwrap(), [1, 1, 3]);
    // A range of width 0 is widened; an empty array counts nothing.
    let (counts, edges) = Array::<f64>::from_vec(vec![5.0; 4]).unwrap().histogram(2, None).unwrap();
    assert_eq!(edges.to_vec().unwrap(), [4.5, 5.0, 5.5]);
    assert_eq!(counts.to_vec().unwrap(), [0, 4]);
    let (counts, _) = Array::<f32>::from_vec(Vec::new()).unwrap().histogram(4, None).unwrap();
    assert_eq!(counts.to_vec().unwrap(), [0, 0, 0, 0]);
    // Bad input.
    assert!(matches!(x.histogram(3, None), Err(Error::InvalidValue { .. })), "NaN in an automatic range");
    assert!(matches!(x.histogram(0, Some((0.0, 1.0))), Err(Error::InvalidValue { .. })));
    assert!(matches!(x.histogram(2, Some((1.0, 0.0))), Err(Error::InvalidValue { .. })));
    assert!(matches!(x.histogram(2, Some((0.0, f64::INFINITY))), Err(Error::InvalidValue { .. })));
}

/// The index NumPy's searchsorted gives, by a linear scan with NaN last.
fn insertion<T: PartialOrd + Copy>(a: &[T], v: T, side: Side) -> i64 {
    let nan = |x: T| x.partial_cmp(&x).is_none();
    let before = |x: T, y: T| x < y || (nan(y) && !nan(x));
    let pos = match side {
        Side::Left => a.iter().position(|&x| !before(x, v)),
        Side::Right => a.iter().position(|&x| before(v, x)),
    };
    pos.unwrap_or(a.len()) as i64
}

fn searchsorted_both_sides_with_nan() {
    let r = &mut Rng::new();
    let mut a: Vec<f64> = (0..1000).map(|_| r.int(-50, 50) as f64 * 0.5).collect();
    a.sort_by(|x, y| x.partial_cmp(y).unwrap());
    a.extend([f64::INFINITY, f64::NAN, f64::NAN]);
    let mut v: Vec<f64> = (0..5000).map(|_| r.int(-60, 60) as f64 * 0.25).collect();
    v.extend([f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 0.0]);
    let av = Array::<f64>::from_vec(a.clone()).unwrap();
    let vv = Array::<f64>::from_shape_vec([1001, 5], v.clone()).unwrap();
    for side in [Side::Left, Side::Right] {
        let got = av.searchsorted(&vv, side).unwrap();
        assert_eq!(got.shape(), &[1001, 5]);
        let want: Vec<i64> = v.iter().map(|&x| insertion(&a, x, side)).collect();
        assert_eq!(got.to_vec().unwrap(), want, "{side:?}");
    }
    let ai: Vec<i64> = (0..777).map(|i| i / 3).collect();
    let vi: Vec<i64> = (0..3000).map(|_| r.int(-5, 300)).collect();
    let got = Array::<i64>::from_vec(ai.clone()).unwrap().searchsorted(&Array::<i64>::from_vec(vi.clone()).unwrap(), Side::Right).unwrap();
    let want: Vec<i64> = vi.iter().map(|&x| insertion(&ai, x, Side::Right)).collect();
    assert_eq!(got.to_vec().unwrap(), want);
    // An empty sorted array, and a 2-d one (an error).
    let empty = Array::<f32>::from_vec(Vec::new()).unwrap();
    assert_eq!(empty.searchsorted(&Array::<f32>::from_vec(vec![1.0, 2.0]).unwrap(), Side::Left).unwrap().to_vec().unwrap(), [0, 0]);
    assert!(matches!(Array::<f32>::zeros([2, 2]).unwrap().searchsorted(&empty, Side::Left), Err(Error::InvalidShape { .. })));
}

/// The host's `nonzero` of the C-order truth values `nz` of `shape`: one coordinate list per axis.
fn host_nonzero(nz: &[bool], shape: &[usize]) -> Vec<Vec<i64>> {
    let mut out = vec![Vec::new(); shape.len()];
    for (i, _) in nz.iter().enumerate().filter(|(_, t)| **t) {
        let mut rest = i;
        for d in (0..shape.len()).rev() {
            out[d].push((rest % shape[d]) as i64);
            rest /= shape[d];
        }
    }
    out
}

/// `nonzero`, `flatnonzero` and `argwhere` of `a` against the host's, `nz` the truth of `a`'s
/// elements in C order.
fn check_nonzero<T: cuprum_runtime::Scalar>(a: &Array<T>, nz: &[bool], what: &str) {
    let shape = a.shape().to_vec();
    let want = host_nonzero(nz, &shape);
    let got = a.nonzero().unwrap();
    assert_eq!(got.len(), shape.len(), "{what}: one array per axis");
    for (d, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g.shape(), [w.len()], "{what}: axis {d}");
        assert_eq!(&g.to_vec().unwrap(), w, "{what}: axis {d}");
    }
    let flat: Vec<i64> = nz.iter().enumerate().filter(|(_, t)| **t).map(|(i, _)| i as i64).collect();
    assert_eq!(a.flatnonzero().unwrap().to_vec().unwrap(), flat, "{what}: flatnonzero");
    let rows = a.argwhere().unwrap();
    assert_eq!(rows.shape(), [flat.len(), shape.len()], "{what}: argwhere");
    let by_row: Vec<i64> = (0..flat.len()).flat_map(|k| want.iter().map(move |w| w[k])).collect();
    assert_eq!(rows.to_vec().unwrap(), by_row, "{what}: argwhere");
}

fn nonzero_matches_the_host() {
    let r = &mut Rng::new();
    let mut shapes: Vec<Vec<usize>> = lengths().into_iter().map(|n| vec![n]).collect();
    shapes.extend([vec![3, 5, 7], vec![2049, 3], vec![2, 1, 3, 1, 5], vec![1, 1]]);
    for shape in shapes {
        let n: usize = shape.iter().product();
        // About a third zeros (both signs), the rest non-zero: NaN and infinities included.
        let x: Vec<f32> = (0..n)
            .map(|_| match r.int(0, 8) {
                0 | 1 => 0.0,
                2 => -0.0,
                3 => f32::NAN,
                4 => f32::NEG_INFINITY,
                _ => r.range(-1e-30, 1e-30) as f32 + r.range(-2.0, 2.0) as f32,
            })
            .collect();
        let nz: Vec<bool> = x.iter().map(|v| *v != 0.0 || v.is_nan()).collect();
        check_nonzero(&Array::from_shape_vec(shape.clone(), x).unwrap(), &nz, &format!("f32 {shape:?}"));
        let i: Vec<i32> = (0..n).map(|_| if r.int(0, 2) == 0 { 0 } else { r.int(i32::MIN as i64, i32::MAX as i64) as i32 }).collect();
        let nz: Vec<bool> = i.iter().map(|v| *v != 0).collect();
        check_nonzero(&Array::from_shape_vec(shape.clone(), i).unwrap(), &nz, &format!("i32 {shape:?}"));
        let b: Vec<bool> = (0..n).map(|_| r.int(0, 3) == 0).collect();
        check_nonzero(&Array::from_shape_vec(shape.clone(), b.clone()).unwrap(), &b, &format!("bool {shape:?}"));
        // u64 values whose low 32 bits are zero (a truncating test would miss them).
        let u: Vec<u64> = (0..n).map(|_| (r.int(0, 2) as u64) << 40).collect();
        let nz: Vec<bool> = u.iter().map(|v| *v != 0).collect();
        check_nonzero(&Array::from_shape_vec(shape.clone(), u).unwrap(), &nz, &format!("u64 {shape:?}"));
    }
}

fn nonzero_of_views() {
    let r = &mut Rng::new();
    let x: Vec<f64> = (0..30 * 40).map(|_| if r.int(0, 1) == 0 { 0.0 } else { r.range(-5.0, 5.0) }).collect();
    let a = Array::<f64>::from_shape_vec([30, 40], x.clone()).unwrap();
    // The transpose: its C order is `x`'s column order.
    let t = a.transpose();
    let nz: Vec<bool> = (0..40).flat_map(|j| (0..30).map(move |i| (i, j))).map(|(i, j)| x[i * 40 + j] != 0.0).collect();
    check_nonzero(&t, &nz, "transpose");
    // Every third column from the last, rows 5.. : strides and an offset.
    let v = a.slice(0, 5..).unwrap().slice(1, Slice::new(None, None, -3)).unwrap();
    let cols: Vec<usize> = (0..40).rev().step_by(3).collect();
    let nz: Vec<bool> = (5..30).flat_map(|i| cols.iter().map(move |&j| (i, j))).map(|(i, j)| x[i * 40 + j] != 0.0).collect();
    check_nonzero(&v, &nz, "strided view");
    // A broadcast view: every row the same.
    let row = Array::<f64>::from_vec(x[..40].to_vec()).unwrap();
    let b = row.broadcast_to([3, 40]).unwrap();
    let nz: Vec<bool> = (0..3).flat_map(|_| x[..40].iter().map(|v| *v != 0.0)).collect();
    check_nonzero(&b, &nz, "broadcast view");
}

fn nonzero_edge_cases_and_bad_input() {
    // Empty arrays: one empty index array per axis.
    for shape in [vec![0usize], vec![3, 0], vec![0, 2, 4]] {
        let e = Array::<f32>::zeros(shape.clone()).unwrap();
        check_nonzero(&e, &[], &format!("empty {shape:?}"));
    }
    // All zero (both signs) and all non-zero.
    let z = Array::<f32>::from_shape_vec([2, 3], vec![0.0, -0.0, 0.0, -0.0, 0.0, 0.0]).unwrap();
    check_nonzero(&z, &[false; 6], "zeros");
    let all = Array::<i64>::from_shape_vec([3, 3], (1..10).collect()).unwrap();
    check_nonzero(&all, &[true; 9], "all non-zero");
    // 0-d: nonzero is refused (NumPy >= 2.1), flatnonzero and argwhere take it.
    for (v, truth) in [(2.5f64, true), (0.0, false), (f64::NAN, true)] {
        let s = Array::<f64>::from_shape_vec(Vec::<usize>::new(), vec![v]).unwrap();
        match s.nonzero() {
            Err(Error::InvalidShape { op, detail }) => {
                assert_eq!(op, "nonzero");
                assert!(detail.contains("flatnonzero"), "{detail}");
            }
            other => panic!("nonzero of a 0-d array: {other:?}"),
        }
        let flat = s.flatnonzero().unwrap();
        assert_eq!(flat.to_vec().unwrap(), if truth { vec![0] } else { vec![] }, "0-d {v}");
        assert_eq!(s.argwhere().unwrap().shape(), [usize::from(truth), 0], "0-d {v}");
    }
}
