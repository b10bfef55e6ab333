//! The CPU device's rows (`cuprum-bench --cpu`; issue 16, docs/cpu.md): each kernel on the CPU
//! device against a hand-written rayon loop of the same work in the same run, as GB/s (bytes
//! read + written / wall time, median of the rounds; the sort as keys per second). Targets:
//! elementwise and reductions at least 0.5 of the rayon loop, the `#[rawkernel]` stencil (shared
//! memory and `sync_threads`) at least 0.2; issue 36's `cumsum`, `sort` and a ufunc (`tan`) at
//! least 0.5. Where cuprum's routine returns a new array (those three), the rayon loop allocates
//! its output too (a `Vec` per call: the same work, page faults included); where it writes a
//! given output (`call_into`), the loop writes a buffer allocated once.

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
    let mut push = |unit: &'static str, name: &'static str, bytes: f64, ours: f64, theirs: f64, target: f64, note: String| {
        let per_s = |ms: f64| if unit == "GB/s" { gbs(bytes, ms) } else { bytes / (ms * 1e-3) / 1e6 };
        rows.push(Row {
            name,
            value: per_s(ours),
            unit,
            ceiling_name: "rayon loop, same work",
            ceiling: per_s(theirs),
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
    push("GB/s", "cpu: (x-y)^2 f32 elementwise", 12.0 * n as f64, ours, theirs, 0.5, format!("2^{log2} elements"));

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
    push("GB/s", "cpu: full sum f32", 4.0 * n as f64, ours, theirs, 0.5, format!("2^{log2} elements"));

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
    push("GB/s", "cpu: sum along axis 1 f32", 4.0 * n as f64, ours, theirs, 0.5, format!("({side}, {side})"));

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
    push("GB/s", "cpu: #[rawkernel] 3-point stencil, shared + sync_threads", 8.0 * n as f64, ours, theirs, 0.2, format!("2^{log2} elements, blocks of 256"));

    // cumsum of the flattened array against a two-pass parallel prefix sum (chunk sums, their
    // exclusive scan, each chunk scanned from its offset).
    let ours = time_ms(rounds, || x.cumsum(None).map(drop))?;
    let mut scanned = Vec::new();
    let theirs = time_ms(rounds, || {
        // A new output, as cumsum returns one.
        scanned = vec![0f32; n];
        let sums: Vec<f32> = xs.par_chunks(CHUNK).map(|c| c.iter().sum()).collect();
        let mut offsets = Vec::with_capacity(sums.len());
        let mut acc = 0f32;
        for s in sums {
            offsets.push(acc);
            acc += s;
        }
        scanned.par_chunks_mut(CHUNK).zip(xs.par_chunks(CHUNK)).zip(offsets).for_each(|((out, x), mut acc)| {
            for (o, &v) in out.iter_mut().zip(x) {
                acc += v;
                *o = acc;
            }
        });
        Ok(())
    })?;
    let mut exact = 0f64;
    let want: Vec<f32> = xs.iter().map(|&v| {
        exact += v as f64;
        exact as f32
    }).collect();
    // f32 prefix sums (sequential runs of up to 2^14 additions to a large total): within a
    // relative 1e-3 of the f64 sums; a wrong scan is far off.
    for (who, got) in [("cuprum", x.cumsum(None)?.to_vec()?), ("rayon", scanned)] {
        if let Some((g, w)) = got.iter().zip(&want).find(|(g, w)| (*g - *w).abs() > 1e-3 * w.abs()) {
            return Err(cuprum_runtime::Error::Unsupported { what: format!("the {who} cumsum {g} is not the f64 prefix sum {w}") });
        }
    }
    push("GB/s", "cpu: cumsum f32", 8.0 * n as f64, ours, theirs, 0.5, format!("2^{log2} elements"));

    // A ufunc: tan.
    let ours = time_ms(rounds, || x.tan().map(drop))?;
    let mut tans = Vec::new();
    let theirs = time_ms(rounds, || {
        tans = vec![0f32; n];
        tans.par_chunks_mut(CHUNK).zip(xs.par_chunks(CHUNK)).for_each(|(t, x)| {
            for (t, &v) in t.iter_mut().zip(x) {
                *t = v.tan();
            }
        });
        Ok(())
    })?;
    check(&x.tan()?.to_vec()?, &tans, "tan")?;
    push("GB/s", "cpu: tan f32 (a ufunc)", 8.0 * n as f64, ours, theirs, 0.5, format!("2^{log2} elements"));

    // sort of f32 keys (uniform bits over every exponent: no digit pass can be skipped) against
    // rayon's parallel sort of a copy (unstable: of keys alone, stability cannot be seen).
    let keys: Vec<f32> = (0..n as u64)
        .map(|i| {
            let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z ^= z >> 31;
            (z as u32 >> 2) as f32 * if z & 1 == 0 { 1e-6 } else { -3e-4 }
        })
        .collect();
    let k = Array::from_vec(keys.clone())?;
    let ours = time_ms(rounds, || k.sort(None).map(drop))?;
    let mut sorted = Vec::new();
    let theirs = time_ms(rounds, || {
        sorted = keys.clone();
        sorted.par_sort_unstable_by(f32::total_cmp);
        Ok(())
    })?;
    let got = k.sort(None)?.to_vec()?;
    if let Some(i) = (0..n).find(|&i| got[i] != sorted[i]) {
        return Err(mismatch("sort", got[i], sorted[i]));
    }
    push("Mkeys/s", "cpu: sort f32 keys", n as f64, ours, theirs, 0.5, format!("2^{log2} keys, rayon par_sort_unstable_by"));
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
