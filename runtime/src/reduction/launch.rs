//! The reduction launch: checks the arguments, plans, finds the kernel variant, and launches it
//! with the parameters of `include/cuprum/reduction.h` (mirrored here as `#[repr(C)]` structs).
//!
//! Split reductions combine their parts through scratch memory kept per (thread, device,
//! stream): partial slots, and counters that are zero between launches (zeroed once when the
//! scratch is allocated; each kernel resets the counters it used). Launches on one stream run in
//! order, so they can share it.

use std::cell::RefCell;

use super::plan::{self, DeviceShape, OperandStrides, Plan, MAX_NDIM};
use super::{Arg, Axes, OutArg, Options, ReductionInfo};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::launch::{ArgList, DeviceRepr, LaunchConfig};
use crate::memory::DeviceBuffer;
use crate::registry::Kernel;
use crate::stream::Stream;
use crate::DType;

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
        let mut s = CShape { size, ndim: dims.len() as i32, ..CShape::default() };
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
    pad: u32,
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
    COperand { ptr, ostrides: s.ostrides, rstrides: s.rstrides }
}

fn raw_param(kernel: &str, a: &super::ArrayRef<'_>) -> Result<CRaw> {
    if a.shape.len() > MAX_NDIM {
        return Err(Error::Unsupported {
            what: format!("raw argument of kernel `{kernel}` with {} dimensions (at most {MAX_NDIM})", a.shape.len()),
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
    buf: DeviceBuffer,
}

thread_local! {
    static SCRATCH: RefCell<Vec<Scratch>> = const { RefCell::new(Vec::new()) };
}

/// Counters are 4 bytes; the slots start 256-byte aligned after them.
fn counter_bytes(n: usize) -> usize {
    (n * 4).div_ceil(256) * 256
}

/// `(partials, counters)` device addresses with room for `slots` slots of `slot_bytes` and
/// `counters` zeroed counters, for launches on `stream`.
fn scratch(stream: &Stream, slots: usize, slot_bytes: usize, counters: usize) -> Result<(u64, u64)> {
    let key = (stream.device().ordinal(), stream.handle() as usize);
    SCRATCH.with(|cell| {
        let mut all = cell.borrow_mut();
        let need_slots = slots * slot_bytes;
        if let Some(s) = all.iter().find(|s| (s.device, s.stream) == key) {
            let base = counter_bytes(s.counters);
            if s.counters >= counters && s.buf.len_bytes() - base >= need_slots {
                return Ok((s.buf.ptr() + base as u64, s.buf.ptr()));
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
        let buf = DeviceBuffer::alloc(counter_bytes(counters) + slot_room, stream)?;
        buf.write_bytes(0, &vec![0u8; counter_bytes(counters)], stream)?;
        let base = counter_bytes(counters) as u64;
        let (p, c) = (buf.ptr() + base, buf.ptr());
        let entry = Scratch { device: key.0, stream: key.1, counters, buf };
        match old {
            Some(i) => all[i] = entry,
            None => all.push(entry),
        }
        Ok((p, c))
    })
}

/// Bytes of one partial slot for an accumulator of `acc_bytes`: at least
/// `sizeof(cuprum::Partial<A>)` (the value, padded, then a 4-byte flag).
fn slot_bytes(acc_bytes: usize) -> usize {
    acc_bytes.div_ceil(8) * 8 + 8
}

/// Launches reduction `kernel` (instance `instance`) of `inputs` over `axes` into `out`.
///
/// Checks: the inputs broadcast together; the axes are in range and distinct; `out` has the
/// output shape ([`super::output_shape`]); every array is on one device; an empty reduction has
/// an identity. An output with no element launches nothing.
///
/// # Safety
///
/// `inputs` must match the kernel's map parameters in number, order, kind (`Arg::Raw` exactly
/// for its `Raw<T>` parameters) and element type for `instance`, and `out` must have the
/// element type of the kernel's output for `instance`: the kernel reads and writes them as those
/// types. (The generated typed wrappers and `ReductionKernel` guarantee this.)
#[allow(clippy::too_many_arguments)]
pub unsafe fn launch(
    kernel: &Kernel,
    info: &ReductionInfo,
    instance: &[DType],
    inputs: &[Arg<'_>],
    out: OutArg<'_>,
    axes: &Axes,
    keepdims: bool,
    opts: &Options<'_>,
) -> Result<()> {
    let name = kernel.name();
    let mut device = None;
    let dev = || -> Result<DeviceShape> {
        let d = Device::get(out.0.device)?;
        let shape = DeviceShape { multiprocessors: d.multiprocessor_count() };
        device = Some(d);
        Ok(shape)
    };
    let Some(call) = prepare(name, info, inputs, &out, axes, keepdims, dev)? else {
        return Ok(());
    };
    let device = device.expect("prepare looked the device up");
    let current;
    let stream = match opts.stream {
        Some(s) => s,
        None => {
            current = Stream::current_for(&device)?;
            &current
        }
    };
    launch_plan(kernel, info, instance, call, &device, stream)
}

fn expected_len(shape: &[usize], mask: &[bool]) -> usize {
    shape.iter().zip(mask).filter(|(_, m)| !**m).map(|(d, _)| *d).product()
}

/// A checked and planned reduction: the plan and the parameters before `ReduceArgs` (which
/// needs the stream's scratch memory).
pub(crate) struct Prepared {
    plan: Plan,
    args: ArgList,
}

/// The host side of [`launch`] that needs no GPU: checks, loop shape, plan, operand parameters.
/// `dev` is asked for the device's shape once the reduction is known to launch. `Ok(None)`: no
/// output element (nothing to launch).
#[allow(clippy::too_many_arguments)]
pub(crate) fn prepare(
    name: &str,
    info: &ReductionInfo,
    inputs: &[Arg<'_>],
    out: &OutArg<'_>,
    axes: &Axes,
    keepdims: bool,
    dev: impl FnOnce() -> Result<DeviceShape>,
) -> Result<Option<Prepared>> {
    let out = out.0;
    let shape = super::loop_shape(name, inputs)?;
    let mask = plan::reduced_mask(shape.len(), axes)?;
    let expected = plan::output_shape(&shape, &mask, keepdims);
    if out.shape != expected.as_slice() {
        return Err(Error::ShapeMismatch {
            context: format!(
                "the output of reduction `{name}` (loop shape {shape:?}, axes {axes:?}, keepdims {keepdims})"
            ),
            expected,
            found: out.shape.to_vec(),
        });
    }
    for a in inputs {
        let a = a.array_ref();
        if a.device != out.device {
            return Err(Error::DeviceMismatch {
                context: format!("the arguments of reduction `{name}`"),
                expected: out.device,
                found: a.device,
            });
        }
    }
    // The output's strides over the kept axes.
    let out_strides: Vec<isize> = if keepdims {
        out.strides.iter().zip(&mask).filter(|(_, m)| !**m).map(|(s, _)| *s).collect()
    } else {
        out.strides.to_vec()
    };
    let mut strided = Vec::with_capacity(inputs.len());
    for a in inputs {
        if let Arg::Array(a) = a {
            strided.push(crate::array::shape::broadcast_strides(a.shape, a.strides, &shape)?);
        }
    }
    let strided_refs: Vec<&[isize]> = strided.iter().map(Vec::as_slice).collect();
    let has_raw = inputs.iter().any(|a| matches!(a, Arg::Raw(_)));
    plan::check_empty(name, &shape, &mask, info.has_identity)?;
    if expected_len(&shape, &mask) == 0 {
        // No output element: nothing to compute (an empty reduction into no output is fine).
        return Ok(None);
    }
    let plan = plan::plan(name, &shape, &strided_refs, &mask, &out_strides, !has_raw, info.has_identity, dev()?)?;
    let mut args = ArgList::new();
    let mut k = 0;
    for a in inputs {
        match a {
            Arg::Array(a) => {
                args.push(operand(a.ptr, &plan.inputs[k]));
                k += 1;
            }
            Arg::Raw(a) => {
                args.push(raw_param(name, a)?);
            }
        }
    }
    args.push(operand(out.ptr, &plan.out));
    Ok(Some(Prepared { plan, args }))
}

/// `ReduceArgs` of a plan with its scratch memory.
fn reduce_args(plan: &Plan, partials: u64, counters: u64, slot: usize) -> CReduceArgs {
    CReduceArgs {
        oshape: CShape::new(plan.outs, &plan.odims),
        rshape: CShape::new(plan.red, &plan.rdims),
        loop_size: plan.outs * plan.red,
        partials,
        counters,
        splits: plan.splits,
        contiguous: plan.contiguous as u32,
        slot_bytes: slot as u32,
        pad: 0,
    }
}

fn launch_plan(kernel: &Kernel, info: &ReductionInfo, instance: &[DType], call: Prepared, device: &Device, stream: &Stream) -> Result<()> {
    let Prepared { plan, mut args } = call;
    let raw = kernel.instance(device.ordinal(), instance, Some(plan.variant()))?;
    let func = raw.function_for(device)?;
    let slot = slot_bytes(info.acc_bytes);
    let (slots, counters) = plan.scratch();
    let (partials, counter_ptr) =
        if slots > 0 { scratch(stream, slots as usize, slot, counters as usize)? } else { (0, 0) };
    args.push(reduce_args(&plan, partials, counter_ptr, slot));
    let cfg = LaunchConfig::new(plan.grid, plan.block).stream(stream);
    // SAFETY: the parameters are those of every reduction variant (`reduction.h`, written by
    // `cuprum_compiler::back::cuda::reduction::entry_points`): one `ReduceOperand` per array
    // argument and one `Raw` per raw argument in the map's order, the output operand, then
    // `ReduceArgs`; their element types are the caller's contract (`launch`'s `# Safety`). The
    // plan's strides keep every access inside the arrays: they come from the arrays' own
    // layouts over the checked loop shape, and the output has the checked output shape. The
    // scratch holds `slots` slots of `slot` bytes and `counters` zeroed counters, on `stream`.
    unsafe { crate::launch::launch(func, &cfg, &args) }
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
        // sizeof(Partial<A>) for A of 1, 4, 8, 16 bytes is 8, 8, 16, 24.
        assert!(slot_bytes(1) >= 8 && slot_bytes(4) >= 8 && slot_bytes(8) >= 16 && slot_bytes(16) >= 24);
        assert_eq!(counter_bytes(1), 256);
        assert_eq!(counter_bytes(64), 256);
        assert_eq!(counter_bytes(65), 512);
    }

    /// The host cost of [`prepare`] plus `ReduceArgs` and the pointer array, for the bench's
    /// call: a full f32 sum of 1024 elements.
    /// `cargo test --release -p cuprum-runtime --lib -- --ignored --nocapture host_cost`
    #[test]
    #[ignore = "CPU timing; run with --release"]
    fn host_cost_of_a_small_full_sum() {
        use crate::launch::KernelArgs;
        use crate::reduction::ArrayRef;
        let (shape, strides) = ([1024usize], [1isize]);
        let x = ArrayRef { ptr: 0x7000_0000, shape: &shape, strides: &strides, dtype: DType::F32, device: 0 };
        let out = ArrayRef { ptr: 0x7000_1000, shape: &[], strides: &[], dtype: DType::F32, device: 0 };
        let info = ReductionInfo { has_identity: true, acc_bytes: 4 };
        let inputs = [Arg::Array(x)];
        let run = |n: usize| {
            let t = std::time::Instant::now();
            for _ in 0..n {
                let out = OutArg::from_ref(out);
                let dev = || Ok(DeviceShape { multiprocessors: 132 });
                let mut p = prepare("sum", &info, std::hint::black_box(&inputs), &out, &Axes::All, false, dev).unwrap().unwrap();
                p.args.push(reduce_args(&p.plan, 0, 0, slot_bytes(info.acc_bytes)));
                p.args.with_params(|ptrs| std::hint::black_box(ptrs.len()));
                std::hint::black_box(&p);
            }
            t.elapsed().as_secs_f64() * 1e9 / n as f64
        };
        run(100_000);
        let mut t: Vec<f64> = (0..5).map(|_| run(1_000_000)).collect();
        t.sort_by(f64::total_cmp);
        println!("reduction prepare, full f32 sum of 1024: {:.0} ns per call (median of 5 x 1e6)", t[2]);
    }
}
