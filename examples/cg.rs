//! A port of CuPy's conjugate gradient example (`examples/cg/cg.py`, `fit`, with its defaults: a
//! dense symmetric positive-definite `A = R R^T` of order N = 2000 from integers `R` in [-50, 50),
//! `b = A x` for integers `x` in [-50, 50), f64, stopping when `|r| < 0.1`, at most 5000
//! iterations). Each iteration is CuPy's: the product `A p` (an `#[reduction]` of `A * p[None, :]`
//! along axis 1), `a = (r . r) / (p . A p)`, `x += a p`, `r -= a A p` (one `#[elementwise]`
//! kernel; the dot products are `#[reduction]`s whose 0-d results broadcast), the stop test (the
//! host reads `r . r`, as CuPy's `if norm(r1) < tol`), `p = r + b p` with
//! `b = (r1 . r1) / (r0 . r0)` (an `#[elementwise]` kernel). CuPy's `fit` computes `dot(A, p)`
//! twice an iteration and `inner(r0, r0)` twice; the port computes each once (the same values).
//!
//! Checked on the host in f64: the true residual `|b - A x|` of the solution (at most 1, 10 times
//! the tolerance: the residual CG updates drifts from the true one by rounding), and the solution
//! against a host CG (the same steps, the same Rust functions for the updates, sums in its own
//! order): `|x - x_host| <= 1e-6 |x_host|`. Both stop on their own residual, after about as many
//! iterations; the example prints both counts, and `|x - x_ans|` (the known answer), as CuPy's does.
//!
//! Time for the fit (from `x = 0` to the stop, the matrix already on the device; median of 5):
//! H200, one run (762f2a0), the same inputs: cuprum 165.6 ms for 3845 iterations (43 us each),
//! CuPy (14.2) 1852.8 ms for 3850 (481 us each; 1475.3 ms with each product computed once, as
//! here). An
//! iteration reads `A` once (8 N^2 bytes: 32 MB at N = 2000, 10 us at an H100's 3.35 TB/s, less
//! where it stays in the 50 MB L2) and does 2 N^2 flops for the product and O(N) for the rest;
//! with about 3900 iterations at N = 2000, each one's five launches and the host's read of
//! `r . r` may weigh as much as the bytes.
//!
//! `cargo run --release -p cuprum-examples --example cg [-- N]` (the order of `A`; default CuPy's
//! 2000). Without a GPU it runs on the CPU device (try `-- 200`). `CG_DUMP=/tmp/cg.bin` writes
//! `A`, `b` and `x` for `scripts/cupy_cg.py`, which times CuPy's `fit` on them.

#[path = "kernels/cg.rs"]
mod kernels;

use std::time::Instant;

use cuprum::runtime::{Array, Device, Error, Result};

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(2000);
    let device = match Device::count() {
        Ok(c) if c > 0 => Device::get(0),
        _ => {
            println!("no CUDA GPU: running on the CPU device");
            Ok(Device::cpu())
        }
    };
    if let Err(e) = device.and_then(|d| run(&d, n)) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// Integers in [-50, 50) (a 64-bit LCG: a fixed, reproducible data set), CuPy's
/// `randint(-50, 50)`.
fn ints(n: usize, seed: u64) -> Vec<i32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 33) % 100) as i32 - 50
        })
        .collect()
}

fn failed(what: String) -> Error {
    Error::Unsupported { what: format!("CG: {what}") }
}

/// `a . b` with 8 partial sums (so that the host vectorises it).
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut acc = [0f64; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f64 = ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| x * y).sum();
    for (u, v) in ca.zip(cb) {
        for k in 0..8 {
            acc[k] += u[k] * v[k];
        }
    }
    acc.iter().sum::<f64>() + tail
}

/// `out = A p` on the host's threads.
fn matvec(a: &[f64], p: &[f64], out: &mut [f64]) {
    let n = p.len();
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get()).min(n.div_ceil(64)).max(1);
    let rows = n.div_ceil(threads);
    std::thread::scope(|scope| {
        for (c, chunk) in out.chunks_mut(rows).enumerate() {
            scope.spawn(move || {
                for (k, o) in chunk.iter_mut().enumerate() {
                    let i = c * rows + k;
                    *o = dot(&a[i * n..(i + 1) * n], p);
                }
            });
        }
    });
}

/// The host CG: CuPy's `fit` on the host, with the example's kernels as Rust functions.
fn host_cg(a: &[f64], b: &[f64], tol: f64, max_iter: usize) -> Option<(Vec<f64>, usize)> {
    let n = b.len();
    let (mut x, mut r, mut ap) = (vec![0f64; n], b.to_vec(), vec![0f64; n]);
    let mut p = r.clone();
    let mut rr = dot(&r, &r);
    for it in 0..max_iter {
        matvec(a, &p, &mut ap);
        let pap = dot(&p, &ap);
        for i in 0..n {
            kernels::step(&mut x[i], &mut r[i], p[i], ap[i], rr, pap);
        }
        let rr_new = dot(&r, &r);
        if rr_new.sqrt() < tol {
            return Some((x, it + 1));
        }
        for i in 0..n {
            kernels::direction(&mut p[i], r[i], rr_new, rr);
        }
        rr = rr_new;
    }
    None
}

fn norm(v: impl Iterator<Item = f64>) -> f64 {
    v.map(|e| e * e).sum::<f64>().sqrt()
}

fn run(device: &Device, n: usize) -> Result<()> {
    let _current = device.use_scoped()?;
    let (tol, max_iter) = (0.1, 5000);
    // CuPy's data: `A = randint(-50, 50, (N, N)); A = A @ A.T`, `x_ans = randint(-50, 50, N)`,
    // `b = A @ x_ans`; integers, so exact in f64 (|A| < 2^23, |b| < 2^53).
    let rm = ints(n * n, 1);
    let mut a = vec![0f64; n * n];
    for i in 0..n {
        for j in 0..=i {
            let v: i32 = rm[i * n..(i + 1) * n].iter().zip(&rm[j * n..(j + 1) * n]).map(|(u, w)| u * w).sum();
            (a[i * n + j], a[j * n + i]) = (v as f64, v as f64);
        }
    }
    let x_ans: Vec<f64> = ints(n, 2).iter().map(|&v| v as f64).collect();
    let b: Vec<f64> = (0..n).map(|i| (0..n).map(|j| a[i * n + j] as i64 * x_ans[j] as i64).sum::<i64>() as f64).collect();
    if let Some(path) = std::env::var_os("CG_DUMP") {
        // For `scripts/cupy_cg.py`: N (u64), then A (N x N, C order), b, x_ans (f64), little-endian.
        let mut bytes: Vec<u8> = (n as u64).to_le_bytes().to_vec();
        bytes.extend(a.iter().chain(&b).chain(&x_ans).flat_map(|v| v.to_le_bytes()));
        std::fs::write(&path, bytes).map_err(|e| Error::Unsupported { what: format!("CG_DUMP: {e}") })?;
    }
    let (da, db) = (Array::from_shape_vec([n, n], a.clone())?, Array::from_slice(&b)?);

    // CuPy's `fit`, each product and dot product once.
    let fit = || -> Result<(Array<f64>, usize)> {
        let mut x = Array::<f64>::zeros(n)?;
        let mut r = db.copy()?; // b - A x, x = 0
        let mut p = r.copy()?;
        let mut rr = kernels::inner::call(&r, &r).run()?;
        for it in 0..max_iter {
            let ap = kernels::inner::call(&da, &p.expand_dims(0)?).axis(1).run()?;
            let pap = kernels::inner::call(&p, &ap).run()?;
            kernels::step::call(&mut x, &mut r, &p, &ap, &rr, &pap)?;
            let rr_new = kernels::inner::call(&r, &r).run()?;
            if rr_new.to_vec()?[0].sqrt() < tol {
                return Ok((x, it + 1));
            }
            kernels::direction::call(&mut p, &r, &rr_new, &rr)?;
            rr = rr_new;
        }
        Err(failed(format!("no convergence to |r| < {tol} in {max_iter} iterations")))
    };
    let (x, iters) = fit()?;
    let x = x.to_vec()?;

    let mut ax = vec![0f64; n];
    matvec(&a, &x, &mut ax);
    let residual = norm(b.iter().zip(&ax).map(|(u, v)| u - v));
    if residual.is_nan() || residual > 10.0 * tol {
        return Err(failed(format!("the true residual |b - A x| is {residual:.3e}, more than {}", 10.0 * tol)));
    }
    let (x_host, host_iters) = host_cg(&a, &b, tol, max_iter)
        .ok_or_else(|| failed(format!("the host CG did not converge to |r| < {tol} in {max_iter} iterations")))?;
    let diff = norm(x.iter().zip(&x_host).map(|(u, v)| u - v)) / norm(x_host.iter().copied());
    if diff.is_nan() || diff > 1e-6 {
        return Err(failed(format!("the solution differs from the host CG's by {diff:.2e} (relative)")));
    }
    let err = norm(x.iter().zip(&x_ans).map(|(u, v)| u - v));

    device.synchronize()?;
    let mut times = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        fit()?;
        device.synchronize()?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "CG on a {n} x {n} SPD matrix (f64): {iters} iterations (the host's {host_iters}), |b - A x| = {residual:.3e}, \
         |x - x_host| / |x_host| = {diff:.1e}, |x - x_ans| = {err:.3e}"
    );
    println!("fit: {:.2} ms (median of 5; {} device)", times[2], if device.is_cpu() { "CPU" } else { "GPU" });
    Ok(())
}
