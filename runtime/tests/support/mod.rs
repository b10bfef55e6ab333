//! What the GPU tests share: their random source. Included by the runtime's tests (`mod support;`)
//! and by the facade's (`#[path = "../../runtime/tests/support/mod.rs"] mod support;`).
#![allow(dead_code)]

use std::sync::atomic::{AtomicU64, Ordering};

/// xorshift64*, seeded from the clock and a per-process counter: fresh inputs on every run.
pub struct Rng(u64);

impl Rng {
    pub fn new() -> Rng {
        static N: AtomicU64 = AtomicU64::new(0);
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0x1234_5678, |d| d.as_nanos() as u64);
        Rng((t ^ N.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed) ^ 0xD1B5_4A32_D192_ED03) | 1)
    }

    /// A generator from `CUPRUM_TEST_SEED` when set, else seeded as [`Rng::new`]; prints the seed
    /// on stderr (shown for a failing test) so that a failure can be repeated with
    /// `CUPRUM_TEST_SEED=<seed>`.
    pub fn seeded(test: &str) -> Rng {
        let seed = match std::env::var("CUPRUM_TEST_SEED") {
            Ok(s) => s.trim().parse::<u64>().unwrap_or_else(|e| panic!("CUPRUM_TEST_SEED={s}: {e}")),
            Err(_) => Rng::new().0,
        };
        eprintln!("{test}: seed {seed} (repeat with CUPRUM_TEST_SEED={seed})");
        Rng(seed | 1)
    }

    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [lo, hi), never exactly 0 (a zero input hides mistakes).
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        let v = lo + self.unit() * (hi - lo);
        if v == 0.0 { (hi - lo) / 7.0 } else { v }
    }

    /// An integer in [lo, hi].
    pub fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
}
