//! The CPU side of the erased elementwise and reduction launches: once `elementwise::launch` or
//! `reduction::launch` has checked a call whose arrays are on the CPU device and planned its loop
//! (the same checks and plan as on a GPU), these build the loop and run the kernel's
//! [`HostEntry`] on it.

use super::element_loop::ElementLoop;
use super::entry::HostEntry;
use super::reduce_loop::ReduceLoop;
use crate::DType;
use crate::element::ElemType;
use crate::error::{Error, Result};
use crate::launch::operand::{Arg, ArrayArg};
use crate::launch::signature::{Param, ReductionSignature};

/// The host entry of an `#[elementwise]` kernel, or the error a kernel without host code gets
/// on the CPU device (before any planning).
pub(crate) fn elementwise_entry(name: &str, entry: Option<HostEntry>) -> Result<fn(&ElementLoop<'_>) -> Result<()>> {
    match entry {
        Some(HostEntry::Elementwise(entry)) => Ok(entry),
        _ => Err(Error::kernel_on_cpu(&format!(
            "kernel `{name}` (CUDA C text, or a kernel built without its host code)"
        ))),
    }
}

/// Runs an `#[elementwise]` kernel's host entry (from [`elementwise_entry`]) over the planned
/// loop: `dims` the collapsed loop shape, `strides` each operand's strides in elements along it
/// (`None`: not an array), `args` checked against `signature` for `instance`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_elementwise(
    name: &str,
    entry: fn(&ElementLoop<'_>) -> Result<()>,
    signature: &[Param],
    instance: &[DType],
    args: &[Arg<'_>],
    dims: Vec<usize>,
    strides: &[Option<Vec<i64>>],
) -> Result<()> {
    let elems: Vec<ElemType> = signature
        .iter()
        .map(|p| p.ty.resolve(instance).unwrap_or(ElemType::Scalar(DType::U8)))
        .collect();
    let scalars = args
        .iter()
        .zip(&elems)
        .map(|(a, e)| match a {
            Arg::Scalar(v) => e.dtype().map(|d| v.cast(d).to_bytes().0),
            _ => None,
        })
        .collect();
    let elementwise = ElementLoop::new(name, instance, args, &elems, scalars, dims, strides);
    entry(&elementwise)
}

/// The host entry of a `#[reduction]`, or the error a reduction without host code gets on the
/// CPU device (before any planning).
pub(crate) fn reduction_entry(name: &str, entry: Option<HostEntry>) -> Result<fn(&ReduceLoop<'_>) -> Result<()>> {
    match entry {
        Some(HostEntry::Reduction(entry)) => Ok(entry),
        _ => Err(Error::kernel_on_cpu(&format!(
            "reduction `{name}` (CUDA C text, or a kernel built without its host code)"
        ))),
    }
}

/// Runs a `#[reduction]`'s host entry (from [`reduction_entry`]): its map over `inputs` on the
/// loop `shape`, `reduce` along the axes `mask` marks, `post` into `out`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_reduction(
    name: &str,
    entry: fn(&ReduceLoop<'_>) -> Result<()>,
    sig: &ReductionSignature,
    instance: &[DType],
    inputs: &[Arg<'_>],
    out: ArrayArg<'_>,
    shape: &[usize],
    mask: &[bool],
    keepdims: bool,
) -> Result<()> {
    let elems: Vec<ElemType> = sig
        .params
        .iter()
        .map(|p| p.ty.resolve(instance).unwrap_or(ElemType::Scalar(DType::U8)))
        .collect();
    let out_elem = sig.out.resolve(instance).unwrap_or(ElemType::Scalar(DType::U8));
    let mut args: Vec<Arg<'_>> = inputs.to_vec();
    args.push(Arg::Out(out));
    let reduction = ReduceLoop::new(name, instance, &args, shape, mask, keepdims, &elems, out_elem);
    entry(&reduction)
}
