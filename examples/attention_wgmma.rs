//! Flash attention forward in FlashAttention-3's design, written in Rust: the `#[rawkernel]`s
//! of examples/kernels_sm90a/attention_wgmma.rs (TMA loads of K/V tiles by a producer
//! warpgroup, `wgmma` for Q K^T and P V with P from registers, online softmax in registers, two
//! consumer warpgroups in ping-pong), checked on sampled rows against an f64 host reference and
//! timed with CUDA events, for bf16 and f16, causal and not, with and without ping-pong.
//!
//! `cargo run --release -p cuprum-examples --example attention_wgmma -- [B H S D]` (default 4 32
//! 4096 128 on a GPU; D is 64 or 128, S any length). Needs a compute capability 9.0 GPU (H100,
//! H200): the kernels are built for sm_90a only. Prints TFLOP/s (`4 B H S^2 D` flops, half of it
//! when causal). With `CUPRUM_DEVICE=cpu` it runs on the CPU device (default 1 2 130 64) and
//! checks every row. `cuprum-bench --only attention` prints the bf16 rows beside the
//! FlashAttention-2 example's; `benches/attention_torch.py` prints torch's SDPA on the same shapes.
//!
//! Ping-pong or not is a tuned site (examples/attention_wgmma_lib.rs, docs/tuning.md): `-- --tune`
//! times both schedules on this GPU at issue 37's shapes and writes the faster per head dimension
//! and causality into `examples/tuning/sm_XY.toml`, which the next build embeds
//! (`flash_attention_wgmma_tuned` launches it).

#[allow(dead_code)]
#[path = "attention_lib.rs"]
mod attention_lib;
#[path = "attention_wgmma_lib.rs"]
mod attention_wgmma_lib;

use attention_lib::{Shape, check_with, inputs};
use attention_wgmma_lib::{WgmmaAttentionElement, flash_attention_wgmma};
use cuprum::prelude::{bf16, f16};
use cuprum::runtime::{Array, Device, Event, Result, Stream};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--tune") {
        return tune();
    }
    let nums: Vec<usize> = args.iter().filter_map(|a| a.parse().ok()).collect();
    let on_cpu = Device::current().map(|d| d.is_cpu()).unwrap_or(false);
    let shape = match nums[..] {
        [batch, heads, seq, dim] => Shape { batch, heads, seq, dim },
        _ if on_cpu => Shape { batch: 1, heads: 2, seq: 130, dim: 64 },
        _ => Shape { batch: 4, heads: 32, seq: 4096, dim: 128 },
    };
    if !on_cpu {
        match Device::count() {
            Ok(c) if c > 0 => {}
            _ => return println!("no CUDA GPU found: the FlashAttention-3 example needs one of compute capability 9.0 (H100, H200), or CUPRUM_DEVICE=cpu"),
        }
    }
    let seed = match std::env::var("CUPRUM_TEST_SEED") {
        Ok(v) => v.trim().parse().unwrap_or_else(|e| panic!("CUPRUM_TEST_SEED={v:?} is not a decimal u64: {e}")),
        Err(_) => std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |t| t.as_nanos() as u64),
    };
    println!("seed = {seed} (set CUPRUM_TEST_SEED={seed} to reproduce)");
    let result = (|| -> Result<()> {
        if !on_cpu {
            let cc = Device::get(0)?.compute_capability();
            if cc != (9, 0) {
                return Err(cuprum::runtime::Error::Unsupported {
                    what: format!("wgmma and TMA need compute capability 9.0 (the kernels are built for sm_90a); this GPU is {}.{}", cc.0, cc.1),
                });
            }
        }
        for causal in [false, true] {
            for pingpong in [true, false] {
                run::<bf16>(shape, causal, pingpong, seed, on_cpu)?;
            }
            run::<f16>(shape, causal, true, seed, on_cpu)?;
        }
        Ok(())
    })();
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// `--tune`: both schedules timed on GPU 0 per key, the faster written into
/// `examples/tuning/sm_XY.toml` (docs/tuning.md).
fn tune() {
    use cuprum::runtime::tuning::{self, Options};
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tuning");
    let done = Device::get(0).and_then(|device| {
        if device.compute_capability() != (9, 0) {
            return Err(cuprum::runtime::Error::Unsupported { what: "the FlashAttention-3 kernels are built for sm_90a: tune them on a compute capability 9.0 GPU".into() });
        }
        tuning::tune(&device, &[&attention_wgmma_lib::TUNABLE], &dir, &Options::default())
    });
    match done {
        Ok((path, file)) => {
            let site = attention_wgmma_lib::SCHEDULE.name();
            for c in file.site(site).map_or(&[][..], |s| &s.choices[..]) {
                println!("{site} {}: {}  ({})", c.key, c.candidate, c.note.as_deref().unwrap_or(""));
            }
            println!("wrote {}; rebuild the examples (and the bench) to embed it", path.display());
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}

fn run<T: WgmmaAttentionElement>(shape: Shape, causal: bool, pingpong: bool, seed: u64, on_cpu: bool) -> Result<()> {
    let name = format!("attention_wgmma {} {:?} causal={causal} pingpong={pingpong}", T::NAME, shape.dims());
    // Every row on the CPU device (small shapes); 64 sampled rows on a GPU.
    let rows = if on_cpu { usize::MAX } else { 64 };
    let report = check_with::<T>(shape, causal, seed, rows, |q, k, v, o, c| flash_attention_wgmma(q, k, v, o, c, pingpong))?;
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
        flash_attention_wgmma(&dq, &dk, &dv, &mut dout, causal, pingpong)?;
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
