//! `#[fuse]` end to end (docs/fusion.md): each fused function of `fuse_kernels.rs` through its
//! `call` against a host reference computed in f64 on fresh random inputs, and against the
//! function itself run unfused; the shapes a row kernel refuses; on a GPU, that the fused kernels
//! come from the embedded fat binary.
//!
//! Every test runs on the CPU device (in CI) and on the GPU (`on_both_devices!`). Outputs are
//! allocated by `call`: before each call the test allocates an array of the same size filled with
//! a poison value and frees it, so that the pool hands the poisoned block to `call`.

#[path = "../../runtime/tests/support/mod.rs"]
mod support;
use support::Rng;

mod fuse_kernels;

use cuprum::audit;
use cuprum::runtime::{stats, Array, Device, Error, Scalar};
use fuse_kernels as k;

on_both_devices!(
    cuprum::runtime::Device;
    elementwise_chain_with_a_scalar_and_a_broadcast_row,
    an_inlined_elementwise_kernel_in_each_instance,
    ending_in_a_reduction,
    softmax_over_rows,
    log_sum_exp_one_value_per_row,
    layer_norm_with_broadcast_scale_and_shift,
    rows_of_any_length_and_non_contiguous_input,
    shapes_a_row_kernel_refuses,
    maximum_and_minimum_propagate_nan
);

fn on_gpu() -> bool {
    !Device::current().unwrap().is_cpu()
}

fn random(shape: &[usize], lo: f64, hi: f64, rng: &mut Rng) -> (Vec<f64>, usize) {
    let n = shape.iter().product();
    ((0..n).map(|_| rng.range(lo, hi)).collect(), n)
}

fn array<T: Scalar>(shape: &[usize], v: &[f64], from: impl Fn(f64) -> T) -> Array<T> {
    Array::from_shape_vec(shape.to_vec(), v.iter().map(|&x| from(x)).collect()).unwrap()
}

/// Frees a poisoned block of `n` elements of `T`, so that the next allocation of that size
/// reuses it (the pool).
fn poison<T: Scalar>(n: usize, value: T) {
    drop(Array::from_vec(vec![value; n.max(1)]).unwrap());
}

/// Every element of `got` within `rel` (relative, absolute near 0) of `want`.
fn check(what: &str, got: &[f64], want: &[f64], rel: f64) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= rel * w.abs().max(1.0), "{what}[{i}] = {g}, want {w}");
    }
}

fn f64s(a: &Array<f32>) -> Vec<f64> {
    a.to_vec().unwrap().into_iter().map(f64::from).collect()
}

/// On a GPU, every instance of kernel `name` loaded so far came from the embedded fat binary
/// (and there is one).
fn precompiled(name: &str) {
    if !on_gpu() {
        return;
    }
    let served = audit::served();
    let layers: Vec<stats::Layer> = served.iter().filter(|s| s.kernel == name).map(|s| s.layer).collect();
    assert!(!layers.is_empty() && layers.iter().all(|l| matches!(l, stats::Layer::Aot | stats::Layer::Loaded)), "{name}: {served:?}");
}

fn elementwise_chain_with_a_scalar_and_a_broadcast_row() {
    let mut rng = Rng::new();
    let (rows, cols) = (37, 1001);
    let (xs, n) = random(&[rows, cols], -2.0, 2.0, &mut rng);
    let (bs, _) = random(&[cols], -1.0, 1.0, &mut rng);
    let a = rng.range(0.5, 1.5) as f32;
    let x = array(&[rows, cols], &xs, |v| v as f32);
    let bias = array(&[cols], &bs, |v| v as f32);
    let want: Vec<f64> = (0..n)
        .map(|i| {
            let y = (xs[i] as f32) as f64 * a as f64 + (bs[i % cols] as f32) as f64;
            ((y * y).sqrt() - 0.5).exp()
        })
        .collect();
    poison(n, f32::NAN);
    let fused = k::chain::call(&x, &bias, a).unwrap();
    assert_eq!(fused.shape(), &[rows, cols]);
    check("fused chain", &f64s(&fused), &want, 1e-5);
    check("unfused chain", &f64s(&k::chain(&x, &bias, a).unwrap()), &want, 1e-5);
    precompiled("chain");
}

fn an_inlined_elementwise_kernel_in_each_instance() {
    let mut rng = Rng::new();
    let (xs, n) = random(&[4099], -3.0, 3.0, &mut rng);
    let s = rng.range(0.5, 2.0);
    let reference = |x: f64| {
        let c = 0.797_884_560_802_865_4;
        0.5 * x * (1.0 + (c * (x + 0.044_715 * x * x * x)).tanh()) * s
    };
    let want: Vec<f64> = xs.iter().map(|&x| reference(x)).collect();
    let x64 = array(&[n], &xs, |v| v);
    poison(n, f64::NAN);
    check("f64", &k::scaled_gelu::call(&x64, s).unwrap().to_vec().unwrap(), &want, 1e-12);
    let x32 = array(&[n], &xs, |v| v as f32);
    let want32: Vec<f64> = xs.iter().map(|&x| reference((x as f32) as f64)).collect();
    poison(n, f32::NAN);
    check("f32", &f64s(&k::scaled_gelu::call(&x32, s as f32).unwrap()), &want32, 1e-5);
    precompiled("scaled_gelu");
}

fn ending_in_a_reduction() {
    let mut rng = Rng::new();
    let (rows, cols) = (65, 3001);
    let (xs, _) = random(&[rows, cols], -2.0, 2.0, &mut rng);
    let (ys, _) = random(&[rows, cols], -2.0, 2.0, &mut rng);
    let x = array(&[rows, cols], &xs, |v| v as f32);
    let y = array(&[rows, cols], &ys, |v| v as f32);
    let want: Vec<f64> = (0..rows)
        .map(|r| (0..cols).map(|c| ((xs[r * cols + c] as f32) as f64 - (ys[r * cols + c] as f32) as f64).powi(2)).sum())
        .collect();
    poison(rows, f32::NAN);
    let got = k::squared_distance::call(&x, &y).unwrap();
    assert_eq!(got.shape(), &[rows]);
    check("squared distance", &f64s(&got), &want, 1e-4);
    check("unfused", &f64s(&k::squared_distance(&x, &y).unwrap()), &want, 1e-4);
    // A scalar parameter, by value.
    let s = rng.range(0.5, 2.0) as f32;
    let want_scaled: Vec<f64> = (0..rows)
        .map(|r| (0..cols).map(|c| (((xs[r * cols + c] as f32 - ys[r * cols + c] as f32) * s) as f64).powi(2)).sum())
        .collect();
    poison(rows, f32::NAN);
    let got = k::scaled_squared_distance::call(&x, &y, s).unwrap();
    check("scaled squared distance", &f64s(&got), &want_scaled, 1e-4);
    check("unfused scaled", &f64s(&k::scaled_squared_distance(&x, &y, s).unwrap()), &want_scaled, 1e-4);

    let (zs, n) = random(&[5, 777], -9.0, 9.0, &mut rng);
    let z = array(&[5, 777], &zs, |v| v);
    let want = zs.iter().fold(0f64, |m, v| m.max(v.abs()));
    let got = k::max_abs::call(&z).unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got.to_vec().unwrap()[0], want, "max |z| over {n} elements");
    precompiled("squared_distance");
    precompiled("scaled_squared_distance");
    precompiled("max_abs");
}

fn softmax_reference(xs: &[f64], cols: usize) -> Vec<f64> {
    xs.chunks(cols)
        .flat_map(|row| {
            let m = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let s: f64 = row.iter().map(|v| (v - m).exp()).sum();
            row.iter().map(move |v| (v - m).exp() / s).collect::<Vec<_>>()
        })
        .collect()
}

fn softmax_over_rows() {
    let mut rng = Rng::new();
    for (rows, cols) in [(33, 1000), (6, 3000), (4, 8192), (300, 7), (3, 20000)] {
        let (xs, n) = random(&[rows, cols], -8.0, 8.0, &mut rng);
        let x = array(&[rows, cols], &xs, |v| v as f32);
        let rounded: Vec<f64> = xs.iter().map(|&v| (v as f32) as f64).collect();
        let want = softmax_reference(&rounded, cols);
        poison(n, f32::NAN);
        let got = k::softmax::call(&x).unwrap();
        check(&format!("softmax f32 ({rows}, {cols})"), &f64s(&got), &want, 1e-5);
        check(&format!("unfused softmax ({rows}, {cols})"), &f64s(&k::softmax(&x).unwrap()), &want, 1e-5);
        let x64 = array(&[rows, cols], &xs, |v| v);
        poison(n, f64::NAN);
        check(&format!("softmax f64 ({rows}, {cols})"), &k::softmax::call(&x64).unwrap().to_vec().unwrap(), &softmax_reference(&xs, cols), 1e-12);
    }
    precompiled("softmax");
}

/// Per row: (max, sum of exp(x - max)).
fn max_and_sum_exp(xs: &[f64], cols: usize) -> Vec<(f64, f64)> {
    xs.chunks(cols)
        .map(|row| {
            let m = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            (m, row.iter().map(|v| (v - m).exp()).sum())
        })
        .collect()
}

fn log_sum_exp_one_value_per_row() {
    let mut rng = Rng::new();
    for shape in [&[7, 1][..], &[33, 100], &[6, 1000], &[4, 5000], &[3, 5, 777], &[2049]] {
        let (lead, cols) = (&shape[..shape.len() - 1], shape[shape.len() - 1]);
        let rows: usize = lead.iter().product();
        let kept: Vec<usize> = lead.iter().copied().chain([1]).collect();
        let (xs, _) = random(shape, -8.0, 8.0, &mut rng);
        let x = array(shape, &xs, |v| v as f32);
        let rounded: Vec<f64> = xs.iter().map(|&v| (v as f32) as f64).collect();
        let per_row = max_and_sum_exp(&rounded, cols);
        let want: Vec<f64> = per_row.iter().map(|&(m, s)| m + s.ln()).collect();
        poison(rows, f32::NAN);
        let got = k::logsumexp::call(&x).unwrap();
        assert_eq!(got.shape(), &kept[..], "logsumexp of {shape:?}");
        check(&format!("logsumexp f32 {shape:?}"), &f64s(&got), &want, 1e-5);
        let unfused = k::logsumexp(&x).unwrap();
        assert_eq!(unfused.shape(), &kept[..], "unfused logsumexp of {shape:?}");
        check(&format!("unfused logsumexp {shape:?}"), &f64s(&unfused), &want, 1e-5);
        let x64 = array(shape, &xs, |v| v);
        let want64: Vec<f64> = max_and_sum_exp(&xs, cols).iter().map(|&(m, s)| m + s.ln()).collect();
        poison(rows, f64::NAN);
        let got64 = k::logsumexp::call(&x64).unwrap();
        assert_eq!(got64.shape(), &kept[..]);
        check(&format!("logsumexp f64 {shape:?}"), &got64.to_vec().unwrap(), &want64, 1e-12);
        // Ending in the sum without `keepdims`: the last axis is dropped (NumPy's shape).
        let want: Vec<f64> = per_row.iter().map(|&(_, s)| s).collect();
        poison(rows, f32::NAN);
        let got = k::sum_exp_shifted::call(&x).unwrap();
        assert_eq!(got.shape(), lead, "sum_exp_shifted of {shape:?}");
        check(&format!("sum_exp_shifted {shape:?}"), &f64s(&got), &want, 1e-5);
        let unfused = k::sum_exp_shifted(&x).unwrap();
        assert_eq!(unfused.shape(), lead, "unfused sum_exp_shifted of {shape:?}");
        check(&format!("unfused sum_exp_shifted {shape:?}"), &f64s(&unfused), &want, 1e-5);
    }
    // No rows: an empty result of the per-row shape; rows of no columns are refused.
    let empty = Array::<f32>::from_shape_vec(vec![0, 16], Vec::new()).unwrap();
    assert_eq!(k::logsumexp::call(&empty).unwrap().shape(), &[0, 1]);
    assert_eq!(k::sum_exp_shifted::call(&empty).unwrap().shape(), &[0]);
    let no_columns = Array::<f32>::from_shape_vec(vec![4, 0], Vec::new()).unwrap();
    match k::logsumexp::call(&no_columns) {
        Err(Error::InvalidLaunch { kernel, detail }) => {
            assert_eq!(kernel, "logsumexp");
            assert!(detail.contains("no columns"), "{detail}");
        }
        other => panic!("expected InvalidLaunch, got {other:?}"),
    }
    precompiled("logsumexp");
    precompiled("sum_exp_shifted");
}

fn layer_norm_with_broadcast_scale_and_shift() {
    let mut rng = Rng::new();
    let (b, t, cols) = (3, 17, 769);
    let (xs, n) = random(&[b, t, cols], -3.0, 5.0, &mut rng);
    let (gs, _) = random(&[cols], 0.5, 1.5, &mut rng);
    let (bs, _) = random(&[cols], -1.0, 1.0, &mut rng);
    let eps = 1e-5f32;
    let x = array(&[b, t, cols], &xs, |v| v as f32);
    let gamma = array(&[cols], &gs, |v| v as f32);
    let beta = array(&[cols], &bs, |v| v as f32);
    let r = |v: f64| (v as f32) as f64;
    let want: Vec<f64> = xs
        .chunks(cols)
        .flat_map(|row| {
            let mu = row.iter().map(|&v| r(v)).sum::<f64>() / cols as f64;
            let var = row.iter().map(|&v| (r(v) - mu).powi(2)).sum::<f64>() / cols as f64;
            let inv = 1.0 / (var + eps as f64).sqrt();
            let (gs, bs) = (&gs, &bs);
            row.iter().enumerate().map(move |(c, &v)| (r(v) - mu) * inv * r(gs[c]) + r(bs[c])).collect::<Vec<_>>()
        })
        .collect();
    poison(n, f32::NAN);
    let got = k::layer_norm::call(&x, &gamma, &beta, eps).unwrap();
    assert_eq!(got.shape(), &[b, t, cols]);
    check("layer norm", &f64s(&got), &want, 1e-4);
    check("unfused layer norm", &f64s(&k::layer_norm(&x, &gamma, &beta, eps).unwrap()), &want, 1e-4);
    precompiled("layer_norm");
}

fn rows_of_any_length_and_non_contiguous_input() {
    let mut rng = Rng::new();
    // A transposed view: `call` makes it contiguous first.
    let (xs, _) = random(&[50, 40], -4.0, 4.0, &mut rng);
    let x = array(&[50, 40], &xs, |v| v as f32).transpose();
    let rows: Vec<f64> = (0..40).flat_map(|c| (0..50).map(move |r| (c, r))).map(|(c, r)| (xs[r * 40 + c] as f32) as f64).collect();
    check("softmax of a transposed view", &f64s(&k::softmax::call(&x).unwrap()), &softmax_reference(&rows, 50), 1e-5);
    // One-dimensional: axis 0 is the last axis; a column of one; an empty array.
    let (vs, n) = random(&[2049], -4.0, 4.0, &mut rng);
    let v = array(&[n], &vs, |x| x as f32);
    let mean = vs.iter().map(|&x| (x as f32) as f64).sum::<f64>() / n as f64;
    let want: Vec<f64> = vs.iter().map(|&x| (x as f32) as f64 - mean).collect();
    check("center a vector", &f64s(&k::center_first_axis::call(&v).unwrap()), &want, 1e-5);
    let one = array(&[5, 1], &[1.0, 2.0, 3.0, 4.0, 5.0], |x| x as f32);
    check("softmax of one column", &f64s(&k::softmax::call(&one).unwrap()), &[1.0; 5], 1e-6);
    // A NaN in a row: the fused maximum propagates it, as the built-in reduction does.
    let mut with_nan: Vec<f32> = (0..3 * 40).map(|i| (i % 7) as f32).collect();
    with_nan[40 + 13] = f32::NAN;
    let a = Array::from_shape_vec(vec![3, 40], with_nan).unwrap();
    let (fused, unfused) = (k::softmax::call(&a).unwrap().to_vec().unwrap(), k::softmax(&a).unwrap().to_vec().unwrap());
    for (i, (f, u)) in fused.iter().zip(&unfused).enumerate() {
        let nan_row = (40..80).contains(&i);
        assert_eq!(f.is_nan(), nan_row, "fused softmax[{i}] = {f}");
        assert_eq!(u.is_nan(), nan_row, "unfused softmax[{i}] = {u}");
    }
    let empty = Array::<f32>::from_shape_vec(vec![0, 16], Vec::new()).unwrap();
    assert_eq!(k::softmax::call(&empty).unwrap().shape(), &[0, 16]);
}

fn shapes_a_row_kernel_refuses() {
    let x = Array::from_shape_vec(vec![2, 3, 4], vec![1.0f32; 24]).unwrap();
    // Axis 0 of a two-dimensional array is not the last axis.
    let m = Array::from_shape_vec(vec![3, 4], vec![1.0f32; 12]).unwrap();
    match k::center_first_axis::call(&m) {
        Err(Error::InvalidLaunch { kernel, detail }) => {
            assert_eq!(kernel, "center_first_axis");
            assert!(detail.contains("reduces axis 0") && detail.contains("last axis"), "{detail}");
        }
        other => panic!("expected InvalidLaunch, got {other:?}"),
    }
    // A scale broadcast along axis 1 but not axis 0 is not one stride per row.
    let g = Array::from_shape_vec(vec![2, 1, 4], vec![1.0f32; 8]).unwrap();
    let b = Array::from_shape_vec(vec![4], vec![0.0f32; 4]).unwrap();
    match k::layer_norm::call(&x, &g, &b, 1e-5) {
        Err(Error::InvalidLaunch { detail, .. }) => assert!(detail.contains("`gamma` of shape [2, 1, 4]"), "{detail}"),
        other => panic!("expected InvalidLaunch, got {other:?}"),
    }
    // Shapes that do not broadcast.
    let bad = Array::from_shape_vec(vec![5], vec![0.0f32; 5]).unwrap();
    match k::layer_norm::call(&x, &bad, &b, 1e-5) {
        Err(Error::InvalidLaunch { detail, .. }) => assert!(detail.contains("does not broadcast"), "{detail}"),
        other => panic!("expected InvalidLaunch, got {other:?}"),
    }
}

/// NumPy's `maximum`/`minimum` fused: a NaN in either operand gives NaN, as the array methods do
/// unfused; integers compare plainly.
fn maximum_and_minimum_propagate_nan() {
    let mut rng = Rng::new();
    let (rows, cols) = (33, 257);
    let (mut xs, n) = random(&[rows, cols], -2.0, 2.0, &mut rng);
    let (mut ls, _) = random(&[cols], -1.0, 0.0, &mut rng);
    let (hs, _) = random(&[rows, 1], 0.0, 1.0, &mut rng);
    for i in (0..n).step_by(7) {
        xs[i] = f64::NAN;
    }
    for j in (0..cols).step_by(5) {
        ls[j] = f64::NAN;
    }
    let x = array(&[rows, cols], &xs, |v| v as f32);
    let lo = array(&[cols], &ls, |v| v as f32);
    let hi = array(&[rows, 1], &hs, |v| v as f32);
    let want: Vec<f64> = (0..n)
        .map(|i| {
            let (v, l, h) = (xs[i] as f32 as f64, ls[i % cols] as f32 as f64, hs[i / cols] as f32 as f64);
            let m = if v.is_nan() || l.is_nan() { f64::NAN } else { v.max(l) };
            if m.is_nan() { f64::NAN } else { m.min(h) }
        })
        .collect();
    poison(n, 7.0f32);
    let fused = f64s(&k::nan_clamp::call(&x, &lo, &hi).unwrap());
    let unfused = f64s(&k::nan_clamp(&x, &lo, &hi).unwrap());
    for (what, got) in [("fused", &fused), ("unfused", &unfused)] {
        for i in 0..n {
            assert!(got[i] == want[i] || (got[i].is_nan() && want[i].is_nan()), "{what} nan_clamp at {i}: {} against {}", got[i], want[i]);
        }
    }
    let xi = Array::<i64>::from_vec((0..100).map(|_| rng.int(-50, 50)).collect()).unwrap();
    let li = Array::<i64>::from_vec(vec![-10]).unwrap();
    let hi = Array::<i64>::from_vec(vec![20]).unwrap();
    let got = k::nan_clamp::call(&xi, &li, &hi).unwrap().to_vec().unwrap();
    let want: Vec<i64> = xi.to_vec().unwrap().iter().map(|v| (*v).clamp(-10, 20)).collect();
    assert_eq!(got, want);
    precompiled("nan_clamp");
}
