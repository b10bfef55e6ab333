//! `#[rawkernel]` end to end, through the typed launch API the macro generates
//! (`kernel::launch(&config, args..)`): every kernel of `rawkernel_kernels.rs` against a host
//! reference, on fresh random inputs with outputs poisoned before the launch, plus the checks
//! made before a launch, on the CPU device (in CI) and on the GPU (`on_both_devices!`); and the
//! instance lookup on the GPU (precompiled instances and NVRTC on demand).

#[path = "../../runtime/tests/support/mod.rs"]
mod support;
use support::Rng;

mod rawkernel_kernels;

use cuprum::audit;
use cuprum::runtime::stats::Layer;
use cuprum::runtime::{Array, LaunchConfig, Scalar};
use half::{bf16, f16};
use num_complex::Complex;
use rawkernel_kernels as k;

const GPU: &str = "needs a CUDA GPU";

on_both_devices!(
    cuprum::runtime::Device;
    grid_1d_and_size,
    grid_2d_and_size,
    grid_3d_and_size,
    one_thread_kernel,
    grid_stride_copy_every_dtype,
    read_only_slices_cannot_alias_writable_arguments,
    views_2d_indexing_any_strides,
    non_contiguous_slice_is_an_error,
    loops_break_continue_labels,
    reverse_through_static_and_dynamic_shared_memory,
    sync_warp_partial_mask,
    warp_shuffles_and_lane_id,
    warp_sums_by_xor_shuffle,
    atomic_add_every_dtype,
    atomic_min_max_sub_ints_and_floats,
    atomic_and_or_xor,
    atomic_inc_dec_wrap_at_the_limit,
    atomic_exch_and_cas,
    device_functions_generic_min_max,
    device_function_writes_through_a_mut_array_parameter,
    local_arrays_dot_and_sort,
    scalar_arguments_of_every_dtype,
    inf_nan_constants_and_early_return,
    checks_before_launch,
    launches_from_several_threads,
    barriers_inside_a_loop,
    unrolled_loops_compute_the_same
);


/// Random values of a dtype (never all zeros), and a poison value.
trait Gen: Scalar {
    fn draw(r: &mut Rng) -> Self;
    fn poison() -> Self;
}
macro_rules! gen_int {
    ($($t:ty),*) => {$(
        impl Gen for $t {
            fn draw(r: &mut Rng) -> $t { r.next() as $t }
            fn poison() -> $t { 0x5a as $t }
        }
    )*};
}
gen_int!(i8, i16, i32, i64, u8, u16, u32, u64);
impl Gen for bool {
    fn draw(r: &mut Rng) -> bool { r.next() & 1 == 1 }
    fn poison() -> bool { true }
}
impl Gen for f32 {
    fn draw(r: &mut Rng) -> f32 { (r.unit() * 200.0 - 100.0) as f32 }
    fn poison() -> f32 { f32::NAN }
}
impl Gen for f64 {
    fn draw(r: &mut Rng) -> f64 { r.unit() * 200.0 - 100.0 }
    fn poison() -> f64 { f64::NAN }
}
impl Gen for f16 {
    fn draw(r: &mut Rng) -> f16 { f16::from_f64(r.unit() * 20.0 - 10.0) }
    fn poison() -> f16 { f16::NAN }
}
impl Gen for bf16 {
    fn draw(r: &mut Rng) -> bf16 { bf16::from_f64(r.unit() * 20.0 - 10.0) }
    fn poison() -> bf16 { bf16::NAN }
}
impl Gen for Complex<f32> {
    fn draw(r: &mut Rng) -> Self { Complex::new(f32::draw(r), f32::draw(r)) }
    fn poison() -> Self { Complex::new(f32::NAN, f32::NAN) }
}
impl Gen for Complex<f64> {
    fn draw(r: &mut Rng) -> Self { Complex::new(f64::draw(r), f64::draw(r)) }
    fn poison() -> Self { Complex::new(f64::NAN, f64::NAN) }
}

fn rand<T: Gen>(r: &mut Rng, n: usize) -> Vec<T> {
    (0..n).map(|_| T::draw(r)).collect()
}
fn up<T: Scalar>(v: &[T]) -> Array<T> {
    Array::from_slice(v).unwrap()
}
fn poisoned<T: Gen>(n: usize) -> Array<T> {
    Array::from_vec(vec![T::poison(); n]).unwrap()
}
fn cfg(grid: impl Into<cuprum::runtime::Dim3>, block: impl Into<cuprum::runtime::Dim3>) -> LaunchConfig<'static> {
    LaunchConfig::new(grid, block)
}
fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs().max(1.0)
}

fn grid_1d_and_size() {
    let n = 7 * 64;
    let (mut idx, mut size) = (poisoned::<u32>(n), poisoned::<u32>(n));
    k::index_1d::launch(&cfg(7, 64), &mut idx, &mut size).unwrap();
    assert_eq!(idx.to_vec().unwrap(), (0..n as u32).collect::<Vec<_>>());
    assert!(size.to_vec().unwrap().iter().all(|&s| s == n as u32));
}

fn grid_2d_and_size() {
    let (w, h) = (3 * 8, 2 * 4);
    let mut out = poisoned::<u32>(3 * w * h);
    k::index_2d::launch(&cfg((3, 2), (8, 4)), &mut out, w as u32).unwrap();
    let out = out.to_vec().unwrap();
    for y in 0..h {
        for x in 0..w {
            let kk = y * w + x;
            assert_eq!(&out[3 * kk..3 * kk + 3], &[x as u32, y as u32, (w * 100_000 + h) as u32], "({x}, {y})");
        }
    }
}

fn grid_3d_and_size() {
    let (w, h, d) = (2 * 4, 2 * 2, 3 * 2);
    let mut out = poisoned::<u32>(2 * w * h * d);
    k::index_3d::launch(&cfg((2, 2, 3), (4, 2, 2)), &mut out, w as u32, h as u32).unwrap();
    let out = out.to_vec().unwrap();
    for z in 0..d {
        for y in 0..h {
            for x in 0..w {
                let kk = (z * h + y) * w + x;
                assert_eq!(out[2 * kk] as usize, x + 1000 * y + 1_000_000 * z);
                assert_eq!(out[2 * kk + 1] as usize, w + 1000 * h + 1_000_000 * d);
            }
        }
    }
}

fn one_thread_kernel() {
    let mut r = Rng::new();
    let x: Vec<i64> = rand(&mut r, 1000);
    let mut out = poisoned::<i64>(1000);
    k::one_thread_scan::launch(&cfg(1, 1), &up(&x), &mut out).unwrap();
    let mut acc = 0i64;
    let want: Vec<i64> = x.iter().map(|v| { acc = acc.wrapping_add(*v); acc }).collect();
    assert_eq!(out.to_vec().unwrap(), want);
}

fn copy_case<T: Gen>(r: &mut Rng) {
    let n = 100_003;
    let x: Vec<T> = rand(r, n);
    let mut y = poisoned::<T>(n);
    k::copy::launch(&cfg(120, 256), &up(&x), &mut y, n as u32).unwrap();
    let got = y.to_vec().unwrap();
    // Bitwise: NaN-free inputs, so equality is exact.
    assert!(got == x, "copy::<{:?}> differs", T::DTYPE);
}

fn grid_stride_copy_every_dtype() {
    let mut r = Rng::new();
    copy_case::<bool>(&mut r);
    copy_case::<i8>(&mut r);
    copy_case::<i16>(&mut r);
    copy_case::<i32>(&mut r);
    copy_case::<i64>(&mut r);
    copy_case::<u8>(&mut r);
    copy_case::<u16>(&mut r);
    copy_case::<u32>(&mut r);
    copy_case::<u64>(&mut r);
    copy_case::<f16>(&mut r);
    copy_case::<bf16>(&mut r);
    copy_case::<f32>(&mut r);
    copy_case::<f64>(&mut r);
    copy_case::<Complex<f32>>(&mut r);
    copy_case::<Complex<f64>>(&mut r);
    if cuprum::runtime::Device::current().unwrap().is_cpu() {
        return; // no instance to look up on the CPU: the host copy is generic
    }
    // f32 is precompiled (in the unit's source); i8 was compiled on demand.
    let served = audit::served();
    let layer = |sym: &str| served.iter().find(|s| s.symbol == sym).map(|s| s.layer);
    assert!(layer("cuprum_rawkernel_copy__f32").is_some());
    assert!(matches!(layer("cuprum_rawkernel_copy__i8"), Some(Layer::Nvrtc | Layer::Disk | Layer::Memory)), "{served:?}");
}

/// `&[T]` parameters are read through the read-only data cache, which Rust's aliasing rule makes
/// correct: the launch rejects a writable argument that shares memory with one.
fn read_only_slices_cannot_alias_writable_arguments() {
    let mut r = Rng::new();
    let n = 4096usize;
    let x: Vec<f32> = rand(&mut r, 2 * n);
    let mut a = up(&x);
    // The same memory as `&[T]` and `&mut [T]` (a clone of an array is a view of it).
    let alias = a.clone();
    let e = k::copy::launch(&cfg(16, 256), &alias, &mut a, n as u32).unwrap_err().to_string();
    assert!(e.contains("share device memory") && e.contains("`x`") && e.contains("`y`"), "{e}");
    // Halves of one buffer that overlap by one element.
    let lo = a.slice(0, 0..(n as isize + 1)).unwrap();
    let mut hi = a.slice(0, n as isize..2 * n as isize).unwrap();
    let e = k::copy::launch(&cfg(16, 256), &lo, &mut hi, n as u32).unwrap_err().to_string();
    assert!(e.contains("share device memory"), "{e}");
    // Disjoint halves of one buffer: allowed, and copied right.
    let lo = a.slice(0, 0..n as isize).unwrap();
    let mut hi = a.slice(0, n as isize..2 * n as isize).unwrap();
    k::copy::launch(&cfg(16, 256), &lo, &mut hi, n as u32).unwrap();
    let got = a.to_vec().unwrap();
    assert!(got[..n] == x[..n] && got[n..] == x[..n], "disjoint halves");
}

fn views_2d_indexing_any_strides() {
    let mut r = Rng::new();
    let (rows, cols) = (37usize, 53usize);
    let a: Vec<f64> = rand(&mut r, rows * cols);
    let s = 1.5f64;
    // `a` as (cols, rows) contiguous, and the same values as a transposed (non-contiguous) view.
    let da = Array::from_shape_vec([cols, rows], a.clone()).unwrap();
    let dt = Array::from_shape_vec([rows, cols], (0..rows * cols).map(|q| a[(q % cols) * rows + q / cols]).collect::<Vec<_>>()).unwrap().transpose();
    for input in [&da, &dt] {
        let mut out = Array::from_shape_vec([rows, cols], vec![f64::NAN; rows * cols]).unwrap();
        k::transpose_scale::launch(&cfg((cols.div_ceil(16) as u32, rows.div_ceil(16) as u32), (16, 16)), input, &mut out, s).unwrap();
        let got = out.to_vec().unwrap();
        for i in 0..rows {
            for j in 0..cols {
                assert_eq!(got[i * cols + j], a[j * rows + i] * s, "({i}, {j})");
            }
        }
    }
    // A view of the wrong dimension is an error, nothing launched.
    let mut flat = Array::from_vec(vec![f64::NAN; rows * cols]).unwrap();
    let e = k::transpose_scale::launch(&cfg(1, 1), &da, &mut flat, s).unwrap_err().to_string();
    assert!(e.contains("View<_, 2>") && e.contains("1 dimension"), "{e}");
}

fn non_contiguous_slice_is_an_error() {
    let a = Array::from_shape_vec([4, 8], (0..32).map(|v| v as f32).collect::<Vec<_>>()).unwrap();
    let mut y = poisoned::<f32>(32);
    let e = k::copy::launch(&cfg(1, 32), &a.transpose(), &mut y, 32).unwrap_err().to_string();
    assert!(e.contains("not C-contiguous") && e.contains("`x`"), "{e}");
    assert!(y.to_vec().unwrap().iter().all(|v| v.is_nan()), "nothing may be launched");
}

fn loops_host(x: u32) -> u32 {
    let mut total = 0u32;
    'outer: for round in 0..3u32 {
        let mut j = 0u32;
        loop {
            j += 1;
            if j > x {
                break;
            }
            if j % 3 == 0 {
                continue;
            }
            if j > 7 + round {
                continue 'outer;
            }
            total += j;
            if total > 50 {
                break 'outer;
            }
        }
    }
    total
}

fn loops_break_continue_labels() {
    let mut r = Rng::new();
    let x: Vec<u32> = (0..5000).map(|_| (r.next() % 20) as u32).collect();
    let mut out = poisoned::<u32>(5000);
    k::loops::launch(&LaunchConfig::for_elements(5000, 128), &up(&x), &mut out).unwrap();
    let want: Vec<u32> = x.iter().map(|&v| loops_host(v)).collect();
    assert_eq!(out.to_vec().unwrap(), want);
}

fn reverse_through_static_and_dynamic_shared_memory() {
    let mut r = Rng::new();
    let x: Vec<f32> = rand(&mut r, 256 * 10);
    let mut out = poisoned::<f32>(256 * 10);
    k::reverse_static::launch(&cfg(10, 256), &up(&x), &mut out).unwrap();
    let want: Vec<f32> = x.chunks(256).flat_map(|c| c.iter().rev().copied()).collect();
    assert_eq!(out.to_vec().unwrap(), want);

    let x: Vec<f64> = rand(&mut r, 128 * 9);
    let mut out = poisoned::<f64>(128 * 9);
    k::reverse_dynamic::launch(&cfg(9, 128).shared_mem(128 * 8), &up(&x), &mut out).unwrap();
    let want: Vec<f64> = x.chunks(128).flat_map(|c| c.iter().rev().copied()).collect();
    assert_eq!(out.to_vec().unwrap(), want);

    let x: Vec<f16> = rand(&mut r, 64 * 5);
    let mut out = poisoned::<f16>(64 * 5);
    k::reverse_dynamic::launch(&cfg(5, 64).shared_mem(64 * 2), &up(&x), &mut out).unwrap();
    let want: Vec<f16> = x.chunks(64).flat_map(|c| c.iter().rev().copied()).collect();
    assert_eq!(out.to_vec().unwrap(), want);
}

fn sync_warp_partial_mask() {
    let mut r = Rng::new();
    let x: Vec<i32> = (0..128).map(|_| (r.next() % 1000) as i32 + 1).collect();
    let mut out = poisoned::<i32>(128);
    k::sync_warp_even::launch(&cfg(2, 64), &up(&x), &mut out).unwrap();
    let got = out.to_vec().unwrap();
    for i in 0..128 {
        let lane = i % 32;
        let want = if lane % 2 == 0 { x[i - lane + (lane + 2) % 32] } else { -x[i] };
        assert_eq!(got[i], want, "thread {i}");
    }
}

fn warp_shuffles_and_lane_id() {
    let mut r = Rng::new();
    let n = 96;
    let x: Vec<i32> = rand(&mut r, n);
    let mut out = poisoned::<i32>(10 * n);
    k::shuffles::launch(&cfg(1, n as u32), &up(&x), &mut out).unwrap();
    let got = out.to_vec().unwrap();
    for i in 0..n {
        let lane = i % 32;
        let w = i - lane;
        let seg = |width: usize| lane - lane % width;
        let want = [
            x[w + 3],
            if lane < 1 { x[i] } else { x[i - 1] },
            if lane + 2 >= 32 { x[i] } else { x[i + 2] },
            x[w + (lane ^ 5)],
            x[w + seg(8) + 1],
            if lane % 16 < 3 { x[i] } else { x[i - 3] },
            if lane % 16 + 3 >= 16 { x[i] } else { x[i + 3] },
            x[w + (lane ^ 2)],
            lane as i32,
            32,
        ];
        assert_eq!(&got[10 * i..10 * i + 10], &want, "thread {i}");
    }
}

fn warp_sums_by_xor_shuffle() {
    let mut r = Rng::new();
    let n = 256;
    let xi: Vec<i32> = rand(&mut r, n);
    let mut oi = poisoned::<i32>(n);
    k::warp_sum::launch(&cfg(2, 128), &up(&xi), &mut oi).unwrap();
    let got = oi.to_vec().unwrap();
    for i in 0..n {
        let w = i - i % 32;
        let want = xi[w..w + 32].iter().fold(0i32, |a, b| a.wrapping_add(*b));
        assert_eq!(got[i], want);
    }
    let xu: Vec<u64> = rand(&mut r, n);
    let mut ou = poisoned::<u64>(n);
    k::warp_sum::launch(&cfg(2, 128), &up(&xu), &mut ou).unwrap();
    let got = ou.to_vec().unwrap();
    for i in 0..n {
        let w = i - i % 32;
        assert_eq!(got[i], xu[w..w + 32].iter().fold(0u64, |a, b| a.wrapping_add(*b)));
    }
    let xf: Vec<f64> = rand(&mut r, n);
    let mut of = poisoned::<f64>(n);
    k::warp_sum::launch(&cfg(2, 128), &up(&xf), &mut of).unwrap();
    let got = of.to_vec().unwrap();
    for i in 0..n {
        let w = i - i % 32;
        assert!(close(got[i], xf[w..w + 32].iter().sum(), 1e-12));
    }
}

/// `atomic_add` of `x` into 7 slots starting from random values, for one dtype; `to_f64` maps
/// values for the comparison, `tol` is the relative tolerance (0: exact).
fn atomic_add_case<T: Gen + cuprum::prelude::Number>(x: Vec<T>, start: Vec<T>, to_f64: impl Fn(T) -> f64, tol: f64, exact_sum: impl Fn(T, T) -> T) {
    let mut acc = up(&start);
    k::atomic_add_all::launch(&LaunchConfig::for_elements(x.len(), 256), &up(&x), &mut acc).unwrap();
    let got = acc.to_vec().unwrap();
    for s in 0..start.len() {
        let want = x.iter().skip(s).step_by(start.len()).fold(start[s], |a, b| exact_sum(a, *b));
        let (g, w) = (to_f64(got[s]), to_f64(want));
        // Atomics add in any order: the rounding error grows with the terms' magnitudes, not with
        // the (possibly cancelled) result's.
        let scale = x.iter().skip(s).step_by(start.len()).fold(to_f64(start[s]).abs(), |a, b| a + to_f64(*b).abs());
        let ok = if tol == 0.0 { g == w } else { (g - w).abs() <= tol * scale.max(1.0) };
        assert!(ok, "atomic_add::<{:?}> slot {s}: {g} vs {w} (sum of |terms| {scale})", T::DTYPE);
    }
}

fn atomic_add_every_dtype() {
    let mut r = Rng::new();
    let n = 10_000;
    atomic_add_case::<i32>(rand(&mut r, n), rand(&mut r, 7), |v| v as f64, 0.0, |a, b| a.wrapping_add(b));
    atomic_add_case::<u32>(rand(&mut r, n), rand(&mut r, 7), |v| v as f64, 0.0, |a, b| a.wrapping_add(b));
    atomic_add_case::<i64>(rand(&mut r, n), rand(&mut r, 7), |v| v as f64, 0.0, |a, b| a.wrapping_add(b));
    atomic_add_case::<u64>(rand(&mut r, n), rand(&mut r, 7), |v| v as f64, 0.0, |a, b| a.wrapping_add(b));
    // Floats: the order of additions is not fixed; compare in f64 with a tolerance.
    let xf: Vec<f32> = rand(&mut r, n);
    atomic_add_case::<f32>(xf, rand(&mut r, 7), |v| v as f64, 1e-4, |a, b| ((a as f64) + (b as f64)) as f32);
    let xd: Vec<f64> = rand(&mut r, n);
    atomic_add_case::<f64>(xd, rand(&mut r, 7), |v| v, 1e-10, |a, b| a + b);
    // Half types: multiples of 1/4 whose every partial sum is exact in the type.
    let q = |r: &mut Rng| ((r.next() % 8) + 1) as f64 / 4.0;
    let xh: Vec<f16> = (0..700).map(|_| f16::from_f64(q(&mut r))).collect();
    let sh: Vec<f16> = (0..7).map(|_| f16::from_f64(q(&mut r))).collect();
    atomic_add_case::<f16>(xh, sh, |v| v.to_f64(), 0.0, |a, b| f16::from_f64(a.to_f64() + b.to_f64()));
    let xb: Vec<bf16> = (0..140).map(|_| bf16::from_f64(q(&mut r))).collect();
    let sb: Vec<bf16> = (0..7).map(|_| bf16::from_f64(q(&mut r))).collect();
    atomic_add_case::<bf16>(xb, sb, |v| v.to_f64(), 0.0, |a, b| bf16::from_f64(a.to_f64() + b.to_f64()));
}

fn min_max_sub_case<T: Gen + PartialOrd + cuprum::prelude::Real>(r: &mut Rng, sub: impl Fn(T, T) -> T) {
    let x: Vec<T> = rand(r, 5000);
    let start: Vec<T> = rand(r, 3);
    let mut acc = up(&start);
    k::atomic_min_max_sub::launch(&LaunchConfig::for_elements(x.len(), 128), &up(&x), &mut acc).unwrap();
    let got = acc.to_vec().unwrap();
    let min = x.iter().fold(start[0], |a, &b| if b < a { b } else { a });
    let max = x.iter().fold(start[1], |a, &b| if b > a { b } else { a });
    assert_eq!(got[0], min, "atomic_min::<{:?}>", T::DTYPE);
    assert_eq!(got[1], max, "atomic_max::<{:?}>", T::DTYPE);
    let s = x.iter().fold(start[2], |a, &b| sub(a, b));
    let _ = s;
    assert!(got[2] == s || T::DTYPE.is_float(), "atomic_sub::<{:?}>", T::DTYPE);
}

fn atomic_min_max_sub_ints_and_floats() {
    let mut r = Rng::new();
    min_max_sub_case::<i32>(&mut r, |a, b| a.wrapping_sub(b));
    min_max_sub_case::<i64>(&mut r, |a, b| a.wrapping_sub(b));
    min_max_sub_case::<u32>(&mut r, |a, b| a.wrapping_sub(b));
    min_max_sub_case::<u64>(&mut r, |a, b| a.wrapping_sub(b));
    min_max_sub_case::<f32>(&mut r, |a, b| a - b);
    min_max_sub_case::<f64>(&mut r, |a, b| a - b);
}

fn bits_case<T: Gen + cuprum::prelude::Int + std::ops::BitAnd<Output = T> + std::ops::BitOr<Output = T> + std::ops::BitXor<Output = T>>(r: &mut Rng) {
    let x: Vec<T> = rand(r, 3000);
    let start: Vec<T> = rand(r, 3);
    let mut acc = up(&start);
    k::atomic_bits::launch(&LaunchConfig::for_elements(x.len(), 128), &up(&x), &mut acc).unwrap();
    let got = acc.to_vec().unwrap();
    assert_eq!(got[0], x.iter().fold(start[0], |a, &b| a & b), "atomic_and::<{:?}>", T::DTYPE);
    assert_eq!(got[1], x.iter().fold(start[1], |a, &b| a | b), "atomic_or::<{:?}>", T::DTYPE);
    assert_eq!(got[2], x.iter().fold(start[2], |a, &b| a ^ b), "atomic_xor::<{:?}>", T::DTYPE);
}

fn atomic_and_or_xor() {
    let mut r = Rng::new();
    bits_case::<i32>(&mut r);
    bits_case::<i64>(&mut r);
    bits_case::<u32>(&mut r);
    bits_case::<u64>(&mut r);
}

fn atomic_inc_dec_wrap_at_the_limit() {
    let mut r = Rng::new();
    let limit = 50 + (r.next() % 50) as u32;
    let n = 1000 + (r.next() % 1000) as u32;
    let start = [(r.next() % 200) as u32, (r.next() % 200) as u32];
    let mut acc = up(&start);
    k::atomic_counters::launch(&LaunchConfig::for_elements(n as usize, 128), &mut acc, limit, n).unwrap();
    let (mut inc, mut dec) = (start[0], start[1]);
    for _ in 0..n {
        inc = if inc >= limit { 0 } else { inc + 1 };
        dec = if dec == 0 || dec > limit { limit } else { dec - 1 };
    }
    assert_eq!(acc.to_vec().unwrap(), vec![inc, dec]);
}

fn exch_cas_case<T: Gen + cuprum::prelude::Int + Ord + TryFrom<u64> + Into<i128>>(r: &mut Rng) {
    let n = 3000u32;
    let start = T::try_from(r.next() % 1000 + 5000).ok().unwrap();
    let mut slot = up(&[start]);
    let mut taken = poisoned::<T>(n as usize);
    let c0 = T::try_from(r.next() % 1000).ok().unwrap();
    let mut counter = up(&[c0]);
    k::atomic_exch_cas::launch(&LaunchConfig::for_elements(n as usize, 128), &mut slot, &mut taken, &mut counter, n).unwrap();
    // The values taken out plus the one left in are the start value and 1..=n, each once.
    let mut all: Vec<i128> = taken.to_vec().unwrap().into_iter().map(Into::into).collect();
    all.push(slot.to_vec().unwrap()[0].into());
    all.sort();
    let mut want: Vec<i128> = (1..=n as i128).collect();
    want.push(start.into());
    want.sort();
    assert_eq!(all, want, "atomic_exch::<{:?}>", T::DTYPE);
    assert_eq!(counter.to_vec().unwrap()[0].into(), c0.into() + n as i128, "atomic_cas::<{:?}>", T::DTYPE);
}

fn atomic_exch_and_cas() {
    let mut r = Rng::new();
    exch_cas_case::<i32>(&mut r);
    exch_cas_case::<i64>(&mut r);
    exch_cas_case::<u32>(&mut r);
    exch_cas_case::<u64>(&mut r);
}

fn device_functions_generic_min_max() {
    let mut r = Rng::new();
    let x: Vec<f64> = rand(&mut r, 4097);
    let (lo, hi) = (-20.0, 35.0);
    let mut out = poisoned::<f64>(x.len());
    k::device_calls::launch(&LaunchConfig::for_elements(x.len(), 128), &up(&x), &mut out, lo, hi).unwrap();
    let cs = |v: f64, s: f64| v.max(lo).min(hi) * s;
    let want: Vec<f64> = x.iter().map(|&v| cs(v, 2.0) + cs(v * v, 1.0)).collect();
    assert_eq!(out.to_vec().unwrap(), want);
    let xf: Vec<f32> = x.iter().map(|&v| v as f32).collect();
    let mut outf = poisoned::<f32>(x.len());
    k::device_calls::launch(&LaunchConfig::for_elements(x.len(), 128), &up(&xf), &mut outf, lo as f32, hi as f32).unwrap();
    let csf = |v: f32, s: f32| v.max(lo as f32).min(hi as f32) * s;
    let want: Vec<f32> = xf.iter().map(|&v| csf(v, 2.0) + csf(v * v, 1.0)).collect();
    assert_eq!(outf.to_vec().unwrap(), want);
}

/// A `#[device]` function that writes a `&mut [[f32; 4]; 2]` parameter by index (the CPU
/// device's copy of it once failed to compile: the place was borrowed as `&mut acc`).
fn device_function_writes_through_a_mut_array_parameter() {
    let mut r = Rng::new();
    let x: Vec<f32> = rand(&mut r, 200);
    let mut out = poisoned::<f32>(8 * x.len());
    k::fragments_by_reference::launch(&LaunchConfig::new(1u32, x.len() as u32), &up(&x), &mut out).unwrap();
    let want: Vec<f32> = x.iter().flat_map(|&v| (0..8).map(move |k| v * k as f32)).collect();
    assert_eq!(out.to_vec().unwrap(), want);
}

fn local_arrays_dot_and_sort() {
    let mut r = Rng::new();
    let m = 1000;
    let x: Vec<f32> = rand(&mut r, 8 * m);
    let (mut dots, mut sorted) = (poisoned::<f32>(m), poisoned::<f32>(8 * m));
    k::local_arrays::launch(&LaunchConfig::for_elements(m, 64), &up(&x), &mut dots, &mut sorted).unwrap();
    let dots = dots.to_vec().unwrap();
    let sorted = sorted.to_vec().unwrap();
    for i in 0..m {
        let c = &x[8 * i..8 * i + 8];
        let want = c[0] * c[3] + c[1] * c[4] + c[2] * c[5];
        let scale = (c[0] * c[3]).abs() + (c[1] * c[4]).abs() + (c[2] * c[5]).abs();
        assert!((dots[i] - want).abs() <= 1e-5 * scale.max(1.0), "dot {i}: {} vs {want}", dots[i]);
        let mut s = c.to_vec();
        s.sort_by(|a, b| a.partial_cmp(b).unwrap());
        assert_eq!(&sorted[8 * i..8 * i + 8], &s[..], "sort {i}");
    }
}

fn scalar_arguments_of_every_dtype() {
    let mut r = Rng::new();
    let b = bool::draw(&mut r);
    let (i8v, i16v, i32v, i64v) = (i8::draw(&mut r), i16::draw(&mut r), i32::draw(&mut r), (r.next() % (1 << 50)) as i64 - (1 << 49));
    let (u8v, u16v, u32v, u64v) = (u8::draw(&mut r), u16::draw(&mut r), u32::draw(&mut r), r.next() % (1 << 52));
    let (h, bh, f, d) = (f16::draw(&mut r), bf16::draw(&mut r), f32::draw(&mut r), f64::draw(&mut r));
    let (c, z) = (Complex::<f32>::draw(&mut r), Complex::<f64>::draw(&mut r));
    let mut out = poisoned::<f64>(17);
    k::scalars::launch(&cfg(1, 32), &mut out, b, i8v, i16v, i32v, i64v, u8v, u16v, u32v, u64v, h, bh, f, d, c, z).unwrap();
    let want = [
        if b { 1.0 } else { 0.0 },
        i8v as f64,
        i16v as f64,
        i32v as f64,
        i64v as f64,
        u8v as f64,
        u16v as f64,
        u32v as f64,
        u64v as f64,
        h.to_f64(),
        bh.to_f64(),
        f as f64,
        d,
        c.re as f64,
        c.im as f64,
        z.re,
        z.im,
    ];
    assert_eq!(out.to_vec().unwrap(), want);
}

fn inf_nan_constants_and_early_return() {
    let mut r = Rng::new();
    let mut x: Vec<f64> = (0..3000).map(|_| r.unit() * 3.0 - 1.0).collect();
    x[17] = 0.5;
    x[1234] = 0.5;
    let mut out = poisoned::<f64>(3000);
    k::specials::launch(&LaunchConfig::for_elements(3000, 128), &up(&x), &mut out).unwrap();
    let got = out.to_vec().unwrap();
    for (i, &v) in x.iter().enumerate() {
        let g = got[i];
        if v < 0.0 {
            assert_eq!(g, f64::NEG_INFINITY);
        } else if v > 1.0 {
            assert_eq!(g, f64::INFINITY);
        } else if v == 0.5 {
            assert!(g.is_nan());
        } else {
            assert_eq!(g, v);
        }
    }
}

fn checks_before_launch() {
    let mut y = poisoned::<f32>(64);
    let x = up(&vec![1.0f32; 64]);
    let msg = |r: cuprum::runtime::Result<()>| r.unwrap_err().to_string();
    let e = msg(k::copy::launch(&cfg(1, 2048), &x, &mut y, 64));
    assert!(e.contains("2048") && e.contains("at most 1024"), "{e}");
    let e = msg(k::copy::launch(&cfg(0, 32), &x, &mut y, 64));
    assert!(e.contains("zero dimension"), "{e}");
    let e = msg(k::reverse_dynamic::launch(&cfg(1, 32).shared_mem(1 << 20), &x, &mut y));
    assert!(e.contains("max_dynamic_shared_size_bytes"), "{e}");
    assert!(y.to_vec().unwrap().iter().all(|v| v.is_nan()), "nothing may be launched");
}

fn barriers_inside_a_loop() {
    let mut r = Rng::new();
    let n = 256 * 37 - 11;
    let x: Vec<i64> = rand(&mut r, n);
    let mut out = poisoned::<i64>(37);
    k::block_sum::launch(&cfg(37, 256), &up(&x), &mut out).unwrap();
    let want: Vec<i64> = x.chunks(256).map(|c| c.iter().fold(0i64, |a, b| a.wrapping_add(*b))).collect();
    assert_eq!(out.to_vec().unwrap(), want);
}

fn launches_from_several_threads() {
    let device = cuprum::runtime::Device::current().unwrap();
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let device = device.clone();
            std::thread::spawn(move || {
                let _current = device.use_scoped().unwrap();
                let n = 10_000 + t * 17;
                let x: Vec<i16> = (0..n).map(|v| (v as i16).wrapping_mul(31).wrapping_add(t as i16)).collect();
                let mut y = poisoned::<i16>(n);
                k::copy::launch(&cfg(40, 128), &up(&x), &mut y, n as u32).unwrap();
                assert_eq!(y.to_vec().unwrap(), x);
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let _ = GPU;
}

/// A panic in a kernel's host code (here Rust's index check of a `&mut` borrow of a local array
/// element) is an error of the launch on the CPU device, whichever way the block runs (regions,
/// coroutines); the process goes on and the next launch works.
#[test]
fn a_panic_on_the_cpu_device_is_an_error() {
    let _cpu = cuprum::runtime::Device::cpu().use_scoped().unwrap();
    // `None`: the kernel whose barrier is at the top level (regions); else the one with a barrier
    // in a loop of that many rounds (coroutines).
    for rounds in [None, Some(0u32), Some(3)] {
        let launch = |k: &[u32], out: &mut Array<u32>| match rounds {
            None => k::local_index_top::launch(&cfg(1, 64), &up(k), out),
            Some(r) => k::local_index::launch(&cfg(1, 64), &up(k), out, r),
        };
        let mut k: Vec<u32> = (0..64).map(|t| t % 3).collect();
        k[41] = 7;
        let mut out = poisoned::<u32>(64);
        let e = launch(&k, &mut out).unwrap_err().to_string();
        assert!(e.contains("local_index") && e.contains("panicked") && e.contains("index out of bounds"), "{e}");
        k[41] = 1;
        launch(&k, &mut out).unwrap();
        assert_eq!(out.to_vec().unwrap(), vec![61u32; 64]);
    }
}

/// A device function's shared array is not its caller's (CPU device: keyed by function and site;
/// the kernel's is smaller, so sharing one would overrun it).
#[test]
fn a_device_functions_shared_array_is_its_own() {
    let _cpu = cuprum::runtime::Device::cpu().use_scoped().unwrap();
    let x: Vec<f32> = (0..512).map(|i| (i % 7) as f32).collect();
    let mut out = poisoned::<f32>(512);
    k::shared_in_device_fn::launch(&cfg(2, 256), &up(&x), &mut out).unwrap();
    let want: Vec<f32> = x.chunks(256).flat_map(|c| vec![c.iter().sum::<f32>() + 2.0; 256]).collect();
    assert_eq!(out.to_vec().unwrap(), want);
}

#[test]
fn kernels_are_listed_in_the_registry() {
    // Works without a GPU: the inventory is filled at link time.
    let names: Vec<&str> = audit::kernels().map(|e| e.name()).collect();
    for want in ["copy", "index_1d", "atomic_add_all", "scalars"] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    let copy = audit::kernels().find(|e| e.name() == "copy" && e.kind() == "rawkernel").unwrap().unit().unwrap();
    assert!(copy.precompiled().contains(&"cuprum_rawkernel_copy__f32"));
    assert!(copy.source().contains("CUPRUM_INSTANTIATE_copy(cuprum_rawkernel_copy__f32, f32)"));
    // The unit is the whole file: the device functions of the file are in it.
    assert!(copy.source().contains("clamp_scale"));
}

/// Runs this test executable again with only the test `name`, with `set` added to and `unset`
/// removed from the environment; returns (success, stdout + stderr).
fn run_child(name: &str, set: &[(&str, &str)], unset: &[&str]) -> (bool, String) {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = std::process::Command::new(exe);
    cmd.args(["--include-ignored", "--exact", "--nocapture", name]);
    for (k, v) in set {
        cmd.env(k, v);
    }
    for k in unset {
        cmd.env_remove(k);
    }
    let out = cmd.output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

/// The child of the two tests below (does nothing unless started by them): the first launch of a
/// precompiled instance in this process.
#[test]
#[ignore = "needs a CUDA GPU"]
fn aot_child() {
    let Ok(mode) = std::env::var("CUPRUM_AOT_CHILD") else { return };
    if mode == "no-nvrtc" {
        assert!(cuprum::runtime::nvrtc::info().is_err(), "libnvrtc is still loadable: the test cannot hide it here");
    }
    let mut r = Rng::new();
    let x: Vec<f32> = rand(&mut r, 5000);
    let mut y = poisoned::<f32>(5000);
    k::copy::launch(&cfg(20, 256), &up(&x), &mut y, 5000).unwrap();
    assert_eq!(y.to_vec().unwrap(), x);
    let served = audit::served();
    let s = cuprum::runtime::stats::snapshot();
    println!("AOT CHILD layer={:?} nvrtc={}", served.iter().map(|s| s.layer).collect::<Vec<_>>(), s.nvrtc);
    assert_eq!(served.len(), 1);
    assert_eq!(served[0].layer, Layer::Aot, "{served:?}");
    assert_eq!(s.nvrtc, 0);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn precompiled_first_call_does_no_nvrtc_compile() {
    let copy = audit::kernels().find(|e| e.name() == "copy" && e.kind() == "rawkernel").unwrap().unit().unwrap();
    assert!(copy.fatbin().is_some(), "build with nvcc (scripts/cuda-env.sh) so that the test kernels are precompiled");
    let (ok, text) = run_child("aot_child", &[("CUPRUM_AOT_CHILD", "plain")], &[]);
    assert!(ok && text.contains("AOT CHILD"), "{text}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn precompiled_kernel_runs_without_libnvrtc() {
    // A folder of files named like libnvrtc that are not libraries, searched first.
    let tmp = tempfile::Builder::new().prefix("cuprum-no-nvrtc-").tempdir().unwrap();
    let dir = tmp.path();
    for name in ["libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2"] {
        std::fs::write(dir.join(name), b"not a library").unwrap();
    }
    let (ok, text) = run_child(
        "aot_child",
        &[("CUPRUM_AOT_CHILD", "no-nvrtc"), ("LD_LIBRARY_PATH", dir.to_str().unwrap())],
        &["CUDA_PATH", "CUDA_HOME"],
    );
    assert!(ok && text.contains("AOT CHILD"), "{text}");
}

/// The differential runner (`cuprum::runtime::testing`): the same computations with the CPU
/// device and with each GPU current, compared (integers bit for bit, floats within their dtype's
/// tolerance: CUDA's `exp`/`sin` and the host's differ in the last bits).
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_cpu_and_the_gpu_agree() {
    use cuprum::runtime::testing::Differential;
    let mut r = Rng::new();
    let xi: Vec<i64> = rand(&mut r, 256 * 19);
    let xf: Vec<f32> = rand(&mut r, 256 * 19);
    let d = Differential::new();
    let c = d
        .run(|| {
            let mut out = Array::from_vec(vec![0i64; 19])?;
            k::block_sum::launch(&cfg(19, 256), &up(&xi), &mut out)?;
            Ok(out)
        })
        .unwrap();
    assert!(c.devices >= 2, "no GPU was compared");
    d.run(|| {
        let mut out = Array::from_vec(vec![0.0f32; xf.len()])?;
        k::reverse_static::launch(&cfg(19, 256), &up(&xf), &mut out)?;
        Ok(out)
    })
    .unwrap();
    d.run(|| {
        let mut out = Array::from_vec(vec![0i32; 256])?;
        k::warp_sum::launch(&cfg(2, 128), &up(&xi[..256].iter().map(|&v| v as i32).collect::<Vec<_>>()), &mut out)?;
        Ok(out)
    })
    .unwrap();
    // Inputs in [-2, 2]: `sin(exp(x))` of large x is ill-conditioned (one ulp of `exp(50)` moves
    // the `sin` anywhere), which the runner reports as it should.
    let small: Vec<f32> = xf.iter().map(|v| v / 50.0).collect();
    d.run(|| up(&small).exp()?.sin()).unwrap();
    // Sums of 256 terms of up to 100 in f32, added in another order on each device: they agree
    // within 256 rounding errors of the terms, not of the (possibly cancelled) sum.
    d.clone().tolerance(1e-5, 1e-2).run(|| up(&xf).reshape([19, 256])?.sum().axis(1).run()).unwrap();
    // A difference is found: the GPU's array is not the CPU's.
    let e = d
        .run(|| {
            let v = if cuprum::runtime::Device::current()?.is_cpu() { 1i32 } else { 2 };
            Array::from_vec(vec![v; 3])
        })
        .unwrap_err();
    assert!(e.to_string().contains("element 0 differs"), "{e}");
}

fn unrolled_loops_compute_the_same() {
    let mut r = Rng::new();
    let n = 300usize;
    let x: Vec<f32> = rand(&mut r, 8 * n);
    let mut out = poisoned::<f32>(3 * n);
    k::unrolled_sums::launch(&cfg(2, 256), &up(&x), n as u32, &mut out).unwrap();
    let got = out.to_vec().unwrap();
    for i in 0..n {
        let row = &x[8 * i..8 * i + 8];
        let full: f32 = row.iter().sum();
        let odd = row[7] + row[5] + row[3] + row[1];
        assert!((got[3 * i] - full).abs() <= 1e-5 * (1.0 + full.abs()), "row {i}: {} vs {full}", got[3 * i]);
        assert!((got[3 * i + 1] - full).abs() <= 1e-5 * (1.0 + full.abs()), "row {i}: {} vs {full}", got[3 * i + 1]);
        assert!((got[3 * i + 2] - odd).abs() <= 1e-5 * (1.0 + odd.abs()), "row {i}: {} vs {odd}", got[3 * i + 2]);
    }
}
