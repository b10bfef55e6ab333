//! cuprum's quickstart: Rust kernels translated to CUDA C, compiled on the GPU's machine by NVRTC,
//! launched on device arrays and checked against the same Rust functions run on the host.
//!
//! `bash scripts/quickstart.sh` (or `cargo run --release --example quickstart`). Without a GPU it
//! prints the translation and says that launches were skipped.

#[path = "kernels/quickstart.rs"]
mod kernels;

use cuprum::runtime::{Array, Device, LaunchConfig, SliceArg, RawModule, Scalar};

const KERNELS: &str = include_str!("kernels/quickstart.rs");

fn arg<T: Scalar>(a: &Array<T>) -> SliceArg {
    SliceArg::of(a)
}

fn main() {
    let unit = match cuprum_compiler::compile_source(KERNELS) {
        Ok(c) => c.unit,
        Err(e) => {
            eprint!("{}", cuprum_compiler::diag::render("examples/kernels/quickstart.rs", KERNELS, &e));
            std::process::exit(1);
        }
    };
    println!("translated {} kernels to {} lines of CUDA C:", unit.kernels.len(), unit.source.lines().count());
    for k in &unit.kernels {
        let syms: Vec<&str> = k.instances.iter().map(|(_, s)| s.as_str()).collect();
        println!("  #[{}] {}: {}", k.kind, k.name, syms.join(", "));
    }
    match Device::count() {
        Ok(n) if n > 0 => {}
        Ok(_) => return println!("no CUDA GPU found: launches skipped (the translation above is all this machine can do)"),
        Err(e) => return println!("no CUDA driver ({e}): launches skipped"),
    }
    if let Err(e) = run(&unit.source) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run(source: &str) -> cuprum::runtime::Result<()> {
    let device = Device::get(0)?;
    println!("device 0: {} (sm_{}{})", device.name(), device.compute_capability().0, device.compute_capability().1);
    let module = RawModule::new(source.to_string());
    let n = 1 << 20;
    let x: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1000) as f32 * 0.01 - 3.0).collect();
    let y: Vec<f32> = (0..n).map(|i| ((i * 104729) % 997) as f32 * 0.02).collect();
    let (dx, dy) = (Array::from_slice(&x)?, Array::from_slice(&y)?);
    let dz = Array::from_vec(vec![f32::NAN; n])?;
    let k = module.get_function(&cuprum_compiler::mangle::kernel_symbol("rawkernel", "squared_diff_kernel", None, &[cuprum::runtime::DType::F32]))?;
    // SAFETY: the arguments match `squared_diff_kernel::<f32>(&[f32], &[f32], &mut [f32])`.
    unsafe { k.launch(&LaunchConfig::new(264, 256), (arg(&dx), arg(&dy), arg(&dz)))? };
    let z = dz.to_vec()?;
    let bad = (0..n).filter(|&i| z[i] != kernels::squared_diff(x[i], y[i])).count();
    println!("squared_diff_kernel::<f32> on {n} elements: z[1] = {}, {bad} mismatches against the host", z[1]);

    let total = Array::from_vec(vec![0.0f32])?;
    let k = module.get_function(&cuprum_compiler::mangle::kernel_symbol("rawkernel", "sum_squares", None, &[]))?;
    // SAFETY: the arguments match `sum_squares(&[f32], &mut [f32])`, with 256 threads per block.
    unsafe { k.launch(&LaunchConfig::for_elements(n, 256), (arg(&dx), arg(&total)))? };
    let got = total.to_vec()?[0] as f64;
    let want: f64 = x.iter().map(|&v| (v as f64) * (v as f64)).sum();
    println!("sum_squares: {got:.1} (host, f64: {want:.1}; relative error {:.1e})", ((got - want) / want).abs());
    println!("kernels served by NVRTC (JIT); the ahead-of-time build of cuprum-build is not finished yet");
    if bad != 0 || ((got - want) / want).abs() > 1e-4 {
        return Err(cuprum::runtime::Error::Unsupported { what: "quickstart results differ from the host reference".into() });
    }
    Ok(())
}
