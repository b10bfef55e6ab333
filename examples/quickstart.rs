//! cuprum's quickstart: kernels written in Rust (`examples/kernels/quickstart.rs`), launched on
//! device arrays through the API the macros generate, checked against the same Rust functions run
//! on the host, and a line saying which layer served each kernel (the fat binary embedded at build
//! time, the kernel cache, or NVRTC).
//!
//! `bash scripts/quickstart.sh` (or `cargo run --release -p cuprum-examples --example quickstart`).
//! Without a GPU (or without a driver) the same launches run on the CPU device (docs/cpu.md).

#[path = "kernels/quickstart.rs"]
mod kernels;

use cuprum::audit;
use cuprum::runtime::{Array, Device, Error, LaunchConfig, Result};

fn main() {
    let builtin = audit::kernels().filter(|e| e.file().contains("kernels/elementwise.rs") || e.file().contains("kernels/reductions.rs")).count();
    println!("kernels in this program: {builtin} built-in (array operators and reductions), and the quickstart's:");
    for e in audit::kernels().filter(|e| e.file().contains("quickstart")) {
        let aot = match e.unit().ok().and_then(|u| u.fatbin().map(|f| (u, f))) {
            Some((u, f)) => {
                // A kernel's parts: `name`, or `name[dtypes]`, `name:variant`, `name@targets`.
                let of_kernel = |p: &str| p.strip_prefix(e.name()).is_some_and(|rest| rest.is_empty() || rest.starts_with(['[', ':', '@']));
                let part: usize = u.parts().iter().filter(|p| of_kernel(p.0)).map(|p| p.2).sum();
                format!("{part} bytes of the file's {}-byte fat binary for {}", f.len(), u.targets().join(", "))
            }
            None => "no fat binary (JIT through NVRTC on first use)".to_string(),
        };
        println!("  #[{}] {} ({}): {aot}", e.kind(), e.name(), e.file());
    }
    let device = match Device::count() {
        Ok(n) if n > 0 => Device::get(0),
        Ok(_) => {
            println!("no CUDA GPU found: running on the CPU device");
            Ok(Device::cpu())
        }
        Err(e) => {
            println!("no CUDA driver ({e}): running on the CPU device");
            Ok(Device::cpu())
        }
    };
    if let Err(e) = device.and_then(|d| run(&d)) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run(device: &Device) -> Result<()> {
    // Arrays are made on the current device: this one, for the rest of `run`.
    let _current = device.use_scoped()?;
    if device.is_cpu() {
        println!("device: {} (the kernels' host code, compiled with the program)", device.name());
    } else {
        let (major, minor) = device.compute_capability();
        println!("device 0: {} (sm_{major}{minor})", device.name());
    }
    let n = 1 << 20;
    let x: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1000) as f32 * 0.01 - 3.0).collect();
    let y: Vec<f32> = (0..n).map(|i| ((i * 104729) % 997) as f32 * 0.02).collect();
    let (dx, dy) = (Array::from_slice(&x)?, Array::from_slice(&y)?);
    let mut dz = Array::from_vec(vec![f32::NAN; n])?;

    // A generic raw kernel: `T = f32` is inferred from the arrays.
    kernels::squared_diff_kernel::launch(&LaunchConfig::new(264, 256), &dx, &dy, &mut dz)?;
    let z = dz.to_vec()?;
    let bad = (0..n).filter(|&i| z[i] != kernels::squared_diff(x[i], y[i])).count();
    println!("squared_diff_kernel::<f32> on {n} elements: z[1] = {}, {bad} mismatches against the host", z[1]);

    // Shared memory and an atomic per block.
    let mut total = Array::from_vec(vec![0.0f32])?;
    kernels::sum_squares::launch(&LaunchConfig::for_elements(n, 256), &dx, &mut total)?;
    let got = total.to_vec()?[0] as f64;
    let want: f64 = x.iter().map(|&v| (v as f64) * (v as f64)).sum();
    let rel = ((got - want) / want).abs();
    println!("sum_squares: {got:.1} (host, f64: {want:.1}; relative error {rel:.1e})");

    // An elementwise kernel with broadcasting: (1024, 1024) against (1024,), output allocated.
    let (rows, cols) = (1024usize, 1024usize);
    let a = Array::from_shape_vec([rows, cols], x[..rows * cols].to_vec())?;
    let b = Array::from_slice(&y[..cols])?;
    let d = kernels::squared_diff_ew::call(&a, &b)?;
    let dv = d.to_vec()?;
    let bad_ew = (0..rows * cols).filter(|&i| dv[i] != kernels::squared_diff(x[i], y[i % cols])).count();
    println!("squared_diff_ew::<f32> on {:?} - {:?}: {bad_ew} mismatches against the host", a.shape(), b.shape());

    // A reduction along an axis: the L2 norm of each row.
    let norms = kernels::l2norm::call(&a).axis(1).run()?.to_vec()?;
    let worst = (0..rows)
        .map(|r| {
            let want: f64 = x[r * cols..(r + 1) * cols].iter().map(|&v| (v as f64) * (v as f64)).sum::<f64>().sqrt();
            ((norms[r] - want) / want).abs()
        })
        .fold(0.0f64, f64::max);
    println!("l2norm along axis 1 of {:?}: norms[0] = {:.4}, worst relative error {worst:.1e}", a.shape(), norms[0]);

    for s in audit::served() {
        let how = match s.layer.name() {
            "aot" => "the embedded fat binary",
            "nvrtc" => "NVRTC (compiled now)",
            "disk" => "the disk kernel cache",
            "memory" | "loaded" => "a module already loaded",
            other => other,
        };
        println!("  {} came from {how}", s.symbol);
    }
    if bad != 0 || rel > 1e-4 || bad_ew != 0 || worst > 1e-12 {
        return Err(Error::Unsupported { what: "quickstart results differ from the host reference".into() });
    }
    Ok(())
}
