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
use cuprum::reductions::FloatResult;
use cuprum::runtime::reduction::{plan, Axes};
use cuprum::runtime::registry;
use cuprum::runtime::stats::Layer;
use cuprum::runtime::{Array, Scalar, Stream};
use reduction_kernels as k;

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

fn mask_of(ndim: usize, axes: &Axes) -> Vec<bool> {
    plan::reduced_mask(ndim, axes).unwrap()
}

fn out_shape(shape: &[usize], axes: &Axes, keepdims: bool) -> Vec<usize> {
    plan::output_shape(shape, &mask_of(shape.len(), axes), keepdims)
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
fn kernels_are_registered_with_their_precompiled_instances() {
    let find = |name: &str| {
        registry::kernels()
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
    for name in ["sum", "prod", "min_int", "max_float", "mean_float", "mean_f64", "std_float", "arg_of_float", "arg_of_int", "all_bool", "any_bool"] {
        assert!(!find(name).unit().unwrap().precompiled().is_empty(), "{name}");
    }
    assert!(find("sum").unit().unwrap().precompiled().contains(&"cuprum_reduction_sum_rows__i64"));
    assert!(k::l2norm::__HAS_IDENTITY && !k::max_abs::__HAS_IDENTITY);
}

// ------------------------------------------------------------------------------------------
// GPU: the macro's builder
// ------------------------------------------------------------------------------------------

#[test]
#[ignore = "needs a CUDA GPU"]
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

#[test]
#[ignore = "needs a CUDA GPU"]
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

#[test]
#[ignore = "needs a CUDA GPU"]
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

#[test]
#[ignore = "needs a CUDA GPU"]
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
    let l2 = registry::kernels().find(|e| e.kind() == "reduction" && e.name() == "l2norm").unwrap();
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
    let served = registry::served();
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
    let served = registry::served();
    let s = served.iter().find(|s| s.symbol == "cuprum_reduction_l2norm_rows__f16").expect("the f16 instance was served");
    assert_ne!(s.layer, Layer::Aot);
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

#[test]
#[ignore = "needs a CUDA GPU"]
fn array_reductions_f32() {
    check_array_reductions::<f32>([7, 33, 130], 2e-6);
    check_array_reductions::<f32>([3, 2, 5000], 2e-6);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn array_reductions_f64() {
    check_array_reductions::<f64>([7, 33, 130], 1e-14);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn array_reductions_integers() {
    check_array_reductions::<i32>([7, 33, 130], 0.0);
    check_array_reductions::<i64>([5, 9, 300], 0.0);
}

#[test]
#[ignore = "needs a CUDA GPU"]
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
