//! Random numbers (issue 36): a counter-based generator, Philox4x32-10, as built-in kernels
//! (`kernels/random.rs`), seeded and reproducible across devices.
//!
//! A [`Generator`] is a key (from the seed) and a 64-bit counter. Each call fills its result
//! from consecutive counter values, one Philox block (four 32-bit words) per group of four
//! `f32`s or two `f64`/integers, and advances the counter past them, so that the next call draws
//! fresh numbers; the state is two words on the host, and a call is one launch.
//!
//! **The same seed gives the same numbers on every device.** The kernels use only exactly
//! rounded operations (`normal` computes its logarithm, sine and cosine with its own
//! polynomials), so the CPU device, which runs the kernels' host code, returns the same bits as
//! a GPU: a test compares them (`runtime/tests/gpu_random.rs`). The numbers depend on the seed,
//! the counter and the number of elements (each Philox block's words go to the same positions of
//! each quarter of the result; `normal` of `f32` writes each block's four numbers consecutively),
//! not on the device, the stream or the launch configuration.
//!
//! ```
//! use cuprum_runtime::{Device, random::Generator};
//! let _cpu = Device::cpu().use_scoped()?;
//! let mut g = Generator::new(42);
//! let u = g.uniform::<f32>(-1.0, 1.0, [2, 3])?;        // in [-1, 1)
//! let z = g.standard_normal::<f64>(1000)?;              // mean 0, standard deviation 1
//! let k = g.integers::<i64>(0, 6, 10)?;                // in [0, 6)
//! assert!(u.to_vec()?.iter().all(|&x| (-1.0..1.0).contains(&x)));
//! assert_eq!(z.len(), 1000);
//! assert!(k.to_vec()?.iter().all(|&x| (0..6).contains(&x)));
//! # Ok::<(), cuprum_runtime::Error>(())
//! ```

use crate::array::{Array, IntoShape};
use crate::elementwise::{self, Arg, Options, Value};
use crate::error::{Error, Result};
use crate::launch::LaunchConfig;
use crate::registry::Kernel;
use crate::stream::Stream;
use crate::{DType, Float, Int, Scalar};

/// The built-in kernels of the generator.
#[allow(dead_code)]
#[path = "../kernels/random.rs"]
mod kernels;

/// A seeded counter-based generator (Philox4x32-10), NumPy's `Generator` in spirit: `uniform`,
/// `random`, `normal`, `standard_normal` and `integers`, each allocating its result on the
/// current device. See the module for reproducibility.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Generator {
    key: [u32; 2],
    counter: u64,
}

impl Generator {
    /// A generator whose key is `seed` (its low and high words) and whose counter starts at 0.
    pub fn new(seed: u64) -> Generator {
        Generator { key: [seed as u32, (seed >> 32) as u32], counter: 0 }
    }

    /// The counter of the next call's first Philox block. Each call advances it by the number of
    /// blocks it used: `ceil(n / 4)` for `f32` results of `n` elements, `ceil(n / 2)` for `f64`
    /// and integer results.
    pub fn counter(&self) -> u64 {
        self.counter
    }

    /// Moves the counter to `counter` (a generator made with the same seed and moved to the same
    /// counter draws the same numbers).
    pub fn set_counter(&mut self, counter: u64) {
        self.counter = counter;
    }

    /// Numbers uniform in `[low, high)` of shape `shape` (NumPy's `uniform`): `low + (high -
    /// low) * u` with `u` of 24 random bits (`f32`) or 53 (`f64`). `T` is `f32` or `f64`.
    pub fn uniform<T: Float>(&mut self, low: T, high: T, shape: impl IntoShape) -> Result<Array<T>> {
        let scale = high - low;
        match T::DTYPE {
            DType::F32 => self.fill::<T, 4>(kernels::uniform_f32::kernel(), shape, low, scale),
            DType::F64 => self.fill::<T, 2>(kernels::uniform_f64::kernel(), shape, low, scale),
            d => Err(unsupported_float("uniform", d)),
        }
    }

    /// Numbers uniform in `[0, 1)` (NumPy's `random`).
    pub fn random<T: Float>(&mut self, shape: impl IntoShape) -> Result<Array<T>> {
        self.uniform(T::zero(), T::one(), shape)
    }

    /// Normally distributed numbers with mean `mean` and standard deviation `std` (NumPy's
    /// `normal`): Box-Muller from the same Philox blocks, `mean + std * z`. `T` is `f32` or
    /// `f64`. In `f32` the four numbers of a Philox block are consecutive elements (element
    /// `j` comes from block `j / 4`), in `f64` each of the block's two numbers goes to its half
    /// of the result.
    pub fn normal<T: Float>(&mut self, mean: T, std: T, shape: impl IntoShape) -> Result<Array<T>> {
        match T::DTYPE {
            DType::F32 => self.normal_f32(mean.to_f64() as f32, std.to_f64() as f32, shape)?.view::<T>(),
            DType::F64 => self.fill::<T, 2>(kernels::normal_f64::kernel(), shape, mean, std),
            d => Err(unsupported_float("normal", d)),
        }
    }

    /// Standard normal numbers (mean 0, standard deviation 1; NumPy's `standard_normal`).
    pub fn standard_normal<T: Float>(&mut self, shape: impl IntoShape) -> Result<Array<T>> {
        self.normal(T::zero(), T::one(), shape)
    }

    /// Integers in `[low, high)` of type `T` (NumPy's `integers` without `endpoint`): each from
    /// 64 random bits by Lemire's multiply-shift, without rejection (a bias below
    /// `(high - low) / 2^64`). `low` and `high` must be values of `T` with `low < high`; `i64`
    /// is precompiled, other integer types compile at first use.
    pub fn integers<T: Int>(&mut self, low: i64, high: i64, shape: impl IntoShape) -> Result<Array<T>> {
        let (min, max) = (T::min_value().to_f64(), T::max_value().to_f64());
        if low >= high || (low as f64) < min || (high as f64 - 1.0) > max {
            return Err(Error::Unsupported {
                what: format!(
                    "integers({low}, {high}) of {}: `low` must be below `high`, and both in the range of {} (from {min} to {max} + 1)",
                    T::DTYPE,
                    T::DTYPE
                ),
            });
        }
        // The width of the range as an unsigned number (`high - low` wraps for the full i64
        // range, which is 2^64, passed as 0).
        let range = (high as u64).wrapping_sub(low as u64);
        self.launch::<T, 2>(kernels::integers::kernel(), &[T::DTYPE], shape, Value::of(low), Value::of(range))
    }

    /// `normal` of `f32` (the raw kernel `normal_f32`, `kernels/random.rs`): `ceil(n / 4)` Philox
    /// blocks, block `i` to elements `4 i..4 i + 4` of one buffer, of which the first `n` are the
    /// result; launches of at most 2^31 blocks each (the kernel's indices are 32-bit).
    fn normal_f32(&mut self, mean: f32, std: f32, shape: impl IntoShape) -> Result<Array<f32>> {
        let shape = shape.into_shape();
        let n = element_count(&shape)?;
        let blocks = n.div_ceil(4);
        let stream = Stream::current()?;
        let all = Array::<f32>::empty_on(blocks * 4, &stream)?;
        let sms = all.device().multiprocessor_count().max(1) as usize;
        let mut done = 0usize;
        while done < blocks {
            let count = (blocks - done).min(1 << 31);
            let mut part = all.slice(0, (4 * done) as isize..(4 * (done + count)) as isize)?;
            let base = self.counter.wrapping_add(done as u64);
            // Eight blocks of 256 threads per multiprocessor (each thread takes two Philox blocks
            // a grid apart per step), fewer when that covers the blocks.
            let grid = (sms * 8).min(count.div_ceil(256)).max(1) as u32;
            let cfg = LaunchConfig::new(grid, 256u32).stream(&stream);
            // SAFETY: `normal_f32` is unchecked: it writes `part[4 i..4 i + 4]` for `i < count`,
            // and `part` holds `4 * count` elements; `count <= 2^31` and the grid's threads are
            // far fewer than 2^31, as the kernel requires.
            unsafe {
                kernels::normal_f32::launch(
                    &cfg,
                    &mut part,
                    count as u32,
                    self.key[0],
                    self.key[1],
                    base,
                    mean,
                    std,
                )
            }?;
            done += count;
        }
        self.counter = self.counter.wrapping_add(blocks as u64);
        all.slice(0, 0..n as isize)?.reshape(shape)
    }

    /// A result of `shape` made by the float kernel `k`, `PER` elements per Philox block, with
    /// its two trailing scalars `a` and `b`.
    fn fill<T: Float, const PER: usize>(&mut self, k: &'static Kernel, shape: impl IntoShape, a: T, b: T) -> Result<Array<T>> {
        self.launch::<T, PER>(k, &[], shape, Value::of(a), Value::of(b))
    }

    /// Launches `k` (instance `instance`) over `ceil(n / PER)` Philox blocks into `PER` parts of
    /// one buffer of `PER * ceil(n / PER)` elements, returns its first `n` in `shape` and
    /// advances the counter.
    fn launch<T: Scalar, const PER: usize>(
        &mut self,
        k: &'static Kernel,
        instance: &[DType],
        shape: impl IntoShape,
        a: Value,
        b: Value,
    ) -> Result<Array<T>> {
        let shape = shape.into_shape();
        let n = element_count(&shape)?;
        let blocks = n.div_ceil(PER);
        let all = Array::<T>::empty(blocks * PER)?;
        if blocks > 0 {
            let mut parts = (0..PER)
                .map(|p| all.slice(0, (p * blocks) as isize..((p + 1) * blocks) as isize))
                .collect::<Result<Vec<_>>>()?;
            let [lo, hi] = [self.counter as u32, (self.counter >> 32) as u32];
            let mut args = vec![
                Arg::scalar(self.key[0]),
                Arg::scalar(self.key[1]),
                Arg::scalar(lo),
                Arg::scalar(hi),
                Arg::Scalar(a),
                Arg::Scalar(b),
            ];
            args.extend(parts.iter_mut().map(Arg::output));
            elementwise::launch(k, instance, &args, &Options::default())?;
        }
        self.counter = self.counter.wrapping_add(blocks as u64);
        all.slice(0, 0..n as isize)?.reshape(shape)
    }
}

/// The number of elements of `shape`, or an error when it does not fit in `usize`.
fn element_count(shape: &[usize]) -> Result<usize> {
    shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d)).ok_or_else(|| Error::InvalidShape {
        op: "random",
        detail: format!("{shape:?} has more elements than fit in usize"),
    })
}

fn unsupported_float(what: &str, d: DType) -> Error {
    Error::Unsupported { what: format!("random {what} of {d}: only f32 and f64 are implemented; draw f32 and convert with astype") }
}
