//! The CPU device's rows (`cuprum-bench --cpu`; issue 16, docs/cpu.md): each kernel on the CPU
//! device against a hand-written rayon loop of the same work in the same run, as GB/s (bytes
//! read + written / wall time, median of the rounds). Targets: elementwise and reductions at
//! least 0.5 of the rayon loop, the `#[rawkernel]` stencil (shared memory and `sync_threads`)
//! at least 0.2.

use std::time::Instant;

use cuprum_runtime::{Array, Device, LaunchConfig, Result};
use rayon::prelude::*;

use super::kernels::{squared_diff, stencil3};
use super::{Row, median};

/// Wall time of `f` in ms: the median of `rounds` after one warm-up call.
fn time_ms(rounds: usize, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    f()?;
    let mut t = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let s = Instant::now();
        f()?;
        t.push(s.elapsed().as_secs_f64() * 1e3);
    }
    Ok(median(t))
}

fn gbs(bytes: f64, ms: f64) -> f64 {
    bytes / (ms * 1e-3) / 1e9
}

fn data(n: usize, seed: u64) -> Vec<f32> {
    (0..n).map(|i| (((i as u64).wrapping_mul(2654435761) ^ seed) % 1009) as f32 / 97.0 + 0.25).collect()
}

/// Chunk of the rayon loops (elements).
const CHUNK: usize = 1 << 14;

/// The rows, on the CPU device (made current for the section).
pub fn rows(quick: bool) -> Result<Vec<Row>> {
    let _cpu = Device::cpu().use_scoped()?;
    let rounds = if quick { 3 } else { 7 };
    let log2 = if quick { 24 } else { 26 };
    let n = 1usize << log2;
    let threads = rayon::current_num_threads();
    let mut rows = Vec::new();
    let mut push = |name: &'static str, bytes: f64, ours: f64, theirs: f64, target: f64, note: String| {
        rows.push(Row {
            name,
            value: gbs(bytes, ours),
            unit: "GB/s",
            ceiling_name: "rayon loop, same work",
            ceiling: gbs(bytes, theirs),
            target: Some((">=", target)),
            note: format!("{note}; {ours:.1} vs {theirs:.1} ms, {threads} threads"),
        });
    };
    let (xs, ys) = (data(n, 1), data(n, 2));
    let (x, y) = (Array::from_vec(xs.clone())?, Array::from_vec(ys.clone())?);

    // (x - y)^2
    let mut z = Array::<f32>::empty([n])?;
    let ours = time_ms(rounds, || squared_diff::call_into(&x, &y, &mut z))?;
    let mut zs = vec![0f32; n];
    let theirs = time_ms(rounds, || {
        zs.par_chunks_mut(CHUNK).zip(xs.par_chunks(CHUNK)).zip(ys.par_chunks(CHUNK)).for_each(|((z, x), y)| {
            for ((z, &a), &b) in z.iter_mut().zip(x).zip(y) {
                let d = a - b;
                *z = d * d;
            }
        });
        Ok(())
    })?;
    check(&z.to_vec()?, &zs, "(x-y)^2")?;
    push("cpu: (x-y)^2 f32 elementwise", 12.0 * n as f64, ours, theirs, 0.5, format!("2^{log2} elements"));

    // Full sum.
    let mut total = 0f32;
    let ours = time_ms(rounds, || x.sum().run().map(drop))?;
    let theirs = time_ms(rounds, || {
        total = xs.par_chunks(CHUNK).map(|c| c.iter().sum::<f32>()).sum();
        Ok(())
    })?;
    let exact: f64 = xs.iter().map(|&v| v as f64).sum();
    for (who, got) in [("cuprum", x.sum().run()?.to_vec()?[0]), ("rayon", total)] {
        if (got as f64 - exact).abs() > 1e-4 * exact.abs() {
            return Err(cuprum_runtime::Error::Unsupported { what: format!("the {who} full sum {got} is not the f64 sum {exact}") });
        }
    }
    push("cpu: full sum f32", 4.0 * n as f64, ours, theirs, 0.5, format!("2^{log2} elements"));

    // Sum along the contiguous axis of a square matrix.
    let side = 1usize << (log2 / 2);
    let m = x.reshape([side, side])?;
    let mut sums = vec![0f32; side];
    let ours = time_ms(rounds, || m.sum().axis(1).run().map(drop))?;
    let theirs = time_ms(rounds, || {
        sums.par_iter_mut().zip(xs.par_chunks(side)).for_each(|(s, row)| *s = row.iter().sum());
        Ok(())
    })?;
    let got = m.sum().axis(1).run()?.to_vec()?;
    for (g, w) in got.iter().zip(&sums) {
        if (g - w).abs() > 1e-3 * w.abs() {
            return Err(mismatch("axis sum", *g, *w));
        }
    }
    push("cpu: sum along axis 1 f32", 4.0 * n as f64, ours, theirs, 0.5, format!("({side}, {side})"));

    // The 3-point stencil of a #[rawkernel] with shared memory and a barrier.
    let mut out = Array::<f32>::empty([n])?;
    let cfg = LaunchConfig::new(n.div_ceil(256) as u32, 256u32);
    let ours = time_ms(rounds, || stencil3::launch(&cfg, &x, &mut out, n as u32))?;
    let mut want = vec![0f32; n];
    let theirs = time_ms(rounds, || {
        want.par_chunks_mut(CHUNK).enumerate().for_each(|(c, w)| {
            let base = c * CHUNK;
            for (k, w) in w.iter_mut().enumerate() {
                let i = base + k;
                let l = if i > 0 { xs[i - 1] } else { xs[i] };
                let r = if i + 1 < n { xs[i + 1] } else { xs[i] };
                *w = (l + xs[i] + r) * (1.0 / 3.0);
            }
        });
        Ok(())
    })?;
    check(&out.to_vec()?, &want, "stencil")?;
    push("cpu: #[rawkernel] 3-point stencil, shared + sync_threads", 8.0 * n as f64, ours, theirs, 0.2, format!("2^{log2} elements, blocks of 256"));
    Ok(rows)
}

fn mismatch(what: &str, got: f32, want: f32) -> cuprum_runtime::Error {
    cuprum_runtime::Error::Unsupported { what: format!("the CPU {what} differs from the rayon loop's: {got} vs {want}") }
}

fn check(got: &[f32], want: &[f32], what: &str) -> Result<()> {
    match got.iter().zip(want).find(|(g, w)| (*g - *w).abs() > 1e-5 * w.abs().max(1.0)) {
        Some((g, w)) => Err(mismatch(what, *g, *w)),
        None => Ok(()),
    }
}
