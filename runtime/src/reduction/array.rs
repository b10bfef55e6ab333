//! The array reductions: `x.sum()`, `prod`, `min`, `max`, `argmin`, `argmax`, `mean`, `var`,
//! `std`, `all`, `any` ([`Reductions`], in the prelude), each a builder configured like a
//! `#[reduction]` call (`.axis(k)`, `.axes([..])`, `.keepdims(b)`, `.out(&mut y)`, `.stream(&s)`,
//! then `.run()`), running the runtime's built-in kernels of `kernels/reductions.rs`. The facade
//! re-exports this module as `cuprum::reductions` and [`Reductions`] in `cuprum::prelude`.
//!
//! Complex arrays (`Complex<f32>`, `Complex<f64>`: CuPy's complex64, complex128) have `sum`,
//! `prod` and `mean`, each of their own type, as in CuPy, and `all`/`any`; they are not ordered,
//! so `min`, `max`, `argmin`, `argmax`, `var` and `std` are for real types only.

use half::{bf16, f16};
use num_complex::Complex;

use crate::scalar::traits::{Float, Number, Real};
use crate::reduction::{self, Arg, Axes, ReductionCall};
use crate::registry::Kernel;
use crate::sync;
use std::sync::Mutex;

use crate::{Array, DType, Device, Error, Result, Scalar, Stream};

/// The built-in reduction kernels (`kernels/reductions.rs`, precompiled by the runtime's build.rs).
#[path = "../../kernels/reductions.rs"]
#[allow(missing_docs)]
pub(crate) mod kernels;

/// The type of `mean` of an element type (NumPy's rule): the type itself for floats and complex
/// numbers, `f64` for integers.
pub trait MeanResult: Number + sealed::Sealed {
    /// The type of the mean.
    type Mean: Number;
    /// The mean of no elements: NaN (`NaN + NaN i` for complex numbers), as in NumPy.
    fn nan_mean() -> Self::Mean;
}

/// The float type of `mean`, `var` and `std` of a real element type: the type itself for floats,
/// `f64` for integers (NumPy's rule). It is the type of [`MeanResult::Mean`].
pub trait FloatResult: Real + MeanResult<Mean = <Self as FloatResult>::Float> {
    /// The float type of `mean`, `var` and `std`.
    type Float: Float;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! float_result {
    ($($t:ty => $f:ty),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl MeanResult for $t {
            type Mean = $f;
            fn nan_mean() -> $f {
                <$f as Float>::nan()
            }
        }
        impl FloatResult for $t {
            type Float = $f;
        }
    )*};
}
float_result!(
    i8 => f64, i16 => f64, i32 => f64, i64 => f64, u8 => f64, u16 => f64, u32 => f64, u64 => f64,
    f16 => f16, bf16 => bf16, f32 => f32, f64 => f64,
);

macro_rules! complex_mean {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for Complex<$t> {}
        impl MeanResult for Complex<$t> {
            type Mean = Complex<$t>;
            fn nan_mean() -> Complex<$t> {
                Complex::new(<$t>::NAN, <$t>::NAN)
            }
        }
    )*};
}
complex_mean!(f32, f64);

/// Reductions of an array, through the built-in `#[reduction]` kernels. Each returns a builder:
///
/// ```ignore
/// let total = x.sum().run()?;                          // 0-d array
/// let rows = x.max().axis(1).keepdims(true).run()?;    // shape (n, 1)
/// let m = x.mean().axes([0, 2]).run()?;                // f32 for f32, f64 for integers
/// let s = x.std().axis(0).ddof(1).run()?;              // sample standard deviation
/// let i = x.argmin().axis(-1).run()?;                  // Array<i64>, first index of ties
/// ```
///
/// Sums and products keep the element type (integers wrap: NumPy's `sum(dtype=x.dtype)`, not
/// its default of summing small integers in int64). `min`, `max`, `argmin`, `argmax` of an empty
/// reduction are errors; a NaN wins `min`/`max` and `argmin`/`argmax` return the first NaN.
pub trait Reductions<T: Scalar> {
    /// The sum (identity 0; integers wrap).
    fn sum(&self) -> ReductionCall<'_, T>
    where
        T: Number;
    /// The product (identity 1; integers wrap).
    fn prod(&self) -> ReductionCall<'_, T>
    where
        T: Number;
    /// The minimum (no identity: an empty reduction is an error); a NaN propagates.
    fn min(&self) -> ReductionCall<'_, T>
    where
        T: Real;
    /// The maximum (no identity: an empty reduction is an error); a NaN propagates.
    fn max(&self) -> ReductionCall<'_, T>
    where
        T: Real;
    /// The index of the minimum along the reduced axes (C order over several), the first of ties.
    fn argmin(&self) -> ArgReduction<'_, T>
    where
        T: Real;
    /// The index of the maximum along the reduced axes (C order over several), the first of ties.
    fn argmax(&self) -> ArgReduction<'_, T>
    where
        T: Real;
    /// The arithmetic mean, accumulated in f64 (`Complex<f64>` for complex numbers); floats and
    /// complex numbers give their own type, integers `f64`.
    fn mean(&self) -> Moments<'_, T>
    where
        T: MeanResult;
    /// The variance `sum((x - mean)^2) / (n - ddof)` (`ddof` 0 unless set), in f64.
    fn var(&self) -> Moments<'_, T>
    where
        T: FloatResult;
    /// The standard deviation, the square root of [`var`](Reductions::var).
    fn std(&self) -> Moments<'_, T>
    where
        T: FloatResult;
    /// Whether every element is nonzero (`true` for an empty reduction).
    fn all(&self) -> ReductionCall<'_, bool>;
    /// Whether any element is nonzero (`false` for an empty reduction).
    fn any(&self) -> ReductionCall<'_, bool>;
}

/// The min or max kernel for `T` (`min_int`/`max_int`, `min_float`/`max_float`).
fn extremum_kernel<T: Real>(max: bool) -> &'static Kernel {
    match (T::DTYPE.is_float(), max) {
        (true, false) => kernels::min_float::__kernel(),
        (true, true) => kernels::max_float::__kernel(),
        (false, false) => kernels::min_int::__kernel(),
        (false, true) => kernels::max_int::__kernel(),
    }
}

/// A call of the min or max kernel on `x`.
fn extremum<T: Real>(x: &Array<T>, max: bool) -> ReductionCall<'_, T> {
    // The kernel: `min_int`/`max_int` (`T: Int`) and `min_float`/`max_float` (`T: Float`) map one
    // array of `T` to `T`, chosen by whether `T` is a float (every `Real` is an integer or a
    // float); no identity; the accumulator is `T`.
    ReductionCall::new(extremum_kernel::<T>(max), &[T::DTYPE], vec![Arg::input(x)])
}

impl<T: Scalar> Reductions<T> for Array<T> {
    fn sum(&self) -> ReductionCall<'_, T>
    where
        T: Number,
    {
        kernels::sum::call(self)
    }

    fn prod(&self) -> ReductionCall<'_, T>
    where
        T: Number,
    {
        kernels::prod::call(self)
    }

    fn min(&self) -> ReductionCall<'_, T>
    where
        T: Real,
    {
        extremum(self, false)
    }

    fn max(&self) -> ReductionCall<'_, T>
    where
        T: Real,
    {
        extremum(self, true)
    }

    fn argmin(&self) -> ArgReduction<'_, T>
    where
        T: Real,
    {
        ArgReduction {
            x: self,
            max: false,
            cfg: Config::default(),
        }
    }

    fn argmax(&self) -> ArgReduction<'_, T>
    where
        T: Real,
    {
        ArgReduction {
            x: self,
            max: true,
            cfg: Config::default(),
        }
    }

    fn mean(&self) -> Moments<'_, T>
    where
        T: MeanResult,
    {
        Moments {
            x: self,
            kind: Moment::Mean,
            ddof: 0,
            cfg: Config::default(),
        }
    }

    fn var(&self) -> Moments<'_, T>
    where
        T: FloatResult,
    {
        Moments {
            x: self,
            kind: Moment::Var,
            ddof: 0,
            cfg: Config::default(),
        }
    }

    fn std(&self) -> Moments<'_, T>
    where
        T: FloatResult,
    {
        Moments {
            x: self,
            kind: Moment::Std,
            ddof: 0,
            cfg: Config::default(),
        }
    }

    fn all(&self) -> ReductionCall<'_, bool> {
        logical(self, false)
    }

    fn any(&self) -> ReductionCall<'_, bool> {
        logical(self, true)
    }
}

// The reductions as inherent methods too, so that `x.max()` works without importing the trait
// (without it, rustc would pick `Ord::max`); the trait stays for code generic over arrays.
impl<T: Scalar> Array<T> {
    /// The sum (identity 0; integers wrap): [`Reductions::sum`], callable without importing the trait.
    pub fn sum(&self) -> ReductionCall<'_, T>
    where
        T: Number,
    {
        Reductions::sum(self)
    }

    /// The product (identity 1; integers wrap): [`Reductions::prod`], callable without importing the trait.
    pub fn prod(&self) -> ReductionCall<'_, T>
    where
        T: Number,
    {
        Reductions::prod(self)
    }

    /// The minimum (an empty reduction is an error); a NaN propagates: [`Reductions::min`], callable without importing the trait.
    pub fn min(&self) -> ReductionCall<'_, T>
    where
        T: Real,
    {
        Reductions::min(self)
    }

    /// The maximum (an empty reduction is an error); a NaN propagates: [`Reductions::max`], callable without importing the trait.
    pub fn max(&self) -> ReductionCall<'_, T>
    where
        T: Real,
    {
        Reductions::max(self)
    }

    /// The index of the minimum along the reduced axes, the first of ties: [`Reductions::argmin`], callable without importing the trait.
    pub fn argmin(&self) -> ArgReduction<'_, T>
    where
        T: Real,
    {
        Reductions::argmin(self)
    }

    /// The index of the maximum along the reduced axes, the first of ties: [`Reductions::argmax`], callable without importing the trait.
    pub fn argmax(&self) -> ArgReduction<'_, T>
    where
        T: Real,
    {
        Reductions::argmax(self)
    }

    /// The arithmetic mean, accumulated in f64: [`Reductions::mean`], callable without importing the trait.
    pub fn mean(&self) -> Moments<'_, T>
    where
        T: MeanResult,
    {
        Reductions::mean(self)
    }

    /// The variance (`ddof` 0 unless set), in f64: [`Reductions::var`], callable without importing the trait.
    pub fn var(&self) -> Moments<'_, T>
    where
        T: FloatResult,
    {
        Reductions::var(self)
    }

    /// The standard deviation: [`Reductions::std`], callable without importing the trait.
    pub fn std(&self) -> Moments<'_, T>
    where
        T: FloatResult,
    {
        Reductions::std(self)
    }

    /// Whether every element is nonzero: [`Reductions::all`], callable without importing the trait.
    pub fn all(&self) -> ReductionCall<'_, bool> {
        Reductions::all(self)
    }

    /// Whether any element is nonzero: [`Reductions::any`], callable without importing the trait.
    pub fn any(&self) -> ReductionCall<'_, bool> {
        Reductions::any(self)
    }
}

/// `all` (`any` when `any`) of `x`.
fn logical<T: Scalar>(x: &Array<T>, any: bool) -> ReductionCall<'_, bool> {
    let (kernel, instance): (&'static Kernel, &[DType]) = match (T::DTYPE == DType::Bool, any) {
        (true, false) => (kernels::all_bool::__kernel(), &[]),
        (true, true) => (kernels::any_bool::__kernel(), &[]),
        (false, false) => (kernels::all::__kernel(), &[T::DTYPE]),
        (false, true) => (kernels::any::__kernel(), &[T::DTYPE]),
    };
    // The kernel: `all_bool`/`any_bool` map one bool array to bool (no generics); `all`/`any`
    // (`T: Number`, every dtype but bool) map one array of `T` to bool, instance `[T]`. The
    // accumulator is bool; both have an identity.
    ReductionCall::new(kernel, instance, vec![Arg::input(x)])
}

/// The options shared by the builders below.
struct Config<'a, Out: Scalar> {
    axes: Axes,
    keepdims: bool,
    out: Option<&'a mut Array<Out>>,
    stream: Option<&'a Stream>,
}

impl<Out: Scalar> Default for Config<'_, Out> {
    fn default() -> Self {
        Config {
            axes: Axes::All,
            keepdims: false,
            out: None,
            stream: None,
        }
    }
}

impl<'a, Out: Scalar> Config<'a, Out> {
    /// The stream to run on: the given one, else the current stream of `x`'s device.
    fn stream_for<T: Scalar>(&self, x: &Array<T>) -> Result<Stream> {
        match self.stream {
            Some(s) => Ok(s.clone()),
            None => Stream::current_for(x.device()),
        }
    }

    /// The reduced mask of `x` and the number of elements each output reduces.
    fn reduced<T: Scalar>(&self, x: &Array<T>) -> Result<(Vec<bool>, usize)> {
        let mask = reduction::plan::reduced_mask(x.ndim(), &self.axes)?;
        let n = x
            .shape()
            .iter()
            .zip(&mask)
            .filter(|(_, m)| **m)
            .map(|(d, _)| *d)
            .product();
        Ok((mask, n))
    }

    /// Runs `call` with these options.
    fn apply(self, call: ReductionCall<'a, Out>) -> ReductionCall<'a, Out> {
        let mut call = call.axes(self.axes).keepdims(self.keepdims);
        if let Some(o) = self.out {
            call = call.out(o);
        }
        if let Some(s) = self.stream {
            call = call.stream(s);
        }
        call
    }
}

macro_rules! config_methods {
    ($out:ty) => {
        /// Reduce over one axis; negative counts from the end.
        pub fn axis(mut self, axis: isize) -> Self {
            self.cfg.axes = Axes::One(axis);
            self
        }

        /// Reduce over several axes (`[0, 2]`, `vec![1, -1]`, `Axes::All`).
        pub fn axes(mut self, axes: impl Into<Axes>) -> Self {
            self.cfg.axes = axes.into();
            self
        }

        /// Keep the reduced axes with extent 1.
        pub fn keepdims(mut self, keepdims: bool) -> Self {
            self.cfg.keepdims = keepdims;
            self
        }

        /// Write into `out`, which must have exactly the output shape (any strides).
        pub fn out(mut self, out: &'a mut Array<$out>) -> Self {
            self.cfg.out = Some(out);
            self
        }

        /// Run on `stream` (default: the current stream of the array's device).
        pub fn stream(mut self, stream: &'a Stream) -> Self {
            self.cfg.stream = Some(stream);
            self
        }
    };
}

/// A one-element array holding `v`, on `stream`.
fn scalar_on<V: Scalar>(v: V, stream: &Stream) -> Result<Array<V>> {
    Array::from_shape_vec_on([1usize], &[v], stream)
}

/// `[1.0]` (argmax) or `[-1.0]` (argmin) on `stream`'s device, for `arg_best_float`: made once per
/// device and direction (uploaded and waited for, so every stream may read it; a violation of an
/// earlier kernel stays recorded for the caller's next synchronising call) and kept for the
/// process, so that a call uploads nothing.
fn direction(max: bool, stream: &Stream) -> Result<&'static Array<f64>> {
    type Made = Vec<(Device, bool, &'static Array<f64>)>;
    static MADE: Mutex<Made> = Mutex::new(Vec::new());
    let device = stream.device();
    let mut made = sync::lock(&MADE);
    if let Some(&(_, _, a)) = made.iter().find(|(d, m, _)| d == device && *m == max) {
        return Ok(a);
    }
    let a = scalar_on(if max { 1.0 } else { -1.0 }, stream)?;
    stream.wait_quietly()?;
    let a: &'static Array<f64> = Box::leak(Box::new(a));
    made.push((device.clone(), max, a));
    Ok(a)
}

/// `x.argmin()` / `x.argmax()`: an `Array<i64>` of indices along the reduced axes (the flat C-order
/// index over several axes, like NumPy's `argmin` of `x` with those axes moved last and
/// flattened), the first index among equal values (of a NaN first, for floats). Floats reduce
/// (value, position) pairs in one kernel; integers run two: the minimum (maximum), then the first
/// index holding it.
#[must_use = "a reduction does nothing until `run`"]
pub struct ArgReduction<'a, T: Real> {
    x: &'a Array<T>,
    max: bool,
    cfg: Config<'a, i64>,
}

impl<T: Real> std::fmt::Debug for ArgReduction<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct(if self.max { "ArgMax" } else { "ArgMin" })
            .field("shape", &self.x.shape())
            .field("axes", &self.cfg.axes)
            .field("keepdims", &self.cfg.keepdims)
            .finish_non_exhaustive()
    }
}

impl<'a, T: Real> ArgReduction<'a, T> {
    config_methods!(i64);

    /// Runs the reduction; returns the indices (a view of `out` when one was given).
    pub fn run(self) -> Result<Array<i64>> {
        let x = self.x;
        let (mask, n) = self.cfg.reduced(x)?;
        let what = if self.max { "argmax" } else { "argmin" };
        let outs: usize = x
            .shape()
            .iter()
            .zip(&mask)
            .filter(|(_, m)| !**m)
            .map(|(d, _)| *d)
            .product();
        if n == 0 && outs > 0 {
            return Err(Error::Reduction {
                kernel: what.into(),
                detail: format!(
                    "an empty reduction (axes {:?} of shape {:?}) has no {what}; reduce over \
                     axes with at least one element",
                    self.cfg.axes,
                    x.shape()
                ),
            });
        }
        let stream = self.cfg.stream_for(x)?;
        if T::DTYPE == DType::F32 {
            // The kernel: `arg_best_f32` is `(x: f32, dir: Raw<f64>) -> ArgK` (integer order keys),
            // not generic, post `a.i`: one array of f32 to i64, in one pass.
            let dir = direction(self.max, &stream)?;
            let call = ReductionCall::new(kernels::arg_best_f32::__kernel(), &[], vec![Arg::input(x), Arg::raw(dir)]);
            return self.cfg.apply(call).stream(&stream).run();
        }
        if T::DTYPE.is_float() {
            // The kernel: `arg_best_float<T: Float>` is `(x: T, dir: Raw<f64>) -> ArgF`, instance
            // `[T]`, post `a.i`: one array of `T` to i64, in one pass.
            let dir = direction(self.max, &stream)?;
            let call = ReductionCall::new(kernels::arg_best_float::__kernel(), &[T::DTYPE], vec![Arg::input(x), Arg::raw(dir)]);
            return self.cfg.apply(call).stream(&stream).run();
        }
        // Integers: the extremum of each output with the kept dimensions, so that it broadcasts
        // along the reduced axes, then the first position holding it.
        let kernel = kernels::arg_of_int::__kernel();
        // At a first call, `kernel` loads while the extremum's kernel does.
        let m = extremum(x, self.max)
            .axes(self.cfg.axes.clone())
            .keepdims(true)
            .stream(&stream)
            .prefetch(kernel)
            .run()?;
        // The kernel: `arg_of_int<T: Int>` is `(x: T, m: T) -> i64`, instance `[T]`: two arrays of
        // `T` (`m` broadcasts); output i64 (no post), accumulator i64, with an identity. It gives
        // the first matching position along the reduced axes.
        let call = ReductionCall::new(kernel, &[T::DTYPE], vec![Arg::input(x), Arg::input(&m)]);
        self.cfg.apply(call).stream(&stream).run()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Moment {
    Mean,
    Var,
    Std,
}

/// `x.mean()`, `x.var()`, `x.std()`: accumulated in f64 (`Complex<f64>`); the result is `T` for
/// floats and complex numbers, `f64` for integers ([`MeanResult`], [`FloatResult`]). `ddof`
/// (variance and standard deviation) divides by `n - ddof`, NumPy's default being 0. The mean of
/// an empty reduction is NaN, as in NumPy. `var` and `std` exist for real types only (they build
/// this with `T: FloatResult`, whose `Float` is `Mean`).
#[must_use = "a reduction does nothing until `run`"]
pub struct Moments<'a, T: MeanResult> {
    x: &'a Array<T>,
    kind: Moment,
    ddof: usize,
    cfg: Config<'a, T::Mean>,
}

impl<T: MeanResult> std::fmt::Debug for Moments<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Moments")
            .field("kind", &self.kind)
            .field("ddof", &self.ddof)
            .field("shape", &self.x.shape())
            .field("axes", &self.cfg.axes)
            .field("keepdims", &self.cfg.keepdims)
            .finish_non_exhaustive()
    }
}

impl<'a, T: MeanResult> Moments<'a, T> {
    config_methods!(T::Mean);

    /// Delta degrees of freedom: divide by `n - ddof` (default 0; 1 gives the sample variance).
    pub fn ddof(mut self, ddof: usize) -> Self {
        self.ddof = ddof;
        self
    }

    /// Runs the reduction; returns the result (a view of `out` when one was given).
    pub fn run(self) -> Result<Array<T::Mean>> {
        let x = self.x;
        let float = T::DTYPE.is_float();
        let (mask, n) = self.cfg.reduced(x)?;
        let stream = self.cfg.stream_for(x)?;
        if n == 0 {
            return self.empty(&stream);
        }
        let instance = [T::DTYPE];
        if T::DTYPE.is_complex() {
            // Only `mean` builds `Moments` of a complex type (`var`/`std` need `FloatResult`).
            debug_assert_eq!(self.kind, Moment::Mean);
            let scale = scalar_on(1.0 / n as f64, &stream)?;
            let kernel = if T::DTYPE == DType::C32 {
                kernels::mean_c32::__kernel()
            } else {
                kernels::mean_c64::__kernel()
            };
            // The kernel: `mean_c32(x: Complex<f32>, scale: Raw<f64>) -> Complex<f32>` and
            // `mean_c64(x: Complex<f64>, scale: Raw<f64>) -> Complex<f64>` (no generics: instance
            // `[]`), chosen by `T`'s dtype: one array of `T`, a raw f64 array; output `T`, which
            // is `T::Mean` for complex types (`MeanResult`); accumulator `Complex<f64>` (16
            // bytes), with an identity.
            let call = ReductionCall::new(kernel, &[], vec![Arg::input(x), Arg::raw(&scale)]);
            return self.cfg.apply(call).stream(&stream).run();
        }
        if self.kind == Moment::Mean {
            let scale = scalar_on(1.0 / n as f64, &stream)?;
            let kernel = if float {
                kernels::mean_float::__kernel()
            } else {
                kernels::mean_f64::__kernel()
            };
            // The kernel: `mean_float<T: Float>` (output `T`) and `mean_f64<T: Real>` (output f64)
            // both take one array of `T` and a raw f64 array, accumulate in f64 and have an
            // identity; `T::Mean` is `T` for floats and f64 for integers (`MeanResult`).
            let call = ReductionCall::new(kernel, &instance, vec![Arg::input(x), Arg::raw(&scale)]);
            return self.cfg.apply(call).stream(&stream).run();
        }
        let kernel = match (self.kind, float) {
            (Moment::Var, true) => kernels::var_float::__kernel(),
            (Moment::Var, false) => kernels::var_f64::__kernel(),
            (_, true) => kernels::std_float::__kernel(),
            (_, false) => kernels::std_f64::__kernel(),
        };
        // The shift of each output: the first element of its reduction, with the kept dimensions
        // (a view: it broadcasts along the reduced axes).
        let mut k = x.clone();
        for (axis, _) in mask.iter().enumerate().filter(|(_, m)| **m) {
            k = k.slice(axis, 0..1)?;
        }
        // `1 / (n (n - ddof))` per element, summed to `1 / (n - ddof)`: NumPy divides by
        // `max(n - ddof, 0)` (infinite for 0).
        let scale = scalar_on(1.0 / (n as f64 * n.saturating_sub(self.ddof) as f64), &stream)?;
        // The kernel: `var_float`/`std_float<T: Float>` (output `T`) and `var_f64`/`std_f64<T: Real>`
        // (output f64) take one array of `T`, the shifts (an array of `T`, broadcast) and a raw
        // f64 array; `Shifted` accumulator (32 bytes), with an identity. `T::Mean` is `T` for
        // floats and f64 for integers (`MeanResult`; only real types reach here: `var` and `std`
        // need `FloatResult`).
        let call = ReductionCall::new(kernel, &instance, vec![Arg::input(x), Arg::input(&k), Arg::raw(&scale)]);
        self.cfg.apply(call).stream(&stream).run()
    }

    /// NaN for every output of an empty reduction (NumPy's `mean` and `var` of nothing).
    fn empty(self, stream: &Stream) -> Result<Array<T::Mean>> {
        let shape =
            reduction::output_shape(&[Arg::input(self.x)], &self.cfg.axes, self.cfg.keepdims)?;
        if self.cfg.out.is_some() {
            return Err(Error::Unsupported {
                what: format!(
                    "an explicit output for the mean, variance or standard deviation of an empty \
                     reduction (axes {:?} of shape {:?}): its result is NaN; leave out `out`",
                    self.cfg.axes,
                    self.x.shape()
                ),
            });
        }
        let size: usize = shape.iter().product();
        Array::from_shape_vec_on(shape, &vec![T::nan_mean(); size], stream)
    }
}
