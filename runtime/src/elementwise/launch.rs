//! The type-erased launch of an elementwise kernel: what the typed wrappers (`#[elementwise]`'s
//! generated function, `ElementwiseKernel`'s call) end in.
//!
//! The caller gives the kernel, the instance (one dtype per generic parameter) and the
//! arguments. Everything is checked against the kernel's signature (one [`Param`] per kernel
//! parameter, then one per returned output; written by the code generator with the kernel, see
//! [`Signature`]) before anything runs (count, kind, dtype, device, shapes), so [`launch`] is
//! safe: a mismatch is an error, never a kernel reading the wrong memory.

use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};

use super::plan::{self, DEFAULT_BLOCK, LoopPlan, PlanOperand, Variant};
use crate::DType;
use crate::device::Device;
use crate::element::ElemType;
use crate::error::{Error, Result};
use crate::function::KernelFunction;
use crate::launch::operand::Arg;
use crate::launch::signature::Signature;
pub use crate::launch::signature::{Param, Role};
use crate::launch::{ArgList, LaunchConfig};
use crate::registry::Kernel;
use crate::stream::Stream;

/// Options of one launch.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options<'s> {
    /// The stream; `None`: the current stream of the arrays' device.
    pub stream: Option<&'s Stream>,
    /// Threads per block (default 256); 0 is an error.
    pub block_size: Option<u32>,
    /// The loop size when every array argument is raw (CuPy's `size=`); an error otherwise.
    pub size: Option<usize>,
}

impl<'s> Options<'s> {
    /// The defaults: the current stream, the default block size, no explicit size.
    pub fn new() -> Options<'s> {
        Options::default()
    }
    /// Launch on `stream` (outputs a call allocates are allocated on it).
    pub fn stream(mut self, stream: &'s Stream) -> Self {
        self.stream = Some(stream);
        self
    }
    /// Threads per block (0 is an error at the launch).
    pub fn block_size(mut self, threads: u32) -> Self {
        self.block_size = Some(threads);
        self
    }
    /// The loop size, for a call whose array arguments are all raw.
    pub fn size(mut self, n: usize) -> Self {
        self.size = Some(n);
        self
    }
}

/// The stream a call allocates its outputs on and launches on: the options' stream, else the
/// current stream of the device of the first array argument, else the current stream.
pub fn output_stream(opts: &Options<'_>, args: &[Arg<'_>]) -> Result<Stream> {
    if let Some(s) = opts.stream {
        return Ok(s.clone());
    }
    match args.iter().find_map(|a| a.array()) {
        Some(a) => Stream::current_for(&Device::get(a.device)?),
        None => Stream::current(),
    }
}

/// How many launches ran each variant, since the start or [`reset_variant_counts`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VariantCounts {
    /// Launches of the contiguous variant.
    pub contig: u64,
    /// Launches of the strided variant with 32-bit indices.
    pub s32: u64,
    /// Launches of the strided variant with 64-bit indices.
    pub s64: u64,
    /// Launches of the tiled 2-D variant (an operand contiguous along the outer axis).
    pub t32: u64,
    /// Launches whose loop used vector accesses.
    pub vector: u64,
}

// One counter per variant (`Variant::index`), then the vector launches.
static COUNTS: [AtomicU64; 5] = [
    AtomicU64::new(0),
    AtomicU64::new(0),
    AtomicU64::new(0),
    AtomicU64::new(0),
    AtomicU64::new(0),
];

/// The launches per variant so far (process-wide).
pub fn variant_counts() -> VariantCounts {
    let g = |k: usize| COUNTS[k].load(Ordering::Relaxed);
    VariantCounts {
        contig: g(0),
        s32: g(1),
        s64: g(2),
        t32: g(3),
        vector: g(4),
    }
}

/// Sets the variant counters to zero.
pub fn reset_variant_counts() {
    for c in &COUNTS {
        c.store(0, Ordering::Relaxed);
    }
}

fn invalid(kernel: &str, detail: String) -> Error {
    Error::InvalidLaunch {
        kernel: kernel.to_string(),
        detail,
    }
}

/// The loop shape of a call: the broadcast shape of every non-raw array (inputs and outputs),
/// or `[size]` when the size is given, which is allowed only when every array is raw. With no
/// array at all, a loop of one element (shape `[]`) when some input is a scalar; otherwise the
/// size is undecided (an error).
pub fn broadcast_shape(kernel: &str, args: &[Arg<'_>], size: Option<usize>) -> Result<Vec<usize>> {
    let mut shapes: Vec<&[usize]> = Vec::new();
    let (mut raw, mut scalar) = (false, false);
    for a in args {
        match a {
            Arg::In(x) | Arg::Out(x) => shapes.push(x.shape),
            Arg::Raw(_) => raw = true,
            Arg::Scalar(_) => scalar = true,
        }
    }
    if let Some(n) = size {
        if !shapes.is_empty() {
            return Err(invalid(
                kernel,
                format!(
                    "a loop size ({n}) was given, but some arguments are non-raw arrays (shapes \
                     {shapes:?}), whose broadcast shape sets the loop; give the size only when \
                     every array argument is raw"
                ),
            ));
        }
        return Ok(vec![n]);
    }
    if shapes.is_empty() {
        if raw {
            return Err(invalid(
                kernel,
                "every array argument is raw, so the loop size is undecided: give it (`size`)"
                    .into(),
            ));
        }
        if !scalar {
            return Err(invalid(
                kernel,
                "the loop size is undecided: the call has no array argument; pass an output array \
                 or give the size"
                    .into(),
            ));
        }
        return Ok(Vec::new());
    }
    crate::array::broadcast_shapes(&shapes)
}

/// When the arguments do not broadcast together but the inputs alone do, the fault is an output
/// of the wrong shape: say so (CuPy: "Out shape is mismatched").
fn output_mismatch(name: &str, signature: &[Param], args: &[Arg<'_>]) -> Option<Error> {
    let inputs: Vec<&[usize]> = args
        .iter()
        .filter_map(|a| {
            if let Arg::In(x) = a {
                Some(x.shape)
            } else {
                None
            }
        })
        .collect();
    let shape = crate::array::broadcast_shapes(&inputs).ok()?;
    signature.iter().zip(args).find_map(|(p, a)| match a {
        Arg::Out(x) if x.shape != shape.as_slice() => Some(Error::ShapeMismatch {
            context: format!(
                "output `{}` of elementwise kernel `{name}` (an output must have the broadcast shape of \
                 the inputs; pass one of that shape, or leave it out to have it allocated)",
                p.name
            ),
            expected: shape.clone(),
            found: x.shape.to_vec(),
        }),
        _ => None,
    })
}

/// How the planner sees an argument.
fn plan_operand<'a>(a: &Arg<'a>) -> PlanOperand<'a> {
    match a {
        Arg::In(x) | Arg::Out(x) => PlanOperand::Array {
            shape: x.shape,
            strides: x.strides,
            ptr: x.ptr,
            elem: x.elem.size(),
        },
        Arg::Raw(_) | Arg::Scalar(_) => PlanOperand::Other,
    }
}

/// [`broadcast_shape`], borrowed from the arguments when every non-raw array has one shape
/// (the common case: no broadcasting to compute).
fn loop_shape<'a>(kernel: &str, args: &[Arg<'a>], size: Option<usize>) -> Result<Cow<'a, [usize]>> {
    if size.is_none() {
        let mut shapes = args.iter().filter_map(|a| match a {
            Arg::In(x) | Arg::Out(x) => Some(x.shape),
            Arg::Raw(_) | Arg::Scalar(_) => None,
        });
        if let Some(first) = shapes.next() {
            if shapes.all(|s| s == first) {
                return Ok(Cow::Borrowed(first));
            }
        }
    }
    broadcast_shape(kernel, args, size).map(Cow::Owned)
}

/// Launches `kernel` (an elementwise kernel) for `instance` over `args`, checked against the
/// kernel's signature. Outputs must be given here (the typed wrapper allocates them with
/// [`broadcast_shape`]). Chooses the variant (see `plan`), counts it ([`variant_counts`]) and logs
/// it (`log::debug!`, target `cuprum::elementwise`).
///
/// A kernel whose code cuprum cannot check (`ElementwiseKernel` text with raw parameters,
/// [`Kernel::unchecked`]) is refused: it launches only through [`launch_unchecked`].
pub fn launch(
    kernel: &Kernel,
    instance: &[DType],
    args: &[Arg<'_>],
    opts: &Options<'_>,
) -> Result<()> {
    if !kernel.is_checked() {
        return Err(unchecked_code(kernel.name()));
    }
    // SAFETY: the kernel's code stays inside its operands by itself (`Kernel::new`'s contract).
    unsafe { launch_unchecked(kernel, instance, args, opts) }
}

/// The error of a safe launch of a kernel whose code cuprum cannot check.
pub(crate) fn unchecked_code(name: &str) -> Error {
    invalid(
        name,
        "its CUDA C text indexes raw arguments, which cuprum cannot check: launch it with the unsafe \
         `run_raw` (`unsafe { kernel.call()...run_raw() }`), after making sure every index stays \
         inside its array"
            .into(),
    )
}

/// [`launch`] for any kernel, including one whose code cuprum cannot check.
///
/// # Safety
///
/// Unless the kernel is checked ([`Kernel::is_checked`]), its code must access its raw
/// arguments only within their sizes for these arguments (the operands themselves are checked
/// against the signature as in [`launch`]).
pub unsafe fn launch_unchecked(
    kernel: &Kernel,
    instance: &[DType],
    args: &[Arg<'_>],
    opts: &Options<'_>,
) -> Result<()> {
    // SAFETY: the launch's parameters are those `staged_launch` checked and built (see there); raw
    // arguments are indexed within their size: this function's caller's contract.
    staged_launch(kernel, instance, args, opts, |func, cfg, params| unsafe {
        crate::launch::launch(func, cfg, params)
    })
}

/// Everything [`launch`] does on the host except the launch itself: what the bench's host-cost
/// breakdown times (`cuprum-bench`). Launches nothing.
#[doc(hidden)]
pub fn host_work_only(
    kernel: &Kernel,
    instance: &[DType],
    args: &[Arg<'_>],
    opts: &Options<'_>,
) -> Result<()> {
    staged_launch(kernel, instance, args, opts, |func, cfg, params| {
        std::hint::black_box((func, cfg, params));
        Ok(())
    })
}

/// Checks, plans, finds the stream and the kernel, and hands the launch to `go` instead of
/// launching (for [`launch_unchecked`], and for the bench, which launches the same kernel bare
/// with these parameters: `cuprum-bench`'s host-cost rows). The parameters
/// `params` hold one value per parameter of the entry point `symbol(variant)` of `func` in the
/// layout of its C struct (params.rs), in the order of the kernel's signature, which the code
/// generator wrote with the kernel (`Kernel::new`'s contract); every array was checked to have
/// the parameter's dtype and to be on the launch's device, and the plan's strides and loop shape
/// keep every access inside the arrays' layouts (outputs have the loop shape; inputs broadcast to
/// it); raw arguments are indexed by the kernel's own code (checked for kernels written in
/// Rust; CUDA C text is [`launch_unchecked`]'s caller's contract).
#[doc(hidden)]
pub fn staged_launch(
    kernel: &Kernel,
    instance: &[DType],
    args: &[Arg<'_>],
    opts: &Options<'_>,
    go: impl FnOnce(&KernelFunction, &LaunchConfig<'_>, &ArgList) -> Result<()>,
) -> Result<()> {
    let name = kernel.name();
    let Signature::Elementwise(signature) = kernel.signature() else {
        return Err(invalid(
            name,
            format!(
                "`{name}` is a {} kernel, not an elementwise kernel",
                kernel.kind()
            ),
        ));
    };
    // The parameters are built in place here (about 1.2 KB inline): moving them out of
    // `prepare` was a fifth of its time.
    let mut params = ArgList::new();
    let Some(call) = prepare(name, signature, instance, args, opts, &mut params)? else {
        return Ok(());
    };
    let on = match (opts.stream, call.device) {
        (Some(s), _) => s.device().ordinal(),
        (None, Some(d)) => d,
        (None, None) => Device::current_ordinal(),
    };
    if on == crate::device::CPU_ORDINAL {
        // The configuration a GPU launch would check (`launch::launch`), against the CPU
        // device's limits: the same answer on both devices.
        let limits = crate::function::LaunchLimits::cpu_device();
        crate::launch::check_config(name, call.grid.into(), call.block.into(), 0, &limits)?;
        return launch_on_host(kernel, signature, instance, args, opts);
    }
    let Prepared {
        variant,
        vec,
        grid,
        block,
        device,
    } = call;
    let current;
    let stream = match (opts.stream, device) {
        (Some(s), _) => s,
        (None, d) => {
            current = Stream::current_ref(Device::get_static(d.unwrap_or_else(Device::current_ordinal))?)?;
            &*current
        }
    };
    let device = stream.device();
    let func = kernel.function(device.ordinal(), instance, Some(variant.into()))?;
    let cfg = LaunchConfig::new(grid, block).stream(stream);
    COUNTS[variant.index()].fetch_add(1, Ordering::Relaxed);
    if vec > 1 {
        COUNTS[4].fetch_add(1, Ordering::Relaxed);
    }
    go(func, &cfg, &params)
}

/// A checked call whose arrays are on the CPU device: the kernel's host entry runs its body
/// once per element (`cpu::ElementLoop`, docs/cpu.md).
fn launch_on_host(kernel: &Kernel, signature: &[Param], instance: &[DType], args: &[Arg<'_>], opts: &Options<'_>) -> Result<()> {
    let name = kernel.name();
    let entry = crate::cpu::launch::elementwise_entry(name, kernel.host_entry())?;
    let shape = broadcast_shape(name, args, opts.size)?;
    let operands: Vec<PlanOperand<'_>> = args.iter().map(plan_operand).collect();
    // Scalar items (width 1): the loop's dims and strides in elements.
    let plan = plan::plan(&shape, &operands, 1)?;
    let dims = plan.dims.iter().map(|&d| d as usize).collect();
    crate::cpu::launch::run_elementwise(name, entry, signature, instance, args, dims, &plan.strides)
}

/// [`prepare`]'s common call, planned without the planner: every argument an input or output
/// array of one shape, each C-contiguous, or a scalar input, with no loop size given; the
/// arguments were checked against the signature. Plans what `plan::plan_loop` plans for it (one
/// collapsed axis: the `contig` variant, vector items when every array is aligned to them) in a
/// fraction of the instructions: this is most calls' host work (`None`: not such a call).
fn prepare_contiguous(
    signature: &[Param],
    instance: &[DType],
    args: &[Arg<'_>],
    block: u32,
    device: Option<usize>,
    params: &mut ArgList,
) -> Option<Option<Prepared>> {
    let mut shape: Option<&[usize]> = None;
    for a in args {
        match a {
            Arg::In(x) | Arg::Out(x) => {
                if *shape.get_or_insert(x.shape) != x.shape || !crate::array::shape::is_c_contiguous(x.shape, x.strides) {
                    return None;
                }
            }
            Arg::Scalar(_) => {}
            Arg::Raw(_) => return None,
        }
    }
    let size = shape?.iter().product::<usize>() as u64;
    if size == 0 {
        return Some(None);
    }
    let elem = |p: &Param| p.ty.resolve(instance).unwrap_or(ElemType::Scalar(DType::U8));
    let width = plan::vec_width(signature.iter().map(|p| elem(p).size()));
    let aligned = args.iter().all(|a| match a {
        Arg::In(x) | Arg::Out(x) => x.ptr % (width as u64 * x.elem.size() as u64).min(16) == 0,
        _ => true,
    });
    let vec = if width > 1 && aligned { width } else { 1 };
    let v = Variant::Contig;
    for (p, a) in signature.iter().zip(args) {
        match a {
            Arg::In(x) => params.input_of(v, elem(p), x.ptr, None, None),
            Arg::Scalar(x) => {
                let e = elem(p);
                let value = e.dtype().map(|d| x.cast(d).to_bytes().0);
                params.input_of(v, e, 0, None, value)
            }
            Arg::Out(x) => params.output_of(v, x.ptr, &[]),
            Arg::Raw(_) => unreachable!("no raw argument (checked above)"),
        }
    }
    let items = size / vec as u64;
    params.loop_of(v, size, items, &[size], vec, 0);
    let grid = plan::grid_for(items, block);
    log::debug!(target: "cuprum::elementwise", "contiguous loop of {size} elements: variant contig (vector width {vec}), grid {grid} x {block}");
    Some(Some(Prepared {
        variant: v,
        vec,
        grid,
        block,
        device,
    }))
}

/// A checked and planned call (its parameters in the caller's `ArgList`): what is left is
/// finding the stream and the kernel, and launching. Only what that needs (the plan itself is
/// 170 bytes: moving it out was a fifth of `prepare`'s time).
pub(crate) struct Prepared {
    variant: Variant,
    /// Vector width of the loop's accesses.
    vec: u32,
    grid: u32,
    block: u32,
    /// The arrays' device (`None`: no array argument).
    device: Option<usize>,
}

/// The host side of [`launch`] that needs no GPU: checks, loop shape, plan, and the parameters,
/// appended to `params` (empty when given). `Ok(None)`: the loop is empty (nothing to launch).
/// The steps, in the order their errors take precedence: the argument count and block size, each
/// argument against its parameter ([`check_arguments`]), the common contiguous call without the
/// planner ([`prepare_contiguous`]), the loop shape and the outputs ([`checked_loop_shape`]), the
/// plan, the stream's device ([`check_stream`]), the parameters ([`write_params`]).
pub(crate) fn prepare(
    name: &str,
    signature: &[Param],
    instance: &[DType],
    args: &[Arg<'_>],
    opts: &Options<'_>,
    params: &mut ArgList,
) -> Result<Option<Prepared>> {
    if args.len() != signature.len() {
        return Err(invalid(
            name,
            format!(
                "{} arguments were given but the kernel has {} parameters (outputs included)",
                args.len(),
                signature.len()
            ),
        ));
    }
    let block = block_size(name, opts)?;
    let device = check_arguments(name, signature, instance, args)?;
    if opts.size.is_none() && opts.stream.is_none_or(|s| Some(s.device().ordinal()) == device) {
        if let Some(prepared) = prepare_contiguous(signature, instance, args, block, device, params) {
            return Ok(prepared);
        }
    }
    let shape = checked_loop_shape(name, signature, args, opts.size)?;
    let size: usize = shape.iter().product();
    if size == 0 {
        return Ok(None);
    }
    // Every non-raw parameter's size (the kernel's `vec_width` sees the same operands).
    let sizes = signature
        .iter()
        .filter(|p| p.role != Role::Raw)
        .filter_map(|p| p.ty.resolve(instance))
        .map(ElemType::size);
    let width = plan::vec_width(sizes);
    let plan = plan::plan_loop(&shape, args.iter().map(plan_operand), width)?;
    check_stream(name, opts, device)?;
    write_params(name, signature, instance, args, &plan, params)?;
    let v = plan.variant;
    let grid = plan.grid(block);
    log::debug!(
        target: "cuprum::elementwise",
        "{name}: variant {} (vector width {}), loop {:?} of {} elements, grid {grid} x {block}",
        v.name(),
        plan.vec,
        plan.dims(),
        plan.size,
    );
    Ok(Some(Prepared {
        variant: v,
        vec: plan.vec,
        grid,
        block,
        device,
    }))
}

/// The block size of a launch: the options' (not 0), else [`DEFAULT_BLOCK`].
#[inline]
fn block_size(name: &str, opts: &Options<'_>) -> Result<u32> {
    match opts.block_size {
        Some(0) => Err(invalid(name, "the block size is 0: give at least 1 thread per block, or leave it unset for the default".into())),
        Some(b) => Ok(b),
        None => Ok(DEFAULT_BLOCK),
    }
}

/// Checks every argument against its parameter (role, element type, struct scalars) and that
/// the arrays share one device, which it returns (`None`: no array argument).
#[inline]
fn check_arguments(name: &str, signature: &[Param], instance: &[DType], args: &[Arg<'_>]) -> Result<Option<usize>> {
    let mut device: Option<usize> = None;
    for (k, (p, a)) in signature.iter().zip(args).enumerate() {
        let elem = p.ty.resolve(instance).ok_or_else(|| {
            invalid(name, format!("parameter `{}` is generic parameter {:?} but the instance {instance:?} has no such entry", p.name, p.ty))
        })?;
        let ok = matches!(
            (p.role, a),
            (Role::In, Arg::In(_) | Arg::Scalar(_))
                | (Role::Raw, Arg::Raw(_))
                | (Role::InOut | Role::Out, Arg::Out(_))
        );
        if !ok {
            let want = match p.role {
                Role::In => "an input array or a scalar",
                Role::Raw => "a raw array",
                Role::InOut | Role::Out => "an output array",
            };
            return Err(invalid(
                name,
                format!(
                    "argument {k} (`{}`) must be {want}, found {}",
                    p.name,
                    a.describe()
                ),
            ));
        }
        if let (Arg::Scalar(v), ElemType::Struct(s)) = (a, elem) {
            return Err(invalid(
                name,
                format!(
                    "argument {k} (`{}`) is of the struct type `{}`, but a scalar {v:?} was given: struct \
                     inputs must be arrays; pass an `&Array<{}>` (for one value everywhere, a one-element \
                     array broadcasts)",
                    p.name, s.name, s.name
                ),
            ));
        }
        if let Some(x) = a.array() {
            if x.elem != elem {
                return Err(Error::DtypeMismatch {
                    context: format!("argument `{}` of elementwise kernel `{name}`", p.name),
                    expected: elem,
                    found: x.elem,
                });
            }
            match device {
                None => device = Some(x.device),
                Some(d) if d != x.device => {
                    return Err(Error::DeviceMismatch {
                        context: format!("argument `{}` of elementwise kernel `{name}`", p.name),
                        expected: d,
                        found: x.device,
                    });
                }
                _ => {}
            }
        }
    }
    Ok(device)
}

/// The loop shape (the arguments' broadcast, or the given size), with each output checked to
/// have it and not to be a broadcast view.
#[inline]
fn checked_loop_shape<'a>(name: &str, signature: &[Param], args: &[Arg<'a>], size: Option<usize>) -> Result<Cow<'a, [usize]>> {
    let shape = match loop_shape(name, args, size) {
        Ok(s) => s,
        // Inputs that broadcast with an output that does not: report the output.
        Err(e @ Error::Broadcast { .. }) => {
            return Err(output_mismatch(name, signature, args).unwrap_or(e));
        }
        Err(e) => return Err(e),
    };
    for (p, a) in signature.iter().zip(args) {
        if let Arg::Out(x) = a {
            if x.shape != &*shape {
                return Err(Error::ShapeMismatch {
                    context: format!(
                        "output `{}` of elementwise kernel `{name}` (an output must have the broadcast \
                         shape of the arguments; pass one of that shape, or leave it out to have it allocated)",
                        p.name
                    ),
                    expected: shape.to_vec(),
                    found: x.shape.to_vec(),
                });
            }
            if x.shape
                .iter()
                .zip(x.strides)
                .any(|(&d, &s)| d > 1 && s == 0)
            {
                return Err(invalid(
                    name,
                    format!(
                        "output `{}` is a broadcast view (stride 0 on an axis of extent > 1, strides {:?}): every element would be written by several threads; pass a contiguous output",
                        p.name, x.strides
                    ),
                ));
            }
        }
    }
    Ok(shape)
}

/// Checks that the stream given in the options is on the arrays' device.
#[inline]
fn check_stream(name: &str, opts: &Options<'_>, device: Option<usize>) -> Result<()> {
    if let (Some(s), Some(d)) = (opts.stream, device) {
        if s.device().ordinal() != d {
            return Err(Error::DeviceMismatch {
                context: format!("the stream of elementwise kernel `{name}`"),
                expected: d,
                found: s.device().ordinal(),
            });
        }
    }
    Ok(())
}

/// Appends each argument's parameters for the planned variant, then the loop's, to `params`.
#[inline]
fn write_params(name: &str, signature: &[Param], instance: &[DType], args: &[Arg<'_>], plan: &LoopPlan, params: &mut ArgList) -> Result<()> {
    let v = plan.variant;
    for (p, a) in signature.iter().zip(args) {
        // Resolved and checked by `check_arguments`.
        let elem =
            p.ty.resolve(instance)
                .unwrap_or(ElemType::Scalar(DType::U8));
        let strides = plan.strides(&plan_operand(a));
        let strides = strides.as_ref().map(|(st, n)| &st[..*n]);
        match a {
            Arg::In(x) => params.input_of(v, elem, x.ptr, strides, None),
            // A scalar's parameter is a dtype (a struct parameter was rejected above).
            Arg::Scalar(x) => {
                let value = elem.dtype().map(|d| x.cast(d).to_bytes().0);
                params.input_of(v, elem, 0, None, value)
            }
            Arg::Out(x) => params.output_of(v, x.ptr, strides.unwrap_or(&[])),
            Arg::Raw(x) => params
                .raw(x.ptr, x.shape, x.strides)
                .map_err(|e| invalid(name, e))?,
        }
    }
    params.loop_of(v, plan.size, plan.items, plan.dims(), plan.vec, plan.bcast);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::KernelArgs;
    use crate::launch::operand::{ArrayArg, Value};
    use crate::launch::signature::ParamType;

    /// The launch's parameters (allocation-free planning) equal those built from the public
    /// [`plan::plan`] over the broadcast shape, for broadcast, strided, transposed and
    /// contiguous layouts and a scalar.
    #[test]
    #[allow(clippy::type_complexity)]
    fn parameters_match_the_public_plan() {
        let sig = [
            Param::new("x", Role::In, ParamType::Generic(0)),
            Param::new("y", Role::In, ParamType::Generic(0)),
            Param::new(
                "s",
                Role::In,
                ParamType::Fixed(ElemType::Scalar(DType::F64)),
            ),
            Param::new("out", Role::Out, ParamType::Generic(0)),
        ];
        // (x shape, x strides, y shape, y strides, out shape)
        let cases: [(&[usize], &[isize], &[usize], &[isize], &[usize]); 8] = [
            (&[4, 6], &[6, 1], &[6], &[1], &[4, 6]),
            (&[4, 6], &[1, 4], &[4, 6], &[6, 1], &[4, 6]),
            (&[2, 1, 8], &[8, 8, 1], &[3, 1], &[1, 1], &[2, 3, 8]),
            (&[5, 3, 4], &[24, 8, 2], &[5, 3, 4], &[12, 4, 1], &[5, 3, 4]),
            (&[1, 64], &[64, 1], &[1, 64], &[64, 1], &[1, 64]),
            // Contiguous and of one shape: planned by `prepare_contiguous`.
            (&[3, 5, 7], &[35, 7, 1], &[3, 5, 7], &[35, 7, 1], &[3, 5, 7]),
            (&[1], &[1], &[1], &[1], &[1]),
            (
                &[2, 3, 2, 3, 2, 3, 2, 3, 2, 3],
                &[0; 10],
                &[3],
                &[1],
                &[2, 3, 2, 3, 2, 3, 2, 3, 2, 3],
            ),
        ];
        for (xs, xt, ys, yt, os) in cases {
            let ot = crate::array::shape::c_strides(os);
            let arr = |ptr, shape, strides| ArrayArg {
                ptr,
                elem: ElemType::Scalar(DType::F32),
                shape,
                strides,
                device: 0, host_lock: None,
            };
            let args = [
                Arg::In(arr(0x7000_0000, xs, xt)),
                Arg::In(arr(0x7000_1000, ys, yt)),
                Arg::Scalar(Value::F64(2.5)),
                Arg::Out(arr(0x7000_2000, os, &ot)),
            ];
            let mut got_params = ArgList::new();
            let got = prepare("k", &sig, &[DType::F32], &args, &Options::default(), &mut got_params);
            let shape = broadcast_shape("k", &args, None).unwrap();
            let ops: Vec<PlanOperand<'_>> = args.iter().map(plan_operand).collect();
            let want = plan::plan(&shape, &ops, plan::vec_width([4, 8]));
            let (got, want) = match (got, want) {
                (Ok(g), Ok(w)) => (g.unwrap(), w),
                (Err(g), Err(w)) => {
                    assert_eq!(g.to_string(), w.to_string());
                    continue;
                }
                (g, w) => panic!(
                    "{xs:?}: prepare {:?}, plan {:?}",
                    g.map(|_| ()),
                    w.map(|_| ())
                ),
            };
            let mut params = ArgList::new();
            params.input(
                &want,
                DType::F32,
                0x7000_0000,
                want.strides[0].as_deref(),
                None,
            );
            params.input(
                &want,
                DType::F32,
                0x7000_1000,
                want.strides[1].as_deref(),
                None,
            );
            params.input(
                &want,
                DType::F64,
                0,
                None,
                Some(Value::F64(2.5).to_bytes().0),
            );
            params.output(&want, 0x7000_2000, want.strides[3].as_deref().unwrap());
            params.loop_shape(&want);
            assert_eq!(got_params.sizes(), params.sizes(), "{xs:?} {ys:?}");
            for k in 0..5 {
                assert_eq!(
                    got_params.bytes(k),
                    params.bytes(k),
                    "{xs:?} {ys:?} parameter {k}"
                );
            }
            assert_eq!(
                (got.variant, got.grid),
                (want.variant, want.grid(256))
            );
        }
    }

    /// The host cost of [`prepare`] (checks, plan, parameters and their pointer array) for the
    /// bench's call, `squared_diff(x, y) -> out` on 1-element f32 arrays.
    /// `cargo test --release -p cuprum-runtime --lib -- --ignored --nocapture host_cost`
    #[test]
    #[ignore = "CPU timing; run with --release"]
    fn host_cost_of_a_one_element_call() {
        let sig = [
            Param::new("x", Role::In, ParamType::Generic(0)),
            Param::new("y", Role::In, ParamType::Generic(0)),
            Param::new("out", Role::Out, ParamType::Generic(0)),
        ];
        let shape = [1usize];
        let strides = [1isize];
        let arr = |ptr| ArrayArg {
            ptr,
            elem: ElemType::Scalar(DType::F32),
            shape: &shape,
            strides: &strides,
            device: 0, host_lock: None,
        };
        let args = [
            Arg::In(arr(0x7000_0000)),
            Arg::In(arr(0x7000_0200)),
            Arg::Out(arr(0x7000_0400)),
        ];
        let opts = Options::default();
        let run = |n: usize| {
            let t = crate::inline_list::cpu_ns();
            for _ in 0..n {
                let mut params = ArgList::new();
                let p = prepare(
                    "squared_diff",
                    &sig,
                    &[DType::F32],
                    std::hint::black_box(&args),
                    &opts,
                    &mut params,
                )
                .unwrap()
                .unwrap();
                params.with_params(|ptrs| std::hint::black_box(ptrs.len()));
                std::hint::black_box(&p);
            }
            (crate::inline_list::cpu_ns() - t) as f64 / n as f64
        };
        run(100_000);
        let mut t: Vec<f64> = (0..5).map(|_| run(1_000_000)).collect();
        t.sort_by(f64::total_cmp);
        println!(
            "elementwise prepare, 1-element f32 (x - y)^2: {:.0} ns of CPU time per call (median of 5 x 1e6)",
            t[2]
        );
    }
}

