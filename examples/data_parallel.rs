//! Data-parallel training of a linear regression over every GPU of the machine: the rows are
//! split into one shard per GPU, each GPU computes its shard's gradient (a `#[reduction]` of the
//! predictions along the features, the residuals, a `#[reduction]` of `residual * x` along the
//! rows: `kernels/data_parallel.rs`), NCCL sums the gradients across the GPUs (`all_reduce` in
//! place, in one group: one process drives all GPUs), and every GPU takes the same step on its
//! copy of the weights.
//!
//! Checked: the first summed gradient against the host's (f64, from the same data), and the
//! weights after every step against the same steps on one GPU holding all the rows (the sums
//! differ only in their order). Prints the time per step of both (median of the timed steps).
//! With one GPU the data-parallel run has one rank (NCCL still runs).
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
/// Steps checked, then steps timed.
const CHECKED: usize = 5;
const TIMED: usize = 20;

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

    /// The shard's gradient sum, `sum over rows of (x . w - y) * x`, one per feature.
    fn gradient(&self) -> Result<Array<f32>> {
        let _on = self.device.use_scoped()?;
        let prediction = kernels::predict::call(&self.x, &self.w.reshape([1, D])?).axis(1).run()?;
        let residual = kernels::residual::call(&prediction, &self.y)?;
        kernels::gradient::call(&residual.reshape([self.y.len(), 1])?, &self.x).axis(0).run()
    }

    fn step(&mut self, sum: &Array<f32>, scale: f32) -> Result<()> {
        let _on = self.device.use_scoped()?;
        self.w = kernels::step::call(&self.w, sum, scale)?;
        Ok(())
    }
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
        let mut sums = shards.iter().map(Shard::gradient).collect::<Result<Vec<_>>>()?;
        nccl::group(|| {
            for (comm, sum) in comms.iter().zip(sums.iter_mut()) {
                comm.all_reduce_in_place(sum, ReduceOp::Sum)?;
            }
            Ok(())
        })?;
        for (shard, sum) in shards.iter_mut().zip(&sums) {
            shard.step(sum, scale)?;
        }
        Ok(sums)
    };
    let single_step = |single: &mut Shard| -> Result<Array<f32>> {
        let sum = single.gradient()?;
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

    let sync = |ds: &[Device]| ds.iter().try_for_each(Device::synchronize);
    let time = |f: &mut dyn FnMut() -> Result<()>, ds: &[Device]| -> Result<f64> {
        let mut t = Vec::with_capacity(TIMED);
        for _ in 0..TIMED {
            sync(ds)?;
            let start = Instant::now();
            f()?;
            sync(ds)?;
            t.push(start.elapsed().as_secs_f64() * 1e3);
        }
        t.sort_by(f64::total_cmp);
        Ok(t[TIMED / 2])
    };
    let parallel_ms = time(&mut || parallel_step(&mut shards).map(drop), &devices)?;
    let single_ms = time(&mut || single_step(&mut single).map(drop), &devices[..1])?;
    let w = shards[0].w.to_vec()?;
    println!(
        "linear regression, {rows} rows x {D} f32 features, {gpus} GPU(s) (NCCL {}): weights after {} steps {:.3?}",
        nccl::version().map(|((a, b, c), _)| format!("{a}.{b}.{c}")).unwrap_or_default(),
        CHECKED + TIMED,
        w
    );
    println!(
        "time per step: {parallel_ms:.3} ms data-parallel on {gpus} GPU(s), {single_ms:.3} ms on one GPU ({:.2}x; median of {TIMED})",
        single_ms / parallel_ms
    );
    Ok(())
}
