//! `#[device]` structs: particles (a 32-byte `#[repr(C)]` struct) integrated by a `#[rawkernel]`
//! that takes a slice of them and the step settings by value, then each particle's kinetic energy
//! by an `#[elementwise]` kernel reading struct fields, summed by the array reduction. Everything is
//! checked against the same Rust functions run on the host.
//!
//! `cargo run --release -p cuprum-examples --example particles`. Without a GPU it says so and exits.

#[path = "kernels/particles.rs"]
mod kernels;

use cuprum::runtime::{Array, Device, LaunchConfig, Result};
use kernels::{Particle, Step};

fn main() {
    match Device::count() {
        Ok(n) if n > 0 => {}
        Ok(_) => return println!("no CUDA GPU found: launches skipped"),
        Err(e) => return println!("no CUDA driver ({e}): launches skipped"),
    }
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<()> {
    let n = 1 << 20;
    let host: Vec<Particle> = (0..n)
        .map(|i| {
            let f = |k: usize| ((i * 7919 + k * 104_729) % 10_007) as f32 / 10_007.0;
            Particle { pos: [f(0) * 10.0, 1.0 + f(1) * 5.0, f(2)], vel: [f(3) - 0.5, f(4), f(5) - 0.5], mass: 0.5 + f(6), id: i as u32 }
        })
        .collect();
    let step = Step { dt: 1e-3, gravity: 9.81, floor: 0.0, bounce: 0.8 };
    let steps = 500;

    let mut particles = Array::from_vec(host.clone())?;
    kernels::integrate::launch(&LaunchConfig::for_elements(n, 256), &mut particles, step, steps)?;
    let got = particles.to_vec()?;
    let want: Vec<Particle> = host.iter().map(|p| (0..steps).fold(*p, |q, _| kernels::advance(q, step))).collect();
    let bad = got.iter().zip(&want).filter(|(g, w)| g != w).count();
    println!("integrate: {n} particles x {steps} steps, {bad} differ from the host (bit for bit)");

    let energy = kernels::kinetic_energy::call(&particles)?;
    let total = energy.sum().run()?.to_vec()?[0];
    let host_total: f64 = want.iter().map(|p| kernels::kinetic_energy(*p)).sum();
    let rel = ((total - host_total) / host_total).abs();
    println!("kinetic energy: {total:.6} (host {host_total:.6}, relative difference {rel:.1e})");
    if bad > 0 || rel > 1e-12 {
        std::process::exit(1);
    }
    Ok(())
}
