//! `#[reduction]` end to end through the typed API the macro generates (`NAME::call(..)` and its
//! builder, `NAME::{identity,reduce,post}_host`), and the array reductions of the prelude
//! (`x.sum()`, ... `x.std()`), against host references in f64 on fresh random inputs with
//! outputs poisoned before each launch.
//!
//! GPU tests are `#[ignore = "needs a CUDA GPU"]`; run them with
//! `cargo test -p cuprum-testsuite --test gpu_reduction_macro -- --include-ignored` (build with
//! nvcc, e.g. after `source scripts/cuda-env.sh`, so that the precompiled instances are embedded).

#[path = "../../runtime/tests/support/mod.rs"]
mod support;
use support::Rng;

mod reduction_kernels;

use cuprum::prelude::*;
use cuprum::reductions::{FloatResult, MeanResult};
use cuprum::audit;
use cuprum::runtime::reduction::Axes;
use cuprum::runtime::stats::Layer;
use cuprum::runtime::{Array, Scalar, Stream};
use num_complex::Complex;
use reduction_kernels as k;

/// Whether the test runs on a GPU (which layer served a kernel is a GPU's matter).
fn on_gpu() -> bool {
    !cuprum::runtime::Device::current().unwrap().is_cpu()
}

// Each GPU test also runs on the CPU device (in CI): the same reductions, compiled for the host.
on_both_devices!(
    cuprum::runtime::Device;
    l2norm_over_axes_keepdims_out_and_stream,
    struct_accumulators_reduce_every_axis_form,
    reduce_index_counts_along_the_reduced_axes_in_every_axis_form,
    int8_sums_wrap,
    raw_and_broadcast_arguments,
    by_value_scalar_arguments,
    empty_inputs_with_and_without_identity,
    array_reductions_f32,
    array_reductions_f64,
    array_reductions_integers,
    argmin_and_argmax_are_exact_for_every_integer_width,
    argmin_and_max_with_nan_follow_numpy,
    array_reductions_complex64,
    array_reductions_complex128,
    complex_reductions_of_empty_inputs_and_their_layers,
    reduction_macro_over_complex,
    few_outputs_along_a_long_strided_axis,
    literal_identities_convert_to_the_generic_accumulator,
    var_and_std_of_a_large_mean_nan_and_ddof_at_n,
);

const GPU: &str = "needs a CUDA GPU";

// ------------------------------------------------------------------------------------------
// Helpers
// ------------------------------------------------------------------------------------------



/// The element types the array reductions are checked on.
trait Elem: Scalar + FloatResult + Number {
    /// A random value: floats in [-4, 4), integers in [-50, 50] (ties likely), never 0.
    fn draw(r: &mut Rng) -> Self;
    /// A random value near 1 for products.
    fn draw_near_one(r: &mut Rng) -> Self;
    fn poison() -> Self;
    fn f(self) -> f64;
}

macro_rules! elem_int {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            fn draw(r: &mut Rng) -> $t { let v = r.int(-50, 50) as $t; if v == 0 { 1 } else { v } }
            fn draw_near_one(r: &mut Rng) -> $t { if r.int(0, 1) == 0 { 1 } else { -1 } }
            fn poison() -> $t { 0x5a }
            fn f(self) -> f64 { self as f64 }
        }
    )*};
}
elem_int!(i32, i64);

macro_rules! elem_float {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            fn draw(r: &mut Rng) -> $t { r.range(-4.0, 4.0) as $t }
            fn draw_near_one(r: &mut Rng) -> $t { r.range(0.9, 1.1) as $t }
            fn poison() -> $t { <$t>::NAN }
            fn f(self) -> f64 { self as f64 }
        }
    )*};
}
elem_float!(f32, f64);

/// Folds each output's elements (C order of `shape`; `mask` = reduced axes) with `f`, outputs in C
/// order of the kept axes; `f` gets the element's index along the reduced axes (C order) too.
fn host_reduce<T: Copy, A: Copy>(data: &[T], shape: &[usize], mask: &[bool], init: A, f: impl Fn(A, T, usize) -> A) -> Vec<A> {
    let kept: Vec<usize> = (0..shape.len()).filter(|&k| !mask[k]).collect();
    let red: Vec<usize> = (0..shape.len()).filter(|&k| mask[k]).collect();
    let outs: usize = kept.iter().map(|&k| shape[k]).product();
    let mut acc = vec![init; outs];
    let mut idx = vec![0usize; shape.len()];
    for &v in data {
        let o = kept.iter().fold(0, |o, &k| o * shape[k] + idx[k]);
        let r = red.iter().fold(0, |r, &k| r * shape[k] + idx[k]);
        acc[o] = f(acc[o], v, r);
        for k in (0..shape.len()).rev() {
            idx[k] += 1;
            if idx[k] < shape[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    acc
}

/// The reduced axes of an `ndim`-axis loop (NumPy's rules; the axes here are never repeated).
fn mask_of(ndim: usize, axes: &Axes) -> Vec<bool> {
    let axis = |a: isize| (if a < 0 { a + ndim as isize } else { a }) as usize;
    match axes {
        Axes::All => vec![true; ndim],
        Axes::One(a) => (0..ndim).map(|k| k == axis(*a)).collect(),
        Axes::Many(v) => (0..ndim).map(|k| v.iter().any(|&a| axis(a) == k)).collect(),
    }
}

fn out_shape(shape: &[usize], axes: &Axes, keepdims: bool) -> Vec<usize> {
    let mask = mask_of(shape.len(), axes);
    shape.iter().zip(mask).filter_map(|(&d, m)| if !m { Some(d) } else if keepdims { Some(1) } else { None }).collect()
}

fn close(got: f64, want: f64, tol: f64, what: &str) {
    assert!((got - want).abs() <= tol || (got.is_nan() && want.is_nan()), "{what}: got {got}, want {want} (tolerance {tol})");
}

/// The axes every reduction is checked over, for a 3-d input.
fn axes_3d() -> Vec<(Axes, bool)> {
    vec![
        (Axes::All, false),
        (Axes::One(0), false),
        (Axes::One(1), true),
        (Axes::One(-1), false),
        (Axes::from([0, 2]), false),
        (Axes::from([-1, 0]), true),
    ]
}

// ------------------------------------------------------------------------------------------
// CPU: the host parts and the generated registrations
// ------------------------------------------------------------------------------------------

#[test]
fn host_parts_are_the_attribute_closures() {
    assert_eq!(k::l2norm::identity_host::<f32>(), 0.0);
    assert_eq!(k::l2norm::reduce_host(2.5f32, 3.0), 5.5);
    assert_eq!(k::l2norm::post_host(16.0f64), 4.0);
    // acc = f64, post to T.
    assert_eq!(k::l2norm_f64::identity_host(), 0.0f64);
    assert_eq!(k::l2norm_f64::post_host::<f32>(2.25), 1.5f32);
    // Integers wrap as the kernel does.
    assert_eq!(k::sum_i8::reduce_host(100, 100), -56);
    assert_eq!(k::sum_i8::post_host(7), 7);
    // No identity: no `identity_host`; reduce and post are still there.
    assert_eq!(k::max_abs::reduce_host(-1.0, 0.5), 0.5);
    assert_eq!(k::dot::post_host(1.5), 1.5f32);
    // A host reference from the parts and the map (the user's function).
    let xs = [3.0f64, -4.0, 12.0];
    let folded = xs.iter().map(|&x| k::l2norm(x)).fold(k::l2norm::identity_host(), k::l2norm::reduce_host);
    assert_eq!(k::l2norm::post_host(folded), 13.0);
}

#[test]
fn a_struct_accumulator_has_host_parts_too() {
    let a = k::spread(2.0f32);
    assert_eq!(a, k::Spread { lo: 2.0, hi: 2.0, n: 1.0 });
    let b = k::spread::reduce_host(a, k::spread(-1i32));
    assert_eq!(b, k::Spread { lo: -1.0, hi: 2.0, n: 2.0 });
    assert_eq!(k::spread::post_host(b), 1.5);
}

#[test]
fn reduce_index_is_the_position_along_the_reduced_axes_on_the_host_too() {
    use cuprum::prelude::with_reduce_index;
    assert_eq!(k::last_negative(-1.0f32), 0);
    assert_eq!(with_reduce_index(7, || k::last_negative(-1.0f32)), 7);
    assert_eq!(with_reduce_index(7, || k::last_negative(1.0f32)), -1);
    assert_eq!(k::last_negative::reduce_host(3, 5), 5);
}

#[test]
fn kernels_are_registered_with_their_precompiled_instances() {
    let find = |name: &str| {
        audit::kernels()
            .find(|e| e.kind() == "reduction" && e.name() == name)
            .unwrap_or_else(|| panic!("reduction `{name}` is not registered"))
    };
    let l2 = find("l2norm");
    // The 32-bit index variants are precompiled; the 64-bit ones are compiled at first use.
    for (v, precompiled) in [("rows", true), ("warps", true), ("cols", true), ("rows64", false), ("warps64", false), ("cols64", false)] {
        for t in ["f32", "f64"] {
            let sym = format!("cuprum_reduction_l2norm_{v}__{t}");
            let listed = l2.unit().unwrap().precompiled().contains(&sym.as_str());
            assert_eq!(listed, precompiled, "{sym} in {:?}", l2.unit().unwrap().precompiled());
        }
    }
    // The runtime's built-in kernels, too.
    for name in ["sum", "prod", "min_int", "max_float", "mean_float", "mean_f64", "std_float", "arg_best_float", "arg_best_f32", "arg_of_int", "all_bool", "any_bool"] {
        assert!(!find(name).unit().unwrap().precompiled().is_empty(), "{name}");
    }
    assert!(find("sum").unit().unwrap().precompiled().contains(&"cuprum_reduction_sum_rows__i64"));
    // A struct accumulator's instances are precompiled like any other.
    assert!(find("spread").unit().unwrap().precompiled().contains(&"cuprum_reduction_spread_rows__i32"));
    assert!(k::l2norm::__HAS_IDENTITY && !k::max_abs::__HAS_IDENTITY);
}

// ------------------------------------------------------------------------------------------
// GPU: the macro's builder
// ------------------------------------------------------------------------------------------

fn l2norm_over_axes_keepdims_out_and_stream() {
    let _ = GPU;
    let mut rng = Rng::new();
    let shape = [37usize, 129, 5];
    let host: Vec<f32> = (0..shape.iter().product()).map(|_| rng.range(-4.0, 4.0) as f32).collect();
    let x = Array::from_shape_vec(shape, host.clone()).unwrap();
    for (axes, keepdims) in axes_3d() {
        let m = mask_of(3, &axes);
        let want: Vec<f64> = host_reduce(&host, &shape, &m, 0f64, |a, v, _| a + (v as f64) * (v as f64)).iter().map(|s| s.sqrt()).collect();
        // Poisoned explicit output, and an allocated one.
        let mut out = Array::<f32>::full(out_shape(&shape, &axes, keepdims), f32::NAN).unwrap();
        k::l2norm::call(&x).axes(axes.clone()).keepdims(keepdims).out(&mut out).run().unwrap();
        let got = k::l2norm::call(&x).axes(axes.clone()).keepdims(keepdims).run().unwrap();
        assert_eq!(got.shape(), out_shape(&shape, &axes, keepdims).as_slice(), "{axes:?}");
        for (g, w) in got.to_vec().unwrap().iter().zip(&want) {
            close(*g as f64, *w, 1e-5 * w, &format!("l2norm over {axes:?}"));
        }
        assert_eq!(out.to_vec().unwrap(), got.to_vec().unwrap());
        // acc = f64: the same result, more exactly.
        let got = k::l2norm_f64::call(&x).axes(axes.clone()).keepdims(keepdims).run().unwrap();
        for (g, w) in got.to_vec().unwrap().iter().zip(&want) {
            close(*g as f64, *w, 1e-6 * w, &format!("l2norm_f64 over {axes:?}"));
        }
    }
    // An output of the wrong shape; an axis out of range; a repeated axis.
    let mut bad = Array::<f32>::zeros([5usize, 37]).unwrap();
    let e = k::l2norm::call(&x).axis(1).out(&mut bad).run().unwrap_err().to_string();
    assert!(e.contains("shape mismatch"), "{e}");
    let e = k::l2norm::call(&x).axis(3).run().unwrap_err().to_string();
    assert!(e.contains("out of range"), "{e}");
    let e = k::l2norm::call(&x).axes([1, -2]).run().unwrap_err().to_string();
    assert!(e.contains("repeated"), "{e}");
    // Another stream.
    let stream = Stream::new(x.device()).unwrap();
    let on_stream = k::l2norm::call(&x).axis(0).stream(&stream).run().unwrap();
    stream.synchronize().unwrap();
    assert_eq!(on_stream.to_vec().unwrap(), k::l2norm::call(&x).axis(0).run().unwrap().to_vec().unwrap());
    // The f64 instance; the host parts give the same.
    let y = Array::<f64>::from_vec(vec![3.0, 4.0]).unwrap();
    assert_eq!(k::l2norm::call(&y).run().unwrap().to_vec().unwrap(), vec![5.0]);
}

fn struct_accumulators_reduce_every_axis_form() {
    let mut rng = Rng::new();
    let shape = [23usize, 131, 6];
    let hf: Vec<f32> = (0..shape.iter().product()).map(|_| rng.range(-4.0, 4.0) as f32).collect();
    let hi: Vec<i32> = (0..shape.iter().product()).map(|_| rng.int(-1000, 1000) as i32).collect();
    let xf = Array::from_shape_vec(shape, hf.clone()).unwrap();
    let xi = Array::from_shape_vec(shape, hi.clone()).unwrap();
    for (axes, keepdims) in axes_3d() {
        let m = mask_of(3, &axes);
        let spread_of = |lo_hi_n: Vec<(f64, f64, f64)>| -> Vec<f64> { lo_hi_n.iter().map(|(lo, hi, n)| (hi - lo) / n).collect() };
        let init = (f64::INFINITY, f64::NEG_INFINITY, 0.0);
        let want_f = spread_of(host_reduce(&hf, &shape, &m, init, |(lo, hi, n), v, _| (lo.min(v as f64), hi.max(v as f64), n + 1.0)));
        let want_i = spread_of(host_reduce(&hi, &shape, &m, init, |(lo, hi, n), v, _| (lo.min(v as f64), hi.max(v as f64), n + 1.0)));
        let mut out = Array::<f64>::full(out_shape(&shape, &axes, keepdims), f64::NAN).unwrap();
        k::spread::call(&xf).axes(axes.clone()).keepdims(keepdims).out(&mut out).run().unwrap();
        for (g, w) in out.to_vec().unwrap().iter().zip(&want_f) {
            close(*g, *w, 1e-12 * w.abs(), &format!("spread f32 over {axes:?}"));
        }
        let got = k::spread::call(&xi).axes(axes.clone()).keepdims(keepdims).run().unwrap();
        assert_eq!(got.shape(), out_shape(&shape, &axes, keepdims).as_slice());
        for (g, w) in got.to_vec().unwrap().iter().zip(&want_i) {
            close(*g, *w, 1e-12 * w.abs(), &format!("spread i32 over {axes:?}"));
        }
    }
    // Long rows (split across blocks: partial accumulators in global memory) and the f64
    // instance through NVRTC.
    let long: Vec<f64> = (0..3_000_001).map(|_| rng.range(-1e3, 1e3)).collect();
    let want = {
        let (lo, hi) = long.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| (lo.min(v), hi.max(v)));
        (hi - lo) / long.len() as f64
    };
    let got = k::spread::call(&Array::from_vec(long).unwrap()).run().unwrap().to_vec().unwrap();
    close(got[0], want, 1e-12 * want, "spread of 3,000,001 f64");
}

fn reduce_index_counts_along_the_reduced_axes_in_every_axis_form() {
    let mut rng = Rng::new();
    let shape = [19usize, 67, 7];
    // About one element in eight negative, so that rows of none occur along the short axes.
    let draw = |rng: &mut Rng| if rng.range(0.0, 1.0) < 0.125 { rng.range(-4.0, -0.5) } else { rng.range(0.5, 4.0) };
    let hf: Vec<f32> = (0..shape.iter().product()).map(|_| draw(&mut rng) as f32).collect();
    let hd: Vec<f64> = hf.iter().map(|&v| v as f64).collect();
    let xf = Array::from_shape_vec(shape, hf.clone()).unwrap();
    let xd = Array::from_shape_vec(shape, hd).unwrap();
    let mut saw_none = false;
    for (axes, keepdims) in axes_3d() {
        let m = mask_of(3, &axes);
        let want = host_reduce(&hf, &shape, &m, -1i64, |a, v, r| if v < 0.0 { a.max(r as i64) } else { a });
        saw_none |= want.contains(&-1);
        let mut out = Array::<i64>::full(out_shape(&shape, &axes, keepdims), i64::MIN).unwrap();
        k::last_negative::call(&xf).axes(axes.clone()).keepdims(keepdims).out(&mut out).run().unwrap();
        assert_eq!(out.to_vec().unwrap(), want, "f32 over {axes:?}");
        // The f64 instance through NVRTC.
        let got = k::last_negative::call(&xd).axes(axes.clone()).keepdims(keepdims).run().unwrap();
        assert_eq!(got.to_vec().unwrap(), want, "f64 over {axes:?}");
    }
    assert!(saw_none, "the input should have outputs with no negative element");
    // A transposed view (its reduced axes walk memory backwards) and a long row split across
    // blocks: positions stay in the view's C order.
    let t = xf.transpose();
    let ht = t.to_vec().unwrap();
    let tshape = [7usize, 67, 19];
    let want = host_reduce(&ht, &tshape, &[false, true, true], -1i64, |a, v, r| if v < 0.0 { a.max(r as i64) } else { a });
    assert_eq!(k::last_negative::call(&t).axes([1, 2]).run().unwrap().to_vec().unwrap(), want);
    let n = 3_000_001usize;
    let mut long: Vec<f32> = (0..n).map(|_| rng.range(0.5, 4.0) as f32).collect();
    let at = rng.int(n as i64 / 2, n as i64 - 1) as usize;
    long[at] = -1.0;
    long[rng.int(0, n as i64 / 2) as usize] = -2.0;
    let got = k::last_negative::call(&Array::from_vec(long).unwrap()).run().unwrap().to_vec().unwrap();
    assert_eq!(got, vec![at as i64]);
}

fn int8_sums_wrap() {
    let mut rng = Rng::new();
    for n in (1..=9).flat_map(|i| [(1usize << i) - 1, 1 << i, (1 << i) + 1]) {
        for shape in [vec![n], vec![n, 1000]] {
            let host: Vec<i8> = (0..shape.iter().product()).map(|_| rng.int(-128, 127).max(1) as i8).collect();
            let x = Array::from_shape_vec(shape.clone(), host.clone()).unwrap();
            let axes_list = if shape.len() == 1 { vec![Axes::All] } else { vec![Axes::All, Axes::One(0), Axes::One(-1)] };
            for axes in axes_list {
                let want = host_reduce(&host, &shape, &mask_of(shape.len(), &axes), 0i8, |a, v, _| a.wrapping_add(v));
                let mut out = Array::<i8>::full(out_shape(&shape, &axes, false), 0x5a).unwrap();
                k::sum_i8::call(&x).axes(axes.clone()).out(&mut out).run().unwrap();
                assert_eq!(out.to_vec().unwrap(), want, "sum_i8 of {shape:?} over {axes:?}");
                // The built-in sum keeps int8 too (JIT-free: i8 is precompiled).
                assert_eq!(x.sum().axes(axes.clone()).run().unwrap().to_vec().unwrap(), want, "x.sum() of {shape:?} over {axes:?}");
            }
        }
    }
}

fn raw_and_broadcast_arguments() {
    let mut rng = Rng::new();
    let (rows, cols) = (4usize, 300usize);
    let xs: Vec<f32> = (0..rows * cols).map(|_| rng.range(-4.0, 4.0) as f32).collect();
    let ws: Vec<f32> = (0..7).map(|_| rng.range(-4.0, 4.0) as f32).collect();
    let x = Array::from_shape_vec([rows, cols], xs.clone()).unwrap();
    let w = Array::from_vec(ws.clone()).unwrap();
    let got = k::weighted_sum::call(&x, &w).axis(1).run().unwrap().to_vec().unwrap();
    for o in 0..rows {
        let want: f64 = (0..cols).map(|r| (xs[o * cols + r] * ws[(o * cols + r) % 7]) as f64).sum();
        close(got[o], want, 1e-9 * (1.0 + want.abs()), &format!("weighted_sum row {o}"));
    }
    let xs: Vec<f64> = (0..50 * 64).map(|_| rng.range(-4.0, 4.0)).collect();
    let ys: Vec<f64> = (0..64).map(|_| rng.range(-4.0, 4.0)).collect();
    let x = Array::from_shape_vec([50usize, 64], xs.clone()).unwrap();
    let y = Array::from_vec(ys.clone()).unwrap();
    let mut out = Array::<f32>::full([50usize, 1], f32::NAN).unwrap();
    k::dot::call(&x, &y).axis(-1).keepdims(true).out(&mut out).run().unwrap();
    for (o, g) in out.to_vec().unwrap().iter().enumerate() {
        let want: f64 = (0..64).map(|r| xs[o * 64 + r] * ys[r]).sum();
        close(*g as f64, want, 1e-6 * (1.0 + want.abs()), &format!("dot row {o}"));
    }
}

fn by_value_scalar_arguments() {
    let mut rng = Rng::new();
    let (rows, cols) = (5usize, 333usize);
    let xs: Vec<f64> = (0..rows * cols).map(|_| rng.range(-4.0, 4.0)).collect();
    let (eps, scale) = (rng.range(0.1, 1.0), rng.range(0.5, 2.0));
    let shift = match rng.int(-5, 5) {
        0 => 3,
        s => s,
    };
    let want_row = |o: usize, x: &dyn Fn(f64) -> f64, e: f64| -> f64 {
        (0..cols).map(|r| ((x(xs[o * cols + r]).powi(2) + e).sqrt() + shift as f64) * scale).sum()
    };
    // f32: every scalar by value, then `eps` as an array (broadcast): the same sums.
    let x = Array::from_shape_vec([rows, cols], xs.iter().map(|&v| v as f32).collect()).unwrap();
    let e32 = eps as f32;
    let round = |v: f64| v as f32 as f64;
    let mut out = Array::<f64>::full([rows], f64::NAN).unwrap();
    k::smooth_l1::call(&x, e32, scale, shift).axis(1).out(&mut out).run().unwrap();
    let by_array = Array::from_vec(vec![e32]).unwrap();
    let got_array = k::smooth_l1::call(&x, &by_array, scale, shift).axis(-1).run().unwrap().to_vec().unwrap();
    for (o, g) in out.to_vec().unwrap().iter().enumerate() {
        let want = want_row(o, &round, e32 as f64);
        close(*g, want, 1e-5 * (1.0 + want.abs()), &format!("smooth_l1 f32 row {o}"));
        close(got_array[o], want, 1e-5 * (1.0 + want.abs()), &format!("smooth_l1 f32 (eps as an array) row {o}"));
    }
    // f64, all axes (a 0-d result).
    let x = Array::from_shape_vec([rows, cols], xs.clone()).unwrap();
    let got = k::smooth_l1::call(&x, eps, scale, shift).run().unwrap();
    assert_eq!(got.shape(), &[] as &[usize]);
    let want: f64 = (0..rows).map(|o| want_row(o, &|v| v, eps)).sum();
    close(got.item().unwrap(), want, 1e-12 * (1.0 + want.abs()), "smooth_l1 f64 over every axis");
    // Only scalars: one element, reduced.
    let got = k::smooth_l1::call(2.0f64, eps, scale, shift).run().unwrap().item().unwrap();
    close(got, ((4.0 + eps).sqrt() + shift as f64) * scale, 1e-12, "smooth_l1 of scalars alone");
}

fn literal_identities_convert_to_the_generic_accumulator() {
    let mut rng = Rng::new();
    // The host parts convert as the device does.
    assert_eq!(k::wrapping_total::identity_host::<u8>(), 0u8);
    assert_eq!(k::float_total::identity_host::<f64>().to_bits(), (-0.0f64).to_bits());
    assert_eq!(k::float_total::identity_host::<half::f16>().to_bits(), half::f16::NEG_ZERO.to_bits());
    let n = 1000usize;
    let bytes: Vec<u8> = (0..n).map(|_| rng.int(1, 255) as u8).collect();
    let want = bytes.iter().fold(0u8, |a, &b| a.wrapping_add(b));
    let mut out = Array::<u8>::full(Vec::<usize>::new(), 0x5a).unwrap();
    k::wrapping_total::call(&Array::from_vec(bytes).unwrap()).out(&mut out).run().unwrap();
    assert_eq!(out.to_vec().unwrap(), vec![want]);
    // An instance that was not precompiled (i64 was listed, i32 was not: NVRTC on a GPU).
    let ints: Vec<i32> = (0..n).map(|_| rng.int(-1 << 30, 1 << 30) as i32).collect();
    let want = ints.iter().fold(0i32, |a, &b| a.wrapping_add(b));
    assert_eq!(k::wrapping_total::call(&Array::from_vec(ints).unwrap()).run().unwrap().to_vec().unwrap(), vec![want]);
    // Float sums, and empty rows: `-0.0` exactly (a `+0.0` would mean the sign was lost).
    let xs: Vec<f64> = (0..3 * n).map(|_| rng.range(-4.0, 4.0)).collect();
    let x = Array::from_shape_vec([3usize, n], xs.clone()).unwrap();
    let mut out = Array::<f64>::full([3usize], f64::NAN).unwrap();
    k::float_total::call(&x).axis(1).out(&mut out).run().unwrap();
    for (r, got) in out.to_vec().unwrap().into_iter().enumerate() {
        let want: f64 = xs[r * n..(r + 1) * n].iter().sum();
        close(got, want, 1e-12 * n as f64, &format!("float_total row {r}"));
    }
    let halves: Vec<half::f16> = (0..n).map(|_| half::f16::from_f64(rng.range(-1.0, 1.0))).collect();
    let want: f64 = halves.iter().map(|h| h.to_f64()).sum();
    let got = k::float_total::call(&Array::from_vec(halves).unwrap()).run().unwrap().to_vec().unwrap()[0];
    // An f16 accumulator rounds at every step: about sqrt(n) roundings of up to 2^-11 of the sum.
    close(got.to_f64(), want, 0.05 * (1.0 + want.abs()), "float_total of f16");
    let empty = Array::<f64>::zeros([2usize, 0]).unwrap();
    let got = k::float_total::call(&empty).axis(1).run().unwrap().to_vec().unwrap();
    assert!(got.iter().all(|v| v.to_bits() == (-0.0f64).to_bits()), "empty rows give the identity -0.0: {got:?}");
    let empty = Array::<half::f16>::zeros([0usize]).unwrap();
    let got = k::float_total::call(&empty).run().unwrap().to_vec().unwrap();
    assert_eq!(got[0].to_bits(), half::f16::NEG_ZERO.to_bits(), "an empty f16 sum gives -0.0");
}

fn empty_inputs_with_and_without_identity() {
    let x = Array::<i8>::zeros([0usize, 4, 3]).unwrap();
    assert_eq!(k::sum_i8::call(&x).axis(0).run().unwrap().to_vec().unwrap(), vec![0i8; 12]);
    assert_eq!(k::sum_i8::call(&x).run().unwrap().to_vec().unwrap(), vec![0i8]);
    assert!(k::sum_i8::call(&x).axis(1).run().unwrap().to_vec().unwrap().is_empty());
    let y = Array::<f64>::zeros([0usize, 4]).unwrap();
    let e = k::max_abs::call(&y).axis(0).run().unwrap_err().to_string();
    assert!(e.contains("identity"), "{e}");
    // Reducing over non-empty axes of an empty array is fine without identity: no output.
    assert!(k::max_abs::call(&y).axis(1).run().unwrap().to_vec().unwrap().is_empty());
    // Array reductions: sum/prod/all/any give their identity, min/max/argmin/argmax are errors,
    // mean/var/std are NaN.
    let z = Array::<f32>::zeros([3usize, 0]).unwrap();
    assert_eq!(z.sum().axis(1).run().unwrap().to_vec().unwrap(), vec![0.0; 3]);
    assert_eq!(z.prod().axis(1).run().unwrap().to_vec().unwrap(), vec![1.0; 3]);
    assert_eq!(z.all().axis(1).run().unwrap().to_vec().unwrap(), vec![true; 3]);
    assert_eq!(z.any().run().unwrap().to_vec().unwrap(), vec![false]);
    for e in [z.min().axis(1).run().unwrap_err(), z.max().run().unwrap_err()] {
        assert!(e.to_string().contains("identity"), "{e}");
    }
    for e in [z.argmin().axis(1).run().unwrap_err(), z.argmax().run().unwrap_err()] {
        assert!(e.to_string().contains("empty"), "{e}");
    }
    assert!(z.mean().axis(1).run().unwrap().to_vec().unwrap().iter().all(|v| v.is_nan()));
    assert!(z.var().run().unwrap().to_vec().unwrap()[0].is_nan());
    assert_eq!(z.std().axis(0).run().unwrap().shape(), &[0usize]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn precompiled_instances_are_served_from_the_fat_binary() {
    let l2 = audit::kernels().find(|e| e.kind() == "reduction" && e.name() == "l2norm").unwrap();
    assert!(
        l2.unit().unwrap().fatbin().is_some(),
        "testsuite/tests/reduction_kernels.rs was built without nvcc; build with nvcc on PATH (source scripts/cuda-env.sh)"
    );
    let mut rng = Rng::new();
    let host: Vec<f32> = (0..4096).map(|_| rng.range(-4.0, 4.0) as f32).collect();
    let x = Array::from_shape_vec([64usize, 64], host).unwrap();
    k::l2norm::call(&x).run().unwrap();
    k::l2norm::call(&x).axis(0).run().unwrap();
    x.sum().axis(1).run().unwrap();
    x.max().run().unwrap();
    // Which variant serves a call is the planner's choice (a warp per row for these short rows):
    // every f32 instance of these kernels served so far came from the fat binary.
    let served = audit::served();
    for kernel in ["l2norm", "sum", "max_float"] {
        let of: Vec<_> = served.iter().filter(|s| s.kernel == kernel && s.symbol.ends_with("__f32")).collect();
        assert!(!of.is_empty(), "no f32 instance of {kernel} served: {served:?}");
        for s in of {
            assert_eq!(s.layer, Layer::Aot, "{s:?}");
        }
    }
    // A dtype that is not precompiled goes through the JIT (or its cache), and still works.
    let h = Array::<half::f16>::from_vec(vec![half::f16::from_f32(3.0), half::f16::from_f32(4.0)]).unwrap();
    assert_eq!(k::l2norm::call(&h).run().unwrap().to_vec().unwrap(), vec![half::f16::from_f32(5.0)]);
    let served = audit::served();
    let s = served.iter().find(|s| s.symbol == "cuprum_reduction_l2norm_rows__f16").expect("the f16 instance was served");
    assert_ne!(s.layer, Layer::Aot);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_prefetch_loads_the_next_kernel_in_the_background() {
    let mut rng = Rng::new();
    let (rows, cols) = (48usize, 3001usize);
    let host: Vec<f32> = (0..rows * cols).map(|_| rng.range(-4.0, 4.0) as f32).collect();
    let x = Array::from_shape_vec([rows, cols], host.clone()).unwrap();
    let of_sq_dev = || audit::served().into_iter().filter(|s| s.kernel == "sq_dev").collect::<Vec<_>>();
    assert!(of_sq_dev().is_empty(), "sq_dev is launched by this test only, after its prefetch");
    // The first call asks for `sq_dev` (same instance, loop and axes) to be loaded meanwhile.
    let l2 = k::l2norm::call(&x).axis(1).keepdims(true).prefetch(k::sq_dev::__kernel()).run().unwrap();
    let start = std::time::Instant::now();
    let served = loop {
        let s = of_sq_dev();
        if !s.is_empty() || start.elapsed() > std::time::Duration::from_secs(20) {
            break s;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    };
    assert_eq!(served.len(), 1, "the prefetch loaded sq_dev, without a launch: {:?}", audit::served());
    assert_eq!(served[0].layer, Layer::Aot, "{:?}", served[0]);
    // The loaded entry point is the one the next call needs: it is served from the table, and
    // computes what the host does.
    let got = k::sq_dev::call(&x, &l2).axis(1).run().unwrap().to_vec().unwrap();
    assert_eq!(of_sq_dev().len(), 1, "the call loaded another entry point than the prefetch: {:?}", of_sq_dev());
    let norms = l2.to_vec().unwrap();
    for r in 0..rows {
        let row = &host[r * cols..(r + 1) * cols];
        let want_norm = row.iter().map(|&v| (v as f64) * (v as f64)).sum::<f64>().sqrt();
        close(norms[r] as f64, want_norm, 1e-5 * want_norm, &format!("l2norm row {r}"));
        let m = norms[r] as f64;
        let want: f64 = row.iter().map(|&v| (v as f64 - m) * (v as f64 - m)).sum();
        close(got[r] as f64, want, 1e-5 * want, &format!("sq_dev row {r}"));
    }
}

// ------------------------------------------------------------------------------------------
// GPU: the array reductions against f64 host references
// ------------------------------------------------------------------------------------------

/// Every array reduction of a random `shape` input of `T`, over each of [`axes_3d`], as well as
/// on a transposed view.
fn check_array_reductions<T: Elem + Real>(shape: [usize; 3], tol: f64) {
    let mut rng = Rng::new();
    let n: usize = shape.iter().product();
    let host: Vec<T> = (0..n).map(|_| T::draw(&mut rng)).collect();
    let base = Array::from_shape_vec(shape, host).unwrap();
    let near_one: Vec<T> = (0..n).map(|_| T::draw_near_one(&mut rng)).collect();
    let ones = Array::from_shape_vec(shape, near_one).unwrap();
    let t = std::any::type_name::<T>();
    for permuted in [false, true] {
        let view = |a: &Array<T>| if permuted { a.permute(&[2, 0, 1]).unwrap() } else { a.clone() };
        let x = view(&base);
        let ox = view(&ones);
        let xs = x.to_vec().unwrap();
        let os = ox.to_vec().unwrap();
        let shape = x.shape().to_vec();
        for (axes, keepdims) in axes_3d() {
            let m = mask_of(3, &axes);
            let oshape = out_shape(&shape, &axes, keepdims);
            let what = |op: &str| format!("{op} of {t} {shape:?} over {axes:?}");
            let count = shape.iter().zip(&m).filter(|(_, r)| **r).map(|(d, _)| *d).product::<usize>() as f64;
            let poisoned = || Array::<T>::full(oshape.clone(), T::poison()).unwrap();

            // sum, with an explicit poisoned output
            let mut out = poisoned();
            x.sum().axes(axes.clone()).keepdims(keepdims).out(&mut out).run().unwrap();
            let want = host_reduce(&xs, &shape, &m, 0f64, |a, v, _| a + v.f());
            let abs = host_reduce(&xs, &shape, &m, 0f64, |a, v, _| a + v.f().abs());
            for ((g, w), s) in out.to_vec().unwrap().iter().zip(&want).zip(&abs) {
                close(g.f(), *w, tol * s, &what("sum"));
            }
            // prod of values near 1 (integers: +-1, exact); rounding grows with the count
            let got = ox.prod().axes(axes.clone()).keepdims(keepdims).run().unwrap().to_vec().unwrap();
            let want = host_reduce(&os, &shape, &m, 1f64, |a, v, _| a * v.f());
            for (g, w) in got.iter().zip(&want) {
                close(g.f(), *w, tol * count * w.abs(), &what("prod"));
            }
            // min / max: exact
            let got = x.min().axes(axes.clone()).keepdims(keepdims).run().unwrap().to_vec().unwrap();
            let want = host_reduce(&xs, &shape, &m, f64::INFINITY, |a, v, _| a.min(v.f()));
            assert_eq!(got.iter().map(|v| v.f()).collect::<Vec<_>>(), want, "{}", what("min"));
            let got = x.max().axes(axes.clone()).keepdims(keepdims).run().unwrap().to_vec().unwrap();
            let want = host_reduce(&xs, &shape, &m, f64::NEG_INFINITY, |a, v, _| a.max(v.f()));
            assert_eq!(got.iter().map(|v| v.f()).collect::<Vec<_>>(), want, "{}", what("max"));
            // argmin / argmax: the first index of ties (C order over the reduced axes)
            let mut iout = Array::<i64>::full(oshape.clone(), -7).unwrap();
            x.argmin().axes(axes.clone()).keepdims(keepdims).out(&mut iout).run().unwrap();
            let want: Vec<i64> = host_reduce(&xs, &shape, &m, (f64::INFINITY, -1i64), |a, v, r| if v.f() < a.0 { (v.f(), r as i64) } else { a })
                .iter()
                .map(|p| p.1)
                .collect();
            assert_eq!(iout.to_vec().unwrap(), want, "{}", what("argmin"));
            let got = x.argmax().axes(axes.clone()).keepdims(keepdims).run().unwrap().to_vec().unwrap();
            let want: Vec<i64> = host_reduce(&xs, &shape, &m, (f64::NEG_INFINITY, -1i64), |a, v, r| if v.f() > a.0 { (v.f(), r as i64) } else { a })
                .iter()
                .map(|p| p.1)
                .collect();
            assert_eq!(got, want, "{}", what("argmax"));
            // mean / var / std (ddof 0 and 1), in f64 then rounded to the float result
            let mean = host_reduce(&xs, &shape, &m, 0f64, |a, v, _| a + v.f() / count);
            let got = x.mean().axes(axes.clone()).keepdims(keepdims).run().unwrap();
            assert_eq!(got.shape(), oshape.as_slice());
            let got_f: Vec<f64> = got.to_vec().unwrap().iter().map(|v| v.to_f64()).collect();
            let rounding = if T::DTYPE == cuprum::runtime::DType::F32 { 1e-6 } else { 1e-12 };
            for (g, w) in got_f.iter().zip(&mean) {
                close(*g, *w, rounding * (1.0 + w.abs()) * 4.0, &what("mean"));
            }
            // The deviations from each output's mean, by output index.
            let mut k = 0;
            let sq: Vec<f64> = {
                let kept: Vec<usize> = (0..3).filter(|&a| !m[a]).collect();
                let mut idx = [0usize; 3];
                let mut sq = vec![0f64; mean.len()];
                for v in &xs {
                    let o = kept.iter().fold(0, |o, &a| o * shape[a] + idx[a]);
                    let d = v.f() - mean[o];
                    sq[o] += d * d;
                    for a in (0..3).rev() {
                        idx[a] += 1;
                        if idx[a] < shape[a] {
                            break;
                        }
                        idx[a] = 0;
                    }
                    k += 1;
                }
                sq
            };
            assert_eq!(k, xs.len());
            for ddof in [0usize, 1] {
                let var: Vec<f64> = sq.iter().map(|s| s / (count - ddof as f64)).collect();
                let mut vout = Array::<T::Float>::full(oshape.clone(), <T::Float as Float>::nan()).unwrap();
                x.var().axes(axes.clone()).keepdims(keepdims).ddof(ddof).out(&mut vout).run().unwrap();
                for (g, w) in vout.to_vec().unwrap().iter().zip(&var) {
                    close(g.to_f64(), *w, rounding * 16.0 * (1.0 + w.abs()), &what(&format!("var ddof {ddof}")));
                }
                let got = x.std().axes(axes.clone()).keepdims(keepdims).ddof(ddof).run().unwrap().to_vec().unwrap();
                for (g, w) in got.iter().zip(&var) {
                    close(g.to_f64(), w.sqrt(), rounding * 16.0 * (1.0 + w.sqrt()), &what(&format!("std ddof {ddof}")));
                }
            }
            // all / any: every element nonzero, then some zeros
            assert!(x.all().axes(axes.clone()).keepdims(keepdims).run().unwrap().to_vec().unwrap().iter().all(|b| *b), "{}", what("all"));
            assert!(x.any().axes(axes.clone()).keepdims(keepdims).run().unwrap().to_vec().unwrap().iter().all(|b| *b), "{}", what("any"));
        }
    }
    // all / any with zeros, on bools and numbers.
    let bools: Vec<bool> = (0..n).map(|i| i % 5 != 3 && rng.int(0, 9) != 0).collect();
    let numbers: Vec<T> = bools.iter().map(|b| if *b { T::one() } else { T::zero() }).collect();
    let xb = Array::from_shape_vec(shape, bools.clone()).unwrap();
    let xn = Array::from_shape_vec(shape, numbers).unwrap();
    for (axes, keepdims) in axes_3d() {
        let m = mask_of(3, &axes);
        let all = host_reduce(&bools, &shape, &m, true, |a, v, _| a && v);
        let any = host_reduce(&bools, &shape, &m, false, |a, v, _| a || v);
        assert_eq!(xb.all().axes(axes.clone()).keepdims(keepdims).run().unwrap().to_vec().unwrap(), all, "all of bools over {axes:?}");
        assert_eq!(xn.all().axes(axes.clone()).keepdims(keepdims).run().unwrap().to_vec().unwrap(), all, "all of {t} over {axes:?}");
        assert_eq!(xb.any().axes(axes.clone()).keepdims(keepdims).run().unwrap().to_vec().unwrap(), any, "any of bools over {axes:?}");
        assert_eq!(xn.any().axes(axes.clone()).keepdims(keepdims).run().unwrap().to_vec().unwrap(), any, "any of {t} over {axes:?}");
    }
}

/// `var`/`std` reduce shifted sums in one pass: data whose mean is large against its spread
/// (where `sum x^2 - (sum x)^2 / n` would lose every digit) against a two-pass f64 host
/// reference, along each axis and over all; a NaN propagates; `ddof >= n` divides by zero as
/// NumPy does (`inf`, or NaN for `0 / 0`).
fn var_and_std_of_a_large_mean_nan_and_ddof_at_n() {
    let mut rng = Rng::new();
    let (rows, cols) = (37usize, 1000usize);
    for mean in [1.0e4f64, -3.0e6] {
        let xs: Vec<f32> = (0..rows * cols).map(|_| (mean + rng.range(-1.0, 1.0)) as f32).collect();
        let x = Array::from_shape_vec([rows, cols], xs.clone()).unwrap();
        let two_pass = |vals: &[f64], ddof: usize| {
            let m = vals.iter().sum::<f64>() / vals.len() as f64;
            vals.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (vals.len() - ddof) as f64
        };
        for ddof in [0usize, 1] {
            let got = x.var().axis(1).ddof(ddof).run().unwrap().to_vec().unwrap();
            for (r, g) in got.iter().enumerate() {
                let row: Vec<f64> = xs[r * cols..(r + 1) * cols].iter().map(|&v| v as f64).collect();
                let want = two_pass(&row, ddof);
                close(*g as f64, want, 1e-5 * want, &format!("var of row {r}, mean {mean}, ddof {ddof}"));
            }
            let got = x.std().axis(0).ddof(ddof).run().unwrap().to_vec().unwrap();
            for (c, g) in got.iter().enumerate() {
                let col: Vec<f64> = (0..rows).map(|r| xs[r * cols + c] as f64).collect();
                let want = two_pass(&col, ddof).sqrt();
                close(*g as f64, want, 1e-5 * want, &format!("std of column {c}, mean {mean}, ddof {ddof}"));
            }
            let all: Vec<f64> = xs.iter().map(|&v| v as f64).collect();
            let want = two_pass(&all, ddof);
            let got = x.var().ddof(ddof).run().unwrap().to_vec().unwrap()[0] as f64;
            close(got, want, 1e-5 * want, &format!("var of all, mean {mean}, ddof {ddof}"));
        }
    }
    // Views that start off a 16-byte boundary (columns 1.. and 3..): the shift, one value per
    // row, is repeated into the vector loads of the row (`broadcast`), which then start after a
    // head of 3 or 1 elements read one by one.
    let (rows, cols) = (5usize, 4099usize);
    let xs: Vec<f32> = (0..rows * cols).map(|_| (2.5e5 + rng.range(-1.0, 1.0)) as f32).collect();
    let x = Array::from_shape_vec([rows, cols], xs.clone()).unwrap();
    for start in [1usize, 3] {
        let view = x.slice(1, start as isize..).unwrap();
        let got = view.var().axis(1).run().unwrap().to_vec().unwrap();
        for (r, g) in got.iter().enumerate() {
            let row: Vec<f64> = xs[r * cols + start..(r + 1) * cols].iter().map(|&v| v as f64).collect();
            let m = row.iter().sum::<f64>() / row.len() as f64;
            let want = row.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / row.len() as f64;
            close(*g as f64, want, 1e-4 * want, &format!("var of row {r} of the view from column {start}"));
        }
        let all: Vec<f64> = (0..rows).flat_map(|r| xs[r * cols + start..(r + 1) * cols].iter().map(|&v| v as f64)).collect();
        let m = all.iter().sum::<f64>() / all.len() as f64;
        let want = all.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / all.len() as f64;
        let got = view.var().run().unwrap().to_vec().unwrap()[0] as f64;
        close(got, want, 1e-4 * want, &format!("var of the view from column {start}"));
    }
    // A NaN propagates to its row only.
    let mut xs: Vec<f64> = (0..3 * 50).map(|_| rng.range(-2.0, 2.0)).collect();
    xs[60] = f64::NAN;
    let x = Array::from_shape_vec([3usize, 50], xs).unwrap();
    let v = x.var().axis(1).run().unwrap().to_vec().unwrap();
    assert!(!v[0].is_nan() && v[1].is_nan() && !v[2].is_nan(), "{v:?}");
    // ddof equal to n: inf for spread-out rows, NaN for a constant row (0 / 0), as NumPy.
    let x = Array::from_shape_vec([2usize, 2], vec![1.0f32, 2.0, 5.0, 5.0]).unwrap();
    let v = x.var().axis(1).ddof(2).run().unwrap().to_vec().unwrap();
    assert!(v[0].is_infinite() && v[0] > 0.0 && v[1].is_nan(), "{v:?}");
}

fn array_reductions_f32() {
    check_array_reductions::<f32>([7, 33, 130], 2e-6);
    check_array_reductions::<f32>([3, 2, 5000], 2e-6);
}

fn array_reductions_f64() {
    check_array_reductions::<f64>([7, 33, 130], 1e-14);
}

fn array_reductions_integers() {
    check_array_reductions::<i32>([7, 33, 130], 0.0);
    check_array_reductions::<i64>([5, 9, 300], 0.0);
}

fn argmin_and_argmax_are_exact_for_every_integer_width() {
    // i64 values an f64 cannot tell apart (2^53 + 1 vs 2^53), and the extremes.
    let big = 1i64 << 53;
    let x = vec![big, big + 1, i64::MIN, i64::MAX, big + 1, i64::MIN + 1, i64::MAX - 1, 3];
    let a = Array::from_shape_vec([2usize, 4], x.clone()).unwrap();
    assert_eq!(a.argmax().run().unwrap().to_vec().unwrap(), vec![3]);
    assert_eq!(a.argmin().run().unwrap().to_vec().unwrap(), vec![2]);
    assert_eq!(a.argmax().axis(1).run().unwrap().to_vec().unwrap(), vec![3, 2]);
    assert_eq!(a.argmin().axis(1).run().unwrap().to_vec().unwrap(), vec![2, 1]);
    let a = Array::from_vec(vec![big, big + 1, big + 1, big]).unwrap();
    assert_eq!(a.argmax().run().unwrap().to_vec().unwrap(), vec![1], "2^53 + 1 > 2^53, first of the ties");
    assert_eq!(a.argmin().run().unwrap().to_vec().unwrap(), vec![0]);
    // u64 above i64::MAX.
    let x = vec![u64::MAX - 1, 5, u64::MAX, u64::MAX, 1u64 << 63, 0];
    let a = Array::from_shape_vec([2usize, 3], x).unwrap();
    assert_eq!(a.argmax().run().unwrap().to_vec().unwrap(), vec![2]);
    assert_eq!(a.argmin().run().unwrap().to_vec().unwrap(), vec![5]);
    assert_eq!(a.argmax().axis(1).run().unwrap().to_vec().unwrap(), vec![2, 0]);
    // 32-bit integers at their extremes.
    let x: Vec<i32> = vec![i32::MAX - 1, i32::MIN, i32::MAX, i32::MIN + 1, i32::MAX];
    let a = Array::from_vec(x).unwrap();
    assert_eq!(a.argmax().run().unwrap().to_vec().unwrap(), vec![2]);
    assert_eq!(a.argmin().run().unwrap().to_vec().unwrap(), vec![1]);
    let a = Array::from_vec(vec![u32::MAX - 1, u32::MAX, 7]).unwrap();
    assert_eq!(a.argmax().run().unwrap().to_vec().unwrap(), vec![1]);
    // Random rows longer than a block's share: ties and the first index among them.
    let mut rng = Rng::new();
    let (rows, cols) = (7usize, 100_003usize);
    let host: Vec<i64> = (0..rows * cols).map(|_| rng.int(-40, 40)).collect();
    let a = Array::from_shape_vec([rows, cols], host.clone()).unwrap();
    let got_max = a.argmax().axis(1).run().unwrap().to_vec().unwrap();
    let got_min = a.argmin().axis(0).run().unwrap().to_vec().unwrap();
    for r in 0..rows {
        let row = &host[r * cols..(r + 1) * cols];
        let m = *row.iter().max().unwrap();
        assert_eq!(got_max[r], row.iter().position(|&v| v == m).unwrap() as i64, "row {r}");
    }
    for c in 0..cols {
        let col: Vec<i64> = (0..rows).map(|r| host[r * cols + c]).collect();
        let m = *col.iter().min().unwrap();
        assert_eq!(got_min[c], col.iter().position(|&v| v == m).unwrap() as i64, "column {c}");
    }
}

fn argmin_and_max_with_nan_follow_numpy() {
    let mut x = vec![1.0f64, 3.0, -2.0, 5.0, 5.0, -2.0];
    let a = Array::from_shape_vec([2usize, 3], x.clone()).unwrap();
    assert_eq!(a.argmin().run().unwrap().to_vec().unwrap(), vec![2]);
    assert_eq!(a.argmax().run().unwrap().to_vec().unwrap(), vec![3]);
    assert_eq!(a.argmin().axis(1).run().unwrap().to_vec().unwrap(), vec![2, 2]);
    x[4] = f64::NAN;
    x[1] = f64::NAN;
    let a = Array::from_shape_vec([2usize, 3], x).unwrap();
    assert_eq!(a.argmin().run().unwrap().to_vec().unwrap(), vec![1], "the first NaN");
    assert_eq!(a.argmax().axis(1).run().unwrap().to_vec().unwrap(), vec![1, 1]);
    assert!(a.max().run().unwrap().to_vec().unwrap()[0].is_nan());
    assert!(a.min().axis(0).run().unwrap().to_vec().unwrap()[1].is_nan());
}

// ------------------------------------------------------------------------------------------
// Complex numbers: the array reductions (`sum`, `prod`, `mean`, `all`, `any`) and `#[reduction]`
// over `Complex<f32>`/`Complex<f64>` (CuPy's complex64/complex128), against host references in
// f64 (sums compensated, so that the complex128 reference is more exact than the device's)
// ------------------------------------------------------------------------------------------

/// The complex element types.
trait CElem: Scalar + Number + MeanResult<Mean = Self> {
    /// The machine epsilon of the part type.
    const EPS: f64;
    fn new(re: f64, im: f64) -> Self;
    fn parts(self) -> (f64, f64);
    fn poison() -> Self {
        Self::new(f64::NAN, f64::NAN)
    }
}

impl CElem for Complex<f32> {
    const EPS: f64 = f32::EPSILON as f64;
    fn new(re: f64, im: f64) -> Self {
        Complex::new(re as f32, im as f32)
    }
    fn parts(self) -> (f64, f64) {
        (self.re as f64, self.im as f64)
    }
}

impl CElem for Complex<f64> {
    const EPS: f64 = f64::EPSILON;
    fn new(re: f64, im: f64) -> Self {
        Complex::new(re, im)
    }
    fn parts(self) -> (f64, f64) {
        (self.re, self.im)
    }
}

/// A Neumaier-compensated f64 sum: the reference's own rounding stays far below an f64 device
/// sum's, so the tolerance measures the device.
#[derive(Clone, Copy, Default)]
struct KahanSum {
    s: f64,
    c: f64,
}

impl KahanSum {
    fn add(self, v: f64) -> KahanSum {
        let t = self.s + v;
        let c = if self.s.abs() >= v.abs() { self.c + ((self.s - t) + v) } else { self.c + ((v - t) + self.s) };
        KahanSum { s: t, c }
    }
    fn value(self) -> f64 {
        self.s + self.c
    }
}

/// Per output: the compensated sums of the real and imaginary parts, and of their magnitudes.
#[derive(Clone, Copy, Default)]
struct ComplexSums {
    re: KahanSum,
    im: KahanSum,
    abs_re: f64,
    abs_im: f64,
}

fn complex_sums(xs: &[(f64, f64)], shape: &[usize], m: &[bool]) -> Vec<ComplexSums> {
    host_reduce(xs, shape, m, ComplexSums::default(), |a, (re, im), _| ComplexSums {
        re: a.re.add(re),
        im: a.im.add(im),
        abs_re: a.abs_re + re.abs(),
        abs_im: a.abs_im + im.abs(),
    })
}

fn complex_close(got: (f64, f64), want: (f64, f64), tol: (f64, f64), what: &str) {
    close(got.0, want.0, tol.0, &format!("{what} (real part)"));
    close(got.1, want.1, tol.1, &format!("{what} (imaginary part)"));
}

/// `sum`, `prod` and `mean` of a random complex `shape` input over each of [`axes_3d`], on the
/// array and on a transposed view, with poisoned outputs; `all`/`any` (compiled by NVRTC).
///
/// Tolerances, per part: sums `16 eps(T) sum|x|` (the device adds in `T`); means
/// `4 eps(T) |mean| + 64 eps(f64) mean|x|` (accumulated in `Complex<f64>`, rounded to `T`);
/// products `16 eps(T) n |prod|` in modulus (each complex product rounds a few times).
fn check_complex_reductions<T: CElem>(rng: &mut Rng, shape: [usize; 3]) {
    let n: usize = shape.iter().product();
    let t = std::any::type_name::<T>();
    let host: Vec<T> = (0..n).map(|_| T::new(rng.range(-4.0, 4.0), rng.range(-4.0, 4.0))).collect();
    let base = Array::from_shape_vec(shape, host).unwrap();
    // Moduli near 1, small phases: products stay in range.
    let near_one: Vec<T> = (0..n).map(|_| T::new(rng.range(0.9, 1.1), rng.range(-0.1, 0.1))).collect();
    let ones = Array::from_shape_vec(shape, near_one).unwrap();
    for permuted in [false, true] {
        let view = |a: &Array<T>| if permuted { a.permute(&[2, 0, 1]).unwrap() } else { a.clone() };
        let x = view(&base);
        let ox = view(&ones);
        let xs: Vec<(f64, f64)> = x.to_vec().unwrap().into_iter().map(T::parts).collect();
        let os: Vec<(f64, f64)> = ox.to_vec().unwrap().into_iter().map(T::parts).collect();
        let shape = x.shape().to_vec();
        for (axes, keepdims) in axes_3d() {
            let m = mask_of(3, &axes);
            let oshape = out_shape(&shape, &axes, keepdims);
            let what = |op: &str| format!("{op} of {t} {shape:?} over {axes:?} (keepdims {keepdims})");
            let count = shape.iter().zip(&m).filter(|(_, r)| **r).map(|(d, _)| *d).product::<usize>() as f64;
            let sums = complex_sums(&xs, &shape, &m);

            // sum: into a poisoned output, and allocated
            let mut out = Array::<T>::full(oshape.clone(), T::poison()).unwrap();
            x.sum().axes(axes.clone()).keepdims(keepdims).out(&mut out).run().unwrap();
            let got = x.sum().axes(axes.clone()).keepdims(keepdims).run().unwrap();
            assert_eq!(got.shape(), oshape.as_slice(), "{}", what("sum"));
            assert_eq!(out.to_vec().unwrap(), got.to_vec().unwrap(), "{}", what("sum"));
            for (g, s) in out.to_vec().unwrap().into_iter().zip(&sums) {
                let tol = (16.0 * T::EPS * s.abs_re, 16.0 * T::EPS * s.abs_im);
                complex_close(g.parts(), (s.re.value(), s.im.value()), tol, &what("sum"));
            }

            // mean: of the complex type itself (NumPy's and CuPy's rule), poisoned output
            let mut out = Array::<T>::full(oshape.clone(), T::poison()).unwrap();
            x.mean().axes(axes.clone()).keepdims(keepdims).out(&mut out).run().unwrap();
            for (g, s) in out.to_vec().unwrap().into_iter().zip(&sums) {
                let want = (s.re.value() / count, s.im.value() / count);
                let tol = (
                    4.0 * T::EPS * want.0.abs() + 64.0 * f64::EPSILON * s.abs_re / count,
                    4.0 * T::EPS * want.1.abs() + 64.0 * f64::EPSILON * s.abs_im / count,
                );
                complex_close(g.parts(), want, tol, &what("mean"));
            }

            // prod of values near 1, poisoned output; compared in modulus
            let mut out = Array::<T>::full(oshape.clone(), T::poison()).unwrap();
            ox.prod().axes(axes.clone()).keepdims(keepdims).out(&mut out).run().unwrap();
            let want = host_reduce(&os, &shape, &m, Complex::new(1.0f64, 0.0), |a, (re, im), _| a * Complex::new(re, im));
            for (g, w) in out.to_vec().unwrap().into_iter().zip(&want) {
                let (re, im) = g.parts();
                let err = (Complex::new(re, im) - w).norm();
                let tol = 16.0 * T::EPS * count * w.norm();
                assert!(err <= tol, "{}: got {re}{im:+}i, want {w}, |error| {err:e} > {tol:e}", what("prod"));
            }

            // all / any: every element is nonzero
            assert!(x.all().axes(axes.clone()).keepdims(keepdims).run().unwrap().to_vec().unwrap().iter().all(|b| *b), "{}", what("all"));
            assert!(x.any().axes(axes.clone()).keepdims(keepdims).run().unwrap().to_vec().unwrap().iter().all(|b| *b), "{}", what("any"));
        }
    }
    // all / any with zeros: a complex number is zero only when both parts are.
    let kinds: Vec<u8> = (0..n).map(|i| if i % 5 == 3 { 0 } else { rng.int(0, 9) as u8 }).collect();
    let numbers: Vec<T> = kinds
        .iter()
        .map(|k| match k {
            0 => T::new(0.0, 0.0),
            1 => T::new(0.0, 1.5),
            2 => T::new(-2.0, 0.0),
            _ => T::new(0.5, 0.25),
        })
        .collect();
    let nonzero: Vec<bool> = kinds.iter().map(|k| *k != 0).collect();
    let xn = Array::from_shape_vec(shape, numbers).unwrap();
    for (axes, keepdims) in axes_3d() {
        let m = mask_of(3, &axes);
        let all = host_reduce(&nonzero, &shape, &m, true, |a, v, _| a && v);
        let any = host_reduce(&nonzero, &shape, &m, false, |a, v, _| a || v);
        assert_eq!(xn.all().axes(axes.clone()).keepdims(keepdims).run().unwrap().to_vec().unwrap(), all, "all of {t} over {axes:?}");
        assert_eq!(xn.any().axes(axes.clone()).keepdims(keepdims).run().unwrap().to_vec().unwrap(), any, "any of {t} over {axes:?}");
    }
}

/// Large reductions that split each output over several blocks (`rows` with `gridDim.x` > 1, a
/// full reduction; `cols` with `gridDim.y` > 1, few outputs with long columns): the partial
/// results of a `Complex<f64>` accumulator are 32 bytes (16-byte aligned).
fn check_complex_split_reductions<T: CElem>(rng: &mut Rng) {
    let t = std::any::type_name::<T>();
    for shape in [vec![1usize << 20], vec![1 << 17, 3], vec![3, 1 << 17]] {
        let n: usize = shape.iter().product();
        let host: Vec<T> = (0..n).map(|_| T::new(rng.range(-4.0, 4.0), rng.range(-4.0, 4.0))).collect();
        let xs: Vec<(f64, f64)> = host.iter().map(|v| v.parts()).collect();
        let x = Array::from_shape_vec(shape.clone(), host).unwrap();
        let axes_list = if shape.len() == 1 { vec![Axes::All] } else { vec![Axes::All, Axes::One(0), Axes::One(1)] };
        for axes in axes_list {
            let m = mask_of(shape.len(), &axes);
            let what = |op: &str| format!("{op} of {t} {shape:?} over {axes:?}");
            let count = shape.iter().zip(&m).filter(|(_, r)| **r).map(|(d, _)| *d).product::<usize>() as f64;
            let sums = complex_sums(&xs, &shape, &m);
            let got = x.sum().axes(axes.clone()).run().unwrap().to_vec().unwrap();
            for (g, s) in got.into_iter().zip(&sums) {
                let tol = (16.0 * T::EPS * s.abs_re, 16.0 * T::EPS * s.abs_im);
                complex_close(g.parts(), (s.re.value(), s.im.value()), tol, &what("sum"));
            }
            let got = x.mean().axes(axes.clone()).run().unwrap().to_vec().unwrap();
            for (g, s) in got.into_iter().zip(&sums) {
                let want = (s.re.value() / count, s.im.value() / count);
                let tol = (
                    4.0 * T::EPS * want.0.abs() + 64.0 * f64::EPSILON * s.abs_re / count,
                    4.0 * T::EPS * want.1.abs() + 64.0 * f64::EPSILON * s.abs_im / count,
                );
                complex_close(g.parts(), want, tol, &what("mean"));
            }
        }
    }
}

fn array_reductions_complex64() {
    let mut rng = Rng::seeded("array_reductions_complex64");
    check_complex_reductions::<Complex<f32>>(&mut rng, [7, 33, 130]);
    check_complex_reductions::<Complex<f32>>(&mut rng, [3, 2, 5000]);
    check_complex_split_reductions::<Complex<f32>>(&mut rng);
}

fn array_reductions_complex128() {
    let mut rng = Rng::seeded("array_reductions_complex128");
    check_complex_reductions::<Complex<f64>>(&mut rng, [7, 33, 130]);
    check_complex_reductions::<Complex<f64>>(&mut rng, [3, 2, 5000]);
    check_complex_split_reductions::<Complex<f64>>(&mut rng);
}

fn complex_reductions_of_empty_inputs_and_their_layers() {
    // sum and prod of nothing are their identities; mean is NaN + NaN i (NumPy).
    let z = Array::<Complex<f32>>::zeros([3usize, 0]).unwrap();
    assert_eq!(z.sum().axis(1).run().unwrap().to_vec().unwrap(), vec![Complex::new(0.0, 0.0); 3]);
    assert_eq!(z.prod().axis(1).run().unwrap().to_vec().unwrap(), vec![Complex::new(1.0, 0.0); 3]);
    let m = Array::<Complex<f64>>::zeros([0usize, 2]).unwrap().mean().axis(0).run().unwrap().to_vec().unwrap();
    assert!(m.len() == 2 && m.iter().all(|v| v.re.is_nan() && v.im.is_nan()), "{m:?}");
    assert!(z.any().run().unwrap().to_vec().unwrap() == vec![false] && z.all().run().unwrap().to_vec().unwrap() == vec![true]);
    // Small exact cases: (1+2i)(3-i) = 5+5i; the mean of 1+2i and 3-i is 2+0.5i.
    let a = Array::from_vec(vec![Complex::new(1.0f32, 2.0), Complex::new(3.0, -1.0)]).unwrap();
    assert_eq!(a.sum().run().unwrap().to_vec().unwrap(), vec![Complex::new(4.0, 1.0)]);
    assert_eq!(a.prod().run().unwrap().to_vec().unwrap(), vec![Complex::new(5.0, 5.0)]);
    assert_eq!(a.mean().run().unwrap().to_vec().unwrap(), vec![Complex::new(2.0, 0.5)]);
    // sum, prod and mean of both complex types are precompiled (when built with nvcc), as the
    // f32/f64 ones are; the 32-bit variants that ran came from the fat binary.
    let builtin_sum = audit::kernels().find(|e| e.name() == "sum" && e.file().ends_with("kernels/reductions.rs")).expect("the built-in sum is listed");
    if builtin_sum.unit().unwrap().fatbin().is_none() {
        eprintln!("the runtime was built without nvcc: not checking the aot layer");
        return;
    }
    let b = Array::from_vec(vec![Complex::new(1.0f64, 2.0), Complex::new(3.0, -1.0)]).unwrap();
    assert_eq!(b.sum().run().unwrap().to_vec().unwrap(), vec![Complex::new(4.0, 1.0)]);
    assert_eq!(b.prod().run().unwrap().to_vec().unwrap(), vec![Complex::new(5.0, 5.0)]);
    assert_eq!(b.mean().run().unwrap().to_vec().unwrap(), vec![Complex::new(2.0, 0.5)]);
    if !on_gpu() {
        return;
    }
    let served = audit::served();
    for (kernel, suffix) in [("sum", "__c32"), ("sum", "__c64"), ("prod", "__c32"), ("prod", "__c64"), ("mean_c32", ""), ("mean_c64", "")] {
        let of: Vec<_> = served.iter().filter(|s| s.kernel == kernel && s.symbol.ends_with(suffix)).collect();
        assert!(!of.is_empty(), "no {kernel}{suffix} served: {served:?}");
        for s in of {
            assert_eq!(s.layer, Layer::Aot, "{s:?}");
        }
    }
}

fn reduction_macro_over_complex() {
    let mut rng = Rng::seeded("reduction_macro_over_complex");
    // Generic over Number: Complex<f32> precompiled, Complex<f64> through NVRTC.
    let shape = [37usize, 129, 5];
    let n: usize = shape.iter().product();
    let h32: Vec<Complex<f32>> = (0..n).map(|_| Complex::new(rng.range(-2.0, 2.0) as f32, rng.range(-2.0, 2.0) as f32)).collect();
    let h64: Vec<Complex<f64>> = (0..n).map(|_| Complex::new(rng.range(-2.0, 2.0), rng.range(-2.0, 2.0))).collect();
    let x32 = Array::from_shape_vec(shape, h32.clone()).unwrap();
    let x64 = Array::from_shape_vec(shape, h64.clone()).unwrap();
    for (axes, keepdims) in axes_3d() {
        let m = mask_of(3, &axes);
        let oshape = out_shape(&shape, &axes, keepdims);
        let what = |t: &str| format!("sum_sq of {t} over {axes:?} (keepdims {keepdims})");
        // The squares, in f64, and their magnitudes (|z^2| = |z|^2 bounds each part).
        let squares = |xs: Vec<(f64, f64)>| -> Vec<(f64, f64)> { xs.into_iter().map(|(re, im)| (re * re - im * im, 2.0 * re * im)).collect() };
        let abs_sq = |xs: &[(f64, f64)]| host_reduce(xs, &shape, &m, 0f64, |a, (re, im), _| a + re * re + im * im);
        let p32: Vec<(f64, f64)> = h32.iter().map(|v| v.parts()).collect();
        let p64: Vec<(f64, f64)> = h64.iter().map(|v| v.parts()).collect();
        for (parts, eps, got, t) in [
            (&p32, f32::EPSILON as f64, {
                let mut out = Array::<Complex<f32>>::full(oshape.clone(), <Complex<f32> as CElem>::poison()).unwrap();
                k::sum_sq::call(&x32).axes(axes.clone()).keepdims(keepdims).out(&mut out).run().unwrap();
                out.to_vec().unwrap().into_iter().map(CElem::parts).collect::<Vec<_>>()
            }, "Complex<f32>"),
            (&p64, f64::EPSILON, {
                let mut out = Array::<Complex<f64>>::full(oshape.clone(), <Complex<f64> as CElem>::poison()).unwrap();
                k::sum_sq::call(&x64).axes(axes.clone()).keepdims(keepdims).out(&mut out).run().unwrap();
                out.to_vec().unwrap().into_iter().map(CElem::parts).collect::<Vec<_>>()
            }, "Complex<f64>"),
        ] {
            let want = complex_sums(&squares(parts.clone()), &shape, &m);
            let mag = abs_sq(parts);
            assert_eq!(got.len(), want.len(), "{}", what(t));
            for ((g, w), a) in got.into_iter().zip(&want).zip(&mag) {
                complex_close(g, (w.re.value(), w.im.value()), (32.0 * eps * a, 32.0 * eps * a), &what(t));
            }
        }
    }
    if on_gpu() {
        let served = audit::served();
        let c64 = served.iter().find(|s| s.kernel == "sum_sq" && s.symbol.ends_with("__c64")).expect("sum_sq of Complex<f64> was served");
        assert_ne!(c64.layer, Layer::Aot, "Complex<f64> is not a precompiled instance of sum_sq: {c64:?}");
        if k::sum_sq::__kernel().unit().unwrap().fatbin().is_some() {
            for s in served.iter().filter(|s| s.kernel == "sum_sq" && s.symbol.ends_with("__c32")) {
                assert_eq!(s.layer, Layer::Aot, "{s:?}");
            }
        }
    }

    // Concrete complex types, an accumulator wider than the map's inputs, a broadcast input, a
    // real post-map; short rows (a warp per row) and a split full reduction.
    for (rows, cols) in [(300usize, 70usize), (1, 1 << 20)] {
        let xs: Vec<Complex<f32>> = (0..rows * cols).map(|_| Complex::new(rng.range(-2.0, 2.0) as f32, rng.range(-2.0, 2.0) as f32)).collect();
        let ys: Vec<Complex<f32>> = (0..cols).map(|_| Complex::new(rng.range(-2.0, 2.0) as f32, rng.range(-2.0, 2.0) as f32)).collect();
        let x = Array::from_shape_vec([rows, cols], xs.clone()).unwrap();
        let y = Array::from_vec(ys.clone()).unwrap();
        let mut out = Array::<f64>::full([rows], f64::NAN).unwrap();
        k::cdot_abs::call(&x, &y).axis(1).out(&mut out).run().unwrap();
        for (o, g) in out.to_vec().unwrap().iter().enumerate() {
            // The map on the host (the product rounds in f32 as on the device), summed in f64.
            let (mut re, mut im, mut mag) = (KahanSum::default(), KahanSum::default(), 0f64);
            for r in 0..cols {
                let p = k::cdot_abs(xs[o * cols + r], ys[r]);
                re = re.add(p.re);
                im = im.add(p.im);
                mag += p.norm();
            }
            let want = Complex::new(re.value(), im.value()).norm();
            // f64 sums; a device that contracts the product into FMAs rounds it differently in f32.
            let tol = (16.0 * f64::EPSILON + 4.0 * f32::EPSILON as f64) * mag;
            close(*g, want, tol, &format!("cdot_abs row {o} of ({rows}, {cols})"));
        }
    }
    assert_eq!(k::cdot_abs::post_host(Complex::new(3.0, 4.0)), 5.0);
    assert_eq!(k::sum_sq::identity_host::<Complex<f32>>(), Complex::new(0.0, 0.0));
}

/// Fewer outputs than a warp, each a long strided row (a block per output, split across blocks,
/// `reduction::plan`): a sum, a reduction without identity, the (value, position) argmin, and a
/// broadcast view, against host references.
fn few_outputs_along_a_long_strided_axis() {
    let mut rng = Rng::new();
    let (n, c) = (100_003usize, 3usize);
    let host: Vec<f64> = (0..n * c).map(|_| rng.range(-4.0, 4.0)).collect();
    let x = Array::from_shape_vec([n, c], host.clone()).unwrap();
    let host = &host;
    let col = |j: usize| (0..n).map(move |i| host[i * c + j]);
    let sums = x.sum().axis(0).run().unwrap().to_vec().unwrap();
    let maxs = x.max().axis(0).run().unwrap().to_vec().unwrap();
    let args = x.argmin().axis(0).run().unwrap().to_vec().unwrap();
    for j in 0..c {
        let abs: f64 = col(j).map(f64::abs).sum();
        close(sums[j], col(j).sum(), 1e-12 * abs, "sum along axis 0");
        assert_eq!(maxs[j], col(j).fold(f64::NEG_INFINITY, f64::max), "max of column {j}");
        let (best, _) = col(j).enumerate().fold((0, f64::INFINITY), |(bi, bv), (i, v)| if v < bv { (i, v) } else { (bi, bv) });
        assert_eq!(args[j], best as i64, "argmin of column {j}");
    }
    // (2, n, 3), the rows repeated, summed over the middle axis: 6 outputs.
    let got = x.broadcast_to([2, n, c]).unwrap().sum().axis(1).run().unwrap().to_vec().unwrap();
    assert_eq!(got.len(), 2 * c);
    for (k, g) in got.iter().enumerate() {
        let j = k % c;
        let abs: f64 = col(j).map(f64::abs).sum();
        close(*g, col(j).sum(), 1e-12 * abs, "broadcast sum over the middle axis");
    }
}
