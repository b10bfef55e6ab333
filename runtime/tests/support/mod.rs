//! What the runtime's and the testsuite's tests share: their random source and the check that a
//! CUDA compiler is there. Included by the runtime's tests (`mod support;`) and by the testsuite's
//! (`#[path = "../../runtime/tests/support/mod.rs"] mod support;`); both crates have `rand` as a
//! dev-dependency.
#![allow(dead_code)]

use std::cell::Cell;
use std::sync::OnceLock;

use rand::rngs::StdRng;
use rand::{Rng as _, RngExt as _, SeedableRng as _};

/// The variable that fixes the seed of every random test.
pub const SEED_VAR: &str = "CUPRUM_TEST_SEED";

/// The process's seed: `CUPRUM_TEST_SEED` when set (a decimal `u64`), else drawn from the OS once.
pub fn process_seed() -> u64 {
    static SEED: OnceLock<u64> = OnceLock::new();
    *SEED.get_or_init(|| match std::env::var(SEED_VAR) {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|e| panic!("{SEED_VAR}={v:?} is not a decimal u64: {e}")),
        Err(_) => rand::random(),
    })
}

/// A seeded `rand` generator for the calling test. Its seed is derived from the process seed, the
/// name of the current thread (libtest names each test's thread after the test) and how many
/// generators this thread made before, so that a test draws the same numbers under the same
/// `CUPRUM_TEST_SEED` whatever other tests run beside it. Prints the process seed (libtest shows
/// it with the output of a failing test).
pub fn seeded() -> StdRng {
    thread_local!(static MADE: Cell<u64> = const { Cell::new(0) });
    let base = process_seed();
    let k = MADE.with(|m| m.replace(m.get() + 1));
    let thread = std::thread::current();
    let name = thread.name().unwrap_or("");
    eprintln!("seed = {base} (set {SEED_VAR}={base} to reproduce)");
    // FNV-1a of the thread's name and the count: a fixed hash, so that a seed reproduces with
    // any build of the test.
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for b in name.bytes().chain(k.to_le_bytes()) {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    StdRng::seed_from_u64(base ^ h)
}

/// The random source of the GPU tests: `rand`'s `StdRng` from [`seeded`], with the draws the
/// tests use.
pub struct Rng(StdRng);

impl Rng {
    pub fn new() -> Rng {
        Rng(seeded())
    }

    /// [`Rng::new`] (the seed is printed and taken from `CUPRUM_TEST_SEED` by [`seeded`]; the name
    /// is the caller's test, kept for the call sites that give it).
    pub fn seeded(_test: &str) -> Rng {
        Rng::new()
    }

    /// 64 uniform random bits.
    pub fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        self.0.random::<f64>()
    }

    /// Uniform in [lo, hi), never exactly 0 (a zero input hides mistakes).
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        let v = self.0.random_range(lo..hi);
        if v == 0.0 { (hi - lo) / 7.0 } else { v }
    }

    /// An integer in [lo, hi].
    pub fn int(&mut self, lo: i64, hi: i64) -> i64 {
        self.0.random_range(lo..=hi)
    }
}

/// The variable that lets the tests which run nvcc or libnvrtc pass without them (they print
/// that they were skipped); without it such a test fails when the compiler is missing.
pub const SKIP_VAR: &str = "CUPRUM_SKIP_CUDA_COMPILE";

/// `true` after printing why `what` is skipped, when `available` is false and
/// `CUPRUM_SKIP_CUDA_COMPILE=1`; panics when `available` is false without that variable.
#[track_caller]
pub fn skip_without(available: bool, what: &str, missing: &str) -> bool {
    if available {
        return false;
    }
    if std::env::var(SKIP_VAR).as_deref() == Ok("1") {
        eprintln!("{what}: skipped, {missing} and {SKIP_VAR}=1");
        return true;
    }
    panic!(
        "{what}: {missing}: run `source scripts/cuda-env.sh` first (it installs the CUDA compiler \
         wheels if needed), or set {SKIP_VAR}=1 to skip the tests that need nvcc or libnvrtc"
    );
}

/// `mod on_the_cpu { #[test] fn NAME() }` and `mod on_the_gpu { #[test] #[ignore] fn NAME() }`:
/// each test function `NAME` (a plain `fn()` of the including file) run with the CPU device, then
/// with CUDA device 0, current on the test's thread (what the creation functions allocate on).
/// `$device` is the `Device` type's path in the including crate.
#[macro_export]
macro_rules! on_both_devices {
    ($device:path; $($name:ident),* $(,)?) => {
        mod on_the_cpu {
            use $device as Device;
            $(
                #[test]
                fn $name() {
                    let _current = Device::cpu().use_scoped().unwrap();
                    super::$name()
                }
            )*
        }
        mod on_the_gpu {
            use $device as Device;
            $(
                #[test]
                #[ignore = "needs a CUDA GPU"]
                fn $name() {
                    let _current = Device::get(0).unwrap().use_scoped().unwrap();
                    super::$name()
                }
            )*
        }
    };
}
