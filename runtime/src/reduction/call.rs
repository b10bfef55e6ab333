//! [`ReductionCall`]: the one reduction call builder. `#[reduction]` kernels' `NAME::call(..)`,
//! the array reductions (`x.sum()`, `x.max()`, ...) and `ReductionKernel::call` all return it.

use super::reduction_kernel::ReductionKernel;
use crate::launch::operand::{Arg, ArrayArg};
use crate::reduction::{self, Axes, Options};
use crate::registry::Kernel;
use crate::{Array, DType, Device, Result, Scalar, Stream};

/// What a call runs: a generated kernel with its instance, or a `ReductionKernel` whose
/// instance is bound from the operands at `run`.
enum Target<'a> {
    Generated { kernel: &'static Kernel, instance: Vec<DType> },
    Text(&'a ReductionKernel),
}

/// One reduction call, configured by chaining, run by [`run`](ReductionCall::run):
///
/// ```ignore
/// let n = l2norm::call(&x).axis(1).run()?;                 // shape (rows,)
/// let k = l2norm::call(&x).axes([0, 2]).keepdims(true).run()?;
/// l2norm::call(&x).axis(-1).out(&mut y).stream(&s).run()?; // into `y`, on stream `s`
/// ```
///
/// `Out` is the kernel's output type: rustc checks an explicit output against it, and the
/// launch checks it against the kernel's signature for the instance.
#[must_use = "a reduction does nothing until `run`"]
pub struct ReductionCall<'a, Out: Scalar> {
    target: Target<'a>,
    inputs: Vec<Arg<'a>>,
    axes: Axes,
    keepdims: bool,
    out: Option<&'a mut Array<Out>>,
    stream: Option<&'a Stream>,
    prefetch: Option<&'static Kernel>,
}

impl<Out: Scalar> std::fmt::Debug for ReductionCall<'_, Out> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (kernel, instance) = match &self.target {
            Target::Generated { kernel, instance } => (kernel.name(), instance.clone()),
            Target::Text(k) => (k.name(), Vec::new()),
        };
        f.debug_struct("ReductionCall")
            .field("kernel", &kernel)
            .field("instance", &instance)
            .field("axes", &self.axes)
            .field("keepdims", &self.keepdims)
            .field("out", &self.out.as_ref().map(|o| o.shape().to_vec()))
            .finish_non_exhaustive()
    }
}

impl<'a, Out: Scalar> ReductionCall<'a, Out> {
    /// A call of instance `instance` of the reduction `kernel` over `inputs` (`Arg::input` for
    /// the map's array parameters, `Arg::raw` for its `Raw<T>` ones), over all axes. The
    /// operands are checked against the kernel's signature when the call runs. What the macros
    /// generate.
    #[doc(hidden)]
    pub fn new(kernel: &'static Kernel, instance: &[DType], inputs: Vec<Arg<'a>>) -> Self {
        ReductionCall::with_target(Target::Generated { kernel, instance: instance.to_vec() }, inputs)
    }

    /// A call of a `ReductionKernel` (its instance is bound from the operands at `run`).
    pub(crate) fn of_text(kernel: &'a ReductionKernel, inputs: Vec<Arg<'a>>) -> Self {
        ReductionCall::with_target(Target::Text(kernel), inputs)
    }

    fn with_target(target: Target<'a>, inputs: Vec<Arg<'a>>) -> Self {
        ReductionCall { target, inputs, axes: Axes::All, keepdims: false, out: None, stream: None, prefetch: None }
    }

    /// Reduce over one axis; negative counts from the end.
    pub fn axis(mut self, axis: isize) -> Self {
        self.axes = Axes::One(axis);
        self
    }

    /// Reduce over several axes (`[0, 2]`, `vec![1, -1]`, `Axes::All`).
    pub fn axes(mut self, axes: impl Into<Axes>) -> Self {
        self.axes = axes.into();
        self
    }

    /// Keep the reduced axes with extent 1.
    pub fn keepdims(mut self, keepdims: bool) -> Self {
        self.keepdims = keepdims;
        self
    }

    /// Write into `out` (CuPy's `out=`), which must have exactly the output shape (any strides).
    pub fn out(mut self, out: &'a mut Array<Out>) -> Self {
        self.out = Some(out);
        self
    }

    /// Run on `stream` (default: the current stream of the arrays' device).
    pub fn stream(mut self, stream: &'a Stream) -> Self {
        self.stream = Some(stream);
        self
    }

    /// Loads `next`, the reduction that this call's result feeds (same instance, over the same
    /// loop shape and axes, so the same launch variant), on a background thread while this call
    /// loads its own kernel, if it is not loaded yet: an operation of two reductions then waits
    /// for about one kernel's first load, not two (`argmax`, `var`; docs/runtime.md, "First
    /// calls"). Only a hint: nothing changes but when `next` is loaded.
    pub fn prefetch(mut self, next: &'static Kernel) -> Self {
        self.prefetch = Some(next);
        self
    }

    /// The axes this call reduces over.
    pub fn reduced_axes(&self) -> &Axes {
        &self.axes
    }

    /// The shape of the output (an error for an invalid axis or inputs that do not broadcast).
    pub fn output_shape(&self) -> Result<Vec<usize>> {
        reduction::output_shape(&self.inputs, &self.axes, self.keepdims)
    }

    /// Runs the reduction; returns the output (a view of `out` when one was given).
    ///
    /// Errors, with nothing launched: operands that do not match the kernel's parameters,
    /// inputs that do not broadcast, an axis out of range or repeated, an output of another
    /// shape or dtype, arrays on different devices, an empty reduction of a kernel without
    /// identity, a compile error of a non-precompiled instance, and a `ReductionKernel` whose
    /// text indexes raw arguments (use [`run_raw`](ReductionCall::run_raw)).
    pub fn run(self) -> Result<Array<Out>> {
        self.run_with(false)
    }

    /// [`run`](ReductionCall::run) for a `ReductionKernel` with `raw` parameters.
    ///
    /// # Safety
    ///
    /// Every index the kernel's CUDA C text computes into a raw argument must lie inside that
    /// array for these arguments (cuprum checks the operands' kinds, dtypes, devices and shapes,
    /// not what the text does with them). Kernels written in Rust need no such promise (their
    /// indexing is checked): for them this is [`run`](ReductionCall::run).
    pub unsafe fn run_raw(self) -> Result<Array<Out>> {
        self.run_with(true)
    }

    fn run_with(self, unchecked: bool) -> Result<Array<Out>> {
        // The stream: the caller's, else the current stream of the output's device (given, or
        // the first array's; the current device's when every argument is a scalar).
        let current;
        let stream = match self.stream {
            Some(s) => s,
            None => {
                let ordinal = match &self.out {
                    Some(o) => Some(o.device().ordinal()),
                    None => self.inputs.iter().find_map(Arg::array).map(ArrayArg::device),
                };
                current = match ordinal {
                    Some(d) => Stream::current_for(&Device::get(d)?)?,
                    None => Stream::current()?,
                };
                &current
            }
        };
        // Scalars become uploaded 0-d arrays; a call without any (the usual one) uses its
        // arguments as they are, with no allocation.
        let held = if self.inputs.iter().any(|a| matches!(a, Arg::Scalar(_))) {
            upload_scalars(&self.inputs, stream)?
        } else {
            Vec::new()
        };
        let substituted: Vec<Arg<'_>>;
        let inputs: &[Arg<'_>] = if held.is_empty() {
            &self.inputs
        } else {
            substituted = self
                .inputs
                .iter()
                .zip(&held)
                .map(|(a, h)| match h {
                    Some((buf, dtype)) => Arg::In(ArrayArg::scalar_in(buf, *dtype)),
                    None => *a,
                })
                .collect();
            &substituted
        };
        let (kernel, instance) = match self.target {
            Target::Generated { kernel, instance } => (kernel, instance),
            Target::Text(k) => (k.kernel(), k.bind(inputs, Out::DTYPE)?),
        };
        let mut owned;
        let out = match self.out {
            Some(o) => o,
            None => {
                let shape = reduction::output_shape(inputs, &self.axes, self.keepdims)?;
                owned = Array::<Out>::empty_on(shape, stream)?;
                &mut owned
            }
        };
        let result = out.clone();
        let opts = Options { stream: Some(stream), prefetch: self.prefetch };
        let out = Arg::output(out);
        if unchecked {
            // SAFETY: raw arguments are indexed within their sizes: `run_raw`'s contract.
            unsafe { reduction::launch_unchecked(kernel, &instance, inputs, out, &self.axes, self.keepdims, &opts)? }
        } else {
            reduction::launch(kernel, &instance, inputs, out, &self.axes, self.keepdims, &opts)?
        }
        Ok(result)
    }
}

/// A scalar argument's buffer and its dtype.
type Uploaded = (Array<u64>, DType);

/// The scalar arguments (`Arg::Scalar`, a by-value `eps`) as one-element buffers on `stream`,
/// in argument order (`None` for the others), with their dtypes: a reduction's loops read every
/// per-element input from memory, so a scalar is uploaded (16 bytes, the value's C layout) and
/// passed as a 0-d array that broadcasts over the loop. The buffers go back to the pool, stream
/// ordered, when the call returns.
fn upload_scalars(inputs: &[Arg<'_>], stream: &Stream) -> Result<Vec<Option<Uploaded>>> {
    inputs
        .iter()
        .map(|a| match a {
            Arg::Scalar(v) => {
                let (bytes, _) = v.to_bytes();
                let word = |k: usize| u64::from_le_bytes(std::array::from_fn(|i| bytes[8 * k + i]));
                let words = [word(0), word(1)];
                Ok(Some((Array::from_shape_vec_on([2usize], &words, stream)?, v.dtype())))
            }
            _ => Ok(None),
        })
        .collect()
}

// `ReductionKernel::call` lives here, above the kernel (`reduction_kernel.rs` needs no import of the call).
impl ReductionKernel {
    /// A call of the kernel on `inputs` (in the order of the input parameters: `Arg::input(&x)`,
    /// `Arg::raw(&w)` for `raw` ones); choose the axes and the output and run it with the
    /// returned builder ([`ReductionCall`], the one every reduction returns). `O` is the output's
    /// type, usually inferred (`let y: Array<f32> = k.call(&args).axis(1).run()?`).
    pub fn call<'a, O: Scalar>(&'a self, inputs: &[Arg<'a>]) -> ReductionCall<'a, O> {
        ReductionCall::of_text(self, inputs.to_vec())
    }
}
