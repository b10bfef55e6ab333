//! Flash attention forward written in Rust: the `#[rawkernel]`s of examples/kernels/attention.rs
//! (FlashAttention-2's design on `mma_m16n8k16`, `ldmatrix` and `cp_async`), checked on sampled
//! rows against an f64 host reference and timed with CUDA events, for bf16 and f16, causal and
//! not.
//!
//! `cargo run --release -p cuprum-examples --example attention -- [B H S D]` (default 4 32 4096
//! 128 on a GPU; D is 64 or 128, S any length). Prints TFLOP/s (`4 B H S^2 D` flops, half of it
//! when causal). With `CUPRUM_DEVICE=cpu` it runs on the CPU device (default 1 2 130 64: the
//! kernels run there too, slowly) and checks every row. `--small` runs the small shape wherever.
//! `cuprum-bench` prints the bf16 rows; `benches/attention_torch.py` prints torch's SDPA on the
//! same shapes.

#[path = "attention_lib.rs"]
mod attention_lib;

use attention_lib::{AttentionElement, Shape, check, flash_attention, inputs};
use cuprum::prelude::{bf16, f16};
use cuprum::runtime::{Array, Device, Event, Result, Stream};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let small = args.iter().any(|a| a == "--small");
    let nums: Vec<usize> = args.iter().filter_map(|a| a.parse().ok()).collect();
    let on_cpu = Device::current().map(|d| d.is_cpu()).unwrap_or(false);
    let shape = match nums[..] {
        [batch, heads, seq, dim] => Shape { batch, heads, seq, dim },
        _ if small || on_cpu => Shape { batch: 1, heads: 2, seq: 130, dim: 64 },
        _ => Shape { batch: 4, heads: 32, seq: 4096, dim: 128 },
    };
    if !on_cpu {
        match Device::count() {
            Ok(c) if c > 0 => {}
            _ => return println!("no CUDA GPU found: run with CUPRUM_DEVICE=cpu for the CPU device"),
        }
    }
    let seed = match std::env::var("CUPRUM_TEST_SEED") {
        Ok(v) => v.trim().parse().unwrap_or_else(|e| panic!("CUPRUM_TEST_SEED={v:?} is not a decimal u64: {e}")),
        Err(_) => std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |t| t.as_nanos() as u64),
    };
    println!("seed = {seed} (set CUPRUM_TEST_SEED={seed} to reproduce)");
    let result = (|| -> Result<()> {
        for causal in [false, true] {
            run::<bf16>(shape, causal, seed, on_cpu)?;
            run::<f16>(shape, causal, seed, on_cpu)?;
        }
        Ok(())
    })();
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run<T: AttentionElement>(shape: Shape, causal: bool, seed: u64, on_cpu: bool) -> Result<()> {
    let name = format!("attention {} {:?} causal={causal}", T::NAME, shape.dims());
    // Every row on the CPU device (small shapes); 64 sampled rows on a GPU.
    let rows = if on_cpu { usize::MAX } else { 64 };
    let report = check::<T>(shape, causal, seed, rows)?;
    println!("{name}: worst |error| {:.2e} on {} rows (tolerance {:.2e})", report.worst, report.rows, report.tolerance);
    if on_cpu {
        return Ok(());
    }
    let [q, k, v] = inputs::<T>(shape, seed);
    let dims = shape.dims();
    let up = |x: &[T]| Array::from_slice(x)?.reshape(dims);
    let (dq, dk, dv) = (up(&q)?, up(&k)?, up(&v)?);
    let mut dout = up(&q)?;
    let stream = Stream::current()?;
    let mut times = Vec::new();
    for i in 0..12 {
        let start = Event::record(&stream)?;
        flash_attention(&dq, &dk, &dv, &mut dout, causal)?;
        let end = Event::record(&stream)?;
        end.synchronize()?;
        if i >= 2 {
            times.push(Event::elapsed_ms(&start, &end)? as f64);
        }
    }
    times.sort_by(f64::total_cmp);
    let t = times[times.len() / 2];
    println!("{name}: {t:.3} ms, {:.1} TFLOP/s", shape.flops(causal) / (t * 1e-3) / 1e12);
    Ok(())
}
