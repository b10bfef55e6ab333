//! Tests of `random::Generator` on each device: Philox4x32-10 against Random123's known answer and
//! an independent host implementation, the distributions against host references in f64, the
//! counter, bad input, and (on a GPU) the same bits as the CPU device. Run on a GPU machine with
//! `cargo test -p cuprum-runtime --test gpu_random -- --include-ignored`.

mod support;
use support::Rng;

use cuprum_runtime::random::Generator;
use cuprum_runtime::{Array, Device, Error};

on_both_devices!(
    cuprum_runtime::Device;
    philox_matches_known_answer,
    uniform_matches_host_philox,
    integers_match_host_philox,
    normal_matches_host_box_muller,
    normal_tails_and_pairs,
    counter_advances_and_reproduces,
    shapes_empty_and_0d,
    bad_input_is_an_error,
    same_bits_as_the_cpu_device,
);

/// Philox4x32-10 on the host, written from the paper's definition (independent of the kernel).
fn philox(key: [u32; 2], ctr: [u32; 4]) -> [u32; 4] {
    let (mut c, mut k) = (ctr, key);
    for round in 0..10 {
        if round > 0 {
            k = [k[0].wrapping_add(0x9E37_79B9), k[1].wrapping_add(0xBB67_AE85)];
        }
        let p0 = u64::from(c[0]) * 0xD251_1F53;
        let p1 = u64::from(c[2]) * 0xCD9E_8D57;
        c = [(p1 >> 32) as u32 ^ c[1] ^ k[0], p1 as u32, (p0 >> 32) as u32 ^ c[3] ^ k[1], p0 as u32];
    }
    c
}

/// The host's words of block `b` under `seed`.
fn block(seed: u64, b: u64) -> [u32; 4] {
    philox([seed as u32, (seed >> 32) as u32], [b as u32, (b >> 32) as u32, 0, 0])
}

/// Where element `j` of a result of `n` elements comes from: (block, word group) with `per`
/// elements per block (each group of the result is one word or pair of words of every block).
fn source(n: usize, per: usize, j: usize) -> (u64, usize) {
    let blocks = n.div_ceil(per);
    ((j % blocks) as u64, j / blocks)
}

/// The standard normal pair of the kernel's f32 Box-Muller (kernels/random.rs) from the words
/// `a` and `b`, in f64: the radius of `u = (a + 1/2) 2^-32` (`a + 1/2` rounded to f32), the
/// angle `π/2 g` with `g` from the 23 high bits of `b` in [-1/2, 1/2), its cosine negated by
/// bit 0 and the two swapped by bit 1.
fn normal_pair_f32(a: u32, b: u32) -> [f64; 2] {
    let u = f64::from(a as f32 + 0.5) / 4_294_967_296.0;
    let rad = (-2.0 * u.ln()).sqrt();
    let theta = std::f64::consts::FRAC_PI_2 * (f64::from(b >> 9) / 8_388_608.0 - 0.5);
    let c = if b & 1 == 0 { theta.cos() } else { -theta.cos() };
    let s = theta.sin();
    if b & 2 == 0 { [rad * c, rad * s] } else { [rad * s, rad * c] }
}

fn philox_matches_known_answer() {
    // Random123's known-answer vector for philox4x32-10: counter 0, key 0.
    assert_eq!(block(0, 0), [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]);
    let u = Generator::new(0).uniform::<f32>(0.0, 1.0, 4).unwrap().to_vec().unwrap();
    let want: Vec<f32> = block(0, 0).iter().map(|w| (w >> 8) as f32 / 16_777_216.0).collect();
    assert_eq!(u, want);
}

fn uniform_matches_host_philox() {
    let mut r = Rng::new();
    let seed = r.next();
    let n = 1000 + (r.next() % 100) as usize;
    let (lo, hi) = (r.range(-5.0, 0.0), r.range(1.0, 5.0));
    let mut g = Generator::new(seed);
    let u32s = g.uniform::<f32>(lo as f32, hi as f32, n).unwrap().to_vec().unwrap();
    let u64s = g.uniform::<f64>(lo, hi, n).unwrap().to_vec().unwrap();
    let f32_blocks = n.div_ceil(4) as u64;
    for (j, &x) in u32s.iter().enumerate() {
        let (b, w) = source(n, 4, j);
        let unit = (block(seed, b)[w] >> 8) as f32 / 16_777_216.0;
        let want = lo as f32 + (hi as f32 - lo as f32) * unit;
        assert_eq!(x.to_bits(), want.to_bits(), "uniform f32 element {j}: {x} vs {want}");
        assert!((lo as f32..hi as f32).contains(&x) || x == hi as f32);
    }
    for (j, &x) in u64s.iter().enumerate() {
        let (b, w) = source(n, 2, j);
        let words = block(seed, b + f32_blocks);
        let bits = (u64::from(words[2 * w] >> 5) << 26) | u64::from(words[2 * w + 1] >> 6);
        let want = lo + (hi - lo) * (bits as f64 / 9_007_199_254_740_992.0);
        assert_eq!(x.to_bits(), want.to_bits(), "uniform f64 element {j}: {x} vs {want}");
    }
    let mean = u64s.iter().sum::<f64>() / n as f64;
    assert!((mean - (lo + hi) / 2.0).abs() < 0.1 * (hi - lo), "mean {mean} of uniform({lo}, {hi})");
}

fn integers_match_host_philox() {
    let mut r = Rng::new();
    let seed = r.next();
    for (low, high) in [(-7i64, 13i64), (0, 1), (i64::MIN, i64::MAX), (-(1 << 40), 1 << 50)] {
        let n = 501;
        let mut g = Generator::new(seed);
        let got = g.integers::<i64>(low, high, n).unwrap().to_vec().unwrap();
        let range = (high as u64).wrapping_sub(low as u64);
        for (j, &x) in got.iter().enumerate() {
            let (b, w) = source(n, 2, j);
            let words = block(seed, b);
            let bits = (u64::from(words[2 * w]) << 32) | u64::from(words[2 * w + 1]);
            let d = ((u128::from(bits) * u128::from(range)) >> 64) as u64;
            let want = low.wrapping_add(d as i64);
            assert_eq!(x, want, "integers({low}, {high}) element {j}");
            assert!(x >= low && x < high);
        }
    }
    // A narrower type: every value of a small range appears.
    let got = Generator::new(seed).integers::<i32>(-3, 4, 2000).unwrap().to_vec().unwrap();
    for v in -3..4 {
        assert!(got.contains(&v), "integers::<i32>(-3, 4) never drew {v}");
    }
    assert!(got.iter().all(|x| (-3..4).contains(x)));
}

fn normal_matches_host_box_muller() {
    let mut r = Rng::new();
    let seed = r.next();
    let (mean, std) = (r.range(-2.0, 2.0), r.range(0.5, 3.0));
    let n = 4099;
    let mut g = Generator::new(seed);
    let z32 = g.normal::<f32>(mean as f32, std as f32, n).unwrap().to_vec().unwrap();
    let z64 = g.normal::<f64>(mean, std, n).unwrap().to_vec().unwrap();
    let tau = std::f64::consts::TAU;
    for (j, &x) in z32.iter().enumerate() {
        // f32: element `j` is word pair `(j % 4) / 2` of block `j / 4`, output `j % 2` of the pair.
        let words = block(seed, (j / 4) as u64);
        let (a, b) = (words[j % 4 / 2 * 2], words[j % 4 / 2 * 2 + 1]);
        let want = mean + std * normal_pair_f32(a, b)[j % 2];
        assert!((f64::from(x) - want).abs() <= 1e-6 * (1.0 + want.abs()) * std, "normal f32 element {j}: {x} vs {want}");
    }
    let f32_blocks = n.div_ceil(4) as u64;
    for (j, &x) in z64.iter().enumerate() {
        let (b, w) = source(n, 2, j);
        let words = block(seed, b + f32_blocks);
        let u = ((u64::from(words[0] >> 5) << 26) | u64::from(words[1] >> 6)) + 1;
        let v = (u64::from(words[2] >> 5) << 26) | u64::from(words[3] >> 6);
        let (u, v) = (u as f64 / 9_007_199_254_740_992.0, v as f64 / 9_007_199_254_740_992.0);
        let rad = (-2.0 * u.ln()).sqrt();
        let z = if w == 0 { rad * (tau * v).cos() } else { rad * (tau * v).sin() };
        let want = mean + std * z;
        assert!((x - want).abs() <= 1e-13 * (1.0 + want.abs()) * std, "normal f64 element {j}: {x} vs {want}");
    }
    // The moments of many draws.
    let z = Generator::new(seed).standard_normal::<f32>(1 << 16).unwrap().to_vec().unwrap();
    let m = z.iter().map(|&x| f64::from(x)).sum::<f64>() / z.len() as f64;
    let var = z.iter().map(|&x| (f64::from(x) - m).powi(2)).sum::<f64>() / z.len() as f64;
    assert!(m.abs() < 0.02 && (var - 1.0).abs() < 0.03, "standard normal: mean {m}, variance {var}");
}

/// `erfc(x)` within 1.2e-7 relative (Numerical Recipes' `erfcc`, a Chebyshev fit), in f64.
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let p = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07 + t * (-1.135_203_98 + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * p.exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

/// The standard normal distribution function.
fn phi(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// The distribution of many f32 draws: Kolmogorov-Smirnov against the normal distribution
/// function, the counts beyond 2, 3 and 4 standard deviations on each side against their
/// expectations, the largest radius the transform reaches (`u >= 2^-33`: 6.764), and the two
/// numbers of each Box-Muller pair uncorrelated, also in their squares (which a transform that
/// covered only part of the circle would correlate).
fn normal_tails_and_pairs() {
    let mut r = Rng::new();
    let n = 1usize << 18;
    let z = Generator::new(r.next()).standard_normal::<f32>(n).unwrap().to_vec().unwrap();
    let mut s: Vec<f64> = z.iter().map(|&x| f64::from(x)).collect();
    s.sort_by(f64::total_cmp);
    let ks = s
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            let p = phi(x);
            (p - i as f64 / n as f64).abs().max((p - (i + 1) as f64 / n as f64).abs())
        })
        .fold(0.0f64, f64::max);
    // 2.2 / sqrt(n): exceeded by chance once in about 10^4 runs.
    let ks_bound = 2.2 / (n as f64).sqrt();
    assert!(ks < ks_bound, "Kolmogorov-Smirnov statistic {ks} over {n} draws (bound {ks_bound})");
    for t in [2.0f64, 3.0, 4.0] {
        let expect = n as f64 * 0.5 * erfc(t / std::f64::consts::SQRT_2);
        let above = s.iter().filter(|&&x| x > t).count() as f64;
        let below = s.iter().filter(|&&x| x < -t).count() as f64;
        for (side, count) in [("above", above), ("below", below)] {
            assert!((count - expect).abs() <= 5.0 * expect.sqrt() + 1.0, "{count} of {n} draws {side} ±{t}: expected {expect:.1}");
        }
    }
    let largest = s[0].abs().max(s[n - 1].abs());
    assert!(largest <= 6.7638, "a draw of {largest}: beyond the largest radius 6.764");
    let pairs = n / 2;
    let corr = |f: &dyn Fn(f64) -> f64| {
        let (a, b): (Vec<f64>, Vec<f64>) = (0..pairs).map(|k| (f(f64::from(z[2 * k])), f(f64::from(z[2 * k + 1])))).unzip();
        let (ma, mb) = (a.iter().sum::<f64>() / pairs as f64, b.iter().sum::<f64>() / pairs as f64);
        let cov = a.iter().zip(&b).map(|(x, y)| (x - ma) * (y - mb)).sum::<f64>();
        let va = a.iter().map(|x| (x - ma).powi(2)).sum::<f64>();
        let vb = b.iter().map(|y| (y - mb).powi(2)).sum::<f64>();
        cov / (va * vb).sqrt()
    };
    let bound = 5.0 / (pairs as f64).sqrt();
    let (c1, c2) = (corr(&|x| x), corr(&|x| x * x));
    assert!(c1.abs() < bound && c2.abs() < bound, "correlation within Box-Muller pairs {c1}, of their squares {c2} (bound {bound})");
}

fn counter_advances_and_reproduces() {
    let mut g = Generator::new(7);
    assert_eq!(g.counter(), 0);
    let a = g.uniform::<f32>(0.0, 1.0, 10).unwrap().to_vec().unwrap();
    assert_eq!(g.counter(), 3);
    let b = g.uniform::<f32>(0.0, 1.0, 10).unwrap().to_vec().unwrap();
    assert_eq!(g.counter(), 6);
    assert_ne!(a, b, "the second call must draw fresh numbers");
    g.normal::<f64>(0.0, 1.0, 5).unwrap();
    assert_eq!(g.counter(), 9);
    g.integers::<i64>(0, 10, 4).unwrap();
    assert_eq!(g.counter(), 11);
    let mut h = Generator::new(7);
    h.set_counter(3);
    assert_eq!(h.uniform::<f32>(0.0, 1.0, 10).unwrap().to_vec().unwrap(), b);
    assert_ne!(Generator::new(8).uniform::<f32>(0.0, 1.0, 10).unwrap().to_vec().unwrap(), a);
}

fn shapes_empty_and_0d() {
    let mut g = Generator::new(1);
    let e = g.uniform::<f32>(0.0, 1.0, [3, 0]).unwrap();
    assert_eq!(e.shape(), &[3, 0]);
    assert_eq!(g.counter(), 0);
    let s = g.normal::<f32>(0.0, 1.0, Vec::<usize>::new()).unwrap();
    assert_eq!(s.shape(), &[] as &[usize]);
    assert_eq!(s.to_vec().unwrap().len(), 1);
    let m = g.integers::<i64>(5, 9, [2, 3, 5]).unwrap();
    assert_eq!(m.shape(), &[2, 3, 5]);
    assert!(m.to_vec().unwrap().iter().all(|x| (5..9).contains(x)));
}

fn bad_input_is_an_error() {
    let mut g = Generator::new(1);
    for (low, high) in [(3, 3), (5, 2)] {
        let e = g.integers::<i64>(low, high, 4).unwrap_err();
        assert!(matches!(e, Error::Unsupported { .. }) && e.to_string().contains("below `high`"), "{e}");
    }
    let e = g.integers::<u8>(-1, 10, 4).unwrap_err();
    assert!(e.to_string().contains("range of u8"), "{e}");
    let e = g.integers::<i8>(0, 300, 4).unwrap_err();
    assert!(e.to_string().contains("range of i8"), "{e}");
    let e = g.uniform::<half::f16>(half::f16::ZERO, half::f16::ONE, 4).unwrap_err();
    assert!(e.to_string().contains("only f32 and f64"), "{e}");
    assert_eq!(g.counter(), 0, "a refused call must not advance the counter");
}

/// On a GPU: the same seed gives the same bits as on the CPU device (on the CPU device itself the
/// comparison is with its own second run).
fn same_bits_as_the_cpu_device() {
    let mut r = Rng::new();
    let seed = r.next();
    let n = (1 << 18) + 3;
    let draw = || -> Vec<Vec<u64>> {
        let mut g = Generator::new(seed);
        let bits32 = |a: Array<f32>| a.to_vec().unwrap().iter().map(|x| u64::from(x.to_bits())).collect::<Vec<_>>();
        let bits64 = |a: Array<f64>| a.to_vec().unwrap().iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        vec![
            bits32(g.uniform::<f32>(-1.0, 3.0, n).unwrap()),
            bits64(g.uniform::<f64>(-1.0, 3.0, n).unwrap()),
            bits32(g.normal::<f32>(0.5, 2.0, n).unwrap()),
            bits64(g.normal::<f64>(0.5, 2.0, n).unwrap()),
            g.integers::<i64>(-1000, 1 << 40, n).unwrap().to_vec().unwrap().iter().map(|&x| x as u64).collect(),
        ]
    };
    let here = draw();
    let on_cpu = {
        let _cpu = Device::cpu().use_scoped().unwrap();
        draw()
    };
    for (k, name) in ["uniform f32", "uniform f64", "normal f32", "normal f64", "integers i64"].iter().enumerate() {
        if let Some(j) = (0..n).find(|&j| here[k][j] != on_cpu[k][j]) {
            panic!("{name} element {j}: {:#x} here, {:#x} on the CPU device", here[k][j], on_cpu[k][j]);
        }
    }
}
