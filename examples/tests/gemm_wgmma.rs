//! The wgmma GEMM's tuned grid (examples/gemm_wgmma_lib.rs, docs/tuning.md): every candidate
//! grid computes C (on the CPU device in CI and on an H100/H200, `on_both_devices!`, at a small
//! shape against an f64 host product), the checked launch takes the baked choice, the site's
//! declaration agrees with the embedded tuning files, and on the GPU the tuner writes a file.

#[path = "../../runtime/tests/support/mod.rs"]
mod support;

#[allow(dead_code)]
#[path = "../gemm_wgmma_lib.rs"]
mod gemm_wgmma_lib;

use cuprum::prelude::bf16;
use cuprum::runtime::tuning::{self, Options, Source};
use cuprum::runtime::{Array, Device, LaunchConfig, Swizzle, TensorMap};
use gemm_wgmma_lib::{GRID, grid_of, kernels, key_of};

on_both_devices!(
    cuprum::runtime::Device;
    every_grid_candidate_computes_c,
    the_checked_launch_takes_the_baked_grid
);

/// One test at a time: the tuner (`tune_writes_the_grid_choice`) records the GEMM into CUDA
/// graphs, and while it records, the runtime refuses host copies on the legacy stream of other
/// threads (the other tests' uploads and read-backs; docs/graphs.md).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Random A (m x k) and B (k x n) in [-1, 1), on the current device, with their host copies.
fn inputs(m: usize, n: usize, k: usize) -> (Vec<bf16>, Vec<bf16>, Array<bf16>, Array<bf16>) {
    let mut r = support::Rng::new();
    let mut rnd = |len: usize| (0..len).map(|_| bf16::from_f64(r.range(-1.0, 1.0))).collect::<Vec<_>>();
    let (a, b) = (rnd(m * k), rnd(k * n));
    let da = Array::from_slice(&a).unwrap().reshape([m, k]).unwrap();
    let db = Array::from_slice(&b).unwrap().reshape([k, n]).unwrap();
    (a, b, da, db)
}

/// C against the f64 product, relative to the sum of |terms| (the products are exact in f32).
fn check(c: &[f32], a: &[bf16], b: &[bf16], (m, n, k): (usize, usize, usize), what: &str) {
    for i in 0..m {
        for j in 0..n {
            let terms = (0..k).map(|p| a[i * k + p].to_f64() * b[p * n + j].to_f64());
            let (want, scale) = terms.fold((0.0, 1.0), |(w, s), t| (w + t, s + t.abs()));
            let err = (c[i * n + j] as f64 - want).abs() / scale;
            assert!(err <= 1e-5, "{what}: C[{i}][{j}] = {} against {want} (relative error {err:.1e})", c[i * n + j]);
        }
    }
}

/// Four tiles of 128 x 256 (K: two steps of 64), launched with each candidate's grid for 1, 3
/// and 4 SMs (grids of 1 to 4 blocks: blocks taking one, two or unequal numbers of tiles).
fn every_grid_candidate_computes_c() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (m, n, k) = (256, 512, 128);
    let (a, b, da, db) = inputs(m, n, k);
    let ma = TensorMap::new(&da, [kernels::BM, kernels::BK], Swizzle::B128).unwrap();
    let mb = TensorMap::new(&db, [kernels::BK, 64], Swizzle::B128).unwrap();
    let tiles = 4;
    let mut grids = Vec::new();
    for sms in [1, 3, 4] {
        for (c, name) in GRID.candidates().iter().enumerate() {
            let grid = grid_of(c, tiles, sms);
            grids.push(grid);
            let mut dc = Array::from_slice(&vec![f32::NAN; m * n]).unwrap();
            let cfg = LaunchConfig::new(grid, kernels::THREADS).shared_mem(kernels::SHARED_BYTES);
            kernels::gemm_wgmma::launch(&cfg, m as u32, n as u32, k as u32, &ma, &mb, &mut dc).unwrap();
            check(&dc.to_vec().unwrap(), &a, &b, (m, n, k), &format!("candidate `{name}`, {sms} SMs, grid {grid}"));
        }
    }
    grids.sort();
    grids.dedup();
    assert_eq!(grids, [1, 2, 3, 4], "the grids exercised");
}

fn the_checked_launch_takes_the_baked_grid() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (m, n, k) = (128, 256, 64);
    let (a, b, da, db) = inputs(m, n, k);
    let mut dc = Array::from_slice(&vec![f32::NAN; m * n]).unwrap();
    let before = cuprum::runtime::stats::snapshot();
    gemm_wgmma_lib::launch(&da, &db, &mut dc, (m, n, k)).unwrap();
    check(&dc.to_vec().unwrap(), &a, &b, (m, n, k), "the checked launch");
    let after = cuprum::runtime::stats::snapshot();
    assert!(after.tuning_file_choices + after.tuning_default_choices > before.tuning_file_choices + before.tuning_default_choices);
    // A short C is refused before anything runs.
    let mut short = Array::from_slice(&vec![f32::NAN; m * n - 1]).unwrap();
    let e = gemm_wgmma_lib::launch(&da, &db, &mut short, (m, n, k)).unwrap_err();
    assert!(e.to_string().contains("C of 32768 elements"), "{e}");
    assert!(short.to_vec().unwrap().iter().all(|x| x.is_nan()));
}

#[test]
fn the_site_agrees_with_its_tuning_files() {
    assert!(GRID.problems().is_empty(), "{:?}", GRID.problems());
    assert_eq!(GRID.candidates(), ["sms", "even"]);
    // The default without a file (the CPU device has none): one block per SM.
    assert_eq!(GRID.choice((0, 0), 1), (0, Source::Default));
    // An H200 has 132 SMs: 512 tiles are under four waves, 2048 are not.
    assert_eq!((key_of(512, 132), key_of(528, 132), key_of(2048, 132)), (0, 1, 1));
    // `even`: the same rounds as one block per SM, each block the same number of tiles.
    assert_eq!((grid_of(0, 2048, 132), grid_of(1, 2048, 132)), (132, 128));
    assert_eq!((grid_of(0, 512, 132), grid_of(1, 512, 132)), (132, 128));
    assert_eq!((grid_of(0, 100, 132), grid_of(1, 100, 132)), (100, 100));
    assert_eq!((grid_of(0, 264, 132), grid_of(1, 265, 132)), (132, 89));
    // A file embedded for sm_90 gives that file's choice for each key it holds.
    if let Some(f) = gemm_wgmma_lib::TABLE.file("sm_90") {
        for c in f.site(GRID.name()).map_or(&[][..], |s| &s.choices[..]) {
            let key = GRID.keys().iter().position(|k| *k == c.key).unwrap();
            let (got, source) = GRID.choice((9, 0), key);
            assert_eq!((GRID.candidates()[got], source), (c.candidate.as_str(), Source::File));
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn tune_writes_the_grid_choice() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let device = Device::get(0).unwrap();
    let dir = std::env::temp_dir().join(format!("cuprum-gemm-wgmma-tune-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (path, file) = tuning::tune(&device, &[&gemm_wgmma_lib::TUNABLE], &dir, &Options { samples: 5, ..Options::default() }).unwrap();
    assert_eq!(path, dir.join("sm_90.toml"));
    let site = file.site(GRID.name()).unwrap();
    let keys: Vec<&str> = site.choices.iter().map(|c| c.key.as_str()).collect();
    assert_eq!(keys, GRID.keys());
    let back = cuprum::runtime::abi::tuning::parse_named("sm_90.toml", &std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(back, file);
    assert!(cuprum::runtime::stats::snapshot().tuning_trials > 0);
    let _ = std::fs::remove_dir_all(&dir);
}
