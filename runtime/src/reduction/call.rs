//! [`ReductionCall`]: the builder every `#[reduction]` kernel's `NAME::call(..)` returns, and the
//! array reductions (`x.sum()`, `x.max()`, ...) too.

use crate::reduction::{self, Arg, Axes, OutArg, Options, ReductionInfo};
use crate::registry::Kernel;
use crate::{Array, DType, Device, Result, Scalar, Stream};

/// One reduction call, configured by chaining, run by [`run`](ReductionCall::run):
///
/// ```ignore
/// let n = l2norm::call(&x).axis(1).run()?;                 // shape (rows,)
/// let k = l2norm::call(&x).axes([0, 2]).keepdims(true).run()?;
/// l2norm::call(&x).axis(-1).out(&mut y).stream(&s).run()?; // into `y`, on stream `s`
/// ```
///
/// `Out` is the kernel's output type; rustc checks an explicit output against it.
#[must_use = "a reduction does nothing until `run`"]
pub struct ReductionCall<'a, Out: Scalar> {
    kernel: &'static Kernel,
    info: ReductionInfo,
    instance: Vec<DType>,
    inputs: Vec<Arg<'a>>,
    axes: Axes,
    keepdims: bool,
    out: Option<&'a mut Array<Out>>,
    stream: Option<&'a Stream>,
}

impl<Out: Scalar> std::fmt::Debug for ReductionCall<'_, Out> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReductionCall")
            .field("kernel", &self.kernel.name())
            .field("instance", &self.instance)
            .field("axes", &self.axes)
            .field("keepdims", &self.keepdims)
            .field("out", &self.out.as_ref().map(|o| o.shape().to_vec()))
            .finish_non_exhaustive()
    }
}

impl<'a, Out: Scalar> ReductionCall<'a, Out> {
    /// A call of instance `instance` of reduction `kernel` over `inputs`, over all axes.
    ///
    /// # Safety
    ///
    /// `inputs` must match the kernel's map parameters in number, order, kind (`Arg::Raw`
    /// exactly for its `Raw<T>` parameters) and element type for `instance`, and `Out` must be
    /// the kernel's output type for `instance` (the contract of `reduction::launch`). The
    /// `#[reduction]` macro's `NAME::call` guarantees it through its typed signature.
    pub unsafe fn new(kernel: &'static Kernel, info: ReductionInfo, instance: &[DType], inputs: Vec<Arg<'a>>) -> Self {
        ReductionCall { kernel, info, instance: instance.to_vec(), inputs, axes: Axes::All, keepdims: false, out: None, stream: None }
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

    /// Write into `out`, which must have exactly the output shape (any strides).
    pub fn out(mut self, out: &'a mut Array<Out>) -> Self {
        self.out = Some(out);
        self
    }

    /// Run on `stream` (default: the current stream of the arrays' device).
    pub fn stream(mut self, stream: &'a Stream) -> Self {
        self.stream = Some(stream);
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
    /// Errors, with nothing launched: inputs that do not broadcast, an axis out of range or
    /// repeated, an output of another shape, arrays on different devices, an empty reduction of
    /// a kernel without identity, a compile error of a non-precompiled instance.
    pub fn run(self) -> Result<Array<Out>> {
        let mut owned;
        let out = match self.out {
            Some(o) => o,
            None => {
                let shape = reduction::output_shape(&self.inputs, &self.axes, self.keepdims)?;
                owned = match self.stream {
                    Some(s) => Array::<Out>::empty_on(shape, s)?,
                    None => {
                        let device = Device::get(self.inputs[0].array_ref().device)?;
                        Array::<Out>::empty_on(shape, &Stream::current_for(&device)?)?
                    }
                };
                &mut owned
            }
        };
        let result = out.clone();
        // SAFETY: the inputs and `Out` match the kernel's parameters and output for `instance`:
        // the contract of `new`, which is unsafe.
        unsafe {
            reduction::launch(
                self.kernel,
                &self.info,
                &self.instance,
                &self.inputs,
                OutArg::from(out),
                &self.axes,
                self.keepdims,
                &Options { stream: self.stream },
            )?
        };
        Ok(result)
    }
}
