//! Reduction rows (issue 7): bytes read over time, divided by the copy ceiling of the same run
//! (whose bandwidth counts bytes read + written), and the host cost of one reduction call next
//! to a bare launch.
//!
//! The kernel is a `#[reduction]` f32 sum written in Rust, translated by `cuprum_compiler` and
//! JIT-compiled through the registry (the built-in `sum` replaces it once the macro glue lands);
//! each row checks its result against an f64 host sum before timing.

// The erased launch, its pieces and hand-made kernels are the runtime's internals (`__workspace`):
// the host-cost rows time them piece by piece.
use cuprum_runtime::__workspace::launch::signature::{Param, ParamType, ReductionSignature, Role, Signature};
use cuprum_runtime::__workspace::reduction::{self, Arg, Axes, Options};
use cuprum_runtime::__workspace::registry::{Kernel, KernelUnit, UnitRef};
use cuprum_runtime::{Array, Error, Event, Result, Stream};
use cuprum_runtime::{DType, ElemType};

use super::{Row, median};

const SUM: &str = r#"
#[reduction(identity = 0.0, reduce = |a, b| a + b)]
pub fn bench_sum(x: f32) -> f32 {
    x
}
"#;

const F32: ParamType = ParamType::Fixed(ElemType::Scalar(DType::F32));

/// `bench_sum`'s signature (what the macro generates).
static SIG: ReductionSignature = ReductionSignature {
    params: &[Param::new("x", Role::In, F32)],
    out: F32,
    acc: F32,
    has_identity: true,
    positional: false,
};

fn sum_kernel() -> Result<&'static Kernel> {
    let c = cuprum_compiler::compile_source(SUM).map_err(|e| Error::Unsupported {
        what: format!("bench kernel: {e}"),
    })?;
    let unit: &'static KernelUnit = Box::leak(Box::new(KernelUnit::from_source(
        "bench_sum.rs",
        c.unit.source,
        false,
    )));
    // SAFETY: SIG is `bench_sum`'s signature; the code is cuprum's.
    Ok(Box::leak(Box::new(unsafe {
        Kernel::new(
            UnitRef::Embedded(unit),
            "bench_sum",
            Signature::Reduction(&SIG),
        )
    })))
}

fn run(
    k: &Kernel,
    x: &Array<f32>,
    out: &mut Array<f32>,
    axes: &Axes,
    stream: &Stream,
) -> Result<()> {
    reduction::launch(
        k,
        &[],
        &[Arg::input(x)],
        Arg::output(out),
        axes,
        false,
        &Options {
            stream: Some(stream),
            ..Options::default()
        },
    )
}

/// `n` values in [-0.5, 0.5) from a xorshift generator at `state`.
fn uniform_halves(n: usize, state: &mut u64) -> Vec<f32> {
    (0..n)
        .map(|_| {
            *state ^= *state << 13;
            *state ^= *state >> 7;
            *state ^= *state << 17;
            (*state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        })
        .collect()
}

/// Median milliseconds of one `call` (a reduction on `stream`), by CUDA events around 10
/// back-to-back calls, after one call to warm up.
pub(crate) fn time_ms(stream: &Stream, rounds: usize, mut call: impl FnMut() -> Result<()>) -> Result<f64> {
    let reps = 10;
    call()?;
    let mut t = Vec::new();
    for _ in 0..rounds.max(3) {
        let start = Event::record(stream)?;
        for _ in 0..reps {
            call()?;
        }
        let end = Event::record(stream)?;
        end.synchronize()?;
        t.push(Event::elapsed_ms(&start, &end)? as f64 / reps as f64);
    }
    Ok(median(t))
}

/// Checks `out` against f64 sums of `host` (shape `shape`) over `axes`.
fn check(host: &[f32], shape: [usize; 2], axes: &Axes, out: &Array<f32>) -> Result<()> {
    let got = out.to_vec()?;
    let (r, c) = (shape[0], shape[1]);
    let want: Vec<f64> = match axes {
        Axes::All => vec![host.iter().map(|&v| v as f64).sum()],
        Axes::One(1) => (0..r)
            .map(|i| host[i * c..(i + 1) * c].iter().map(|&v| v as f64).sum())
            .collect(),
        _ => {
            let mut w = vec![0f64; c];
            for i in 0..r {
                for (j, s) in w.iter_mut().enumerate() {
                    *s += host[i * c + j] as f64;
                }
            }
            w
        }
    };
    let n = host.len() / want.len();
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        // |values| < 1: a sum of n terms is off by at most ~n * eps in the worst case.
        if ((*g as f64) - w).abs() > 1e-6 * n as f64 + 1e-3 {
            return Err(Error::Unsupported {
                what: format!("the reduction bench got {g} for output {i}, want {w}"),
            });
        }
    }
    Ok(())
}

/// The reduction rows: `copy_gbs` is the copy ceiling (read + write), `bare_launch_us` the bare
/// launch ceiling.
pub fn rows(
    stream: &Stream,
    copy_gbs: f64,
    bare_launch_us: f64,
    quick: bool,
    rounds: usize,
    launches: usize,
) -> Result<Vec<Row>> {
    let k = sum_kernel()?;
    let mut rows = Vec::new();
    let side = if quick { 1 << 13 } else { 1 << 14 };
    let full_n = if quick { 1 << 26 } else { 1 << 28 };
    let cases: [(&'static str, [usize; 2], Axes, f64); 5] = [
        (
            "reduction: full f32 sum of 2^28",
            [1, full_n],
            Axes::All,
            1.00,
        ),
        (
            "reduction: (2^14, 2^14) f32 sum, contiguous axis",
            [side, side],
            Axes::One(1),
            1.00,
        ),
        (
            "reduction: (2^14, 2^14) f32 sum, strided axis",
            [side, side],
            Axes::One(0),
            0.95,
        ),
        (
            "reduction: 256^3 f32 sum (64 MB)",
            [1, 1 << 24],
            Axes::All,
            0.90,
        ),
        // Two outputs, each a strided column of 2^27 (a block per output, split: each block
        // reads every other f32, so about half of each fetched sector; predicted 0.5).
        (
            "reduction: (2^27, 2) f32 sum, strided axis, 2 outputs",
            [full_n / 2, 2],
            Axes::One(0),
            0.40,
        ),
    ];
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    for (name, shape, axes, target) in cases {
        let n = shape[0] * shape[1];
        let host = uniform_halves(n, &mut state);
        let x = if name.contains("256^3") {
            Array::from_shape_vec([256usize, 256, 256], host.clone())?
        } else {
            Array::from_shape_vec(shape, host.clone())?
        };
        let axes = if name.contains("256^3") {
            Axes::All
        } else {
            axes
        };
        let out_shape = reduction::output_shape(&[Arg::input(&x)], &axes, false)?;
        let mut out = Array::<f32>::full(out_shape, f32::NAN)?;
        run(k, &x, &mut out, &axes, stream)?;
        check(&host, shape, &axes, &out)?;
        let t = time_ms(stream, rounds, || run(k, &x, &mut out, &axes, stream))?;
        let gbs = (n * 4) as f64 / (t * 1e-3) / 1e9;
        rows.push(Row {
            name,
            value: gbs,
            unit: "GB/s",
            ceiling_name: "device-to-device copy",
            ceiling: copy_gbs,
            target: Some((">=", target)),
            note: format!("bytes read / time; {t:.3} ms per call"),
        });
    }

    // The built-in argmax ((order key, position) pairs in one kernel, `arg_best_f32`) and var
    // (shifted sums in one kernel), over the same (2^14, 2^14) f32 input: full and along the
    // contiguous axis. Targets: issue 37's (argmax >= 0.95, var >= 0.90).
    {
        let n = side * side;
        let host = uniform_halves(n, &mut state);
        let x = Array::from_shape_vec([side, side], host.clone())?;
        let (best, _) = host.iter().enumerate().fold((0usize, f32::MIN), |(bi, bv), (i, &v)| if v > bv { (i, v) } else { (bi, bv) });
        let got = x.argmax().run()?.to_vec()?;
        if got != [best as i64] {
            return Err(Error::Unsupported { what: format!("bench argmax: got {got:?}, want {best}") });
        }
        type Call<'a> = (&'static str, f64, Box<dyn Fn() -> Result<()> + 'a>);
        let calls: [Call<'_>; 4] = [
            ("reduction: built-in argmax of (2^14, 2^14) f32, full", 0.95, Box::new(|| x.argmax().stream(stream).run().map(drop))),
            ("reduction: built-in argmax of (2^14, 2^14) f32, contiguous axis", 0.95, Box::new(|| x.argmax().axis(1).stream(stream).run().map(drop))),
            ("reduction: built-in var of (2^14, 2^14) f32, full", 0.90, Box::new(|| x.var().stream(stream).run().map(drop))),
            ("reduction: built-in var of (2^14, 2^14) f32, contiguous axis", 0.90, Box::new(|| x.var().axis(1).stream(stream).run().map(drop))),
        ];
        for (name, target, f) in calls {
            let t = time_ms(stream, rounds, f)?;
            rows.push(Row {
                name,
                value: (n * 4) as f64 / (t * 1e-3) / 1e9,
                unit: "GB/s",
                ceiling_name: "device-to-device copy",
                ceiling: copy_gbs,
                target: Some((">=", target)),
                note: format!("bytes of the input / time; {t:.3} ms per call (argmax: 1 kernel; var: 1, shifted sums, and a scalar upload)"),
            });
        }
    }

    // Host cost per call: a 1024-element full sum (one block), same stream, one synchronize.
    let x = Array::<f32>::from_vec((0..1024).map(|i| i as f32).collect())?;
    let mut out = Array::<f32>::zeros(Vec::<usize>::new())?;
    let mut out2 = Array::<f32>::zeros(Vec::<usize>::new())?;
    let axes = Axes::All;
    // The call (into `out2`) and the ceiling, timed in alternating rounds so that both see the
    // same host: the same kernel with the same parameters launched bare in the same loop (a
    // one-block sum of 1024 elements runs longer on the GPU than the empty kernel of the bare
    // cudarc row, and back-to-back launches are paced by the GPU); the difference is cuprum's
    // host work, which is also timed alone.
    let opts = Options {
        stream: Some(stream),
        ..Options::default()
    };
    let (mut ours, mut bare_v) = (Vec::new(), Vec::new());
    reduction::staged_launch(
        k,
        &[],
        &[Arg::input(&x)],
        Arg::output(&mut out),
        &axes,
        false,
        &opts,
        |func, cfg, params| {
            let per_call = |n: usize, out2: &mut Array<f32>| -> Result<f64> {
                let t = std::time::Instant::now();
                for _ in 0..n {
                    run(k, &x, out2, &axes, stream)?;
                }
                stream.synchronize()?;
                Ok(t.elapsed().as_secs_f64() * 1e6 / n as f64)
            };
            let bare = |n: usize| -> Result<f64> {
                let t = std::time::Instant::now();
                for _ in 0..n {
                    // SAFETY: what `reduction::launch` would launch for these arguments
                    // (`staged_launch` hands it over instead of launching).
                    unsafe { cuprum_runtime::__workspace::launch::launch(func, cfg, params)? };
                }
                stream.synchronize()?;
                Ok(t.elapsed().as_secs_f64() * 1e6 / n as f64)
            };
            per_call(launches / 10, &mut out2)?;
            bare(launches / 10)?;
            for _ in 0..rounds {
                ours.push(per_call(launches, &mut out2)?);
                bare_v.push(bare(launches)?);
            }
            Ok(())
        },
    )?;
    if ours.is_empty() {
        return Err(cuprum_runtime::Error::Unsupported { what: "the full sum did not launch".into() });
    }
    let (us, same_us) = (median(ours), median(bare_v));
    let mut work = |n: usize| -> Result<f64> {
        let t = std::time::Instant::now();
        for _ in 0..n {
            reduction::host_work_only(
                k,
                &[],
                &[Arg::input(&x)],
                Arg::output(&mut out),
                &axes,
                false,
                &opts,
            )?;
        }
        Ok(t.elapsed().as_secs_f64() * 1e6 / n as f64)
    };
    work(launches / 10)?;
    let work_us = median((0..rounds).map(|_| work(launches)).collect::<Result<_>>()?);
    rows.push(Row {
        name: "reduction call, host cost per call",
        value: us,
        unit: "us",
        ceiling_name: "the same kernel launched bare",
        ceiling: same_us,
        target: Some(("<=", 1.3)),
        note: format!(
            "{launches} full sums of 1024 f32, one synchronize; cuprum's host work without the launch: {work_us:.3} us; \
             bare cudarc launch of an empty kernel: {bare_launch_us:.2} us (ratio {:.3})",
            us / bare_launch_us
        ),
    });
    Ok(rows)
}
