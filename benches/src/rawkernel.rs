//! The `#[rawkernel]` rows: kernels written in Rust, launched through the API the macro generates
//! (`kernel::launch(&config, args..)`), against the same ceilings as the RawKernel rows.

use std::time::Instant;

use cuprum_runtime::LaunchConfig;
// NVRTC compiled directly (the ceilings) is the runtime's internals (`__workspace`).
use cuprum_runtime::__workspace::nvrtc;
use cuprum_runtime::{Array, Device, Result, Stream, stats};
use cuprum_runtime::DType;
use num_complex::Complex;

use crate::kernels as k;
use crate::{Row, median, ms};

/// What the rows need from the run: the ceilings and the run's settings.
pub struct Ceilings<'a> {
    /// Times `n` bare launches of the empty kernel (us per launch).
    pub bare_launch_n: &'a dyn Fn(usize) -> Result<f64>,
    pub target: nvrtc::CodeTarget,
    pub launches: usize,
    pub rounds: usize,
    pub copy_elems: usize,
    pub cubin_load_ms: f64,
}

/// The child of the precompiled first-call rows: device and stream set up first (not timed), then
/// the first call of a precompiled kernel: `copy` (a `#[rawkernel]` of a small file), `op` (the
/// built-in `+`), `sum` (the built-in full `sum`), `many` (one kernel of `many_kernels.rs`, a file
/// of 20+ instances). Prints `AOT <ms> <layer>`.
pub fn child_aot(what: &str) -> Result<()> {
    let stream = Stream::current()?;
    let n = 1 << 16;
    let x = Array::<f32>::zeros(n)?;
    let mut y = Array::<f32>::zeros(n)?;
    stream.synchronize()?;
    let t = Instant::now();
    match what {
        "copy" => k::copy_unrolled::launch(&LaunchConfig::for_elements(n, 256), &x, &mut y, n as u32)?,
        "op" => y = (&x + &y)?,
        "sum" => y = cuprum::prelude::Reductions::sum(&x).run()?,
        // Two kernels, two parts: max, then the first position holding it (loaded in the
        // background while max loads: `ReductionCall::prefetch`).
        "argmax" => drop(cuprum::prelude::Reductions::argmax(&x).run()?),
        // Two: the mean, then the sum of squared differences (prefetched likewise).
        "var" => y = cuprum::prelude::Reductions::var(&x).run()?,
        "many" => y = crate::many_kernels::axpy::call(2.0f32, &x, &y)?,
        "fuse" => y = crate::fused::softmax::call(&x)?,
        other => return Err(cuprum_runtime::Error::Unsupported { what: format!("unknown --child-aot kernel `{other}`") }),
    }
    let first = ms(t.elapsed());
    stream.synchronize()?;
    drop(y);
    let layer = cuprum_runtime::audit::served().first().map(|s| s.layer.name()).unwrap_or("?");
    let loads = stats::snapshot();
    println!("AOT {first:.4} {layer} {} {:.4}", loads.module_loads, ms(loads.module_load_time));
    Ok(())
}

/// The child of the first-call breakdown: built-ins called one after another in one fresh
/// process, each timed to its end (synchronized), with the modules it loaded and their load time.
/// Prints `STEP <what> <ms> <module loads> <load ms>` per call.
pub fn child_steps() -> Result<()> {
    let stream = Stream::current()?;
    let n = 1 << 16;
    let a = Array::<f32>::zeros(n)?;
    let b = Array::<f32>::zeros(n)?;
    stream.synchronize()?;
    let step = |what: &str, f: &mut dyn FnMut() -> Result<()>| -> Result<()> {
        let before = stats::snapshot();
        let t = Instant::now();
        f()?;
        stream.synchronize()?;
        let took = ms(t.elapsed());
        let after = stats::snapshot();
        println!(
            "STEP {what} {took:.4} {} {:.4}",
            after.module_loads - before.module_loads,
            ms(after.module_load_time - before.module_load_time)
        );
        Ok(())
    };
    step("a+b", &mut || (&a + &b).map(drop))?;
    step("a-b", &mut || (&a - &b).map(drop))?;
    step("a+b(again)", &mut || (&a + &b).map(drop))?;
    step("sum", &mut || a.sum().run().map(drop))?;
    step("max", &mut || a.max().run().map(drop))?;
    step("argmax(after-max)", &mut || a.argmax().run().map(drop))?;
    step("argmax(again)", &mut || a.argmax().run().map(drop))?;
    step("mean", &mut || a.mean().run().map(drop))?;
    step("var", &mut || a.var().run().map(drop))?;
    step("var(again)", &mut || a.var().run().map(drop))?;
    Ok(())
}

pub fn rows(dev: &Device, stream: &Stream, c: &Ceilings<'_>) -> Result<Vec<Row>> {
    let mut rows = Vec::new();

    // Host cost of a launch through the generated API (instance lookup, argument checks).
    let n_small = 1024usize;
    let (a, b) = (Array::<f32>::zeros(n_small)?, Array::<f32>::zeros(n_small)?);
    let mut z = Array::<f32>::zeros(n_small)?;
    let cfg1 = LaunchConfig::new(1, 32);
    let mut launch_n = |n: usize| -> Result<f64> {
        let t = Instant::now();
        for _ in 0..n {
            k::empty4::launch(&cfg1, &a, &b, &mut z, n_small as u32)?;
        }
        stream.synchronize()?;
        Ok(t.elapsed().as_secs_f64() * 1e6 / n as f64)
    };
    // Host time drifts over a run (clocks, other processes): the bare launches this row compares
    // with are timed in rounds interleaved with its own, so both see the same machine.
    launch_n(c.launches / 10)?;
    (c.bare_launch_n)(c.launches / 10)?;
    let (mut ours, mut bare) = (Vec::new(), Vec::new());
    for _ in 0..c.rounds {
        bare.push((c.bare_launch_n)(c.launches)?);
        ours.push(launch_n(c.launches)?);
    }
    rows.push(Row {
        name: "#[rawkernel] launch, host cost per call",
        value: median(ours),
        unit: "us",
        ceiling_name: "bare cudarc launch (interleaved)",
        ceiling: median(bare),
        target: Some(("<=", 1.15)),
        note: format!("{} calls of empty4::launch(&cfg, &a, &b, &mut c, n), one synchronize; {} rounds alternating with as many bare launches", c.launches, c.rounds),
    });

    // First call of an instance that is not precompiled, with an empty cache: NVRTC compile of
    // the unit + its instantiation line, load, launch. The ceiling: NVRTC compiling the same
    // kind of source (another instance), with nothing around it.
    let info = nvrtc::info()?;
    let unit = cuprum_runtime::audit::kernels()
        .find(|e| e.name() == "copy_unrolled")
        .and_then(|e| e.unit().ok())
        .ok_or_else(|| cuprum_runtime::Error::Unsupported { what: "copy_unrolled is not registered".into() })?;
    // NVRTC keeps what it has compiled in this process: a source it has seen (or one differing
    // only in comments) compiles several times faster the second time. So the ceiling compiles
    // instances nobody compiled before, with the registry's source layout (unit, includes,
    // instantiation line), and the first calls below use other instances again.
    let _ = info;
    let options = nvrtc::effective_options(&["-fmad=false".to_string()], c.target, false);
    let ceiling_types = [DType::U64, DType::Bool, DType::F16, DType::BF16, DType::C32];
    let mut ceiling_ms = Vec::new();
    for d in ceiling_types.iter().take(c.rounds.max(1)) {
        let src = unit.instance_source(&format!(
            "{}{}",
            cuprum_runtime::abi::headers::includes_for(&[*d]),
            cuprum_runtime::abi::mangle::instantiate_line("copy_unrolled", &format!("bench_ceiling_{}", d.short_name()), &[*d])
        ));
        let start = Instant::now();
        nvrtc::compile(
            &nvrtc::Program {
                name: "ceiling",
                file_name: "ceiling",
                source: &src,
                options: &options,
                name_expressions: &[],
                dump_source_on_error: false,
            },
            c.target,
        )?;
        ceiling_ms.push(ms(start.elapsed()));
    }
    let bare_ms = median(ceiling_ms);
    let n = 1 << 16;
    let before = stats::snapshot();
    let mut first = Vec::new();
    macro_rules! first_call {
        ($t:ty) => {{
            let x = Array::<$t>::zeros(n)?;
            let mut y = Array::<$t>::zeros(n)?;
            let t = Instant::now();
            k::copy_unrolled::launch(&LaunchConfig::for_elements(n, 256), &x, &mut y, n as u32)?;
            first.push(ms(t.elapsed()));
        }};
    }
    first_call!(u8);
    first_call!(i8);
    first_call!(u16);
    first_call!(i16);
    first_call!(u32);
    stream.synchronize()?;
    let after = stats::snapshot();
    let compiles = after.nvrtc - before.nvrtc;
    let compile_ms = ms(after.compile_time - before.compile_time) / compiles.max(1) as f64;
    let each: Vec<String> = first.iter().map(|t| format!("{t:.1}")).collect();
    rows.push(Row {
        name: "#[rawkernel] first call of a JIT instance, empty cache",
        value: median(first),
        unit: "ms",
        ceiling_name: "NVRTC compile of a new instance",
        ceiling: bare_ms,
        target: Some(("<=", 1.2)),
        note: format!(
            "copy_unrolled::<u8, i8, u16, i16, u32>: {} ms; {compiles} NVRTC compiles of {compile_ms:.1} ms on average",
            each.join(" / ")
        ),
    });

    // First call of a precompiled instance in a fresh process: served by the embedded fat binary.
    let exe = std::env::current_exe().map_err(crate::io_err)?;
    let first_calls: [(&'static str, &str, &str); 7] = [
        ("#[rawkernel] first call of a precompiled kernel (new process)", "copy", "copy_unrolled::<f32> of benches/src/kernels.rs"),
        ("first built-in operator `&a + &b` (new process)", "op", "add::<f32>, runtime/kernels/elementwise.rs"),
        ("first built-in reduction `x.sum()` (new process)", "sum", "sum::<f32>, runtime/kernels/reductions.rs"),
        ("first built-in `x.argmax()` (new process)", "argmax", "arg_best_f32: one kernel's first call"),
        ("first built-in `x.var()` (new process)", "var", "var_float: one kernel's first call (shifted sums)"),
        ("first kernel of a file with 20+ instances (new process)", "many", "axpy::<f32> of benches/src/many_kernels.rs (14 elementwise instances x 2 variants, 4 raw kernel instances)"),
        ("first call of a #[fuse] function (new process)", "fuse", "softmax::call of benches/src/fused.rs on 2^16 f32 (one row kernel)"),
    ];
    for (name, what, detail) in first_calls {
        let mut aot = Vec::new();
        let mut layers = Vec::new();
        let (mut loads, mut load_ms) = (String::new(), Vec::new());
        for _ in 0..c.rounds {
            let out = std::process::Command::new(&exe).args(["--child-aot", what]).output().map_err(crate::io_err)?;
            let text = String::from_utf8_lossy(&out.stdout);
            let Some(line) = text.lines().find_map(|l| l.strip_prefix("AOT ")) else {
                return Err(cuprum_runtime::Error::Unsupported {
                    what: format!("the AOT child ({what}) failed:\n{text}\n{}", String::from_utf8_lossy(&out.stderr)),
                });
            };
            let mut f = line.split_whitespace();
            aot.push(f.next().and_then(|v| v.parse().ok()).unwrap_or(f64::NAN));
            layers.push(f.next().unwrap_or("?").to_string());
            loads = f.next().unwrap_or("?").to_string();
            load_ms.push(f.next().and_then(|v| v.parse().ok()).unwrap_or(f64::NAN));
        }
        layers.dedup();
        rows.push(Row {
            name,
            value: median(aot),
            unit: "ms",
            ceiling_name: "load a cubin (new process)",
            ceiling: c.cubin_load_ms,
            target: Some(("<", 1.0)),
            note: format!(
                "target < 1 ms; {detail}; served by: {}; {loads} module loads taking {:.3} ms (checks, cuModuleLoadData)",
                layers.join(", "),
                median(load_ms)
            ),
        });
    }

    // Where a first call's time goes: built-ins one after another in one fresh process (stderr).
    let out = std::process::Command::new(&exe).arg("--child-steps").output().map_err(crate::io_err)?;
    eprintln!("first calls in one new process (what, ms, module loads, load ms):");
    for line in String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| l.strip_prefix("STEP ")) {
        eprintln!("  {line}");
    }
    if !out.status.success() {
        eprintln!("  (the child failed: {})", String::from_utf8_lossy(&out.stderr).trim());
    }

    // Grid-stride copies, timed alternately with the driver's copy of the same bytes.
    let elems = c.copy_elems;
    let sms = dev.multiprocessor_count();
    let x = Array::<f32>::from_vec((0..elems).map(|i| (i % 999_983) as f32).collect())?;
    let mut y = Array::<f32>::zeros(elems)?;
    let xc = Array::<Complex<f64>>::from_vec((0..elems / 4).map(|i| Complex::new(i as f64, -(i as f64))).collect())?;
    let mut yc = Array::<Complex<f64>>::zeros(elems / 4)?;
    let time = |f: &mut dyn FnMut() -> Result<()>| crate::event_ms(stream, f);
    let (xp, yp) = (x.device_ptr(), y.device_ptr());
    let bytes = (elems * 4) as f64;
    // A grid that covers the array, as the driver's copy launches: on an H200 grids of 2 to 8
    // blocks of 256 per SM that loop reach only 0.72 to 0.95 of the driver's copy, a covering
    // grid 1.00 (benches/experiments/copy_variants.py). f32 takes four elements per thread
    // (one per thread: 0.64; the experiment's f32 part).
    let cfg = LaunchConfig::for_elements(elems.div_ceil(4), 128);
    let cfg16 = LaunchConfig::for_elements(elems / 4, 256);
    let _ = sms;
    let (mut t_copy, mut t_f32, mut t_c64) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..(c.rounds * 4 + 2) {
        let a = time(&mut || {
            // SAFETY: both buffers hold `elems` f32 on this device and outlive the copy
            // (synchronized through the end event).
            unsafe { cudarc::driver::result::memcpy_dtod_async(yp, xp, elems * 4, stream.handle()) }
                .map_err(cuprum_runtime::Error::driver_fn("cuMemcpyDtoDAsync"))
        })?;
        let b = time(&mut || k::copy_grid_stride4::launch(&cfg, &x, &mut y, elems as u32))?;
        let d = time(&mut || k::copy_grid_stride::launch(&cfg16, &xc, &mut yc, (elems / 4) as u32))?;
        if i > 1 {
            t_copy.push(a);
            t_f32.push(b);
            t_c64.push(d);
        }
    }
    let gbs = |t: Vec<f64>| 2.0 * bytes / (median(t) * 1e-3) / 1e9;
    let ceiling = gbs(t_copy);
    if y.to_vec()? != x.to_vec()? || yc.to_vec()? != xc.to_vec()? {
        return Err(cuprum_runtime::Error::Unsupported { what: "the #[rawkernel] copy produced wrong data".into() });
    }
    rows.push(Row {
        name: "#[rawkernel] grid-stride copy, f32 (4 per thread)",
        value: gbs(t_f32),
        unit: "GB/s",
        ceiling_name: "device-to-device copy",
        ceiling,
        target: Some((">=", 0.95)),
        note: format!("copy_grid_stride4::<f32> (load4/store4), {elems} elements, a covering grid x 128, timed alternately with the copy"),
    });
    rows.push(Row {
        name: "#[rawkernel] grid-stride copy, 16-byte elements",
        value: gbs(t_c64),
        unit: "GB/s",
        ceiling_name: "device-to-device copy",
        ceiling,
        target: Some((">=", 0.95)),
        note: "copy_grid_stride::<Complex<f64>>: the same bytes as 16-byte loads, a covering grid x 256".into(),
    });
    Ok(rows)
}

/// Diagnostic (`cuprum-bench --nvrtc-diag`): NVRTC compile times of the bench unit, the same
/// source three times, three sources differing only by a comment, three different instances.
pub fn nvrtc_diag() -> Result<()> {
    let dev = Device::current()?;
    let info = nvrtc::info()?;
    let target = nvrtc::choose_target(dev.compute_capability(), &info.supported_archs, false, info.version)?;
    let options = nvrtc::effective_options(&[], target, false);
    let unit = cuprum_runtime::audit::kernels()
        .find(|e| e.name() == "copy_unrolled")
        .and_then(|e| e.unit().ok())
        .map(|u| u.source().to_string())
        .unwrap_or_default();
    let compile = |src: &str| -> Result<f64> {
        let t = Instant::now();
        nvrtc::compile(
            &nvrtc::Program { name: "diag", file_name: "diag", source: src, options: &options, name_expressions: &[], dump_source_on_error: false },
            target,
        )?;
        Ok(ms(t.elapsed()))
    };
    compile("extern \"C\" __global__ void warm() {}")?;
    let same = format!("{unit}\nCUPRUM_INSTANTIATE_copy_unrolled(diag_a, u64)\n");
    for round in 0..3 {
        let s = compile(&same)?;
        let c = compile(&format!("{same}// {round} {}\n", std::process::id()))?;
        let t = ["u8", "i16", "u32"][round];
        let i = compile(&format!("{unit}\nCUPRUM_INSTANTIATE_copy_unrolled(diag_{t}, {t})\n"))?;
        println!("unit {} bytes: same source {s:.1} ms, comment variant {c:.1} ms, instance {t} {i:.1} ms", unit.len());
    }
    Ok(())
}
