//! Warp collectives end to end (`warp_kernels.rs`): the sums, minima, maxima and prefix sums of
//! each warp and of tiles of 2 to 32 lanes, against a host reference (integers exactly, wrapping;
//! floats against an f64 sum), with fresh random inputs and outputs poisoned before each launch.
//! On the CPU device (in CI) and on the GPU (`on_both_devices!`).

#[path = "../../runtime/tests/support/mod.rs"]
mod support;
use support::Rng;

mod warp_kernels;

use cuprum::prelude::*;
use cuprum::runtime::{Array, LaunchConfig};
use warp_kernels as k;

on_both_devices!(
    cuprum::runtime::Device;
    warp_and_tile_collectives_i32,
    warp_and_tile_collectives_u8,
    warp_and_tile_collectives_f32,
    warp_and_tile_collectives_f64,
    block_sum_through_two_warp_reductions,
);

/// The element types checked, with their host arithmetic.
trait Elem: Real + std::fmt::Debug {
    fn draw(r: &mut Rng) -> Self;
    fn poison() -> Self;
    fn f(self) -> f64;
    /// The kernel's `+`: wrapping for integers.
    fn kernel_add(self, other: Self) -> Self;
    /// The tolerance of a float sum relative to the sum of the absolute values; 0 for integers.
    const REL: f64;
}

macro_rules! elem_int {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            fn draw(r: &mut Rng) -> $t { r.int(<$t>::MIN as i64, <$t>::MAX as i64) as $t }
            fn poison() -> $t { 0x5a }
            fn f(self) -> f64 { self as f64 }
            fn kernel_add(self, other: $t) -> $t { self.wrapping_add(other) }
            const REL: f64 = 0.0;
        }
    )*};
}
elem_int!(i32, u8);

macro_rules! elem_float {
    ($($t:ty, $rel:expr),*) => {$(
        impl Elem for $t {
            fn draw(r: &mut Rng) -> $t { r.range(-4.0, 4.0) as $t }
            fn poison() -> $t { <$t>::NAN }
            fn f(self) -> f64 { self as f64 }
            fn kernel_add(self, other: $t) -> $t { self + other }
            const REL: f64 = $rel;
        }
    )*};
}
elem_float!(f32, 1e-5, f64, 1e-13);

/// Checks `got` (the five outputs of `warp_all`/`tile_all`, `x.len()` each) against the host
/// reference for tiles of `width` lanes.
fn check<T: Elem>(x: &[T], got: &[T], width: usize) {
    let n = x.len();
    for tile in x.chunks(width).enumerate() {
        let (t, xs) = tile;
        let base = t * width;
        let exact_sum = xs.iter().fold(T::zero(), |a, &b| a.kernel_add(b));
        let f64_sum: f64 = xs.iter().map(|v| v.f()).sum();
        let abs_sum: f64 = xs.iter().map(|v| v.f().abs()).sum();
        let lo = xs.iter().fold(xs[0], |a, &b| a.min(b));
        let hi = xs.iter().fold(xs[0], |a, &b| a.max(b));
        let (mut inc, mut inc_f64, mut inc_abs) = (T::zero(), 0.0f64, 0.0f64);
        for (l, &v) in xs.iter().enumerate() {
            let i = base + l;
            let what = |k: &str| format!("{k} of lane {l} of tile {t} (width {width}, {})", std::any::type_name::<T>());
            let (exc, exc_f64, exc_abs) = (inc, inc_f64, inc_abs);
            inc = inc.kernel_add(v);
            inc_f64 += v.f();
            inc_abs += v.f().abs();
            // Every lane of a tile gets the same bits of the sum (a butterfly).
            assert_eq!(got[i].f().to_bits(), got[base].f().to_bits(), "{}", what("sum (same in every lane)"));
            if T::REL == 0.0 {
                assert_eq!(got[i], exact_sum, "{}", what("sum"));
                assert_eq!(got[3 * n + i], inc, "{}", what("inclusive sum"));
                assert_eq!(got[4 * n + i], exc, "{}", what("exclusive sum"));
            } else {
                let close = |g: T, want: f64, abs: f64, k: &str| {
                    assert!((g.f() - want).abs() <= T::REL * abs.max(1.0), "{}: got {g:?}, want {want}", what(k));
                };
                close(got[i], f64_sum, abs_sum, "sum");
                close(got[3 * n + i], inc_f64, inc_abs, "inclusive sum");
                close(got[4 * n + i], exc_f64, exc_abs, "exclusive sum");
                if l == 0 {
                    assert_eq!(got[4 * n + i].f(), 0.0, "{}", what("exclusive sum"));
                }
            }
            assert_eq!(got[n + i], lo, "{}", what("minimum"));
            assert_eq!(got[2 * n + i], hi, "{}", what("maximum"));
        }
    }
}

fn collectives<T: Elem + cuprum::runtime::Element>() {
    let mut rng = Rng::new();
    let (blocks, threads) = (3u32, 128u32);
    let n = (blocks * threads) as usize;
    let cfg = LaunchConfig::new(blocks, threads);
    let host: Vec<T> = (0..n).map(|_| T::draw(&mut rng)).collect();
    let x = Array::from_vec(host.clone()).unwrap();
    let mut out = Array::<T>::full(5 * n, T::poison()).unwrap();
    k::warp_all::launch(&cfg, &x, &mut out).unwrap();
    check(&host, &out.to_vec().unwrap(), 32);
    for width in [1u32, 2, 4, 8, 16, 32] {
        let mut out = Array::<T>::full(5 * n, T::poison()).unwrap();
        k::tile_all::launch(&cfg, &x, &mut out, width).unwrap();
        check(&host, &out.to_vec().unwrap(), width as usize);
    }
}

fn warp_and_tile_collectives_i32() {
    collectives::<i32>();
}

fn warp_and_tile_collectives_u8() {
    collectives::<u8>();
}

fn warp_and_tile_collectives_f32() {
    collectives::<f32>();
}

fn warp_and_tile_collectives_f64() {
    collectives::<f64>();
}

fn block_sum_through_two_warp_reductions() {
    let mut rng = Rng::new();
    // 96 threads: warp 0 adds three warps' sums and 29 zeros.
    let (blocks, threads) = (5u32, 96u32);
    let host: Vec<f64> = (0..(blocks * threads) as usize).map(|_| rng.range(-4.0, 4.0)).collect();
    let x = Array::from_vec(host.clone()).unwrap();
    let mut out = Array::<f64>::full(blocks as usize, f64::NAN).unwrap();
    k::block_sum::launch(&LaunchConfig::new(blocks, threads), &x, &mut out).unwrap();
    for (b, got) in out.to_vec().unwrap().into_iter().enumerate() {
        let want: f64 = host[b * threads as usize..(b + 1) * threads as usize].iter().sum();
        assert!((got - want).abs() <= 1e-12 * 400.0, "block {b}: got {got}, want {want}");
    }
}
