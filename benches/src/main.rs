//! `cuprum-bench`: cuprum's benchmark table (docs/architecture.md; each figure next to a ceiling). Every figure is printed next to a
//! ceiling measured in the same run on the same GPU, so the ratios hold across machines:
//!
//! - device-to-device copy bandwidth (bytes read + written, 2^28 f32, CUDA events, median);
//! - host cost of a bare cudarc launch of an empty kernel (wall time per call over 20,000 calls,
//!   one synchronize at the end);
//! - a bare NVRTC compile (CUBIN) of the small kernel the JIT rows compile;
//! - loading a cubin (cuModuleLoadData + cuModuleGetFunction), in a fresh process;
//! - cuBLAS's SGEMM at 4096^3 (FP32, no TF32), loaded at run time (`sgemm.rs`).
//!
//! Rows: RawKernel launch host cost; first call with an empty cache; first call in a
//! fresh process served by the disk cache; first call of a second RawKernel of the same source in
//! one process (modules already loaded); a grid-stride copy RawKernel; `#[rawkernel]` rows and
//! first calls in a fresh process of a precompiled kernel, a built-in operator, `sum`, `argmax`,
//! `var` and a kernel of a 20-instance file (`rawkernel.rs`, through `--child-aot`); the SGEMM
//! example's kernel (`sgemm.rs`); the flash attention example's kernel (`attention.rs`, beside torch's SDPA from `benches/attention_torch.py`); `Array::matmul` f32 and bf16 against the same cuBLAS call made
//! directly (`matmul.rs`); elementwise
//! rows (`elementwise.rs`); a sample of NumPy's ufuncs and random `normal` (`ufuncs.rs`);
//! reductions (full, contiguous axis, strided axis, 256^3, host cost per call: `reduction.rs`);
//! with two GPUs, an NCCL all-reduce and a peer copy beside NCCL and the driver called directly
//! (`multi_gpu.rs`, `--only multi`); the tuned launch sites, each key's baked choice beside every
//! candidate timed in the same run, and the count of tuning runs in the program (`tuning.rs`,
//! `--only tuning`).
//!
//! `cuprum-bench [--json] [--quick]`. Without a GPU (or libnvrtc) it says so and exits 1.
//! The warm-disk row re-runs this binary with the hidden flag `--child-warm-disk` (and
//! `CUPY_CACHE_DIR` set), so its in-memory state is really empty.

mod counting_scan;
mod cpu;
mod elementwise;
mod fused;
mod fusion;
mod graph;
mod manipulation;
mod multi_gpu;
mod reduction;
mod sorting;
mod tuning;
mod ufuncs;

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

mod kernels;
mod many_kernels;
mod rawkernel;
mod gemm_bf16;
mod attention;
mod gemm_fp8;
mod matmul;
mod grid_sync;
mod sgemm;

use cudarc::driver::{LaunchConfig as CuLaunchConfig, PushKernelArg};
use cuprum_runtime::cache::{self, CacheConfig};
use cuprum_runtime::{LaunchConfig, RawKernel, RawModule};
use cuprum_runtime::{Array, Device, Event, Result, Stream, device, nvrtc, stats};

/// The empty kernel of the launch-cost rows (same arguments as the add kernel).
const EMPTY: &str = r#"
extern "C" __global__ void empty_kernel(const float* x1, const float* x2, float* y, unsigned int n) {}
"#;

/// The small kernel of the compile rows.
const ADD: &str = r#"
extern "C" __global__ void my_add(const float* x1, const float* x2, float* y, unsigned int n) {
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    if (tid < n) y[tid] = x1[tid] + x2[tid];
}
"#;

/// Grid-stride copy of 16-byte elements, launched with a grid that covers the array (one element
/// per thread), as the driver's copy does. On an H200 a grid-stride loop over a grid of 2 to 8
/// blocks of 256 threads per SM (with 1 to 8 loads in flight, streaming hints, block-contiguous
/// chunks) reaches 0.72 to 0.97 of the driver's device-to-device copy; a covering grid reaches
/// 1.00 (a CuPy experiment on the same GPU, reproduced by these rows).
const COPY: &str = r#"
extern "C" __global__ void copy_f32x4(const float4* __restrict__ x, float4* __restrict__ y,
                                      unsigned long long n4) {
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
        y[i] = x[i];
    }
}
"#;

struct Options {
    json: bool,
    quick: bool,
    /// Only the CPU device's rows (no GPU needed).
    cpu: bool,
    /// Only these sections of issue 36's rows, after the copy ceiling (`--only ufuncs,scan`).
    only: Option<Vec<String>>,
}

/// The sections `--only` takes.
const ONLY_SECTIONS: &str = "elementwise, ufuncs, manipulation, scan, sort, reduction, matmul, gemm, attention, tuning, cpu, multi";

/// One printed line: a figure beside its ceiling.
struct Row {
    name: &'static str,
    value: f64,
    unit: &'static str,
    ceiling_name: &'static str,
    ceiling: f64,
    /// `value / ceiling` is compared with `target`: `(">=", 0.95)` or `("<=", 1.15)`; `("<", x)`
    /// compares the value itself (absolute targets such as "< 1 ms").
    target: Option<(&'static str, f64)>,
    note: String,
}

impl Row {
    fn ratio(&self) -> f64 {
        self.value / self.ceiling
    }
    fn passes(&self) -> Option<bool> {
        let (op, t) = self.target?;
        Some(match op {
            ">=" => self.ratio() >= t,
            "<=" => self.ratio() <= t,
            "<" => self.value < t,
            _ => return None,
        })
    }
}

struct Ceiling {
    name: &'static str,
    value: f64,
    unit: &'static str,
}

/// The GPU time of what `f` enqueues on `stream`, between two events, in milliseconds.
fn event_ms(stream: &Stream, f: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
    let start = Event::record(stream)?;
    f()?;
    let end = Event::record(stream)?;
    end.synchronize()?;
    Ok(Event::elapsed_ms(&start, &end)? as f64)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn nonce() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
        ^ (std::process::id() as u64) << 32
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // The child modes (a new process each, started by the rows that need one) and diagnostics.
    let child = match args.first().map(String::as_str) {
        Some("--child-warm-disk") => Some(("cuprum-bench child", child_warm_disk(&args[1..]))),
        Some("--nvrtc-diag") => Some(("cuprum-bench", rawkernel::nvrtc_diag())),
        Some("--child-steps") => Some(("cuprum-bench child", rawkernel::child_steps())),
        Some("--child-aot") => Some(("cuprum-bench child", rawkernel::child_aot(args.get(1).map_or("copy", String::as_str)))),
        _ => None,
    };
    if let Some((who, result)) = child {
        return match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("{who}: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let mut opts = Options {
        json: false,
        quick: false,
        cpu: false,
        only: None,
    };
    let usage = "usage: cuprum-bench [--json] [--quick] [--cpu] [--only SECTION,...]";
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--only" => {
                let Some(list) = it.next() else {
                    eprintln!("cuprum-bench: `--only` needs a comma-separated list of sections ({ONLY_SECTIONS})\n{usage}");
                    return ExitCode::from(2);
                };
                let names: Vec<String> = list.split(',').map(|s| s.trim().to_string()).collect();
                if let Some(bad) = names.iter().find(|n| !ONLY_SECTIONS.split(", ").any(|s| s == n.as_str())) {
                    eprintln!("cuprum-bench: unknown section `{bad}` for `--only`; the sections are {ONLY_SECTIONS}");
                    return ExitCode::from(2);
                }
                opts.only = Some(names);
            }
            "--json" => opts.json = true,
            "--quick" => opts.quick = true,
            "--cpu" => opts.cpu = true,
            "-h" | "--help" => {
                println!(
                    "{usage}\n  --cpu: only the CPU device's rows (against rayon loops; no GPU needed)\n  --only: the copy ceiling, then only these sections ({ONLY_SECTIONS})"
                );
                return ExitCode::SUCCESS;
            }
            other => {
                eprintln!("cuprum-bench: unknown argument `{other}`\n{usage}");
                return ExitCode::from(2);
            }
        }
    }
    if opts.cpu {
        return match cpu_only(&opts) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("cuprum-bench --cpu: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let dev = match Device::current() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("cuprum-bench needs a CUDA GPU: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = nvrtc::info() {
        eprintln!("cuprum-bench needs libnvrtc for its JIT rows: {e}");
        return ExitCode::FAILURE;
    }
    match run(&dev, &opts) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cuprum-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `--cpu`: the CPU device's rows alone, each against a rayon loop of the same run.
fn cpu_only(opts: &Options) -> Result<()> {
    let rows = cpu::rows(opts.quick)?;
    let header = format!("cuprum-bench --cpu: {}", Device::cpu().name());
    if opts.json {
        print!("{}", to_json(&header, &[], &rows));
    } else {
        print!("{}", to_table(&header, &[], &rows));
    }
    Ok(())
}

fn io_err(e: std::io::Error) -> cuprum_runtime::Error {
    cuprum_runtime::Error::Unsupported {
        what: format!("benchmark I/O: {e}"),
    }
}

fn run(dev: &Device, opts: &Options) -> Result<()> {
    let info = nvrtc::info()?;
    let (major, minor) = dev.compute_capability();
    let target = nvrtc::choose_target((major, minor), &info.supported_archs, false, info.version)?;
    let driver = device::driver_version()?;
    // The JIT rows use a private, empty disk cache, removed on drop.
    let cache_dir = tempfile::Builder::new()
        .prefix("cuprum-bench-cache-")
        .tempdir()
        .map_err(io_err)?;
    cache::set_global(CacheConfig::at(cache_dir.path()));
    let stream = Stream::current()?;
    let launches = if opts.quick { 2_000 } else { 20_000 };
    let rounds = if opts.quick { 3 } else { 5 };

    // ---- ceilings -------------------------------------------------------------------------
    let copy_elems: usize = if opts.quick { 1 << 26 } else { 1 << 28 };
    let host: Vec<f32> = (0..copy_elems).map(|i| (i % 1_000_003) as f32).collect();
    let x = Array::<f32>::from_slice(&host)?;
    let mut y = Array::<f32>::zeros(copy_elems)?;
    let copy_bytes = (copy_elems * 4) as f64;
    // The copy ceiling is measured alternately with the copy row (below), so both see the same
    // clocks and the same L2 state.
    let copy = RawKernel::new(COPY, "copy_f32x4");
    copy.compile()?;
    let sms = dev.multiprocessor_count();
    let copy_cfg = LaunchConfig::for_elements(copy_elems / 4, 256);
    let (copy_ceiling, copy_gbs) = {
        let time = |f: &mut dyn FnMut() -> Result<()>| event_ms(&stream, f);
        let (xp, yp) = (x.device_ptr(), y.device_ptr());
        let (mut t_memcpy, mut t_kernel) = (Vec::new(), Vec::new());
        for i in 0..(if opts.quick { 6 } else { 22 }) {
            let a = time(&mut || {
                // SAFETY: both buffers hold `copy_elems` f32 on this device and outlive the copy
                // (synchronized through the end event).
                unsafe {
                    cudarc::driver::result::memcpy_dtod_async(
                        yp,
                        xp,
                        copy_elems * 4,
                        stream.handle(),
                    )
                }
                .map_err(cuprum_runtime::Error::driver_fn("cuMemcpyDtoDAsync"))
            })?;
            let b = time(&mut || {
                // SAFETY: copy_f32x4(const float4*, float4*, unsigned long long n4): both arrays
                // hold 4 * n4 f32 (16-byte aligned allocations).
                unsafe { copy.launch(&copy_cfg, (&x, &mut y, (copy_elems / 4) as u64)) }
            })?;
            if i > 1 {
                t_memcpy.push(a);
                t_kernel.push(b);
            }
        }
        let gbs = |t: Vec<f64>| 2.0 * copy_bytes / (median(t) * 1e-3) / 1e9;
        (gbs(t_memcpy), gbs(t_kernel))
    };
    // The kernel ran last: check what it wrote.
    if y.to_vec()? != host {
        return Err(cuprum_runtime::Error::Unsupported {
            what: "the copy kernel produced wrong data".into(),
        });
    }
    drop(host);
    drop((x, y));
    // The grid-stride copy RawKernel against the copy ceiling (measured above, alternately).
    let copy_row = Row {
        name: "grid-stride copy RawKernel (float4, 2^28 f32)",
        value: copy_gbs,
        unit: "GB/s",
        ceiling_name: "device-to-device copy",
        ceiling: copy_ceiling,
        target: Some((">=", 0.95)),
        note: "a covering grid x 256, timed alternately with the copy".into(),
    };

    if let Some(only) = &opts.only {
        let want = |s: &str| only.iter().any(|o| o == s);
        let mut rows = vec![copy_row];
        if want("elementwise") {
            rows.extend(elementwise::rows(copy_ceiling, 0.0, opts.quick, &stream)?);
        }
        if want("ufuncs") {
            rows.extend(ufuncs::rows(copy_ceiling, opts.quick, &stream)?);
        }
        if want("manipulation") {
            rows.extend(manipulation::rows(copy_ceiling, opts.quick, &stream)?);
        }
        if want("scan") {
            rows.extend(counting_scan::rows(copy_ceiling, opts.quick, &stream)?);
        }
        if want("sort") {
            rows.extend(sorting::rows(copy_ceiling, opts.quick, &stream)?);
        }
        if want("reduction") {
            rows.extend(reduction::rows(&stream, copy_ceiling, 0.0, opts.quick, rounds, launches)?);
        }
        if want("matmul") {
            rows.extend(matmul::rows(&stream)?);
        }
        if want("gemm") {
            // The bf16 GEMM examples (`mma.sync` and `wgmma`) against cuBLAS in the same run.
            rows.extend(gemm_bf16::rows(&stream)?.0);
        }
        if want("attention") {
            rows.extend(attention::rows(&stream)?);
        }
        if want("tuning") {
            rows.extend(tuning::rows(&stream)?);
        }
        if want("cpu") {
            rows.extend(cpu::rows(opts.quick)?);
        }
        if want("multi") {
            rows.extend(multi_gpu::rows()?);
        }
        let ceilings = [Ceiling { name: "device-to-device copy", value: copy_ceiling, unit: "GB/s" }];
        let header = format!("{} (sm_{major}{minor}, {sms} SMs), --only {}", dev.name(), only.join(","));
        if opts.json {
            print!("{}", to_json(&header, &ceilings, &rows));
        } else {
            print!("{}", to_table(&header, &ceilings, &rows));
        }
        return Ok(());
    }

    // One cubin for the bare launch, built by NVRTC.
    let empty_cubin = bare_compile(EMPTY, target)?;
    let n_small = 1024u32;
    let a = Array::<f32>::zeros(n_small as usize)?;
    let b = Array::<f32>::zeros(n_small as usize)?;
    let mut c = Array::<f32>::zeros(n_small as usize)?;
    // Bare launches of the empty kernel: `bare_launch_n(n)` times n of them (us per launch). The
    // rows that compare with a bare launch take `bare_launch_us`; the `#[rawkernel]` host-cost row
    // times its own bare launches in rounds interleaved with its calls (rawkernel.rs).
    let ctx = dev.context()?;
    let bare_module = ctx
        .load_module(cudarc::nvrtc::Ptx::from_binary(empty_cubin.clone()))
        .map_err(cuprum_runtime::Error::driver_fn("cuModuleLoadData"))?;
    let bare_f = bare_module
        .load_function("empty_kernel")
        .map_err(cuprum_runtime::Error::driver_fn("cuModuleGetFunction"))?;
    let bare_raw = stream.raw()?.clone();
    let (pa, pb, pc) = (a.device_ptr(), b.device_ptr(), c.device_ptr());
    let bare_launch_n = |n: usize| -> Result<f64> {
        let cfg = CuLaunchConfig { grid_dim: (1, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: 0 };
        let t = Instant::now();
        for _ in 0..n {
            let mut builder = bare_raw.launch_builder(&bare_f);
            builder.arg(&pa).arg(&pb).arg(&pc).arg(&n_small);
            // SAFETY: empty_kernel takes (const float*, const float*, float*, unsigned int);
            // the pointers are live device arrays; the kernel touches nothing.
            unsafe { builder.launch(cfg) }.map_err(cuprum_runtime::Error::driver_fn("cuLaunchKernel"))?;
        }
        bare_raw.synchronize().map_err(cuprum_runtime::Error::driver_fn("cuStreamSynchronize"))?;
        Ok(t.elapsed().as_secs_f64() * 1e6 / n as f64)
    };
    bare_launch_n(launches / 10)?;
    let bare_launch_us = median((0..rounds).map(|_| bare_launch_n(launches)).collect::<Result<_>>()?);

    // NVRTC warm-up (its own start-up is not part of either compile figure), then the ceiling.
    bare_compile("extern \"C\" __global__ void warm_up() {}", target)?;
    let bare_compile_ms = median(
        (0..rounds)
            .map(|_| {
                let t = Instant::now();
                bare_compile(ADD, target).map(|_| ms(t.elapsed()))
            })
            .collect::<Result<_>>()?,
    );

    // ---- rows -----------------------------------------------------------------------------
    let mut rows = Vec::new();

    // RawKernel launch host cost, same kernel, same arguments, same stream.
    let empty = RawKernel::new(EMPTY, "empty_kernel");
    empty.compile()?;
    let mut raw_launch_n = |n: usize| -> Result<f64> {
        let t = Instant::now();
        for _ in 0..n {
            // SAFETY: empty_kernel takes (const float*, const float*, float*, unsigned int).
            unsafe { empty.launch(&LaunchConfig::new(1, 32), (&a, &b, &mut c, n_small)) }?;
        }
        stream.synchronize()?;
        Ok(t.elapsed().as_secs_f64() * 1e6 / n as f64)
    };
    raw_launch_n(launches / 10)?;
    let raw_launch_us = median(
        (0..rounds)
            .map(|_| raw_launch_n(launches))
            .collect::<Result<_>>()?,
    );
    rows.push(Row {
        name: "RawKernel launch, host cost per call",
        value: raw_launch_us,
        unit: "us",
        ceiling_name: "bare cudarc launch",
        ceiling: bare_launch_us,
        target: Some(("<=", 1.15)),
        note: format!("{launches} calls, one synchronize"),
    });

    // First call with an empty cache: compile + load + launch.
    let tag = nonce();
    let add_src = |i: usize| format!("{ADD}// cuprum-bench {tag} {i}\n");
    let n_add = 4096usize;
    let xa = Array::<f32>::zeros(n_add)?;
    let xb = Array::<f32>::zeros(n_add)?;
    let mut xc = Array::<f32>::zeros(n_add)?;
    let add_cfg = LaunchConfig::for_elements(n_add, 256);
    let before = stats::snapshot();
    let mut cold = Vec::new();
    for i in 0..rounds {
        let t = Instant::now();
        let k = RawKernel::new(add_src(i), "my_add");
        // SAFETY: my_add(const float*, const float*, float*, unsigned int), bounded by n.
        unsafe { k.launch(&add_cfg, (&xa, &xb, &mut xc, n_add as u32)) }?;
        cold.push(ms(t.elapsed()));
    }
    stream.synchronize()?;
    let compiles = stats::snapshot().nvrtc - before.nvrtc;
    rows.push(Row {
        name: "RawKernel first call, empty cache",
        value: median(cold),
        unit: "ms",
        ceiling_name: "bare NVRTC compile",
        ceiling: bare_compile_ms,
        target: Some(("<=", 1.2)),
        note: format!("{compiles} NVRTC compiles for {rounds} calls"),
    });

    // First call in a fresh process, served by the disk cache the cold row filled.
    let cubin_path = cache_dir.path().join("ceiling.cubin");
    std::fs::write(&cubin_path, bare_compile(ADD, target)?).map_err(io_err)?;
    let warm = run_warm_children(cache_dir.path(), &add_src(0), &cubin_path, rounds)?;
    rows.push(Row {
        name: "RawKernel first call, warm disk cache (new process)",
        value: warm.first_call_ms,
        unit: "ms",
        ceiling_name: "load a cubin (new process)",
        ceiling: warm.load_ms,
        target: Some(("<", 1.0)),
        note: format!(
            "target < 1 ms; served by disk {}/{} times, NVRTC {} times; process start-up before it: device {:.1} ms, libnvrtc load {:.1} ms",
            warm.disk_hits, rounds, warm.compiles, warm.device_ms, warm.nvrtc_ms
        ),
    });

    // A second RawKernel of the same source in this process: served by the loaded module.
    let mut mem = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        let k = RawKernel::new(add_src(0), "my_add");
        // SAFETY: as above.
        unsafe { k.launch(&add_cfg, (&xa, &xb, &mut xc, n_add as u32)) }?;
        mem.push(t.elapsed().as_secs_f64() * 1e6);
    }
    stream.synchronize()?;
    rows.push(Row {
        name: "RawKernel first call, same source loaded in this process",
        value: median(mem),
        unit: "us",
        ceiling_name: "bare cudarc launch",
        ceiling: bare_launch_us,
        target: None,
        note: "new RawKernel object: key + lookup + launch".into(),
    });

    rows.push(copy_row);

    rows.extend(rawkernel::rows(
        dev,
        &stream,
        &rawkernel::Ceilings { bare_launch_n: &bare_launch_n, target, launches, rounds, copy_elems, cubin_load_ms: warm.load_ms },
    )?);

    // Elementwise rows (issue 6): `(x - y)^2` contiguous, broadcast, transposed; host cost.
    rows.extend(elementwise::rows(copy_ceiling, bare_launch_us, opts.quick, &stream)?);
    // NumPy's ufuncs and random numbers (issue 36): a sample of eight, and `normal`.
    rows.extend(ufuncs::rows(copy_ceiling, opts.quick, &stream)?);
    // Array manipulation (issue 36): concatenate.
    rows.extend(manipulation::rows(copy_ceiling, opts.quick, &stream)?);
    // Scans and counting (issue 36): cumsum, bincount, histogram, searchsorted.
    rows.extend(counting_scan::rows(copy_ceiling, opts.quick, &stream)?);
    // Sorting (issue 36): sort and argsort of 2^26 f32.
    rows.extend(sorting::rows(copy_ceiling, opts.quick, &stream)?);
    // Reductions (issue 7).
    rows.extend(reduction::rows(&stream, copy_ceiling, bare_launch_us, opts.quick, rounds, launches)?);
    // Fusion (issue 17): `#[fuse]` chains, softmax, layer norm.
    rows.extend(fusion::rows(&stream, copy_ceiling, opts.quick, rounds)?);
    // Graphs (issue 17).
    rows.extend(graph::rows(dev, &empty_cubin, bare_launch_us, rounds)?);
    // SGEMM (issue 18): the example's kernel against cuBLAS, both in this run.
    let (sgemm_row, cublas_tflops) = sgemm::rows(&stream)?;
    rows.push(sgemm_row);
    let (bf16_rows, cublas_bf16_tflops) = gemm_bf16::rows(&stream)?;
    rows.extend(bf16_rows);
    // Flash attention (issue 37): the example's kernel; torch's SDPA from benches/attention_torch.py.
    rows.extend(attention::rows(&stream)?);
    // FP8 (issue 37): the FP8 wgmma GEMM example's kernel, against torch._scaled_mm's figure.
    rows.extend(gemm_fp8::rows(&stream)?);
    // Matrix products (issue 36): `Array::matmul` against the same cuBLAS call made directly.
    rows.extend(matmul::rows(&stream)?);
    // Grid synchronisation (issue 18): one cooperative launch against one launch per step.
    rows.extend(grid_sync::rows(&stream)?);
    // The CPU device's rows, on this machine's CPU.
    rows.extend(cpu::rows(opts.quick)?);
    // Several GPUs (issue 38): all_reduce against libnccl called directly, a peer copy against
    // cuMemcpyPeerAsync; with one GPU, a line saying the rows need two.
    rows.extend(multi_gpu::rows()?);

    let mut ceilings = vec![
        Ceiling {
            name: "device-to-device copy",
            value: copy_ceiling,
            unit: "GB/s",
        },
        Ceiling {
            name: "bare cudarc launch",
            value: bare_launch_us,
            unit: "us",
        },
        Ceiling {
            name: "bare NVRTC compile",
            value: bare_compile_ms,
            unit: "ms",
        },
        Ceiling {
            name: "load a cubin (new process)",
            value: warm.load_ms,
            unit: "ms",
        },
    ];
    if let Some(value) = cublas_bf16_tflops {
        ceilings.push(Ceiling {
            name: "cuBLAS bf16 GEMM 8192^3 (f32 accumulate)",
            value,
            unit: "TFLOP/s",
        });
    }
    if let Some(value) = cublas_tflops {
        ceilings.push(Ceiling {
            name: "cuBLAS SGEMM 4096^3 (FP32, no TF32)",
            value,
            unit: "TFLOP/s",
        });
    }
    let header = format!(
        "{} (sm_{major}{minor}, {} SMs), driver {}.{}, NVRTC {}.{}, JIT target {}",
        dev.name(),
        sms,
        driver / 1000,
        (driver % 1000) / 10,
        info.version.0,
        info.version.1,
        target.name()
    );
    if opts.json {
        print!("{}", to_json(&header, &ceilings, &rows));
    } else {
        print!("{}", to_table(&header, &ceilings, &rows));
    }
    Ok(())
}

/// A bare NVRTC compile to CUBIN (no headers, no cache): the ceiling of the compile rows.
fn bare_compile(src: &str, target: nvrtc::CodeTarget) -> Result<Vec<u8>> {
    use cudarc::nvrtc::{result as nr, sys as ns};
    let err = |what: &'static str| {
        move |e: nr::NvrtcError| cuprum_runtime::Error::Nvrtc {
            call: what,
            detail: format!("{e:?}"),
        }
    };
    let c_src = std::ffi::CString::new(src).expect("no NUL in benchmark sources");
    let prog = nr::create_program(&c_src, None).map_err(err("nvrtcCreateProgram"))?;
    let arch = format!("--gpu-architecture={}", target.name());
    // SAFETY: `prog` was just created and is destroyed below, after its output is copied.
    let result =
        unsafe { nr::compile_program(prog, &[arch.as_str()]) }.map_err(err("nvrtcCompileProgram"));
    let image = result.and_then(|()| {
        let mut size = 0usize;
        // SAFETY: `prog` is a live, compiled program; `size` is a valid out pointer.
        unsafe { ns::nvrtcGetCUBINSize(prog, &mut size) }
            .result()
            .map_err(err("nvrtcGetCUBINSize"))?;
        let mut buf = vec![0u8; size];
        // SAFETY: `buf` holds the `size` bytes NVRTC reported.
        unsafe { ns::nvrtcGetCUBIN(prog, buf.as_mut_ptr() as *mut std::ffi::c_char) }
            .result()
            .map_err(err("nvrtcGetCUBIN"))?;
        Ok(buf)
    });
    // SAFETY: created above, destroyed once.
    let _ = unsafe { nr::destroy_program(prog) };
    image
}

struct Warm {
    first_call_ms: f64,
    load_ms: f64,
    device_ms: f64,
    nvrtc_ms: f64,
    disk_hits: u64,
    compiles: u64,
}

/// Runs `rounds` fresh processes, each timing its first call of `src` (in the disk cache) and
/// then the load of `cubin`; medians.
fn run_warm_children(dir: &Path, src: &str, cubin: &Path, rounds: usize) -> Result<Warm> {
    let src_path = dir.join("warm-source.cu");
    std::fs::write(&src_path, src).map_err(io_err)?;
    let exe = std::env::current_exe().map_err(io_err)?;
    let mut fields: Vec<Vec<f64>> = vec![Vec::new(); 6];
    for _ in 0..rounds {
        let out = std::process::Command::new(&exe)
            .arg("--child-warm-disk")
            .arg(&src_path)
            .arg(cubin)
            .env("CUPY_CACHE_DIR", dir)
            .env_remove("CUPY_CACHE_IN_MEMORY")
            .output()
            .map_err(io_err)?;
        let text = String::from_utf8_lossy(&out.stdout);
        let Some(line) = text.lines().find_map(|l| l.strip_prefix("WARM ")) else {
            return Err(cuprum_runtime::Error::Unsupported {
                what: format!(
                    "the warm-cache child failed:\n{text}\n{}",
                    String::from_utf8_lossy(&out.stderr)
                ),
            });
        };
        for (i, v) in line.split_whitespace().enumerate().take(6) {
            fields[i].push(v.parse().unwrap_or(f64::NAN));
        }
    }
    let m = |i: usize| median(fields[i].clone());
    Ok(Warm {
        first_call_ms: m(0),
        load_ms: m(1),
        device_ms: m(2),
        nvrtc_ms: m(3),
        disk_hits: fields[4].iter().sum::<f64>() as u64,
        compiles: fields[5].iter().sum::<f64>() as u64,
    })
}

/// The child: start-up (device, libnvrtc) first, then the timed first call, then the cubin load.
/// Prints `WARM first_ms load_ms device_ms nvrtc_ms disk_hits compiles`.
fn child_warm_disk(args: &[String]) -> Result<()> {
    let [src_path, cubin_path] = args else {
        return Err(cuprum_runtime::Error::Unsupported {
            what: "usage: --child-warm-disk SRC CUBIN".into(),
        });
    };
    let t = Instant::now();
    let dev = Device::current()?;
    let stream = Stream::current()?;
    let xa = Array::<f32>::zeros(4096)?;
    let xb = Array::<f32>::zeros(4096)?;
    let mut xc = Array::<f32>::zeros(4096)?;
    stream.synchronize()?;
    let device_ms = ms(t.elapsed());
    let t = Instant::now();
    nvrtc::info()?;
    let nvrtc_ms = ms(t.elapsed());
    let src = std::fs::read_to_string(src_path).map_err(io_err)?;
    let cfg = LaunchConfig::for_elements(4096, 256);

    let t = Instant::now();
    let k = RawKernel::new(src, "my_add");
    // SAFETY: my_add(const float*, const float*, float*, unsigned int), bounded by n.
    unsafe { k.launch(&cfg, (&xa, &xb, &mut xc, 4096u32)) }?;
    let first_ms = ms(t.elapsed());
    stream.synchronize()?;

    let t = Instant::now();
    let m = RawModule::from_file(cubin_path)?;
    m.get_function("my_add")?;
    let load_ms = ms(t.elapsed());

    let s = stats::snapshot();
    let _ = dev;
    println!(
        "WARM {first_ms} {load_ms} {device_ms} {nvrtc_ms} {} {}",
        s.disk, s.nvrtc
    );
    Ok(())
}

fn fmt_value(v: f64, unit: &str) -> String {
    let digits = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$} {unit}")
}

fn to_table(header: &str, ceilings: &[Ceiling], rows: &[Row]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "cuprum-bench: {header}");
    let _ = writeln!(s, "\nceilings (measured in this run)");
    for c in ceilings {
        let _ = writeln!(s, "  {:<56} {:>12}", c.name, fmt_value(c.value, c.unit));
    }
    let _ = writeln!(
        s,
        "\n  {:<56} {:>12} {:>12} {:>7}  {:<8} ceiling used / notes",
        "row", "value", "ceiling", "ratio", "target"
    );
    for r in rows {
        let target = match r.target {
            Some((op, t)) if op == "<" => format!("{op} {t} {}", r.unit),
            Some((op, t)) => format!("{op} {t}"),
            None => "-".into(),
        };
        let verdict = match r.passes() {
            Some(true) => "ok",
            Some(false) => "MISSED",
            None => "",
        };
        let _ = writeln!(
            s,
            "  {:<56} {:>12} {:>12} {:>7.3}  {:<8} {} {} ({})",
            r.name,
            fmt_value(r.value, r.unit),
            fmt_value(r.ceiling, r.unit),
            r.ratio(),
            target,
            verdict,
            r.ceiling_name,
            r.note
        );
    }
    s
}

fn json_str(s: &str) -> String {
    let mut o = String::from("\"");
    for ch in s.chars() {
        match ch {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn json_num(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        "null".into()
    }
}

fn to_json(header: &str, ceilings: &[Ceiling], rows: &[Row]) -> String {
    let mut s = String::from("{\n");
    let _ = writeln!(
        s,
        "  \"tool\": \"cuprum-bench\",\n  \"setup\": {},",
        json_str(header)
    );
    s.push_str("  \"ceilings\": [\n");
    for (i, c) in ceilings.iter().enumerate() {
        let _ = writeln!(
            s,
            "    {{\"name\": {}, \"value\": {}, \"unit\": {}}}{}",
            json_str(c.name),
            json_num(c.value),
            json_str(c.unit),
            if i + 1 < ceilings.len() { "," } else { "" }
        );
    }
    s.push_str("  ],\n  \"rows\": [\n");
    for (i, r) in rows.iter().enumerate() {
        let (op, t) = r
            .target
            .map(|(o, t)| (json_str(o), json_num(t)))
            .unwrap_or(("null".into(), "null".into()));
        let _ = writeln!(
            s,
            "    {{\"name\": {}, \"value\": {}, \"unit\": {}, \"ceiling_name\": {}, \"ceiling\": {}, \"ratio\": {}, \"target_op\": {op}, \"target\": {t}, \"pass\": {}, \"note\": {}}}{}",
            json_str(r.name),
            json_num(r.value),
            json_str(r.unit),
            json_str(r.ceiling_name),
            json_num(r.ceiling),
            json_num(r.ratio()),
            match r.passes() {
                Some(b) => b.to_string(),
                None => "null".into(),
            },
            json_str(&r.note),
            if i + 1 < rows.len() { "," } else { "" }
        );
    }
    s.push_str("  ]\n}\n");
    s
}
