//! Data-parallel training of a linear regression over every GPU of the machine: the rows are
//! split into one shard per GPU, each GPU computes its shard's gradient (a `#[reduction]` of the
//! predictions along the features, the residuals, a `#[reduction]` of `residual * x` along the
//! rows: `kernels/data_parallel.rs`), NCCL sums the gradients across the GPUs (`all_reduce` in
//! place, in one group: one process drives all GPUs), and every GPU takes the same step on its
//! copy of the weights.
//!
//! Each kernel is queued on every GPU in turn (`gradients`): GPU 1's first kernel follows GPU 0's
//! by one launch's host work, not by GPU 0's whole gradient.
//!
//! Checked: the first summed gradient against the host's (f64, from the same data), and the
//! weights after each of the first `CHECKED` steps and after the timed steps against the same
//! steps on one GPU holding all the rows (the sums differ only in their order). Timed as a training loop runs:
//! runs of `RUN` consecutive steps, the host queueing the next step while the GPUs run this one,
//! each run between two synchronisations of the devices; the time per step is a run's time over
//! `RUN`, the median of `TIMED` runs. The one-GPU reference runs the same code (one shard, no
//! all-reduce) timed the same way. Also prints, timed the same way, the all-reduce of the
//! gradient sums alone (what the data-parallel step adds to half the one-GPU step) and each of
//! one GPU's kernels alone with its bytes per second. With one GPU the data-parallel run has one
//! rank (NCCL still runs).
//!
//! `cargo run --release -p cuprum-examples --example data_parallel [-- ROWS]` (default 2^22 rows
//! of 16 f32 features). Needs libnccl.so.2 (docs/multi-gpu.md); sets `NCCL_NVLS_ENABLE=0` at the
//! start of `main`, before any communicator (NVLink multicast stays off).

#[path = "kernels/data_parallel.rs"]
mod kernels;

use std::time::Instant;

use cuprum::runtime::nccl::{self, Communicator, ReduceOp};
use cuprum::runtime::{Array, Device, Error, Result};

/// Features per row.
const D: usize = 16;
/// The learning rate.
const LR: f32 = 0.1;
/// Steps checked one by one.
const CHECKED: usize = 5;
/// Timed runs, of `RUN` consecutive steps each.
const TIMED: usize = 20;
const RUN: usize = 10;

fn main() {
    // SAFETY: the first thing `main` does: no other thread exists yet.
    unsafe { nccl::disable_nvls() };
    let rows: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1 << 22);
    let gpus = match Device::count() {
        Ok(n) if n > 0 => n,
        _ => {
            println!("no CUDA GPU: data parallelism through NCCL needs at least one");
            return;
        }
    };
    if let Err(e) = run(rows, gpus) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// Uniform in [-1, 1) from a 64-bit LCG (a fixed, reproducible data set).
fn uniform(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

/// One GPU's rows and its copy of the weights.
struct Shard {
    device: Device,
    x: Array<f32>,
    y: Array<f32>,
    w: Array<f32>,
}

impl Shard {
    fn new(device: &Device, x: &[f32], y: &[f32], w: &[f32]) -> Result<Shard> {
        let _on = device.use_scoped()?;
        Ok(Shard {
            device: device.clone(),
            x: Array::from_shape_vec([y.len(), D], x.to_vec())?,
            y: Array::from_vec(y.to_vec())?,
            w: Array::from_vec(w.to_vec())?,
        })
    }

    /// The rows' predictions `x . w`.
    fn predict(&self) -> Result<Array<f32>> {
        let _on = self.device.use_scoped()?;
        kernels::predict::call(&self.x, &self.w.reshape([1, D])?).axis(1).run()
    }

    /// The residuals `prediction - y`.
    fn residual(&self, prediction: &Array<f32>) -> Result<Array<f32>> {
        let _on = self.device.use_scoped()?;
        kernels::residual::call(prediction, &self.y)
    }

    /// The gradient sum over the rows, `sum of residual * x`, one per feature.
    fn gradient(&self, residual: &Array<f32>) -> Result<Array<f32>> {
        let _on = self.device.use_scoped()?;
        kernels::gradient::call(&residual.reshape([self.y.len(), 1])?, &self.x).axis(0).run()
    }

    fn step(&mut self, sum: &Array<f32>, scale: f32) -> Result<()> {
        let _on = self.device.use_scoped()?;
        self.w = kernels::step::call(&self.w, sum, scale)?;
        Ok(())
    }
}

/// Every shard's gradient sum, `sum over its rows of (x . w - y) * x`, queued one kernel at a
/// time across the shards: each GPU's first kernel is queued one launch after the previous
/// GPU's, not after its whole gradient.
fn gradients(shards: &[Shard]) -> Result<Vec<Array<f32>>> {
    let predictions = shards.iter().map(Shard::predict).collect::<Result<Vec<_>>>()?;
    let residuals = shards.iter().zip(&predictions).map(|(s, p)| s.residual(p)).collect::<Result<Vec<_>>>()?;
    shards.iter().zip(&residuals).map(|(s, r)| s.gradient(r)).collect()
}

/// Sums `sums` (one array per GPU) across the GPUs in place: one NCCL group.
fn all_reduce(comms: &[Communicator], sums: &mut [Array<f32>]) -> Result<()> {
    nccl::group(|| {
        for (comm, sum) in comms.iter().zip(sums.iter_mut()) {
            comm.all_reduce_in_place(sum, ReduceOp::Sum)?;
        }
        Ok(())
    })
}

fn mismatch(what: String) -> Error {
    Error::Unsupported { what: format!("the data-parallel step differs from the reference: {what}") }
}

/// `got` within `tol` of `want`, relative to `want`'s largest magnitude.
fn check(got: &[f32], want: &[f64], tol: f64, what: &str) -> Result<()> {
    let scale = want.iter().fold(1e-30f64, |m, v| m.max(v.abs()));
    for (j, (&g, &w)) in got.iter().zip(want).enumerate() {
        if (g as f64 - w).abs() > tol * scale {
            return Err(mismatch(format!("{what}[{j}] = {g}, want {w}")));
        }
    }
    Ok(())
}

fn run(rows: usize, gpus: usize) -> Result<()> {
    let devices: Vec<Device> = (0..gpus).map(Device::get).collect::<Result<_>>()?;
    let w_true: Vec<f32> = (0..D).map(|j| (j as f32 + 1.0) / D as f32 - 0.4).collect();
    let x = uniform(rows * D, 11);
    let noise = uniform(rows, 12);
    let y: Vec<f32> = (0..rows)
        .map(|i| (0..D).map(|j| x[i * D + j] * w_true[j]).sum::<f32>() + 0.01 * noise[i])
        .collect();
    let w0 = vec![0.25f32; D];
    let scale = LR * 2.0 / rows as f32;

    // The reference: all rows on GPU 0.
    let mut single = Shard::new(&devices[0], &x, &y, &w0)?;
    // The shards: rows split as evenly as they go, one per GPU.
    let mut shards = Vec::new();
    for (g, d) in devices.iter().enumerate() {
        let (lo, hi) = (rows * g / gpus, rows * (g + 1) / gpus);
        shards.push(Shard::new(d, &x[lo * D..hi * D], &y[lo..hi], &w0)?);
    }
    let comms = Communicator::all(&devices)?;

    let parallel_step = |shards: &mut Vec<Shard>| -> Result<Vec<Array<f32>>> {
        let mut sums = gradients(shards)?;
        all_reduce(&comms, &mut sums)?;
        for (shard, sum) in shards.iter_mut().zip(&sums) {
            shard.step(sum, scale)?;
        }
        Ok(sums)
    };
    let single_step = |single: &mut Shard| -> Result<Array<f32>> {
        let sum = gradients(std::slice::from_ref(single))?.remove(0);
        single.step(&sum, scale)?;
        Ok(sum)
    };

    // Checked steps: the first summed gradient against the host's, then every step's weights
    // against the one-GPU steps'.
    let mut host_sum = vec![0f64; D];
    for i in 0..rows {
        let row = &x[i * D..(i + 1) * D];
        let r: f64 = row.iter().zip(&w0).map(|(&a, &b)| a as f64 * b as f64).sum::<f64>() - y[i] as f64;
        for (s, &a) in host_sum.iter_mut().zip(row) {
            *s += r * a as f64;
        }
    }
    for s in 0..CHECKED {
        let sums = parallel_step(&mut shards)?;
        let reference = single_step(&mut single)?;
        let want_w: Vec<f64> = single.w.to_vec()?.iter().map(|&v| v as f64).collect();
        for (g, (shard, sum)) in shards.iter().zip(&sums).enumerate() {
            if s == 0 {
                check(&sum.to_vec()?, &host_sum, 1e-4, &format!("GPU {g}'s summed gradient"))?;
                let r: Vec<f64> = reference.to_vec()?.iter().map(|&v| v as f64).collect();
                check(&sum.to_vec()?, &r, 1e-4, &format!("GPU {g}'s summed gradient against one GPU's"))?;
            }
            check(&shard.w.to_vec()?, &want_w, 1e-5, &format!("step {s}: GPU {g}'s weights"))?;
        }
    }

    // Runs of RUN consecutive steps, each between two synchronisations: the time per step of a
    // training loop, where the host queues the next step while the GPUs run this one.
    let sync = |ds: &[Device]| ds.iter().try_for_each(Device::synchronize);
    let time = |f: &mut dyn FnMut() -> Result<()>, ds: &[Device]| -> Result<f64> {
        let mut t = Vec::with_capacity(TIMED);
        for _ in 0..TIMED {
            sync(ds)?;
            let start = Instant::now();
            for _ in 0..RUN {
                f()?;
            }
            sync(ds)?;
            t.push(start.elapsed().as_secs_f64() * 1e3 / RUN as f64);
        }
        t.sort_by(f64::total_cmp);
        Ok(t[TIMED / 2])
    };
    let parallel_ms = time(&mut || parallel_step(&mut shards).map(drop), &devices)?;
    let single_ms = time(&mut || single_step(&mut single).map(drop), &devices[..1])?;
    // The all-reduce alone, on arrays of the gradients' size (zeros: sums of sums stay finite).
    let mut sums = devices
        .iter()
        .map(|d| {
            let _on = d.use_scoped()?;
            Array::<f32>::zeros([D])
        })
        .collect::<Result<Vec<_>>>()?;
    let all_reduce_ms = time(&mut || all_reduce(&comms, &mut sums), &devices)?;

    // One GPU's kernels alone, timed the same way, with the bytes each reads and writes: how near
    // the copy ceiling they run.
    let prediction = single.predict()?;
    let residual = single.residual(&prediction)?;
    let predict_ms = time(&mut || single.predict().map(drop), &devices[..1])?;
    let residual_ms = time(&mut || single.residual(&prediction).map(drop), &devices[..1])?;
    let gradient_ms = time(&mut || single.gradient(&residual).map(drop), &devices[..1])?;
    // x and one f32 per row (the predictions written, the residuals read); 3 f32 per row.
    let (reduction_bytes, residual_bytes) = ((rows * (D + 1) * 4) as f64, (rows * 12) as f64);
    let gbs = |bytes: f64, ms: f64| bytes / ms / 1e6;

    // Both took the same steps: the weights must still agree.
    let steps = CHECKED + TIMED * RUN;
    let want_w: Vec<f64> = single.w.to_vec()?.iter().map(|&v| v as f64).collect();
    for (g, shard) in shards.iter().enumerate() {
        check(&shard.w.to_vec()?, &want_w, 1e-5, &format!("after {steps} steps: GPU {g}'s weights"))?;
    }
    let w = shards[0].w.to_vec()?;
    println!(
        "linear regression, {rows} rows x {D} f32 features, {gpus} GPU(s) (NCCL {}): weights after {steps} steps {:.3?}",
        nccl::version().map(|((a, b, c), _)| format!("{a}.{b}.{c}")).unwrap_or_default(),
        w
    );
    println!(
        "time per step: {parallel_ms:.3} ms data-parallel on {gpus} GPU(s), {single_ms:.3} ms on one GPU ({:.2}x; \
         median of {TIMED} runs of {RUN} steps)",
        single_ms / parallel_ms
    );
    println!("the all-reduce of the {D} gradient sums alone: {all_reduce_ms:.3} ms per step (timed the same way)");
    println!(
        "one GPU's kernels alone: predict {predict_ms:.3} ms ({:.0} GB/s), residual {residual_ms:.3} ms ({:.0} GB/s), \
         gradient {gradient_ms:.3} ms ({:.0} GB/s)",
        gbs(reduction_bytes, predict_ms),
        gbs(residual_bytes, residual_ms),
        gbs(reduction_bytes, gradient_ms)
    );
    Ok(())
}
