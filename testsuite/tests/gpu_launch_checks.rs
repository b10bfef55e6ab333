//! Every launch check gives the same answer on the CPU device and on a GPU (issue 33, item 9: an
//! `#[elementwise]` launch with `Options::block_size(1025)` returned `Ok` on the CPU device and an
//! error on the GPU). Each bad configuration below is launched on both devices; both must refuse
//! it with the same message, and the good configurations next to each must run on both, with the
//! right values (so that a check that refuses too much fails as well).
//!
//! `cpu_refuses_every_bad_configuration` runs anywhere (CI); the comparison needs a GPU:
//! `cargo test -p cuprum-testsuite --test gpu_launch_checks -- --include-ignored`. Not compared:
//! what only a GPU knows (registers lowering a kernel's `max_threads_per_block`, a cooperative
//! grid's co-residency, which depends on the device's multiprocessors); docs/cpu.md says so.

#[path = "../../runtime/tests/support/mod.rs"]
mod support;
use support::Rng;

mod elementwise_kernels;
mod rawkernel_kernels;

use cuprum::runtime::elementwise::Options;
use cuprum::runtime::{Array, Device, Dim3, Error, LaunchConfig, Result};

/// One launch of each kind, with one configuration knob; `Ok` holds the values it computed.
#[derive(Clone, Copy, Debug)]
enum Launch {
    /// `squared_diff::call_with(&Options::new().block_size(n), ..)` over 3000 elements.
    ElementwiseBlock(u32),
    /// `copy::launch` with this grid and block (a grid-stride copy of 3000 elements).
    Raw { grid: (u32, u32, u32), block: (u32, u32, u32) },
    /// `reverse_dynamic::launch` over one block of 256 threads with this many bytes of dynamic
    /// shared memory.
    RawShared(u32),
}

const N: usize = 3000;

fn run(launch: Launch, x: &[f32], y: &[f32]) -> Result<Vec<f32>> {
    let xa = Array::from_slice(x)?;
    let ya = Array::from_slice(y)?;
    match launch {
        Launch::ElementwiseBlock(block) => {
            elementwise_kernels::squared_diff::call_with(&Options::new().block_size(block), &xa, &ya)?.to_vec()
        }
        Launch::Raw { grid, block } => {
            let mut out = Array::from_slice(&[f32::NAN; N])?;
            let cfg = LaunchConfig::new(Dim3::from(grid), Dim3::from(block));
            rawkernel_kernels::copy::launch(&cfg, &xa, &mut out, N as u32)?;
            out.to_vec()
        }
        Launch::RawShared(bytes) => {
            let xs = Array::from_slice(&x[..256])?;
            let mut out = Array::from_slice(&[f32::NAN; 256])?;
            rawkernel_kernels::reverse_dynamic::launch(&LaunchConfig::new(1, 256).shared_mem(bytes), &xs, &mut out)?;
            out.to_vec()
        }
    }
}

/// What the launch must compute when it is accepted.
fn expected(launch: Launch, x: &[f32], y: &[f32]) -> Vec<f32> {
    match launch {
        Launch::ElementwiseBlock(_) => x.iter().zip(y).map(|(a, b)| (a - b) * (a - b)).collect(),
        Launch::Raw { .. } => x.to_vec(),
        Launch::RawShared(_) => x[..256].iter().rev().copied().collect(),
    }
}

/// The device's largest dynamic shared memory for one block (the opt-in maximum, 227 KiB on
/// compute capability 9.0 and on the CPU device).
const OPTIN: u32 = 227 * 1024;

/// (launch, accepted?) for every check: block size, block extents, threads per block, grid
/// extents, zero dimensions, dynamic shared memory.
fn cases() -> Vec<(Launch, bool)> {
    vec![
        (Launch::ElementwiseBlock(1), true),
        (Launch::ElementwiseBlock(1024), true),
        (Launch::ElementwiseBlock(1025), false),
        (Launch::ElementwiseBlock(4096), false),
        (Launch::ElementwiseBlock(0), false),
        (Launch::Raw { grid: (8, 1, 1), block: (1024, 1, 1) }, true),
        (Launch::Raw { grid: (8, 1, 1), block: (1025, 1, 1) }, false),
        (Launch::Raw { grid: (1, 1, 1), block: (1, 1, 64) }, true),
        (Launch::Raw { grid: (1, 1, 1), block: (1, 1, 65) }, false),
        (Launch::Raw { grid: (1, 1, 1), block: (32, 32, 2) }, false),
        (Launch::Raw { grid: (1, 65535, 1), block: (32, 1, 1) }, true),
        (Launch::Raw { grid: (1, 65536, 1), block: (32, 1, 1) }, false),
        (Launch::Raw { grid: (1, 1, 65536), block: (32, 1, 1) }, false),
        (Launch::Raw { grid: (0, 1, 1), block: (32, 1, 1) }, false),
        (Launch::Raw { grid: (4, 1, 1), block: (32, 0, 1) }, false),
        (Launch::RawShared(256 * 4), true),
        (Launch::RawShared(OPTIN), true),
        (Launch::RawShared(OPTIN + 1), false),
    ]
}

fn inputs() -> (Vec<f32>, Vec<f32>) {
    let mut r = Rng::new();
    let x = (0..N).map(|_| r.range(-4.0, 4.0) as f32).collect();
    let y = (0..N).map(|_| r.range(-4.0, 4.0) as f32).collect();
    (x, y)
}

/// Runs every case on `device`: the accepted ones must compute the expected values, the others
/// must fail with a launch error. Returns each case's outcome (`Err`: the message).
fn outcomes(device: &Device) -> Vec<std::result::Result<(), String>> {
    let _current = device.use_scoped().unwrap();
    let (x, y) = inputs();
    cases()
        .into_iter()
        .map(|(launch, accepted)| match run(launch, &x, &y) {
            Ok(values) => {
                assert!(accepted, "{launch:?} ran on {}, but a GPU refuses it", device.name());
                assert!(values == expected(launch, &x, &y), "{launch:?} on {} computed wrong values", device.name());
                Ok(())
            }
            Err(e) => {
                assert!(!accepted, "{launch:?} failed on {}: {e}", device.name());
                assert!(
                    matches!(e, Error::InvalidLaunch { .. } | Error::SharedMemory { .. }),
                    "{launch:?} on {}: not a launch error: {e:?}",
                    device.name()
                );
                Err(e.to_string())
            }
        })
        .collect()
}

#[test]
fn cpu_refuses_every_bad_configuration() {
    outcomes(&Device::cpu());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn both_devices_give_the_same_answer() {
    let cpu = outcomes(&Device::cpu());
    let gpu = outcomes(&Device::get(0).unwrap());
    for ((case, c), g) in cases().iter().zip(&cpu).zip(&gpu) {
        assert_eq!(c, g, "{case:?}: the CPU device and the GPU answer differently");
    }
}

/// `#[elementwise(max_threads = 256, min_blocks = 4)]`: blocks of up to 256 threads run and compute
/// the right values; a GPU refuses 257 and 512 with a launch error that names the limit (the
/// kernel's `max_threads_per_block`, which `__launch_bounds__` sets; the CPU device does not know
/// it, as docs/cpu.md says).
#[test]
#[ignore = "needs a CUDA GPU"]
fn elementwise_launch_bounds_limit_the_block() {
    let _gpu = Device::get(0).unwrap().use_scoped().unwrap();
    let (x, y) = inputs();
    let (xa, ya) = (Array::from_slice(&x).unwrap(), Array::from_slice(&y).unwrap());
    let want = expected(Launch::ElementwiseBlock(256), &x, &y);
    for block in [32, 256] {
        let got = elementwise_kernels::squared_diff_bounded::call_with(&Options::new().block_size(block), &xa, &ya).unwrap();
        assert!(got.to_vec().unwrap() == want, "block {block}: wrong values");
    }
    assert!(elementwise_kernels::squared_diff_bounded::call(&xa, &ya).unwrap().to_vec().unwrap() == want);
    for block in [257, 512] {
        match elementwise_kernels::squared_diff_bounded::call_with(&Options::new().block_size(block), &xa, &ya) {
            Err(e @ Error::InvalidLaunch { .. }) => assert!(e.to_string().contains("at most 256"), "{e}"),
            other => panic!("block {block}: expected a launch error naming 256, got {other:?}"),
        }
    }
}
