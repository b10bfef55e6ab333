//! Elementwise rows (issue 6): `(x - y)^2` through the launch path `#[elementwise]` kernels use
//! (a kernel compiled from Rust source by `cuprum_compiler::compile_source`, launched by
//! `elementwise::launch` from a typed wrapper like the macro's), as GB/s (bytes read + written /
//! time, CUDA events, median) against the device-to-device copy ceiling, and the host cost per
//! call on a 1-element array against a bare launch.

use std::sync::OnceLock;
use std::time::Instant;

// The erased launch, its pieces and hand-made kernels are the runtime's internals (`__workspace`):
// the host-cost rows time them piece by piece.
use cuprum_runtime::__workspace::elementwise::{self, Arg, Input, Options, Param, ParamType, Role};
use cuprum_runtime::__workspace::registry::{Kernel, KernelUnit, Signature, UnitRef};
use cuprum_runtime::{Array, Event, Float, Result, Stream};
use half::f16;

use super::{Row, median};

const KERNELS: &str = r#"
use cuprum::prelude::*;

#[elementwise]
pub fn squared_diff<T: Float>(x: T, y: T) -> T {
    let d = x - y;
    d * d
}
"#;

fn kernel() -> Result<&'static Kernel> {
    static K: OnceLock<&'static Kernel> = OnceLock::new();
    if let Some(k) = K.get() {
        return Ok(k);
    }
    let compiled = cuprum_compiler::compile_source(KERNELS).map_err(|e| {
        cuprum_runtime::Error::Unsupported {
            what: format!("the bench kernel does not compile: {e}"),
        }
    })?;
    let unit: &'static KernelUnit = Box::leak(Box::new(KernelUnit::from_source(
        "bench_elementwise.rs",
        compiled.unit.source,
        false,
    )));
    Ok(K.get_or_init(|| {
        // SAFETY: SIG is `squared_diff`'s signature (what the macro generates); the code is cuprum's.
        Box::leak(Box::new(unsafe {
            Kernel::new(
                UnitRef::Embedded(unit),
                "squared_diff",
                Signature::Elementwise(&SIG),
            )
        }))
    }))
}

const SIG: [Param; 3] = [
    Param::new("x", Role::In, ParamType::Generic(0)),
    Param::new("y", Role::In, ParamType::Generic(0)),
    Param::new("out", Role::Out, ParamType::Generic(0)),
];

/// The typed wrapper `#[elementwise]` generates, with an explicit output.
fn squared_diff_into<'a, T: Float>(
    x: impl Into<Input<'a, T>>,
    y: impl Into<Input<'a, T>>,
    out: &mut Array<T>,
) -> Result<()> {
    let (x, y) = (x.into(), y.into());
    let args = [x.arg(), y.arg(), Arg::output(out)];
    elementwise::launch(kernel()?, &[T::DTYPE], &args, &Options::default())
}

fn filled<T: Float>(shape: &[usize], seed: u64) -> Result<Array<T>> {
    let n: usize = shape.iter().product();
    let v: Vec<T> = (0..n)
        .map(|i| {
            T::from_f64((((i as u64).wrapping_mul(2654435761) ^ seed) % 1009) as f64 / 97.0 + 0.25)
        })
        .collect();
    Array::from_shape_vec(shape.to_vec(), v)
}

/// GB/s of `squared_diff(x, y) -> out` (median of `rounds` event-timed launches after warm-up).
fn gbs<T: Float>(
    x: &Array<T>,
    y: &Array<T>,
    out: &mut Array<T>,
    bytes: f64,
    rounds: usize,
    stream: &Stream,
) -> Result<f64> {
    squared_diff_into(x, y, out)?;
    stream.synchronize()?;
    let mut t = Vec::new();
    for _ in 0..rounds {
        let a = Event::record(stream)?;
        squared_diff_into(x, y, out)?;
        let b = Event::record(stream)?;
        b.synchronize()?;
        t.push(Event::elapsed_ms(&a, &b)? as f64);
    }
    Ok(bytes / (median(t) * 1e-3) / 1e9)
}

/// The rows; `copy` is the in-run device-to-device copy ceiling (GB/s), `bare_us` a bare launch.
pub fn rows(copy: f64, bare_us: f64, quick: bool, stream: &Stream) -> Result<Vec<Row>> {
    let rounds = if quick { 5 } else { 20 };
    let log2 = if quick { 26 } else { 28 };
    let n = 1usize << log2;
    let mut rows = Vec::new();
    let mut push = |name: &'static str, value: f64, target: f64, note: String| {
        rows.push(Row {
            name,
            value,
            unit: "GB/s",
            ceiling_name: "device-to-device copy",
            ceiling: copy,
            target: Some((">=", target)),
            note,
        });
    };
    let before = elementwise::variant_counts();
    {
        let (x, y) = (filled::<f32>(&[n], 1)?, filled::<f32>(&[n], 2)?);
        let mut z = Array::<f32>::empty([n])?;
        push(
            "(x-y)^2 contiguous f32",
            gbs(&x, &y, &mut z, 12.0 * n as f64, rounds, stream)?,
            0.95,
            format!("2^{log2} elements, contig variant"),
        );
    }
    {
        let (x, y) = (filled::<f16>(&[n], 1)?, filled::<f16>(&[n], 2)?);
        let mut z = Array::<f16>::empty([n])?;
        push(
            "(x-y)^2 contiguous f16",
            gbs(&x, &y, &mut z, 6.0 * n as f64, rounds, stream)?,
            0.90,
            format!("2^{log2} elements"),
        );
    }
    {
        let (x, y) = (filled::<f64>(&[n], 1)?, filled::<f64>(&[n], 2)?);
        let mut z = Array::<f64>::empty([n])?;
        push(
            "(x-y)^2 contiguous f64",
            gbs(&x, &y, &mut z, 24.0 * n as f64, rounds, stream)?,
            1.00,
            format!("2^{log2} elements"),
        );
    }
    let side = 1usize << (log2 / 2);
    {
        let x = filled::<f32>(&[side, side], 1)?;
        let y = filled::<f32>(&[side], 2)?;
        let mut z = Array::<f32>::empty([side, side])?;
        let bytes = 8.0 * (side * side) as f64 + 4.0 * side as f64;
        push(
            "(x-y)^2 broadcast (n,n)-(n,) f32",
            gbs(&x, &y, &mut z, bytes, rounds, stream)?,
            0.90,
            format!("n = 2^{}, s32 variant with vector items", log2 / 2),
        );
    }
    {
        let x = filled::<f32>(&[side, side], 1)?;
        let xt = x.transpose();
        let y = filled::<f32>(&[side, side], 2)?;
        let mut z = Array::<f32>::empty([side, side])?;
        let bytes = 12.0 * (side * side) as f64;
        push(
            "(x-y)^2 one input transposed f32",
            gbs(&xt, &y, &mut z, bytes, rounds, stream)?,
            0.90,
            format!("n = 2^{}, t32 variant", log2 / 2),
        );
    }
    let after = elementwise::variant_counts();
    // Host cost per call on 1-element arrays.
    let calls = if quick { 2_000 } else { 20_000 };
    let (x, y) = (filled::<f32>(&[1], 1)?, filled::<f32>(&[1], 2)?);
    let mut z = Array::<f32>::empty([1])?;
    // Three loops, timed in alternating rounds so that they see the same host (a VM's speed
    // drifts between seconds; sequential blocks of rounds made the ratio swing from 1.12 to 1.43
    // between runs): the call itself, into its own output `z2`; the ceiling, the same generated
    // kernel (contig instance) with its parameters built once, launched bare (a 1-element call
    // costs the GPU more than the empty kernel of the bare cudarc row, and back-to-back launches
    // are paced by the GPU, so this is the launch the call is compared with; the difference is
    // cuprum's host work); and the bare launch with the host work of a call between launches
    // (what the host work costs next to the driver's launch, caches shared).
    let mut z2 = Array::<f32>::empty([1])?;
    let (mut ours, mut bare_v, mut inter_v) = (Vec::new(), Vec::new(), Vec::new());
    {
        let args = [Arg::input(&x), Arg::input(&y), Arg::output(&mut z)];
        elementwise::staged_launch(
            kernel()?,
            &[cuprum_runtime::DType::F32],
            &args,
            &Options::default(),
            |func, cfg, params| {
                let per_call = |k: usize, z2: &mut Array<f32>| -> Result<f64> {
                    let t = Instant::now();
                    for _ in 0..k {
                        squared_diff_into(&x, &y, z2)?;
                    }
                    stream.synchronize()?;
                    Ok(t.elapsed().as_secs_f64() * 1e6 / k as f64)
                };
                let bare = |k: usize| -> Result<f64> {
                    let t = Instant::now();
                    for _ in 0..k {
                        // SAFETY: what `elementwise::launch` would launch for these arguments
                        // (`staged_launch` hands it over instead of launching).
                        unsafe { cuprum_runtime::__workspace::launch::launch(func, cfg, params)? };
                    }
                    stream.synchronize()?;
                    Ok(t.elapsed().as_secs_f64() * 1e6 / k as f64)
                };
                let interleaved = |k: usize, z2: &mut Array<f32>| -> Result<f64> {
                    let t = Instant::now();
                    for _ in 0..k {
                        let other = [Arg::input(&x), Arg::input(&y), Arg::output(z2)];
                        elementwise::host_work_only(
                            kernel()?,
                            &[cuprum_runtime::DType::F32],
                            &other,
                            &Options::default(),
                        )?;
                        // SAFETY: as above.
                        unsafe { cuprum_runtime::__workspace::launch::launch(func, cfg, params)? };
                    }
                    stream.synchronize()?;
                    Ok(t.elapsed().as_secs_f64() * 1e6 / k as f64)
                };
                per_call(calls / 10, &mut z2)?;
                bare(calls / 10)?;
                interleaved(calls / 10, &mut z2)?;
                for _ in 0..5 {
                    ours.push(per_call(calls, &mut z2)?);
                    bare_v.push(bare(calls)?);
                    inter_v.push(interleaved(calls, &mut z2)?);
                }
                Ok(())
            },
        )?;
    }
    if ours.is_empty() {
        return Err(cuprum_runtime::Error::Unsupported { what: "the 1-element call did not launch".into() });
    }
    let (us, same_us, interleaved_us) = (median(ours), median(bare_v), median(inter_v));
    // The host work alone: everything the call does but the launch.
    let work_us = {
        let mut work = |k: usize| -> Result<f64> {
            let t = Instant::now();
            for _ in 0..k {
                let args = [Arg::input(&x), Arg::input(&y), Arg::output(&mut z)];
                elementwise::host_work_only(
                    kernel()?,
                    &[cuprum_runtime::DType::F32],
                    &args,
                    &Options::default(),
                )?;
            }
            Ok(t.elapsed().as_secs_f64() * 1e6 / k as f64)
        };
        work(calls / 10)?;
        median((0..5).map(|_| work(calls)).collect::<Result<_>>()?)
    };
    // Of which the lookups: the current stream and the loaded kernel (what the call does after
    // its checks and plan).
    let lookup_us = {
        let variant = Some(cuprum_runtime::abi::ElementwiseVariant::Contig.into());
        let lookup = |k: usize| -> Result<f64> {
            let t = Instant::now();
            for _ in 0..k {
                let s = Stream::current()?;
                let raw = kernel()?.instance(
                    s.device().ordinal(),
                    &[cuprum_runtime::DType::F32],
                    variant,
                )?;
                std::hint::black_box(raw.function_for(s.device())?);
            }
            Ok(t.elapsed().as_secs_f64() * 1e6 / k as f64)
        };
        lookup(calls / 10)?;
        median((0..5).map(|_| lookup(calls)).collect::<Result<_>>()?)
    };
    rows.push(Row {
        name: "elementwise launch, host cost per call (1 element)",
        value: us,
        unit: "us",
        ceiling_name: "the same kernel launched bare",
        ceiling: same_us,
        target: Some(("<=", 1.15)),
        note: format!(
            "{calls} calls, one synchronize; cuprum's host work without the launch: {work_us:.3} us, of which stream and kernel lookups {lookup_us:.3} us; bare launches with that host work between them: {interleaved_us:.2} us; bare cudarc launch of an empty kernel: {bare_us:.2} us; variants in the GB/s rows: contig {}, s32 {}, s64 {}, t32 {}, vector {}",
            after.contig - before.contig,
            after.s32 - before.s32,
            after.s64 - before.s64,
            after.t32 - before.t32,
            after.vector - before.vector
        ),
    });
    Ok(rows)
}
