//! The reduction launch: checks the arguments, plans, finds the kernel variant, and launches it
//! with the parameters of `abi/include/cuprum/reduction.h` (mirrored here as `#[repr(C)]` structs).
//!
//! Split reductions combine their parts through scratch memory kept per (thread, device,
//! stream): partial slots, and counters that are zero between launches (zeroed once when the
//! scratch is allocated; each kernel resets the counters it used). Launches on one stream run in
//! order, so they can share it.

use std::borrow::Cow;
use std::cell::RefCell;
use std::sync::Arc;

use super::plan::{self, DeviceShape, LaunchPlan, MAX_NDIM, OperandStrides};
use super::{Axes, ReductionInfo};
use crate::DType;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::function::KernelFunction;
use crate::inline_list::InlineList;
use crate::launch::operand::{Arg, ArrayArg};
use crate::launch::signature::{ReductionSignature, Role, Signature};
use crate::launch::{ArgList, DeviceRepr, LaunchConfig};
use crate::memory::DeviceBuffer;
use crate::registry::Kernel;
use crate::stream::Stream;

/// Per-call options.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options<'s> {
    /// The stream; `None`: the current stream of the arrays' device.
    pub stream: Option<&'s Stream>,
    /// The reduction this call's result feeds, of the same instance over the same loop and
    /// axes (so the same launch variant): loaded in the background while this call loads its
    /// own kernel, when it is not loaded yet ([`ReductionCall::prefetch`](super::ReductionCall::prefetch)).
    pub prefetch: Option<&'static crate::registry::Kernel>,
}

/// `cuprum::Shape`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct CShape {
    size: u64,
    ndim: i32,
    pad: i32,
    dims: [i64; MAX_NDIM],
}

impl CShape {
    fn new(size: u64, dims: &[u64]) -> CShape {
        let mut s = CShape {
            size,
            ndim: dims.len() as i32,
            ..CShape::default()
        };
        for (d, &e) in s.dims.iter_mut().zip(dims) {
            *d = e as i64;
        }
        s
    }
}

/// `cuprum::ReduceArgs`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct CReduceArgs {
    oshape: CShape,
    rshape: CShape,
    loop_size: u64,
    partials: u64,
    counters: u64,
    splits: u32,
    contiguous: u32,
    slot_bytes: u32,
    broadcast: u32,
}

/// `cuprum::ReduceOperand<T>`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct COperand {
    ptr: u64,
    ostrides: [i64; MAX_NDIM],
    rstrides: [i64; MAX_NDIM],
}

/// `cuprum::Raw<T>`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct CRaw {
    ptr: u64,
    size: u64,
    ndim: i32,
    contiguous: i32,
    shape: [i64; MAX_NDIM],
    strides: [i64; MAX_NDIM],
}

// SAFETY: `#[repr(C)]` structs of u64/i64/i32 fields in the order and with the padding of the C
// structs they mirror (`cuprum::Shape`, `ReduceArgs`, `ReduceOperand<T>`, `Raw<T>`: every field
// is naturally aligned there too, and `pad` fields stand where C pads); plain data.
unsafe impl DeviceRepr for CShape {}
// SAFETY: as above.
unsafe impl DeviceRepr for CReduceArgs {}
// SAFETY: as above.
unsafe impl DeviceRepr for COperand {}
// SAFETY: as above.
unsafe impl DeviceRepr for CRaw {}

fn operand(ptr: u64, s: &OperandStrides) -> COperand {
    COperand {
        ptr,
        ostrides: s.ostrides,
        rstrides: s.rstrides,
    }
}

fn raw_param(kernel: &str, a: &ArrayArg<'_>) -> Result<CRaw> {
    if a.shape.len() > MAX_NDIM {
        return Err(Error::Unsupported {
            what: format!(
                "raw argument of kernel `{kernel}` with {} dimensions (at most {MAX_NDIM})",
                a.shape.len()
            ),
        });
    }
    let mut r = CRaw {
        ptr: a.ptr,
        size: a.shape.iter().product::<usize>() as u64,
        ndim: a.shape.len() as i32,
        contiguous: crate::array::shape::is_c_contiguous(a.shape, a.strides) as i32,
        shape: [0; MAX_NDIM],
        strides: [0; MAX_NDIM],
    };
    for k in 0..a.shape.len() {
        r.shape[k] = a.shape[k] as i64;
        r.strides[k] = a.strides[k] as i64;
    }
    Ok(r)
}

/// Scratch memory of one (device, stream) on this thread: counters first, then partial slots.
struct Scratch {
    device: usize,
    stream: usize,
    counters: usize,
    /// Shared with the graphs whose recorded launches use it (`crate::capture`): a grown
    /// scratch's old buffer lives on with them.
    buf: Arc<DeviceBuffer>,
}

thread_local! {
    static SCRATCH: RefCell<Vec<Scratch>> = const { RefCell::new(Vec::new()) };
}

/// Counters are 4 bytes; the slots start 256-byte aligned after them.
fn counter_bytes(n: usize) -> usize {
    (n * 4).div_ceil(256) * 256
}

/// `(partials, counters)` device addresses with room for `slots` slots of `slot_bytes` and
/// `counters` zeroed counters, for launches on `stream`, and the buffer to hold until the launch
/// is queued when it is not the thread's cached one: a foreign stream (`Stream::from_raw`) gets
/// a buffer per launch, returned to the pool in its order after the launch, because its owner
/// may destroy it once cuprum's work on it is done, and a cached buffer would outlive it.
fn scratch(
    stream: &Stream,
    slots: usize,
    slot_bytes: usize,
    counters: usize,
) -> Result<(u64, u64, Option<Arc<DeviceBuffer>>)> {
    if stream.is_foreign() {
        let buf = Arc::new(DeviceBuffer::alloc(counter_bytes(counters) + slots * slot_bytes, stream)?);
        buf.zero(stream)?;
        let (p, c) = (buf.ptr() + counter_bytes(counters) as u64, buf.ptr());
        return Ok((p, c, Some(buf)));
    }
    let key = (stream.device().ordinal(), stream.handle() as usize);
    SCRATCH.with(|cell| {
        let mut all = cell.borrow_mut();
        let need_slots = slots * slot_bytes;
        if let Some(s) = all.iter().find(|s| (s.device, s.stream) == key) {
            let base = counter_bytes(s.counters);
            if s.counters >= counters && s.buf.len_bytes() - base >= need_slots {
                crate::capture::keep(&s.buf);
                return Ok((s.buf.ptr() + base as u64, s.buf.ptr(), None));
            }
        }
        // Grow (at least double) and zero the counters; the old buffer goes back to the pool in
        // stream order, after the launches that use it.
        let old = all.iter().position(|s| (s.device, s.stream) == key);
        let (old_counters, old_slots) = match old {
            Some(i) => {
                let s = &all[i];
                (s.counters, s.buf.len_bytes() - counter_bytes(s.counters))
            }
            None => (0, 0),
        };
        let counters = counters.max(old_counters * 2).max(1024);
        let slot_room = need_slots.max(old_slots * 2).max(64 * 1024);
        let buf = Arc::new(DeviceBuffer::alloc(counter_bytes(counters) + slot_room, stream)?);
        buf.write_bytes(0, &vec![0u8; counter_bytes(counters)], stream)?;
        let base = counter_bytes(counters) as u64;
        let (p, c) = (buf.ptr() + base, buf.ptr());
        let entry = Scratch {
            device: key.0,
            stream: key.1,
            counters,
            buf,
        };
        match old {
            Some(i) => all[i] = entry,
            None => all.push(entry),
        }
        Ok((p, c, None))
    })
}

/// Bytes of one partial slot for an accumulator of `acc_bytes`: at least
/// `sizeof(cuprum::Partial<A>)` (the value, then a 4-byte flag, padded to `A`'s alignment), and a
/// multiple of that alignment so that every slot is aligned. An accumulator of 16 bytes or more
/// may be aligned to 16 (`cuprum::complex<double>` is: its `Partial` is 32 bytes), so its slots
/// are rounded to 16; smaller ones are aligned to at most 8.
fn slot_bytes(acc_bytes: usize) -> usize {
    let align = if acc_bytes >= 16 { 16 } else { 8 };
    (acc_bytes + 4).div_ceil(align) * align
}

/// Launches reduction `kernel` (instance `instance`) of `inputs` over `axes` into `out`.
///
/// Checks, with nothing launched on an error: the operands against the kernel's signature
/// (number, kind: `Arg::In` or `Arg::Raw` as the map's parameters are, `Arg::Out` for the
/// output, element types for `instance`); the inputs broadcast together; the axes are in range
/// and distinct; `out` has the output shape ([`super::output_shape`]); every array is on one
/// device; an empty reduction has an identity. An output with no element launches nothing. A
/// kernel whose code cuprum cannot check (`ReductionKernel` text with raw parameters) is
/// refused: it launches only through [`launch_unchecked`].
#[allow(clippy::too_many_arguments)]
pub fn launch(
    kernel: &Kernel,
    instance: &[DType],
    inputs: &[Arg<'_>],
    out: Arg<'_>,
    axes: &Axes,
    keepdims: bool,
    opts: &Options<'_>,
) -> Result<()> {
    if !kernel.is_checked() {
        return Err(crate::elementwise::launch::unchecked_code(kernel.name()));
    }
    // SAFETY: the kernel's code stays inside its operands by itself (`Kernel::new`'s contract).
    unsafe { launch_unchecked(kernel, instance, inputs, out, axes, keepdims, opts) }
}

/// The operands checked against the kernel's signature: the output array and what the launch
/// needs to know about the instance.
fn check_operands<'a>(
    name: &str,
    sig: &ReductionSignature,
    instance: &[DType],
    inputs: &[Arg<'_>],
    out: Arg<'a>,
) -> Result<(ArrayArg<'a>, ReductionInfo)> {
    let invalid = |detail: String| Error::InvalidLaunch {
        kernel: name.to_string(),
        detail,
    };
    // `what` is formatted only for the error (this runs on every launch).
    let resolve = |ty: crate::launch::signature::ParamType, what: &dyn Fn() -> String| {
        ty.resolve(instance).ok_or_else(|| {
            invalid(format!(
                "{} is of generic parameter {ty:?} but the instance {instance:?} has no such entry",
                what()
            ))
        })
    };
    if inputs.len() != sig.params.len() {
        return Err(invalid(format!(
            "{} arguments were given but the reduction's map has {} parameters",
            inputs.len(),
            sig.params.len()
        )));
    }
    for (k, (p, a)) in sig.params.iter().zip(inputs).enumerate() {
        let x = match (p.role, a) {
            (Role::Raw, Arg::Raw(x)) | (Role::In, Arg::In(x)) => x,
            (role, _) => {
                let want = if role == Role::Raw {
                    "a raw array (`Arg::raw`)"
                } else {
                    "an input array (`Arg::input`)"
                };
                return Err(invalid(format!(
                    "argument {k} (`{}`) must be {want}, found {}",
                    p.name,
                    a.describe()
                )));
            }
        };
        let elem = resolve(p.ty, &|| format!("parameter `{}`", p.name))?;
        if x.elem != elem {
            return Err(Error::DtypeMismatch {
                context: format!("argument `{}` of reduction `{name}`", p.name),
                expected: elem,
                found: x.elem,
            });
        }
    }
    let Arg::Out(o) = out else {
        return Err(invalid(format!(
            "the output must be an output array (`Arg::output`), found {}",
            out.describe()
        )));
    };
    let elem = resolve(sig.out, &|| "the output".into())?;
    if o.elem != elem {
        return Err(Error::DtypeMismatch {
            context: format!("the output of reduction `{name}`"),
            expected: elem,
            found: o.elem,
        });
    }
    let acc_bytes = resolve(sig.acc, &|| "the accumulator".into())?.size();
    Ok((
        o,
        ReductionInfo {
            has_identity: sig.has_identity,
            acc_bytes,
            positional: sig.positional,
        },
    ))
}

/// [`launch`] for any reduction, including one whose code cuprum cannot check.
///
/// # Safety
///
/// Unless the kernel is checked ([`Kernel::is_checked`]), its code must access its raw
/// arguments only within their sizes for these arguments (the operands themselves are checked
/// as in [`launch`]).
#[allow(clippy::too_many_arguments)]
pub unsafe fn launch_unchecked(
    kernel: &Kernel,
    instance: &[DType],
    inputs: &[Arg<'_>],
    out: Arg<'_>,
    axes: &Axes,
    keepdims: bool,
    opts: &Options<'_>,
) -> Result<()> {
    // SAFETY: the parameters are those `staged_launch` checked and built (see `launch_plan`);
    // raw arguments are indexed within their sizes: this function's caller's contract.
    staged_launch(
        kernel,
        instance,
        inputs,
        out,
        axes,
        keepdims,
        opts,
        |func, cfg, params| unsafe { crate::launch::launch(func, cfg, params) },
    )
}

/// Everything [`launch`] does on the host except the launch itself: what the bench's host-cost
/// breakdown times (`cuprum-bench`). Launches nothing.
#[doc(hidden)]
#[allow(clippy::too_many_arguments)]
pub fn host_work_only(
    kernel: &Kernel,
    instance: &[DType],
    inputs: &[Arg<'_>],
    out: Arg<'_>,
    axes: &Axes,
    keepdims: bool,
    opts: &Options<'_>,
) -> Result<()> {
    staged_launch(
        kernel,
        instance,
        inputs,
        out,
        axes,
        keepdims,
        opts,
        |func, cfg, params| {
            std::hint::black_box((func, cfg, params));
            Ok(())
        },
    )
}

/// Checks, plans, finds the stream, the kernel and the scratch, and hands the launch to `go`
/// instead of launching (for [`launch_unchecked`], and for the bench, which launches the same
/// kernel bare with these parameters: `cuprum-bench`'s host-cost rows). What the parameters
/// hold: `launch_plan`.
#[doc(hidden)]
#[allow(clippy::too_many_arguments)]
pub fn staged_launch(
    kernel: &Kernel,
    instance: &[DType],
    inputs: &[Arg<'_>],
    out: Arg<'_>,
    axes: &Axes,
    keepdims: bool,
    opts: &Options<'_>,
    go: impl FnOnce(&KernelFunction, &LaunchConfig<'_>, &ArgList) -> Result<()>,
) -> Result<()> {
    let name = kernel.name();
    let Signature::Reduction(sig) = kernel.signature() else {
        return Err(Error::InvalidLaunch {
            kernel: name.to_string(),
            detail: format!("`{name}` is a {} kernel, not a reduction", kernel.kind()),
        });
    };
    let (out, info) = check_operands(name, sig, instance, inputs, out)?;
    let info = &info;
    // The device: the given stream's when it is the arrays' (no lookup), else looked up.
    let given = opts
        .stream
        .map(Stream::device)
        .filter(|d| d.ordinal() == out.device);
    let mut looked_up = None;
    let dev = || -> Result<DeviceShape> {
        let d = match given {
            Some(d) => d,
            None => &**looked_up.insert(Device::get_static(out.device)?),
        };
        Ok(DeviceShape {
            multiprocessors: d.multiprocessor_count(),
            blocks_per_sm: 0,
            cc: d.compute_capability(),
        })
    };
    // The parameters are built in place here (about 1.2 KB inline), not moved out of `prepare`.
    let mut params = ArgList::new();
    let Some(mut call) = prepare(name, info, inputs, &out, axes, keepdims, dev, &mut params)? else {
        return Ok(());
    };
    let device = match (looked_up, given) {
        (Some(d), _) | (None, Some(d)) => d,
        (None, None) => unreachable!("prepare asks for the device before planning"),
    };
    if device.is_cpu() {
        if let Some(s) = opts.stream.filter(|s| !s.device().is_cpu()) {
            return Err(Error::DeviceMismatch {
                context: format!("the stream of reduction `{name}`"),
                expected: out.device,
                found: s.device().ordinal(),
            });
        }
        return launch_on_host(kernel, sig, instance, inputs, out, axes, keepdims);
    }
    if let Some(next) = opts.prefetch {
        crate::registry::prefetch(next, device.ordinal(), instance, Some(call.plan.variant().into()));
    }
    if call.plan.splits > 1 {
        // A split reduction sizes its grid to whole waves: plan again with the occupancy of the
        // kernel the first plan picked (its registers decide how many blocks fit on an SM).
        let per_sm = kernel
            .function(device.ordinal(), instance, Some(call.plan.variant().into()))?
            .resident_blocks_per_sm(call.plan.block)?;
        let dev = || {
            Ok(DeviceShape {
                multiprocessors: device.multiprocessor_count(),
                blocks_per_sm: per_sm,
                cc: device.compute_capability(),
            })
        };
        let mut again_params = ArgList::new();
        if let Some(again) = prepare(name, info, inputs, &out, axes, keepdims, dev, &mut again_params)? {
            (call, params) = (again, again_params);
        }
    }
    let current;
    let stream = match opts.stream {
        Some(s) => s,
        None => {
            current = Stream::current_ref(Device::get_static(device.ordinal())?)?;
            &*current
        }
    };
    launch_plan(kernel, info, instance, call, params, device, stream, go)
}

/// A checked reduction whose arrays are on the CPU device: the kernel's host entry runs its map,
/// `reduce` and `post` (`cpu::ReduceLoop`, docs/cpu.md).
#[allow(clippy::too_many_arguments)]
fn launch_on_host(
    kernel: &Kernel,
    sig: &ReductionSignature,
    instance: &[DType],
    inputs: &[Arg<'_>],
    out: ArrayArg<'_>,
    axes: &Axes,
    keepdims: bool,
) -> Result<()> {
    let name = kernel.name();
    let entry = crate::cpu::launch::reduction_entry(name, kernel.host_entry())?;
    let shape = loop_shape(name, inputs)?;
    let mask = plan::reduced_mask(shape.len(), axes)?;
    crate::cpu::launch::run_reduction(name, entry, sig, instance, inputs, out, &shape, &mask, keepdims)
}

fn expected_len(shape: &[usize], mask: &[bool]) -> usize {
    shape
        .iter()
        .zip(mask)
        .filter(|(_, m)| !**m)
        .map(|(d, _)| *d)
        .product()
}

/// A checked and planned reduction (its parameters before `ReduceArgs`, which needs the stream's
/// scratch memory, in the caller's `ArgList`).
pub(crate) struct Prepared {
    plan: LaunchPlan,
}

/// The host side of [`launch`] that needs no GPU: checks, loop shape, plan, and the operand
/// parameters, appended to `params` (empty when given). `dev` is asked for the device's shape
/// once the reduction is known to launch. `Ok(None)`: no output element (nothing to launch).
#[allow(clippy::too_many_arguments)]
pub(crate) fn prepare(
    name: &str,
    info: &ReductionInfo,
    inputs: &[Arg<'_>],
    out: &ArrayArg<'_>,
    axes: &Axes,
    keepdims: bool,
    dev: impl FnOnce() -> Result<DeviceShape>,
    params: &mut ArgList,
) -> Result<Option<Prepared>> {
    let out = *out;
    let shape = loop_shape(name, inputs)?;
    let nd = shape.len();
    let mut mask: InlineList<bool, 32> = InlineList::new();
    mask.extend(nd, false);
    plan::reduced_mask_into(axes, &mut mask)?;
    if !out
        .shape
        .iter()
        .copied()
        .eq(plan::output_dims(&shape, &mask, keepdims))
    {
        return Err(Error::ShapeMismatch {
            context: format!(
                "the output of reduction `{name}` (loop shape {shape:?}, axes {axes:?}, keepdims {keepdims})"
            ),
            expected: plan::output_shape(&shape, &mask, keepdims),
            found: out.shape.to_vec(),
        });
    }
    for a in inputs {
        let Some(a) = a.array() else { continue };
        if a.device != out.device {
            return Err(Error::DeviceMismatch {
                context: format!("the arguments of reduction `{name}`"),
                expected: out.device,
                found: a.device,
            });
        }
    }
    // The output's stride along each loop axis (0 on reduced ones; its own strides cover the
    // kept axes, or every axis with keepdims).
    let mut out_axis: InlineList<i64, 32> = InlineList::new();
    out_axis.extend(nd, 0);
    let mut j = 0;
    for (k, &m) in mask.iter().enumerate() {
        if keepdims {
            out_axis[k] = if m { 0 } else { out.strides[k] as i64 };
        } else if !m {
            out_axis[k] = out.strides[j] as i64;
            j += 1;
        }
    }
    let has_raw = inputs.iter().any(|a| matches!(a, Arg::Raw(_)));
    plan::check_empty(name, &shape, &mask, info.has_identity)?;
    if expected_len(&shape, &mask) == 0 {
        // No output element: nothing to compute (an empty reduction into no output is fine).
        return Ok(None);
    }
    // Operand k < n_in: the k-th strided input, broadcast to the loop shape; n_in: the output.
    let strided = || {
        inputs.iter().filter_map(|a| match a {
            Arg::In(a) => Some(a),
            Arg::Raw(_) | Arg::Scalar(_) | Arg::Out(_) => None,
        })
    };
    let n_in = strided().count();
    let input_stride = |a: &ArrayArg<'_>, ax: usize| -> i64 {
        let pad = nd - a.shape.len();
        if ax >= pad && a.shape[ax - pad] == shape[ax] {
            a.strides[ax - pad] as i64
        } else {
            0
        }
    };
    let stride = |k: usize, ax: usize| -> i64 {
        if k == n_in {
            out_axis[ax]
        } else {
            strided().nth(k).map_or(0, |a| input_stride(a, ax))
        }
    };
    let plan = plan::plan_with(
        name,
        &shape,
        n_in,
        &stride,
        &mask,
        // Reordering the axes by stride changes which element a loop index names: not for maps
        // that read it, nor for raw arguments (indexed by the map, typically by the index).
        !has_raw && !info.positional,
        info.has_identity,
        dev()?,
    )?;
    for a in inputs {
        match a {
            Arg::In(a) => params.push_repr(operand(a.ptr, &plan.operand(|ax| input_stride(a, ax)))),
            Arg::Raw(a) => params.push_repr(raw_param(name, a)?),
            Arg::Scalar(_) | Arg::Out(_) => {
                return Err(Error::InvalidLaunch {
                    kernel: name.to_string(),
                    detail: format!("a reduction's map takes arrays, not {}", a.describe()),
                });
            }
        }
    }
    params.push_repr(operand(out.ptr, &plan.operand(|ax| out_axis[ax])));
    Ok(Some(Prepared { plan }))
}

/// The shape of the output of a reduction of `inputs` over `axes` (CuPy's rules), for the
/// caller to allocate it; an error for an invalid or repeated axis.
pub fn output_shape(inputs: &[Arg<'_>], axes: &Axes, keepdims: bool) -> Result<Vec<usize>> {
    let shape = super::loop_shape("reduction", inputs)?;
    let mask = plan::reduced_mask(shape.len(), axes)?;
    Ok(plan::output_shape(&shape, &mask, keepdims))
}

/// The broadcast shape of the non-raw inputs ([`super::loop_shape`]), borrowed when they all
/// have one shape (no broadcasting to compute).
fn loop_shape<'a>(kernel: &str, inputs: &[Arg<'a>]) -> Result<Cow<'a, [usize]>> {
    let mut shapes = inputs.iter().filter_map(|a| match a {
        Arg::In(a) => Some(a.shape),
        Arg::Raw(_) | Arg::Scalar(_) | Arg::Out(_) => None,
    });
    if let Some(first) = shapes.next() {
        if shapes.all(|s| s == first) {
            return Ok(Cow::Borrowed(first));
        }
    }
    super::loop_shape(kernel, inputs).map(Cow::Owned)
}

/// `ReduceArgs` of a plan with its scratch memory.
fn reduce_args(plan: &LaunchPlan, partials: u64, counters: u64, slot: usize) -> CReduceArgs {
    CReduceArgs {
        oshape: CShape::new(plan.outs, plan.o.dims()),
        rshape: CShape::new(plan.red, plan.r.dims()),
        loop_size: plan.outs * plan.red,
        partials,
        counters,
        splits: plan.splits,
        contiguous: plan.contiguous as u32,
        slot_bytes: slot as u32,
        broadcast: plan.broadcast,
    }
}

fn launch_plan(
    kernel: &Kernel,
    info: &ReductionInfo,
    instance: &[DType],
    call: Prepared,
    mut params: ArgList,
    device: &Device,
    stream: &Stream,
    go: impl FnOnce(&KernelFunction, &LaunchConfig<'_>, &ArgList) -> Result<()>,
) -> Result<()> {
    let Prepared { plan } = call;
    let func = kernel.function(device.ordinal(), instance, Some(plan.variant().into()))?;
    let slot = slot_bytes(info.acc_bytes);
    let (slots, counters) = plan.scratch();
    let (partials, counter_ptr, _held) = if slots > 0 {
        scratch(stream, slots as usize, slot, counters as usize)?
    } else {
        (0, 0, None)
    };
    params.push_repr(reduce_args(&plan, partials, counter_ptr, slot));
    let cfg = LaunchConfig::new(plan.grid, plan.block).stream(stream);
    // What `go` gets: the parameters are those of every reduction variant (`reduction.h`, written by
    // `cuprum_abi::reduction::entry_points`): one `ReduceOperand` per array
    // argument and one `Raw` per raw argument in the map's order, the output operand, then
    // `ReduceArgs`; their kinds and element types were checked against the signature the code generator wrote with the kernel (`check_operands`, `Kernel::new`'s contract). The
    // plan's strides keep every access inside the arrays: they come from the arrays' own
    // layouts over the checked loop shape, and the output has the checked output shape. The
    // scratch holds `slots` slots of `slot` bytes and `counters` zeroed counters, on `stream`.
    go(func, &cfg, &params)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_structs_have_the_c_layout() {
        assert_eq!(std::mem::size_of::<CShape>(), 80);
        assert_eq!(std::mem::size_of::<CReduceArgs>(), 200);
        assert_eq!(std::mem::offset_of!(CReduceArgs, loop_size), 160);
        assert_eq!(std::mem::offset_of!(CReduceArgs, splits), 184);
        assert_eq!(std::mem::size_of::<COperand>(), 136);
        assert_eq!(std::mem::size_of::<CRaw>(), 152);
        assert_eq!(std::mem::offset_of!(CRaw, shape), 24);
    }

    #[test]
    fn slots_hold_a_value_and_its_flag() {
        // sizeof(Partial<A>) for A of 1, 4, 8 bytes is 8, 8, 16; for 16 bytes 24 (8-aligned, a
        // tuple) or 32 (`complex<double>`, 16-aligned). Slots are multiples of 8, and of 16 from
        // 16 bytes on, so that every slot is aligned.
        assert!(
            slot_bytes(1) >= 8 && slot_bytes(4) >= 8 && slot_bytes(8) >= 16 && slot_bytes(16) >= 32
        );
        for a in 1..64 {
            assert_eq!(slot_bytes(a) % if a >= 16 { 16 } else { 8 }, 0, "{a}");
            assert!(slot_bytes(a) >= a + 4, "{a}");
        }
        assert_eq!(counter_bytes(1), 256);
        assert_eq!(counter_bytes(64), 256);
        assert_eq!(counter_bytes(65), 512);
    }

    /// The launch's parameters (allocation-free planning, strides broadcast on the fly) equal
    /// those built from the public [`plan::plan`], for broadcast inputs, keepdims, transposed
    /// and strided layouts.
    #[test]
    #[allow(clippy::type_complexity)]
    fn parameters_match_the_public_plan() {
        use crate::array::shape::{broadcast_shapes, broadcast_strides, c_strides};
        // (x shape, x strides, y shape, y strides, axes, keepdims)
        let cases: [(&[usize], &[isize], &[usize], &[isize], Axes, bool); 6] = [
            (&[4, 6], &[6, 1], &[6], &[1], Axes::One(1), false),
            (&[4, 6], &[1, 4], &[4, 6], &[6, 1], Axes::All, false),
            (
                &[2, 1, 8],
                &[8, 8, 1],
                &[3, 1],
                &[1, 1],
                Axes::Many(vec![0, 2]),
                true,
            ),
            (
                &[5, 3, 4],
                &[24, 8, 2],
                &[5, 3, 4],
                &[12, 4, 1],
                Axes::One(-2),
                true,
            ),
            (&[7, 1, 64], &[64, 64, 1], &[64], &[1], Axes::One(0), false),
            (
                &[3, 5, 3],
                &[1, 9, 3],
                &[3, 5, 3],
                &[15, 3, 1],
                Axes::Many(vec![0, 2]),
                false,
            ),
        ];
        let info = ReductionInfo {
            has_identity: true,
            acc_bytes: 8,
            positional: false,
        };
        let dev = DeviceShape {
            multiprocessors: 132,
            blocks_per_sm: 0,
            cc: (0, 0),
        };
        for (xs, xt, ys, yt, axes, keepdims) in cases {
            let x = ArrayArg {
                ptr: 0x7000_0000,
                shape: xs,
                strides: xt,
                elem: DType::F32.into(),
                device: 0, host_lock: None,
            };
            let y = ArrayArg {
                ptr: 0x7000_1000,
                shape: ys,
                strides: yt,
                elem: DType::F32.into(),
                device: 0, host_lock: None,
            };
            let inputs = [Arg::In(x), Arg::In(y)];
            let shape = broadcast_shapes(&[xs, ys]).unwrap();
            let mask = plan::reduced_mask(shape.len(), &axes).unwrap();
            let os = plan::output_shape(&shape, &mask, keepdims);
            let ot = c_strides(&os);
            let out = ArrayArg {
                ptr: 0x7000_2000,
                shape: &os,
                strides: &ot,
                elem: DType::F32.into(),
                device: 0, host_lock: None,
            };
            let mut got_params = ArgList::new();
            let got = prepare("k", &info, &inputs, &out, &axes, keepdims, || Ok(dev), &mut got_params)
                .unwrap()
                .unwrap();
            let kept: Vec<isize> = if keepdims {
                ot.iter()
                    .zip(&mask)
                    .filter(|(_, m)| !**m)
                    .map(|(s, _)| *s)
                    .collect()
            } else {
                ot.clone()
            };
            let (bx, by) = (
                broadcast_strides(xs, xt, &shape).unwrap(),
                broadcast_strides(ys, yt, &shape).unwrap(),
            );
            let want = plan::plan("k", &shape, &[&bx, &by], &mask, &kept, true, true, dev).unwrap();
            let mut params = ArgList::new();
            params.push_repr(operand(0x7000_0000, &want.inputs[0]));
            params.push_repr(operand(0x7000_1000, &want.inputs[1]));
            params.push_repr(operand(0x7000_2000, &want.out));
            assert_eq!(got_params.sizes(), params.sizes());
            for k in 0..3 {
                assert_eq!(
                    got_params.bytes(k),
                    params.bytes(k),
                    "{xs:?} {ys:?} {axes:?} operand {k}"
                );
            }
            let p = &got.plan;
            assert_eq!(
                (p.outs, p.red, p.o.dims(), p.r.dims()),
                (want.outs, want.red, &want.odims[..], &want.rdims[..])
            );
            assert_eq!(
                (p.contiguous, p.strategy, p.splits, p.wide, p.grid),
                (
                    want.contiguous,
                    want.strategy,
                    want.splits,
                    want.wide,
                    want.grid
                )
            );
            assert_eq!((p.variant(), p.scratch()), (want.variant(), want.scratch()));
        }
    }

    /// The host cost of [`prepare`] plus `ReduceArgs` and the pointer array, for the bench's
    /// call: a full f32 sum of 1024 elements.
    /// `cargo test --release -p cuprum-runtime --lib -- --ignored --nocapture host_cost`
    #[test]
    #[ignore = "CPU timing; run with --release"]
    fn host_cost_of_a_small_full_sum() {
        use crate::launch::KernelArgs;
        let (shape, strides) = ([1024usize], [1isize]);
        let x = ArrayArg {
            ptr: 0x7000_0000,
            shape: &shape,
            strides: &strides,
            elem: DType::F32.into(),
            device: 0, host_lock: None,
        };
        let out = ArrayArg {
            ptr: 0x7000_1000,
            shape: &[],
            strides: &[],
            elem: DType::F32.into(),
            device: 0, host_lock: None,
        };
        let info = ReductionInfo {
            has_identity: true,
            acc_bytes: 4,
            positional: false,
        };
        let inputs = [Arg::In(x)];
        static SIG: ReductionSignature = ReductionSignature {
            params: &[crate::launch::signature::Param::new(
                "x",
                Role::In,
                crate::launch::signature::ParamType::Generic(0),
            )],
            out: crate::launch::signature::ParamType::Generic(0),
            acc: crate::launch::signature::ParamType::Generic(0),
            has_identity: true,
            positional: false,
        };
        let run = |n: usize| {
            let t = crate::inline_list::cpu_ns();
            for _ in 0..n {
                let checked = check_operands(
                    "sum",
                    &SIG,
                    &[DType::F32],
                    std::hint::black_box(&inputs),
                    Arg::Out(out),
                )
                .unwrap();
                std::hint::black_box(&checked);
                let dev = || {
                    Ok(DeviceShape {
                        multiprocessors: 132,
                        blocks_per_sm: 0,
                        cc: (0, 0),
                    })
                };
                let mut params = ArgList::new();
                let p = prepare(
                    "sum",
                    &info,
                    std::hint::black_box(&inputs),
                    &out,
                    &Axes::All,
                    false,
                    dev,
                    &mut params,
                )
                .unwrap()
                .unwrap();
                params.push_repr(reduce_args(&p.plan, 0, 0, slot_bytes(info.acc_bytes)));
                params.with_params(|ptrs| std::hint::black_box(ptrs.len()));
                std::hint::black_box(&p);
            }
            (crate::inline_list::cpu_ns() - t) as f64 / n as f64
        };
        run(100_000);
        let mut t: Vec<f64> = (0..5).map(|_| run(1_000_000)).collect();
        t.sort_by(f64::total_cmp);
        println!(
            "reduction operand checks and prepare, full f32 sum of 1024: {:.0} ns of CPU time per call (median of 5 x 1e6)",
            t[2]
        );
    }
}
