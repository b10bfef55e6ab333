//! A port of CuPy's k-means example (`examples/kmeans/kmeans.py`, `fit_custom`, with its
//! defaults: two clusters, `num = 5_000_000` (so 10^7 points in 2-D, f64), at most 10 iterations).
//! Each iteration is the same array program as CuPy's: the distances of every point to every
//! center (`sq_dist`, an `#[elementwise]` kernel broadcasting (N, 1) against (1, K)), the nearest
//! center (`argmin` along axis 1), a stop when no label changed, then each cluster's mask
//! (`pred == i[:, None]`), its coordinate sums and count (two `#[reduction]`s along axis 1) and
//! the new centers (`sums / counts`).
//!
//! Checked at every iteration against a host reference from the same centers: the labels exactly
//! (the distances are computed the same way on both sides), the sums and counts to 1e-9.
//!
//! Time for the fit (10 iterations, the data already on the device, each iteration ending in
//! the host's read of `all(new_pred == pred)` as in CuPy), median of 5, H100, one run, the same
//! points and initial centers (`KMEANS_DUMP=/tmp/x.bin` writes them for
//! `scripts/cupy_kmeans.py`): cuprum 5.2-5.7 ms, CuPy (14.2) 410 ms; the same centers to the
//! printed digits. An iteration moves about 1 GB (the distances, argmin, masks, masked sums):
//! 0.34 ms at the copy ceiling, against cuprum's 0.55 ms. (Before the reduction planner gave
//! fewer than 32 outputs of long strided rows a block each, the masked sums alone took 7 ms an
//! iteration, and the fit 74.5 ms.)
//!
//! `cargo run --release -p cuprum-examples --example kmeans [-- N]` (N points per blob; default
//! CuPy's 5,000,000). Without a GPU it runs on the CPU device.

#[path = "kernels/kmeans.rs"]
mod kernels;

use std::time::Instant;

use cuprum::runtime::{Array, Device, Error, Result};

fn main() {
    let num: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(5_000_000);
    let device = match Device::count() {
        Ok(n) if n > 0 => Device::get(0),
        _ => {
            println!("no CUDA GPU: running on the CPU device");
            Ok(Device::cpu())
        }
    };
    if let Err(e) = device.and_then(|d| run(&d, num)) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// Standard normal samples (Box-Muller over a 64-bit LCG: a fixed, reproducible data set).
fn normal(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed;
    let mut next = move || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((s >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    (0..n)
        .map(|_| {
            let (u, v) = (next(), next());
            (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
        })
        .collect()
}

fn mismatch(what: String) -> Error {
    Error::Unsupported { what: format!("k-means differs from the host reference: {what}") }
}

fn run(device: &Device, num: usize) -> Result<()> {
    let _current = device.use_scoped()?;
    let (k, max_iter) = (2usize, 10usize);
    // CuPy's data: `samples = randn(num, 2)`, `X = r_[samples + 1, samples - 1]`.
    let samples = normal(num * 2, 7);
    let mut x: Vec<f64> = samples.iter().map(|v| v + 1.0).collect();
    x.extend(samples.iter().map(|v| v - 1.0));
    let n = 2 * num;
    if let Some(path) = std::env::var_os("KMEANS_DUMP") {
        // The same points for `scripts/cupy_kmeans.py` (f64, little-endian, (N, 2) in C order).
        let bytes: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(&path, bytes).map_err(|e| Error::Unsupported { what: format!("KMEANS_DUMP: {e}") })?;
    }
    let dx = Array::from_shape_vec([n, 2], x.clone())?;
    // The initial centers: two distinct points (CuPy picks them at random).
    let first = [0usize, n - 1];
    let centers_host: Vec<f64> = first.iter().flat_map(|&i| [x[2 * i], x[2 * i + 1]]).collect();

    let fit = |centers0: &[f64], check: bool| -> Result<(Vec<f64>, usize)> {
        let (x0, x1) = (dx.index_axis(1, 0)?.expand_dims(1)?, dx.index_axis(1, 1)?.expand_dims(1)?);
        let points = dx.expand_dims(0)?;
        let ids = Array::<i64>::arange(k)?.expand_dims(1)?;
        let mut centers = Array::from_shape_vec([k, 2], centers0.to_vec())?;
        let mut pred: Option<Array<i64>> = None;
        let mut iters = 0;
        for _ in 0..max_iter {
            let (c0, c1) = (centers.index_axis(1, 0)?.expand_dims(0)?, centers.index_axis(1, 1)?.expand_dims(0)?);
            let distances = kernels::sq_dist::call(&x0, &x1, &c0, &c1)?;
            let new_pred = distances.argmin().axis(1).run()?;
            let c = if check { centers.to_vec()? } else { Vec::new() };
            if check {
                check_labels(&x, &c, &new_pred.to_vec()?)?;
            }
            if let Some(p) = &pred
                && new_pred.eq(p)?.all().run()?.to_vec()?[0]
            {
                break;
            }
            iters += 1;
            let mask = new_pred.eq(&ids)?;
            let sums = kernels::masked_sum::call(&points, &mask.expand_dims(2)?).axis(1).run()?;
            let counts = kernels::count::call(&mask).axis(1).run()?.reshape([k, 1])?;
            if check {
                check_sums(&x, &new_pred.to_vec()?, &sums.to_vec()?, &counts.to_vec()?)?;
            }
            centers = (&sums / &counts)?;
            pred = Some(new_pred);
        }
        Ok((centers.to_vec()?, iters))
    };

    // Checked run, then timed runs (the same work without the host checks).
    let (centers, iters) = fit(&centers_host, true)?;
    device.synchronize()?;
    let mut times = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        fit(&centers_host, false)?;
        device.synchronize()?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    println!("k-means on {n} points in 2-D (f64), {k} clusters: {iters} iterations, centers {centers:.4?}");
    println!("fit: {:.2} ms (median of 5; {} device)", times[2], if device.is_cpu() { "CPU" } else { "GPU" });
    Ok(())
}

/// The labels: the nearest center, the first of equals (`argmin`), from the same centers.
fn check_labels(x: &[f64], c: &[f64], got: &[i64]) -> Result<()> {
    for (i, &g) in got.iter().enumerate() {
        let d = |j: usize| kernels::sq_dist(x[2 * i], x[2 * i + 1], c[2 * j], c[2 * j + 1]);
        let want = (0..c.len() / 2).fold(0usize, |b, j| if d(j) < d(b) { j } else { b });
        if g != want as i64 {
            return Err(mismatch(format!("point {i}: label {g}, want {want}")));
        }
    }
    Ok(())
}

/// Each cluster's coordinate sums and count.
fn check_sums(x: &[f64], pred: &[i64], sums: &[f64], counts: &[f64]) -> Result<()> {
    let k = counts.len();
    let (mut s, mut c) = (vec![0.0f64; 2 * k], vec![0.0f64; k]);
    for (i, &p) in pred.iter().enumerate() {
        let p = p as usize;
        s[2 * p] += x[2 * i];
        s[2 * p + 1] += x[2 * i + 1];
        c[p] += 1.0;
    }
    for j in 0..k {
        if c[j] != counts[j] {
            return Err(mismatch(format!("cluster {j}: count {}, want {}", counts[j], c[j])));
        }
        for d in 0..2 {
            let (g, w) = (sums[2 * j + d], s[2 * j + d]);
            if (g - w).abs() > 1e-9 * w.abs().max(c[j]) {
                return Err(mismatch(format!("cluster {j}, coordinate {d}: sum {g}, want {w}")));
            }
        }
    }
    Ok(())
}
