//! `argmax`/`argmin` of `f32` (the `arg_best_f32` built-in: integer order keys of the values)
//! against a host reference in f64 (NumPy's rules: the first position of the maximum, -0.0 equal
//! to +0.0, the first NaN of either sign beating every number), full and along each axis, over
//! views, with ties, NaN, infinities, signed zeros and subnormals, and the empty reduction's
//! error. Each runs on the CPU device (in CI) and on CUDA device 0 (ignored without a GPU; run
//! on a GPU machine with `cargo test -p cuprum-runtime --test gpu_argmax_f32 -- --include-ignored`).

mod support;
use support::Rng;

use cuprum_runtime::{Array, Error, Slice};

on_both_devices!(
    cuprum_runtime::Device;
    argmax_f32_full_and_along_axes_match_the_host,
    argmax_f32_over_views,
    argmax_f32_nan_inf_signed_zero_and_subnormals,
    argmax_f32_of_empty_and_0d_arrays,
);

/// The first position of the best value of `vals` (the largest, or with `min` the smallest),
/// compared in f64, or of the first NaN.
fn host_best(vals: &[f32], min: bool) -> i64 {
    if let Some(i) = vals.iter().position(|v| v.is_nan()) {
        return i as i64;
    }
    let mut best = 0usize;
    for (i, &v) in vals.iter().enumerate() {
        let (v, b) = (v as f64, vals[best] as f64);
        if (min && v < b) || (!min && v > b) {
            best = i;
        }
    }
    best as i64
}

/// `n` values in [-1, 1) with the largest value repeated at three positions and the smallest
/// at two (ties: the first must win).
fn with_ties(rng: &mut Rng, n: usize) -> Vec<f32> {
    let mut v: Vec<f32> = (0..n).map(|_| rng.range(-1.0, 1.0) as f32).collect();
    if n >= 4 {
        for _ in 0..3 {
            let k = rng.int(0, n as i64 - 1) as usize;
            v[k] = 2.5;
        }
        for _ in 0..2 {
            let k = rng.int(0, n as i64 - 1) as usize;
            v[k] = -2.5;
        }
    }
    v
}

fn argmax_f32_full_and_along_axes_match_the_host() {
    let mut rng = Rng::new();
    // Lengths across the vector head/tail and the split full reduction (parts of 4K-64K
    // elements combined by the last block on a GPU).
    for n in [1usize, 2, 3, 5, 17, 1000, 65_537, 300_001] {
        let v = with_ties(&mut rng, n);
        let x = Array::from_slice(&v).unwrap();
        assert_eq!(x.argmax().run().unwrap().to_vec().unwrap(), vec![host_best(&v, false)], "argmax of {n}");
        assert_eq!(x.argmin().run().unwrap().to_vec().unwrap(), vec![host_best(&v, true)], "argmin of {n}");
    }
    let (rows, cols) = (33usize, 4099usize);
    let v = with_ties(&mut rng, rows * cols);
    let x = Array::from_shape_vec([rows, cols], v.clone()).unwrap();
    let row = |r: usize| v[r * cols..(r + 1) * cols].to_vec();
    let col = |c: usize| (0..rows).map(|r| v[r * cols + c]).collect::<Vec<f32>>();
    for min in [false, true] {
        let call = |axis: isize, keepdims: bool| {
            let r = if min { x.argmin() } else { x.argmax() };
            r.axis(axis).keepdims(keepdims).run().unwrap()
        };
        let along1 = call(1, true);
        assert_eq!(along1.shape(), &[rows, 1]);
        let want: Vec<i64> = (0..rows).map(|r| host_best(&row(r), min)).collect();
        assert_eq!(along1.to_vec().unwrap(), want, "axis 1, min {min}");
        let want: Vec<i64> = (0..cols).map(|c| host_best(&col(c), min)).collect();
        assert_eq!(call(0, false).to_vec().unwrap(), want, "axis 0, min {min}");
        let got = if min { x.argmin() } else { x.argmax() }.run().unwrap().to_vec().unwrap();
        assert_eq!(got, vec![host_best(&v, min)], "full, min {min}");
    }
    // Into an `out` array.
    let mut out = Array::<i64>::full([rows], -7).unwrap();
    x.argmax().axis(1).out(&mut out).run().unwrap();
    assert_eq!(out.to_vec().unwrap(), (0..rows).map(|r| host_best(&row(r), false)).collect::<Vec<_>>());
}

fn argmax_f32_over_views() {
    let mut rng = Rng::new();
    let (rows, cols) = (7usize, 2053usize);
    let v = with_ties(&mut rng, rows * cols);
    let x = Array::from_shape_vec([rows, cols], v.clone()).unwrap();
    // Rows starting off a 16-byte boundary (a head read one by one, then vectors).
    for start in [1usize, 3] {
        let view = x.slice(1, start as isize..).unwrap();
        let got = view.argmax().axis(1).run().unwrap().to_vec().unwrap();
        let want: Vec<i64> = (0..rows).map(|r| host_best(&v[r * cols + start..(r + 1) * cols], false)).collect();
        assert_eq!(got, want, "argmax of the view from column {start}");
        let all: Vec<f32> = (0..rows).flat_map(|r| v[r * cols + start..(r + 1) * cols].to_vec()).collect();
        assert_eq!(view.argmin().run().unwrap().to_vec().unwrap(), vec![host_best(&all, true)], "argmin of the view from column {start}");
    }
    // The transpose: positions along its rows (the original columns).
    let t = x.transpose();
    let got = t.argmax().axis(1).run().unwrap().to_vec().unwrap();
    let want: Vec<i64> = (0..cols).map(|c| host_best(&(0..rows).map(|r| v[r * cols + c]).collect::<Vec<_>>(), false)).collect();
    assert_eq!(got, want, "argmax along the rows of the transpose");
    // Every other column: a strided row.
    let every_other = x.slice(1, Slice::full().step_by(2)).unwrap();
    let got = every_other.argmin().axis(1).run().unwrap().to_vec().unwrap();
    let want: Vec<i64> = (0..rows).map(|r| host_best(&v[r * cols..(r + 1) * cols].iter().step_by(2).copied().collect::<Vec<_>>(), true)).collect();
    assert_eq!(got, want, "argmin of every other column");
}

fn argmax_f32_nan_inf_signed_zero_and_subnormals() {
    let neg_nan = f32::from_bits(0xffc0_0001);
    let tiny = f32::from_bits(1); // the smallest subnormal
    let cases: Vec<(Vec<f32>, i64, i64)> = vec![
        // (values, argmax, argmin)
        (vec![-0.0, 0.0], 0, 0),
        (vec![0.0, -0.0, 0.0], 0, 0),
        (vec![-1.0, -0.0, 0.0, -0.0], 1, 0),
        (vec![1.0, f32::INFINITY, 3.0, f32::INFINITY], 1, 0),
        (vec![f32::NEG_INFINITY, 2.0, f32::NEG_INFINITY], 1, 0),
        (vec![f32::MAX, f32::INFINITY, f32::MIN, f32::NEG_INFINITY], 1, 3),
        (vec![1.0, 2.0, f32::NAN, 5.0, f32::NAN], 2, 2),
        (vec![f32::INFINITY, neg_nan, f32::NEG_INFINITY, f32::NAN], 1, 1),
        (vec![tiny, 2.0 * tiny, 0.0, -tiny, -2.0 * tiny], 1, 4),
        (vec![-tiny, -0.0, tiny, 0.0], 2, 0),
        (vec![f32::MIN_POSITIVE, tiny, -f32::MIN_POSITIVE], 0, 2),
    ];
    for (v, amax, amin) in &cases {
        assert_eq!(host_best(v, false), *amax, "host argmax of {v:?}");
        assert_eq!(host_best(v, true), *amin, "host argmin of {v:?}");
        let x = Array::from_slice(v).unwrap();
        assert_eq!(x.argmax().run().unwrap().to_vec().unwrap(), vec![*amax], "argmax of {v:?}");
        assert_eq!(x.argmin().run().unwrap().to_vec().unwrap(), vec![*amin], "argmin of {v:?}");
    }
    // The same specials inside a long row (vector loads and a split full reduction), far apart:
    // the NaN after the infinities, a -0.0 maximum tied with later +0.0.
    let mut rng = Rng::new();
    let n = 200_003usize;
    let mut v: Vec<f32> = (0..n).map(|_| rng.range(-1.0, -0.5) as f32).collect();
    v[70_001] = -0.0;
    v[150_000] = 0.0;
    v[199_999] = -0.0;
    let x = Array::from_slice(&v).unwrap();
    assert_eq!(x.argmax().run().unwrap().to_vec().unwrap(), vec![70_001], "a -0.0 maximum tied with +0.0 later");
    v[120_000] = f32::INFINITY;
    v[180_000] = neg_nan;
    v[190_000] = f32::NAN;
    let x = Array::from_slice(&v).unwrap();
    assert_eq!(x.argmax().run().unwrap().to_vec().unwrap(), vec![180_000], "the first NaN, of either sign");
    assert_eq!(x.argmin().run().unwrap().to_vec().unwrap(), vec![180_000], "the first NaN for argmin too");
    let m = Array::from_shape_vec([2usize, n / 2 + 1], [v.clone(), vec![0.5]].concat()).unwrap();
    let got = m.argmax().axis(1).run().unwrap().to_vec().unwrap();
    let row1 = &v[n / 2 + 1..];
    assert_eq!(got, vec![host_best(&v[..n / 2 + 1], false), host_best(&[row1, &[0.5]].concat(), false)]);
}

fn argmax_f32_of_empty_and_0d_arrays() {
    let z = Array::<f32>::zeros([3usize, 0]).unwrap();
    let mut out = Array::<i64>::full([3usize], -7).unwrap();
    match z.argmax().axis(1).out(&mut out).run() {
        Err(e @ Error::Reduction { .. }) => assert!(e.to_string().contains("empty"), "{e}"),
        other => panic!("argmax of an empty reduction: {other:?}"),
    }
    assert_eq!(out.to_vec().unwrap(), vec![-7; 3], "nothing written");
    assert!(z.argmin().run().is_err());
    // Outputs of zero elements: nothing to do.
    assert!(z.argmax().axis(0).run().unwrap().to_vec().unwrap().is_empty());
    let s = Array::from_shape_vec(Vec::<usize>::new(), vec![-3.5f32]).unwrap();
    assert_eq!(s.argmax().run().unwrap().to_vec().unwrap(), vec![0]);
    assert_eq!(s.argmin().run().unwrap().to_vec().unwrap(), vec![0]);
}
