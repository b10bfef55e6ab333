//! Grid synchronisation end to end (the kernels of `compiler/tests/in/grid_sync.rs`, blocks of
//! `BLOCK` threads in grid-stride loops), on the CPU device (in CI) and on the GPU
//! (`on_both_devices!`): a two-phase sum in one launch against an f64 host sum of fresh random
//! inputs; a persistent Jacobi solver that calls `grid_sync()` between its steps (in its own loop,
//! and inside a `#[device]` function) against a host reference; and the cooperative launch's
//! co-residency limit, which a larger grid exceeds as `Error::CooperativeGrid` with nothing run.
//! Every output is poisoned before its launch.

#[path = "../../runtime/tests/support/mod.rs"]
mod support;
use support::Rng;

#[path = "../../compiler/tests/in/grid_sync.rs"]
mod grid_kernels;

use cuprum::runtime::{Array, Device, Error, Graph, LaunchConfig, Stream};
use grid_kernels as k;

on_both_devices!(
    cuprum::runtime::Device;
    two_phase_sum_in_one_launch,
    two_phase_sum_on_small_grids,
    jacobi_steps_synchronised_in_the_kernel_loop,
    jacobi_steps_synchronised_in_a_device_function,
    grid_over_the_co_residency_limit_is_an_error,
    co_residency_limit_follows_block_and_shared_memory
);

/// The tests take turns: a graph capture (`a_grid_synchronised_kernel_replays_from_a_graph`)
/// makes another thread's copies from host memory an error while it records (docs/graphs.md).
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

fn block() -> LaunchConfig<'static> {
    LaunchConfig::new(1u32, k::BLOCK)
}

/// The most blocks of `BLOCK` threads a launch of `sum_two_phase` may have here.
fn max_blocks() -> u32 {
    let n = k::sum_two_phase::max_cooperative_blocks(&block()).unwrap();
    assert!(n >= 1, "no block of {} threads fits", k::BLOCK);
    n
}

/// Launches `sum_two_phase` over fresh random `x` of length `n` with `blocks` blocks and checks
/// the result and every partial against f64 host sums.
fn check_sum(n: usize, blocks: u32) {
    let mut r = Rng::new();
    let x: Vec<f32> = (0..n).map(|_| r.range(-1.0, 1.0) as f32).collect();
    let xs = Array::from_slice(&x).unwrap();
    let mut partials = Array::from_slice(&vec![f64::NAN; blocks as usize]).unwrap();
    let mut out = Array::from_slice(&[f64::NAN]).unwrap();
    k::sum_two_phase::launch(&LaunchConfig::new(blocks, k::BLOCK), &xs, &mut partials, &mut out).unwrap();
    let out = out.to_vec().unwrap()[0];
    // Block b's share: the elements whose index lies in b's span of each grid-stride round.
    let per_round = (blocks * k::BLOCK) as usize;
    let mut want_partials = vec![0.0f64; blocks as usize];
    for (i, &v) in x.iter().enumerate() {
        want_partials[i % per_round / k::BLOCK as usize] += v as f64;
    }
    for (b, (&p, &want)) in partials.to_vec().unwrap().iter().zip(&want_partials).enumerate() {
        assert!((p - want).abs() <= 1e-9 * (1.0 + want.abs()), "partial {b} of {blocks} is {p}, want {want}");
    }
    let want = accurate_sum(x.iter().map(|&v| v as f64));
    let scale: f64 = x.iter().map(|&v| (v as f64).abs()).sum();
    assert!((out - want).abs() <= 1e-12 * scale.max(1.0), "sum of {n} over {blocks} blocks is {out}, want {want}");
}

/// A cooperative launch recorded into a `Graph` replays with its grid synchronised: the sum of a
/// replay is the host's, and recording ran nothing (the output keeps its poison until the replay).
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_grid_synchronised_kernel_replays_from_a_graph() {
    let _serial = serial();
    let stream = Stream::new(&Device::get(0).unwrap()).unwrap();
    let _current = stream.use_scoped();
    let blocks = max_blocks();
    let n = (blocks * k::BLOCK) as usize * 2 + 777;
    let mut r = Rng::new();
    let x: Vec<f32> = (0..n).map(|_| r.range(-1.0, 1.0) as f32).collect();
    let xs = Array::from_slice(&x).unwrap();
    let mut partials = Array::from_slice(&vec![f64::NAN; blocks as usize]).unwrap();
    let mut out = Array::from_slice(&[f64::NAN]).unwrap();
    let cfg = LaunchConfig::new(blocks, k::BLOCK);
    // Once eagerly, so that the kernel is loaded (a capture refuses to load one).
    k::sum_two_phase::launch(&cfg, &xs, &mut partials, &mut out).unwrap();
    out.copy_from_slice(&[f64::NAN]).unwrap();
    let graph = Graph::capture(&stream, |_| k::sum_two_phase::launch(&cfg, &xs, &mut partials, &mut out)).unwrap();
    assert_eq!(graph.nodes(), 1, "{graph:?}");
    stream.synchronize().unwrap();
    assert!(out.to_vec().unwrap()[0].is_nan(), "recording launched the kernel");
    graph.replay().unwrap();
    stream.synchronize().unwrap();
    let got = out.to_vec().unwrap()[0];
    let want = accurate_sum(x.iter().map(|&v| v as f64));
    let scale: f64 = x.iter().map(|&v| (v as f64).abs()).sum();
    assert!((got - want).abs() <= 1e-12 * scale.max(1.0), "replayed sum of {n} over {blocks} blocks is {got}, want {want}");
}

/// A sum within a rounding or two of exact (Neumaier's compensated summation), to compare the
/// device's tree of f64 sums with.
fn accurate_sum(values: impl Iterator<Item = f64>) -> f64 {
    let (mut sum, mut c) = (0.0f64, 0.0f64);
    for v in values {
        let t = sum + v;
        c += if sum.abs() >= v.abs() { (sum - t) + v } else { (v - t) + sum };
        sum = t;
    }
    sum + c
}

fn two_phase_sum_in_one_launch() {
    let _serial = serial();
    let blocks = max_blocks();
    // Several elements per thread, and a ragged last round.
    check_sum((blocks * k::BLOCK) as usize * 3 + 12_345, blocks);
}

fn two_phase_sum_on_small_grids() {
    let _serial = serial();
    let max = max_blocks();
    for blocks in [1, 2, 3, 7].into_iter().filter(|&b| b <= max) {
        check_sum(50_000, blocks);
    }
    // Fewer elements than threads: most threads add nothing.
    check_sum(1000, max.min(5));
}

/// `steps` Jacobi steps of `u` on the host, as the kernels compute them (f32, `0.5 * (l + r)`).
fn jacobi_reference(u: &[f32], steps: u32) -> Vec<f32> {
    let n = u.len();
    let (mut a, mut b) = (u.to_vec(), u.to_vec());
    for _ in 0..steps {
        for i in 0..n {
            b[i] = if i == 0 || i == n - 1 { a[i] } else { 0.5f32 * (a[i - 1] + a[i + 1]) };
        }
        std::mem::swap(&mut a, &mut b);
    }
    a
}

type JacobiLaunch = fn(&LaunchConfig<'_>, &mut Array<f32>, &mut Array<f32>, u32) -> cuprum::runtime::Result<()>;

/// Runs `launch` for 10 steps on fresh random values with the most blocks the kernel may have,
/// and compares with the host reference (the result is in `a`: an even number of steps).
fn check_jacobi(launch: JacobiLaunch, blocks: u32, what: &str) {
    let steps = 10;
    let mut r = Rng::new();
    // Several elements per thread, so that a missing barrier would let a thread read a
    // neighbour of another block's from the wrong step.
    let n = (blocks * k::BLOCK) as usize * 3 + 17;
    let u: Vec<f32> = (0..n).map(|_| r.range(-1.0, 1.0) as f32).collect();
    let mut a = Array::from_slice(&u).unwrap();
    let mut b = Array::from_slice(&vec![f32::NAN; n]).unwrap();
    launch(&LaunchConfig::new(blocks, k::BLOCK), &mut a, &mut b, steps).unwrap();
    let want = jacobi_reference(&u, steps);
    let got = a.to_vec().unwrap();
    for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
        // The same f32 operations in the same order: equal but for a contraction the GPU might
        // make; a missing barrier mixes steps, off by far more.
        assert!((g - w).abs() <= 1e-6, "{what}: element {i} of {n} after {steps} steps is {g}, want {w}");
    }
    // `b` holds step 9: every element written, none left poisoned.
    assert!(b.to_vec().unwrap().iter().all(|v| v.is_finite()), "{what}: the second buffer keeps a poisoned element");
}

fn jacobi_steps_synchronised_in_the_kernel_loop() {
    let _serial = serial();
    let blocks = k::jacobi::max_cooperative_blocks::<f32>(&block()).unwrap();
    check_jacobi(k::jacobi::launch::<f32>, blocks, "jacobi");
    check_jacobi(k::jacobi::launch::<f32>, blocks.min(3), "jacobi on 3 blocks");
}

fn jacobi_steps_synchronised_in_a_device_function() {
    let _serial = serial();
    let blocks = k::jacobi_device_sync::max_cooperative_blocks(&block()).unwrap();
    check_jacobi(k::jacobi_device_sync::launch, blocks, "jacobi_device_sync");
}

fn grid_over_the_co_residency_limit_is_an_error() {
    let _serial = serial();
    let max = max_blocks();
    let n = 4096;
    let xs = Array::from_slice(&vec![1.0f32; n]).unwrap();
    let mut partials = Array::from_slice(&vec![f64::NAN; max as usize + 1]).unwrap();
    let mut out = Array::from_slice(&[f64::NAN]).unwrap();
    match k::sum_two_phase::launch(&LaunchConfig::new(max + 1, k::BLOCK), &xs, &mut partials, &mut out) {
        Err(Error::CooperativeGrid {
            kernel,
            blocks,
            limit,
            per_multiprocessor,
            multiprocessors,
            block_threads,
            shared_bytes,
            cooperative_groups,
        }) => {
            assert_eq!(kernel, "sum_two_phase");
            assert!(!cooperative_groups, "a #[rawkernel] syncs with grid_sync()");
            assert_eq!((blocks, limit), (max as u64 + 1, max as u64));
            assert_eq!(u64::from(per_multiprocessor) * u64::from(multiprocessors), limit);
            assert_eq!((block_threads, shared_bytes), (k::BLOCK, 0));
        }
        other => panic!("expected Error::CooperativeGrid, got {other:?}"),
    }
    // Its message says what the limit is and how to pick a grid.
    let m = k::sum_two_phase::launch(&LaunchConfig::new(max + 1, k::BLOCK), &xs, &mut partials, &mut out).unwrap_err().to_string();
    assert!(
        m.contains(&format!("at most {max} blocks"))
            && m.contains("sum_two_phase::max_cooperative_blocks(&config)")
            && m.contains("grid-stride"),
        "{m}"
    );
    // Nothing ran.
    assert!(out.to_vec().unwrap()[0].is_nan());
    assert!(partials.to_vec().unwrap().iter().all(|p| p.is_nan()));
    // The limit itself is fine (and the device is still usable).
    check_sum(n, max);
}

fn co_residency_limit_follows_block_and_shared_memory() {
    let _serial = serial();
    let at =
        |threads: u32, shared: u32| k::jacobi::max_cooperative_blocks::<f64>(&LaunchConfig::new(1u32, threads).shared_mem(shared)).unwrap();
    let device = Device::current().unwrap();
    if device.is_cpu() {
        // The CPU device's model: 4 multiprocessors of 2048 threads, 32 blocks and 228 KiB of
        // shared memory (1 KiB reserved per block) each (runtime/src/cpu/grid.rs checks the
        // model itself).
        assert_eq!(at(256, 0), 32);
        assert_eq!(at(1024, 0), 8);
        assert_eq!(at(32, 0), 128);
        assert_eq!(at(100, 0), 4 * (2048 / 128));
        assert_eq!(at(64, 48 * 1024), 4 * (228 / 49));
    } else {
        // At least one block per multiprocessor, and never more with bigger blocks or more
        // shared memory.
        let sms = device.multiprocessor_count();
        assert!(at(256, 0) >= sms, "{} < {sms}", at(256, 0));
        assert!(at(1024, 0) <= at(256, 0) && at(256, 0) <= at(64, 0));
        assert!(at(256, 32 * 1024) <= at(256, 0));
        assert_eq!(at(256, 0) % sms, 0);
    }
}
