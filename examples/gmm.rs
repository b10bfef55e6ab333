//! A port of CuPy's Gaussian mixture example (`examples/gmm/gmm.py`, `train_gmm`, with its
//! defaults: two blobs of `num = 500_000` f32 points in 2-D around (1, 1) and (-1, -1), so 10^6
//! points, two components with diagonal covariances, f64 parameters, at most 30 EM iterations,
//! stopping when the mean log-likelihood changes by less than 1e-3). Each iteration is CuPy's: the
//! E-step (the squared Mahalanobis distances, an `#[reduction]` over the coordinates of the points
//! `(N, 1, D)` against the means `(1, K, D)`; `log_det = sum(log(inv_cov), axis=1)`; the weighted
//! log densities, an `#[elementwise]` kernel; `log(sum(exp(..)))` along the components, an
//! `#[reduction]` with a `post`; its mean, the lower bound, which the host reads for the stop
//! test as CuPy's `abs(change) < tol`; the responsibilities, an `#[elementwise]` kernel), then the
//! M-step (`nk = sum(resp, axis=0)`, the responsibility-weighted sums of the coordinates and of
//! their squares, two `#[reduction]`s along axis 0 of `(N, K, 1)` against `(N, 1, D)` for CuPy's
//! `dot(resp.T, X)` and `dot(resp.T, X * X)`; the means, variances and `1 / sqrt(variance)`, an
//! `#[elementwise]` kernel; `weights = nk / N`). CuPy's matrix products become reductions, and the
//! distance is summed as `inv_cov^2 (x - mean)^2` rather than CuPy's expanded
//! `mean^2 p - 2 x mean p + x^2 p`; the initial weights are f64 (CuPy's, f32 0.5s, become f64
//! after the first M-step).
//!
//! Checked at every iteration against a host reference in f64 from the same parameters (the same
//! Rust functions, sums in the host's order): the lower bound, the new weights, means and
//! variances, each within 1e-9 of its value (1e-9 absolute below 1). Then, as CuPy's `calc_acc`,
//! the share of the points whose most likely component (`argmax` along axis 1) is their blob's,
//! for the training points (at least 0.75: the two-blob Bayes rate is 0.92 in 2-D, and swapped
//! components would give less than 0.25) and 200 test points (printed).
//!
//! Time for the fit (`train_gmm`: from the initial parameters to the stop, the points already on
//! the device; median of 5), H200, one run (762f2a0), the same inputs: cuprum 1.78 ms, CuPy (14.2)
//! 15.10 ms, 9 iterations each, the same means to the printed digits. An iteration moves about 200 MB at the defaults (the 8 MB of points read
//! three times; the (N, K) f64 distances, log densities and responsibilities, 16 MB each, written
//! once and read once or twice; the M-step's sums read a point's coordinate and responsibility
//! for each of their K D outputs): 60 us at an H100's 3.35 TB/s.
//!
//! `cargo run --release -p cuprum-examples --example gmm [-- NUM [DIM]]` (NUM points per blob;
//! default CuPy's 500,000 and 2). Without a GPU it runs on the CPU device (try `-- 20000`).
//! `GMM_DUMP=/tmp/gmm.bin` writes the points and the initial parameters for
//! `scripts/cupy_gmm.py`, which times CuPy's `train_gmm` on them.

#[path = "kernels/gmm.rs"]
mod kernels;

use std::time::Instant;

use cuprum::runtime::{Array, Device, Error, Result};

fn main() {
    let arg = |k: usize, default: usize| std::env::args().nth(k).and_then(|a| a.parse().ok()).unwrap_or(default);
    let (num, dim) = (arg(1, 500_000), arg(2, 2));
    let device = match Device::count() {
        Ok(n) if n > 0 => Device::get(0),
        _ => {
            println!("no CUDA GPU: running on the CPU device");
            Ok(Device::cpu())
        }
    };
    if let Err(e) = device.and_then(|d| run(&d, num, dim)) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// A 64-bit LCG's uniform numbers in (0, 1): a fixed, reproducible data set.
fn uniform(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        })
        .collect()
}

/// Standard normal samples (Box-Muller over [`uniform`]).
fn normal(n: usize, seed: u64) -> Vec<f64> {
    let u = uniform(2 * n, seed);
    (0..n).map(|i| (-2.0 * u[2 * i].ln()).sqrt() * (std::f64::consts::TAU * u[2 * i + 1]).cos()).collect()
}

/// Two blobs of `num` points: `normal(1, 1)` then `normal(-1, 1)`, rounded to f32 (CuPy's
/// `np.r_[train1, train2]`).
fn blobs(num: usize, dim: usize, seed: u64) -> Vec<f32> {
    let (a, b) = (normal(num * dim, seed), normal(num * dim, seed + 1));
    a.iter().map(|v| (v + 1.0) as f32).chain(b.iter().map(|v| (v - 1.0) as f32)).collect()
}

fn mismatch(what: String) -> Error {
    Error::Unsupported { what: format!("GMM differs from the host reference: {what}") }
}

/// The parameters after an EM iteration, and the lower bound of its E-step.
struct Step {
    lower_bound: f64,
    weights: Vec<f64>,
    means: Vec<f64>,
    covariances: Vec<f64>,
}

/// One EM iteration on the host in f64, from the same parameters, with the kernels' functions.
fn host_step(x: &[f32], dim: usize, means: &[f64], inv_cov: &[f64], weights: &[f64]) -> Step {
    let (k, n) = (weights.len(), x.len() / dim);
    let log_det: Vec<f64> = (0..k).map(|c| inv_cov[c * dim..(c + 1) * dim].iter().map(|v| v.ln()).sum()).collect();
    let (mut lower_bound, mut nk) = (0f64, vec![0f64; k]);
    let (mut sums, mut sums_sq, mut wlp) = (vec![0f64; k * dim], vec![0f64; k * dim], vec![0f64; k]);
    for p in x.chunks_exact(dim) {
        for c in 0..k {
            let m: f64 = (0..dim).map(|d| kernels::mahalanobis(p[d], means[c * dim + d], inv_cov[c * dim + d])).sum();
            wlp[c] = kernels::weighted_log_prob(m, log_det[c], weights[c], dim as f64);
        }
        let acc =
            wlp.iter().map(|&v| kernels::log_sum_exp(v)).fold(kernels::log_sum_exp::identity_host(), kernels::log_sum_exp::reduce_host);
        let norm = kernels::log_sum_exp::post_host(acc);
        lower_bound += norm;
        for c in 0..k {
            let r = kernels::responsibility(wlp[c], norm);
            nk[c] += r;
            for d in 0..dim {
                sums[c * dim + d] += kernels::weighted_sum(r, p[d]);
                sums_sq[c * dim + d] += kernels::weighted_sum_sq(r, p[d]);
            }
        }
    }
    let (mut new_means, mut covariances) = (vec![0f64; k * dim], vec![0f64; k * dim]);
    for e in 0..k * dim {
        (new_means[e], covariances[e], _) = kernels::m_step(sums[e], sums_sq[e], nk[e / dim]);
    }
    Step { lower_bound: lower_bound / n as f64, weights: nk.iter().map(|v| v / n as f64).collect(), means: new_means, covariances }
}

/// What `train_gmm` returns (and how many iterations it took, the last lower bound).
struct Fitted {
    means: Array<f64>,
    covariances: Array<f64>,
    inv_cov: Array<f64>,
    weights: Array<f64>,
    iters: usize,
    lower_bound: f64,
}

fn compare(what: &str, iter: usize, got: &[f64], want: &[f64]) -> Result<()> {
    for (e, (g, w)) in got.iter().zip(want).enumerate() {
        if g.is_nan() || (g - w).abs() > 1e-9 * w.abs().max(1.0) {
            return Err(mismatch(format!("iteration {iter}, {what}[{e}]: {g}, want {w}")));
        }
    }
    Ok(())
}

fn run(device: &Device, num: usize, dim: usize) -> Result<()> {
    let _current = device.use_scoped()?;
    let (k, max_iter, tol) = (2usize, 30usize, 1e-3);
    // CuPy's data: two blobs of `num` points (f32), 100 of each for the test; the initial means
    // `normal(1, 1)` and `normal(-1, 1)` and variances `rand(2, dim)` (f64).
    let (x, x_test) = (blobs(num, dim, 1), blobs(100, dim, 3));
    let means0: Vec<f64> = normal(dim, 5).iter().map(|v| v + 1.0).chain(normal(dim, 6).iter().map(|v| v - 1.0)).collect();
    let cov0 = uniform(k * dim, 7);
    let n = 2 * num;
    if let Some(path) = std::env::var_os("GMM_DUMP") {
        // For `scripts/cupy_gmm.py`: num and dim (u64), the initial means and variances (f64,
        // (2, dim)), the training points and the 200 test points (f32, (N, dim)), little-endian.
        let mut bytes: Vec<u8> = [num as u64, dim as u64].iter().flat_map(|v| v.to_le_bytes()).collect();
        bytes.extend(means0.iter().chain(&cov0).flat_map(|v| v.to_le_bytes()));
        bytes.extend(x.iter().chain(&x_test).flat_map(|v| v.to_le_bytes()));
        std::fs::write(&path, bytes).map_err(|e| Error::Unsupported { what: format!("GMM_DUMP: {e}") })?;
    }
    let points = Array::from_shape_vec([n, 1, dim], x.clone())?;
    let test_points = Array::from_shape_vec([200, 1, dim], x_test.clone())?;

    // CuPy's `estimate_log_prob(X, inv_cov, means) + log(weights)`, (N, K).
    let weighted_log_prob = |points: &Array<f32>, means: &Array<f64>, inv_cov: &Array<f64>, weights: &Array<f64>| {
        let distances = kernels::mahalanobis::call(points, &means.expand_dims(0)?, &inv_cov.expand_dims(0)?).axis(2).run()?;
        let log_det = inv_cov.log()?.sum().axis(1).run()?;
        kernels::weighted_log_prob::call(&distances, &log_det, weights, dim as f64)
    };

    // CuPy's `train_gmm`: the parameters, the iterations and the last lower bound.
    let fit = |check: bool| -> Result<Fitted> {
        let mut means = Array::from_shape_vec([k, dim], means0.clone())?;
        let mut covariances = Array::from_shape_vec([k, dim], cov0.clone())?;
        let mut inv_cov = (1.0 / &covariances.sqrt()?)?;
        let mut weights = Array::from_vec(vec![0.5f64; k])?;
        let mut lower_bound = f64::NEG_INFINITY;
        for iter in 0..max_iter {
            // E-step.
            let wlp = weighted_log_prob(&points, &means, &inv_cov, &weights)?;
            let log_prob_norm = kernels::log_sum_exp::call(&wlp).axis(1).run()?;
            let mean_log_prob = log_prob_norm.mean().run()?;
            let resp = kernels::responsibility::call(&wlp, &log_prob_norm.expand_dims(1)?)?;
            // M-step.
            let nk = resp.sum().axis(0).run()?;
            let resp3 = resp.expand_dims(2)?;
            let sums = kernels::weighted_sum::call(&resp3, &points).axis(0).run()?;
            let sums_sq = kernels::weighted_sum_sq::call(&resp3, &points).axis(0).run()?;
            let (new_means, new_covariances, new_inv_cov) = kernels::m_step::call(&sums, &sums_sq, &nk.expand_dims(1)?)?;
            let new_weights = (&nk / n as f64)?;
            let bound = mean_log_prob.to_vec()?[0];
            if check {
                let want = host_step(&x, dim, &means.to_vec()?, &inv_cov.to_vec()?, &weights.to_vec()?);
                compare("lower bound", iter, &[bound], &[want.lower_bound])?;
                compare("weights", iter, &new_weights.to_vec()?, &want.weights)?;
                compare("means", iter, &new_means.to_vec()?, &want.means)?;
                compare("covariances", iter, &new_covariances.to_vec()?, &want.covariances)?;
            }
            (means, covariances, inv_cov, weights) = (new_means, new_covariances, new_inv_cov, new_weights);
            let change = bound - lower_bound;
            lower_bound = bound;
            if change.abs() < tol {
                return Ok(Fitted { means, covariances, inv_cov, weights, iters: iter + 1, lower_bound });
            }
        }
        println!("Failed to converge. Increase max-iter or tol.");
        Ok(Fitted { means, covariances, inv_cov, weights, iters: max_iter, lower_bound })
    };

    // Checked run, then timed runs (the same work without the host checks).
    let Fitted { means, covariances, inv_cov, weights, iters, lower_bound } = fit(true)?;
    // CuPy's `predict` and accuracies: the first half of each set is blob 0.
    let accuracy = |points: &Array<f32>| -> Result<f64> {
        let labels = weighted_log_prob(points, &means, &inv_cov, &weights)?.argmax().axis(1).run()?.to_vec()?;
        let half = labels.len() / 2;
        Ok(labels.iter().enumerate().filter(|&(i, &l)| l == (i >= half) as i64).count() as f64 / labels.len() as f64)
    };
    let (train_accuracy, test_accuracy) = (accuracy(&points)?, accuracy(&test_points)?);
    if train_accuracy < 0.75 {
        return Err(Error::Unsupported { what: format!("GMM: training accuracy {train_accuracy:.4}, below 0.75") });
    }
    device.synchronize()?;
    let mut times = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        fit(false)?;
        device.synchronize()?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "GMM on {n} points in {dim}-D (f32; f64 parameters), {k} components: {iters} iterations, lower bound {lower_bound:.6}, \
         means {:.4?}, variances {:.4?}, weights {:.4?}",
        means.to_vec()?,
        covariances.to_vec()?,
        weights.to_vec()?
    );
    println!("train accuracy {:.2}%, test accuracy {:.2}%", 100.0 * train_accuracy, 100.0 * test_accuracy);
    println!("fit: {:.2} ms (median of 5; {} device)", times[2], if device.is_cpu() { "CPU" } else { "GPU" });
    Ok(())
}
