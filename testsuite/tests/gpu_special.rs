//! The error-function family end to end (`special_kernels.rs`): an `#[elementwise]` kernel calling
//! `erf`, `erfc`, `erfinv`, `erfcinv`, `normcdf` and `normcdfinv` in f32 and f64 on fresh random
//! inputs (the inverses also in their tails, down to 1e-37 in f32 and 1e-300 in f64), outputs
//! poisoned before the launch, against the host's f64 definitions (`cuprum::prelude::erf::<f64>`,
//! within 3 ulps of f64) of the same inputs; then the special values (±1, 0, 2, outside the
//! domain). On the CPU device (in CI) and on the GPU (`on_both_devices!`).
//!
//! Tolerance, in ulps of the output type: CUDA's documented maximum errors (CUDA C++ Programming
//! Guide, Mathematical Functions: f32 erf 2, erfc 4, erfinv 2, erfcinv 4, normcdf 5, normcdfinv 5;
//! f64 erf 2, erfc 5, erfinv 5, erfcinv 6, normcdf 5, normcdfinv 8) plus 1 for f32 (the
//! reference is not rounded to f32 first) and plus 4 for f64 (the reference's own error).

#[path = "../../runtime/tests/support/mod.rs"]
mod support;
use support::Rng;

mod special_kernels;

use cuprum::prelude::*;
use cuprum::runtime::{Array, Element};
use special_kernels as k;

on_both_devices!(
    cuprum::runtime::Device;
    special_functions_f32,
    special_functions_f64,
    special_values_f32,
    special_values_f64,
    normal_deviates_in_a_device_function,
);

/// The functions in the kernel's order, with their host references.
const NAMES: [&str; 6] = ["erf", "erfc", "erfinv", "erfcinv", "normcdf", "normcdfinv"];
const REFERENCES: [fn(f64) -> f64; 6] = [erf::<f64>, erfc::<f64>, erfinv::<f64>, erfcinv::<f64>, normcdf::<f64>, normcdfinv::<f64>];

/// f32 or f64, with what the test needs of each.
trait Elem: Float + Element + std::fmt::Debug {
    /// The tolerances, in ulps, in `NAMES` order.
    const ULPS: [f64; 6];
    /// The inputs' ranges: erfc's upper end, normcdf's lower end, the smallest tail input of
    /// erfcinv and normcdfinv (a power of 10), the digits of erfinv's inputs next to ±1.
    const ERFC_HI: f64;
    const NORMCDF_LO: f64;
    const TAIL_EXP: f64;
    const NEAR_ONE_DIGITS: f64;
    fn of(v: f64) -> Self;
    fn f(self) -> f64;
    /// The spacing of the type's values at `v` (the smallest subnormal at 0).
    fn ulp(v: f64) -> f64;
}

impl Elem for f32 {
    const ULPS: [f64; 6] = [3.0, 5.0, 3.0, 5.0, 6.0, 6.0];
    const ERFC_HI: f64 = 9.0;
    const NORMCDF_LO: f64 = -12.0;
    const TAIL_EXP: f64 = -37.0;
    const NEAR_ONE_DIGITS: f64 = 7.0;
    fn of(v: f64) -> f32 {
        v as f32
    }
    fn f(self) -> f64 {
        self as f64
    }
    fn ulp(v: f64) -> f64 {
        let a = (v as f32).abs();
        (f32::from_bits(a.to_bits() + 1) - a) as f64
    }
}

impl Elem for f64 {
    const ULPS: [f64; 6] = [6.0, 9.0, 9.0, 10.0, 9.0, 12.0];
    const ERFC_HI: f64 = 26.0;
    const NORMCDF_LO: f64 = -37.0;
    const TAIL_EXP: f64 = -300.0;
    const NEAR_ONE_DIGITS: f64 = 16.0;
    fn of(v: f64) -> f64 {
        v
    }
    fn f(self) -> f64 {
        self
    }
    fn ulp(v: f64) -> f64 {
        let a = v.abs();
        f64::from_bits(a.to_bits() + 1) - a
    }
}

/// A value not in the range of any of the functions: an output left unwritten shows as this.
const POISON: f64 = 12345.5;

/// Fresh inputs for each function, in `NAMES` order: erf on [-5, 5] with a tenth of tiny
/// values, erfc up to `ERFC_HI`, erfinv on (-1, 1) with a fifth next to ±1, erfcinv on (0, 2)
/// and half its inputs log-uniform down to `10^TAIL_EXP`, normcdf down to `NORMCDF_LO`, normcdfinv
/// on (0, 1) and half in the lower tail.
fn inputs<T: Elem>(rng: &mut Rng, n: usize) -> [Vec<T>; 6] {
    let mut cols: [Vec<T>; 6] = Default::default();
    let sign = |r: &mut Rng| if r.unit() < 0.5 { -1.0 } else { 1.0 };
    for _ in 0..n {
        let a = if rng.unit() < 0.1 { sign(rng) * 10f64.powf(rng.range(-30.0, 0.0)) } else { rng.range(-5.0, 5.0) };
        let b = rng.range(-3.0, T::ERFC_HI);
        let c = if rng.unit() < 0.2 { sign(rng) * (1.0 - 10f64.powf(-rng.range(0.5, T::NEAR_ONE_DIGITS))) } else { rng.range(-1.0, 1.0) };
        let d = if rng.unit() < 0.5 { 10f64.powf(rng.range(T::TAIL_EXP, 0.0)) } else { rng.range(0.0, 2.0) };
        let e = rng.range(T::NORMCDF_LO, 6.0);
        let f = if rng.unit() < 0.5 { 10f64.powf(rng.range(T::TAIL_EXP, 0.0)) } else { rng.range(0.0, 1.0) };
        for (col, v) in cols.iter_mut().zip([a, b, c, d, e, f]) {
            col.push(T::of(v));
        }
    }
    cols
}

/// Launches `special_all` on `cols` with every output poisoned first; the six outputs.
fn run<T: Elem>(cols: &[Vec<T>; 6]) -> [Vec<T>; 6] {
    let n = cols[0].len();
    let ins: Vec<Array<T>> = cols.iter().map(|c| Array::from_vec(c.clone()).unwrap()).collect();
    let mut outs: Vec<Array<T>> = (0..6).map(|_| Array::<T>::full(n, T::of(POISON)).unwrap()).collect();
    let [o0, o1, o2, o3, o4, o5] = &mut outs[..] else { unreachable!() };
    k::special_all::call_into(&ins[0], &ins[1], &ins[2], &ins[3], &ins[4], &ins[5], o0, o1, o2, o3, o4, o5).unwrap();
    let got: Vec<Vec<T>> = outs.iter().map(|o| o.to_vec().unwrap()).collect();
    got.try_into().unwrap()
}

fn special_functions<T: Elem>() {
    let mut rng = Rng::new();
    let n = 1 << 14;
    let cols = inputs::<T>(&mut rng, n);
    let got = run(&cols);
    let ty = std::any::type_name::<T>();
    for fi in 0..6 {
        let mut worst = (0.0f64, 0usize);
        for i in 0..n {
            let x = cols[fi][i].f();
            let want = REFERENCES[fi](x);
            let g = got[fi][i].f();
            let what = || format!("{}::<{ty}>({x:e}) (element {i})", NAMES[fi]);
            assert!(g != POISON, "{} was not written", what());
            // The reference in the output type: an infinity (erfinv of ±1 after rounding to f32)
            // must be met exactly; a finite value within the tolerance.
            let want_t = T::of(want).f();
            if want_t.is_infinite() || want.is_nan() {
                assert!(g == want_t || (g.is_nan() && want.is_nan()), "{}: got {g:e}, want {want:e}", what());
                continue;
            }
            let e = (g - want).abs() / T::ulp(want);
            assert!(e <= T::ULPS[fi], "{}: got {g:e}, want {want:e}: {e:.2} ulps (at most {})", what(), T::ULPS[fi]);
            if e > worst.0 {
                worst = (e, i);
            }
        }
        println!("{}::<{ty}>: at most {:.2} ulps (at {:e})", NAMES[fi], worst.0, cols[fi][worst.1].f());
    }
}

fn special_functions_f32() {
    special_functions::<f32>();
}

fn special_functions_f64() {
    special_functions::<f64>();
}

/// The ends of the domains and beyond, each in its own column: erf(±inf) = ±1, erfc(inf) = 0,
/// erfinv(±1) = ±inf and NaN past them, erfcinv(0) = inf, erfcinv(2) = -inf and NaN outside
/// [0, 2], normcdf(-inf) = 0, normcdfinv(0) = -inf, normcdfinv(1) = inf and NaN outside [0, 1].
fn special_values<T: Elem>() {
    let inf = f64::INFINITY;
    let rows: [[f64; 6]; 4] = [
        [inf, inf, 1.0, 0.0, -inf, 0.0],
        [-inf, -inf, -1.0, 2.0, inf, 1.0],
        [1.0, 0.5, 1.5, -0.5, 0.0, 1.5],
        [-1.0, -0.5, -1.5, 2.5, -1.0, -0.5],
    ];
    let cols: [Vec<T>; 6] = std::array::from_fn(|c| rows.iter().map(|r| T::of(r[c])).collect());
    let got = run(&cols);
    let ty = std::any::type_name::<T>();
    for (fi, out) in got.iter().enumerate() {
        for (r, g) in out.iter().enumerate() {
            let x = rows[r][fi];
            let want = REFERENCES[fi](x);
            let g = g.f();
            let what = format!("{}::<{ty}>({x})", NAMES[fi]);
            if want.is_nan() || want.is_infinite() || want == 0.0 {
                assert!(g == want || (g.is_nan() && want.is_nan()), "{what}: got {g}, want {want}");
            } else {
                let e = (g - want).abs() / T::ulp(want);
                assert!(e <= T::ULPS[fi], "{what}: got {g:e}, want {want:e}: {e:.2} ulps");
            }
        }
    }
}

fn special_values_f32() {
    special_values::<f32>();
}

fn special_values_f64() {
    special_values::<f64>();
}

/// CuPy's normal deviate `-sqrt(2) erfcinv(2 u)` through a device function equals `normcdfinv(u)`
/// within the two functions' tolerances, and the host's.
fn normal_deviates_in_a_device_function() {
    let mut rng = Rng::new();
    let u: Vec<f64> = (0..4096).map(|_| if rng.unit() < 0.5 { 10f64.powf(rng.range(-300.0, 0.0)) } else { rng.unit().max(1e-300) }).collect();
    let x = Array::from_vec(u.clone()).unwrap();
    let (a, b) = k::deviates::call(&x).unwrap();
    let (a, b) = (a.to_vec().unwrap(), b.to_vec().unwrap());
    for i in 0..u.len() {
        let want = normcdfinv(u[i]);
        for (g, what) in [(a[i], "-sqrt(2) erfcinv(2u)"), (b[i], "normcdfinv(u)")] {
            let e = (g - want).abs() / f64::ulp(want);
            assert!(e <= 16.0, "{what} at u = {:e}: got {g:e}, want {want:e} ({e:.1} ulps)", u[i]);
        }
    }
}
