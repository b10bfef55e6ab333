//! The tuner times a site's candidates as replayed CUDA graphs of their runs (docs/tuning.md):
//! the runtime's `reduce_full` (an f32 sum into an output of its own) records, so its medians
//! are the GPU's time, not the host's launch rate. A test binary of its own: while a capture is
//! under way the runtime refuses host copies on the legacy default stream of other threads
//! (docs/graphs.md), which the parallel tests of a larger binary make.

use cuprum_runtime::tuning::{Options, measure};
use cuprum_runtime::{Device, stats};

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_tuner_replays_recorded_sums_on_the_gpu() {
    let device = Device::get(0).unwrap();
    let _on = device.use_scoped().unwrap();
    let t = cuprum_runtime::reduction::tunables()[0];
    let before = stats::snapshot().tuning_trials;
    let opts = Options { warmup: 1, samples: 3, sample_ms: 0.5 };
    let m = measure(&device, t, 0, true, &opts).unwrap();
    assert!(m.recorded, "{m:?}");
    assert!(m.candidates.iter().all(|c| matches!(c, Ok(ms) if *ms > 0.0)), "{m:?}");
    let (baked_ms, baked, source) = m.baked.clone().unwrap();
    assert!(baked_ms > 0.0, "{m:?}");
    assert!(m.note(t.site).starts_with("median ms: "), "{}", m.note(t.site));
    assert!(stats::snapshot().tuning_trials > before);
    // The forcing ends with the measurement: the program's own choice again.
    assert_eq!(t.site.choice(device.compute_capability(), 0), (baked, source));
}
