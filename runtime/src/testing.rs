//! Differential testing across devices (docs/cpu.md, "Testing on both devices"): run the same
//! computation with the CPU device and with every CUDA device present current in turn, and
//! compare the arrays it returns: integers and bools bit for bit, floats within a tolerance of
//! their dtype (the CPU's `exp`, `sin`, ... and CUDA's differ by a few ulps; neither contracts
//! `a * b + c`).
//!
//! ```ignore
//! use cuprum::runtime::testing::Differential;
//! let compared = Differential::new().run(|| {
//!     let x = Array::<f32>::arange(1000)?;
//!     my_kernel::call(&x, 2.0)           // on the current device: the CPU, then each GPU
//! })?;
//! assert!(compared.devices >= 2, "no GPU to compare with");
//! ```

use half::{bf16, f16};
use num_complex::Complex;

use crate::array::Array;
use crate::device::Device;
use crate::error::Error;
use crate::scalar::traits::Scalar;

/// How far two values of a float dtype may be apart: `|a - b| <= atol + rtol * |b|` (NaN equals
/// NaN, infinities equal infinities of the same sign). Integers and bools are always exact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    /// The relative tolerance.
    pub rtol: f64,
    /// The absolute tolerance.
    pub atol: f64,
}

/// A value that the comparison knows how to compare (every dtype).
pub trait Compare: Scalar {
    /// The default tolerance of the dtype (`None`: exact).
    fn tolerance() -> Option<Tolerance>;
    /// The value's components as `f64` (one, or two for complex numbers), for floats.
    fn parts(self) -> [f64; 2];
}

macro_rules! exact {
    ($($t:ty),*) => {$(
        impl Compare for $t {
            fn tolerance() -> Option<Tolerance> { None }
            fn parts(self) -> [f64; 2] { [0.0, 0.0] }
        }
    )*};
}
exact!(bool, i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! float {
    ($($t:ty => $rtol:expr, $atol:expr, |$v:ident| $parts:expr);* $(;)?) => {$(
        impl Compare for $t {
            fn tolerance() -> Option<Tolerance> { Some(Tolerance { rtol: $rtol, atol: $atol }) }
            fn parts(self) -> [f64; 2] { let $v = self; $parts }
        }
    )*};
}
float! {
    f16 => 2e-3, 1e-3, |v| [v.to_f64(), 0.0];
    bf16 => 1.6e-2, 1e-2, |v| [v.to_f64(), 0.0];
    f32 => 1e-5, 1e-6, |v| [v as f64, 0.0];
    f64 => 1e-12, 1e-13, |v| [v, 0.0];
    Complex<f32> => 1e-5, 1e-6, |v| [v.re as f64, v.im as f64];
    Complex<f64> => 1e-12, 1e-13, |v| [v.re, v.im]
}

/// Two devices disagree, or the computation failed on one of them.
#[derive(Debug)]
pub enum Difference {
    /// The computation returned an error on `device`.
    Failed {
        /// The device's name.
        device: String,
        /// The error it returned.
        error: Error,
    },
    /// The shapes differ.
    Shape {
        /// The device whose shape differs from the CPU's.
        device: String,
        /// The CPU device's shape.
        cpu: Vec<usize>,
        /// That device's shape.
        other: Vec<usize>,
    },
    /// The first element out of tolerance (flat C-order index).
    Value {
        /// The device whose value differs from the CPU's.
        device: String,
        /// The element's flat C-order index.
        index: usize,
        /// The CPU device's value, printed.
        cpu: String,
        /// That device's value, printed.
        other: String,
        /// The tolerance it exceeds; `None` for exact types.
        tolerance: Option<Tolerance>,
    },
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Difference::Failed { device, error } => write!(f, "the computation failed on {device}: {error}"),
            Difference::Shape { device, cpu, other } => write!(f, "the CPU device returned shape {cpu:?}, {device} {other:?}"),
            Difference::Value { device, index, cpu, other, tolerance } => match tolerance {
                Some(t) => write!(
                    f,
                    "element {index} differs: {cpu} on the CPU device, {other} on {device} (rtol {}, atol {}; \
                     loosen with `Differential::tolerance`)",
                    t.rtol, t.atol
                ),
                None => write!(f, "element {index} differs: {cpu} on the CPU device, {other} on {device} (integers compare exactly)"),
            },
        }
    }
}

impl std::error::Error for Difference {}

/// What [`Differential::run`] compared: the CPU's values, and on how many devices they were
/// computed (1: no GPU was present, nothing was compared).
#[derive(Debug)]
pub struct Compared<T> {
    /// The CPU device's values, in C order.
    pub values: Vec<T>,
    /// Their shape.
    pub shape: Vec<usize>,
    /// How many devices computed them (the CPU included).
    pub devices: usize,
}

/// The differential runner.
#[derive(Clone, Debug, Default)]
pub struct Differential {
    tolerance: Option<Tolerance>,
}

impl Differential {
    /// Dtype defaults ([`Compare::tolerance`]).
    pub fn new() -> Differential {
        Differential::default()
    }

    /// Another tolerance for float results (integers stay exact).
    pub fn tolerance(mut self, rtol: f64, atol: f64) -> Differential {
        self.tolerance = Some(Tolerance { rtol, atol });
        self
    }

    /// Runs `f` with the CPU device current, then with each CUDA device current (those
    /// present: none without a driver), and compares every GPU's array with the CPU's.
    pub fn run<T: Compare>(&self, f: impl Fn() -> crate::Result<Array<T>>) -> Result<Compared<T>, Difference> {
        let on = |device: &Device| -> Result<(Vec<usize>, Vec<T>), Difference> {
            let failed = |error| Difference::Failed { device: device.name().to_string(), error };
            let _current = device.use_scoped().map_err(failed)?;
            let a = f().map_err(failed)?;
            let v = a.to_vec().map_err(failed)?;
            Ok((a.shape().to_vec(), v))
        };
        let cpu = Device::cpu();
        let (shape, values) = on(&cpu)?;
        let gpus = Device::count().unwrap_or(0);
        for ordinal in 0..gpus {
            let device = Device::get(ordinal).map_err(|error| Difference::Failed { device: format!("CUDA device {ordinal}"), error })?;
            let (other_shape, other) = on(&device)?;
            let name = format!("CUDA device {ordinal} ({})", device.name());
            if other_shape != shape {
                return Err(Difference::Shape { device: name, cpu: shape, other: other_shape });
            }
            let tolerance = T::tolerance().map(|t| self.tolerance.unwrap_or(t));
            if let Some(index) = first_difference(&values, &other, tolerance) {
                return Err(Difference::Value {
                    device: name,
                    index,
                    cpu: format!("{:?}", values[index]),
                    other: format!("{:?}", other[index]),
                    tolerance,
                });
            }
        }
        Ok(Compared { values, shape, devices: 1 + gpus })
    }
}

/// The first index whose values differ beyond `tolerance` (`None`: bit for bit).
pub fn first_difference<T: Compare>(a: &[T], b: &[T], tolerance: Option<Tolerance>) -> Option<usize> {
    let close = |x: f64, y: f64, t: Tolerance| {
        if x.is_nan() || y.is_nan() {
            return x.is_nan() && y.is_nan();
        }
        if x.is_infinite() || y.is_infinite() {
            return x == y;
        }
        (x - y).abs() <= t.atol + t.rtol * y.abs()
    };
    (0..a.len().min(b.len())).find(|&k| match tolerance {
        None => a[k] != b[k] && !crate::lang::intrinsics::same_bits(&a[k], &b[k]),
        Some(t) => {
            let (x, y) = (a[k].parts(), b[k].parts());
            !(close(x[0], y[0], t) && close(x[1], y[1], t))
        }
    }).or((a.len() != b.len()).then(|| a.len().min(b.len())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_exact_floats_within_their_dtype() {
        assert_eq!(first_difference(&[1i32, 2, 3], &[1, 2, 3], i32::tolerance()), None);
        assert_eq!(first_difference(&[1i32, 2, 3], &[1, 2, 4], i32::tolerance()), Some(2));
        let t = f32::tolerance();
        assert_eq!(first_difference(&[1.0f32, f32::NAN, f32::INFINITY], &[1.000_001, f32::NAN, f32::INFINITY], t), None);
        assert_eq!(first_difference(&[1.0f32, 2.0], &[1.0, 2.001], t), Some(1));
        assert_eq!(first_difference(&[1.0f32], &[-f32::INFINITY], t), Some(0));
        let c = Complex::<f64>::tolerance();
        assert_eq!(first_difference(&[Complex::new(1.0, 2.0)], &[Complex::new(1.0, 2.0 + 1e-9)], c), Some(0));
        assert_eq!(first_difference(&[1.0f32, 2.0], &[1.0], t), Some(1), "a missing element differs");
    }

    #[test]
    fn the_cpu_alone_compares_nothing_and_returns_its_values() {
        let got = Differential::new().run(|| Array::<i32>::arange(5)).unwrap();
        assert_eq!(got.values, vec![0, 1, 2, 3, 4]);
        assert_eq!(got.shape, vec![5]);
        assert_eq!(got.devices, 1 + Device::count().unwrap_or(0));
        let e = Differential::new().run(|| Array::<i32>::from_shape_vec([2, 2], vec![1])).unwrap_err();
        assert!(e.to_string().contains("failed on CPU"), "{e}");
    }
}
