//! The tuner on each device (docs/tuning.md): `tuning::measure` times every candidate of a site,
//! forced on the calling thread, beside the site's own (baked) choice, and finds the faster one;
//! `tuning::tune` writes the fastest per key into the GPU architecture's file, or refuses the CPU
//! device. The site here sums an array of 2^20 (2^26 on a GPU, so that its time is not the
//! launch's) or of 2^10 f32 (candidates `big`, `small`): `small` must win. Runs on the CPU device (in CI) and on CUDA device 0 (`--include-ignored`).

mod support;

use cuprum_runtime::tuning::{self, Options, Site, Source, Table, Trial, Tunable};
use cuprum_runtime::{Array, Device, Result, stats};

on_both_devices!(
    cuprum_runtime::Device;
    measure_finds_the_faster_candidate,
    tune_writes_the_file_or_refuses_the_cpu_device
);

static TABLE: Table = Table::empty();
static SIZE: Site = Site::new("sum_size", &["big", "small"], &["only"], "big", &TABLE);

fn prepare(device: &Device, _key: usize) -> Result<Trial> {
    let mut r = support::Rng::new();
    let mut fill = |n: usize| Array::from_vec((0..n).map(|_| r.range(-1.0, 1.0) as f32).collect::<Vec<_>>());
    let (big, small) = (fill(if device.is_cpu() { 1 << 20 } else { 1 << 26 })?, fill(1 << 10)?);
    let cc = device.compute_capability();
    Ok(Box::new(move || {
        let x = if SIZE.choose(cc, 0) == 0 { &big } else { &small };
        x.sum().run().map(drop)
    }))
}

static SUM_SIZE: Tunable = Tunable { site: &SIZE, package: "cuprum-runtime-tests", prepare };

const QUICK: Options = Options { warmup: 1, samples: 5, sample_ms: 1.0 };

/// One test at a time: the tuner tries to record each problem into a CUDA graph, and while it
/// records, the runtime refuses host copies on the legacy stream of other threads (the other
/// test's uploads; docs/graphs.md).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn measure_finds_the_faster_candidate() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let device = Device::current().unwrap();
    let before = stats::snapshot();
    let m = tuning::measure(&device, &SUM_SIZE, 0, true, &QUICK).unwrap();
    let after = stats::snapshot();
    let (big, small) = (*m.candidates[0].as_ref().unwrap(), *m.candidates[1].as_ref().unwrap());
    assert_eq!(m.best(), Some((1, small)), "{m:?}");
    assert!(small < big, "{m:?}");
    // The baked choice (no file: the default, `big`), timed unforced beside them.
    let (baked, c, source) = m.baked.unwrap();
    assert_eq!((c, source), (0, Source::Default));
    assert!(baked > small, "{m:?}");
    assert!(after.tuning_trials > before.tuning_trials, "the forced runs are counted as trials");
    assert!(after.tuning_default_choices > before.tuning_default_choices, "the baked runs as choices");
    // Forcing ends with the measurement: this thread's launches take the default again.
    assert_eq!(SIZE.choice(device.compute_capability(), 0), (0, Source::Default));
    // This trial allocates its result (`x.sum().run()`), so no device records it: its runs are
    // timed as issued, and the note says so (runtime/tests/tuning_graphs.rs has a recorded one).
    let note = m.note(&SIZE);
    assert!(note.starts_with("median ms (issued, not recorded): big ") && note.contains(", small "), "{note}");
    assert!(!m.recorded);
}

fn tune_writes_the_file_or_refuses_the_cpu_device() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let device = Device::current().unwrap();
    let dir = std::env::temp_dir().join(format!("cuprum-tuning-test-{}-{}", std::process::id(), device.is_cpu()));
    let _ = std::fs::remove_dir_all(&dir);
    let result = tuning::tune(&device, &[&SUM_SIZE], &dir, &QUICK);
    if device.is_cpu() {
        let e = result.unwrap_err().to_string();
        assert!(e.contains("CPU device"), "{e}");
        assert!(!dir.exists(), "nothing written");
        return;
    }
    let (path, file) = result.unwrap();
    let (major, minor) = device.compute_capability();
    assert_eq!(path, dir.join(format!("sm_{major}{minor}.toml")));
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(cuprum_runtime::abi::tuning::parse_named(path.file_name().unwrap().to_str().unwrap(), &text).unwrap(), file);
    let site = file.site("sum_size").unwrap();
    assert_eq!((site.choices.len(), site.choices[0].key.as_str(), site.choices[0].candidate.as_str()), (1, "only", "small"));
    assert_eq!(file.device.as_deref(), Some(device.name()));
    let _ = std::fs::remove_dir_all(&dir);
}
