//! Array operators and functions through the built-in elementwise kernels (issue 6, item 5;
//! issue 36: NumPy's ufuncs).
//!
//! The kernels are `#[elementwise(crate = crate)]` functions in the runtime's `kernels/`
//! (`elementwise.rs`, `math.rs`, `logic.rs`, `bitwise.rs`), precompiled by the runtime's build.rs
//! and included below as modules. The operators pick a kernel (`Builtin`: its kernel table and
//! its entry point's signature, as the macro generated them) and launch it through
//! [`elementwise::launch`](fn@elementwise::launch), which checks every argument against the
//! signature: the type-erased launch lets one generic operator choose between kernels of
//! different bounds (`rem_int` and `rem_float`) by dtype.
//!
//! Operators return `Result` (a launch can fail; std's operator traits cannot): `(&a + &b)?`,
//! `(&a * 2.0)?`, `(2.0 * &a)?`, `(-&a)?`. Every binary operation broadcasts (NumPy's rules) and
//! takes an array or a scalar of the element type on either side.
//!
//! One concept per file: `arithmetic` (the operators `+ - * / %` and negation, and NumPy's
//! arithmetic names: `power`, `floor_divide`, `remainder`, `divmod`, ...), `math` (the
//! mathematical functions), `logic` (comparisons, `isnan`, the logical functions), `bitwise`
//! (`& | ^ ! << >>`), `inplace` (the in-place forms), `select` (`where_`, `clip`) and `convert`
//! (`astype`, `fill`, `assign`, copies).

use crate::array::Array;
use crate::elementwise::{self, Arg, Input, Options};
use crate::error::Result;
use crate::registry::Kernel;
use crate::{DType, Scalar};

mod arithmetic;
mod bitwise;
mod convert;
mod inplace;
mod logic;
mod math;
mod select;

pub use select::where_;

/// The built-in elementwise kernels of issue 6.
#[allow(dead_code)]
#[path = "../../kernels/elementwise.rs"]
mod kernels;

/// The built-in kernels of NumPy's mathematical functions.
#[allow(dead_code)]
#[path = "../../kernels/math.rs"]
mod math_kernels;

/// The built-in kernels of NumPy's logic functions.
#[allow(dead_code)]
#[path = "../../kernels/logic.rs"]
mod logic_kernels;

/// The built-in kernels of NumPy's binary (bitwise) operations.
#[allow(dead_code)]
#[path = "../../kernels/bitwise.rs"]
mod bitwise_kernels;

/// A built-in kernel of `kernels/*.rs` (its signature is part of it).
type Builtin = &'static Kernel;

/// The [`Builtin`] of kernel `$name` of `kernels/elementwise.rs`, or of `$file::$name` (`math`,
/// `logic`, `bitwise`: `kernels/$file.rs`).
macro_rules! builtin {
    (math::$name:ident) => {
        $crate::ops::math_kernels::$name::kernel()
    };
    (logic::$name:ident) => {
        $crate::ops::logic_kernels::$name::kernel()
    };
    (bitwise::$name:ident) => {
        $crate::ops::bitwise_kernels::$name::kernel()
    };
    ($name:ident) => {
        $crate::ops::kernels::$name::kernel()
    };
}
use builtin;

/// Whether `d` is a float type (`f16` and `bf16` included): the float kernel of a pair.
fn is_float(d: DType) -> bool {
    d.is_float()
}

/// Launches `b` for `instance` over `args` (its outputs included).
fn launch_into(b: Builtin, instance: &[DType], args: &[Arg<'_>]) -> Result<()> {
    elementwise::launch(b, instance, args, &Options::default())
}

/// Launches `b` for `instance` over `inputs` with one output of element type `U`, allocated
/// with their broadcast shape on the current stream of their device.
fn launch_new<U: Scalar>(b: Builtin, instance: &[DType], inputs: &[Arg<'_>]) -> Result<Array<U>> {
    let shape = elementwise::broadcast_shape(b.name(), inputs, None)?;
    let stream = elementwise::output_stream(&Options::default(), inputs)?;
    let mut out = Array::<U>::empty_on(&shape, &stream)?;
    {
        let mut args = inputs.to_vec();
        args.push(Arg::output(&mut out));
        elementwise::launch(b, instance, &args, &Options::default())?;
    }
    Ok(out)
}

/// Launches `b` for `instance` over `inputs` with two outputs, of element types `U` and `V`.
fn launch_new2<U: Scalar, V: Scalar>(b: Builtin, instance: &[DType], inputs: &[Arg<'_>]) -> Result<(Array<U>, Array<V>)> {
    let shape = elementwise::broadcast_shape(b.name(), inputs, None)?;
    let stream = elementwise::output_stream(&Options::default(), inputs)?;
    let mut out0 = Array::<U>::empty_on(&shape, &stream)?;
    let mut out1 = Array::<V>::empty_on(&shape, &stream)?;
    {
        let mut args = inputs.to_vec();
        args.push(Arg::output(&mut out0));
        args.push(Arg::output(&mut out1));
        elementwise::launch(b, instance, &args, &Options::default())?;
    }
    Ok((out0, out1))
}

fn unary<T: Scalar, U: Scalar>(b: Builtin, x: &Array<T>) -> Result<Array<U>> {
    launch_new::<U>(b, &[T::DTYPE], &[Arg::input(x)])
}

fn binary<'a, 'b, T: Scalar, U: Scalar>(b: Builtin, x: impl Into<Input<'a, T>>, y: impl Into<Input<'b, T>>) -> Result<Array<U>> {
    launch_new::<U>(b, &[T::DTYPE], &[x.into().arg(), y.into().arg()])
}

/// [`unary`] of a kernel without generic parameters (its instance is empty).
fn unary_concrete<T: Scalar, U: Scalar>(b: Builtin, x: &Array<T>) -> Result<Array<U>> {
    launch_new::<U>(b, &[], &[Arg::input(x)])
}

/// [`binary`] of a kernel without generic parameters.
fn binary_concrete<'a, 'b, T: Scalar, U: Scalar>(b: Builtin, x: impl Into<Input<'a, T>>, y: impl Into<Input<'b, T>>) -> Result<Array<U>> {
    launch_new::<U>(b, &[], &[x.into().arg(), y.into().arg()])
}
