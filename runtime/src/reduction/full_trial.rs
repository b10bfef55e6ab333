//! The tuner's problem for the site `reduce_full` (`full.rs`): an f32 `sum` of each key's
//! representative size, of pseudo-random values, on the device being tuned.

use super::full::{KEY_SIZES, SITE};
use crate::array::Array;
use crate::device::Device;
use crate::error::Result;
use crate::stream::Stream;
use crate::tuning::{Trial, Tunable};

fn prepare(device: &Device, key: usize) -> Result<Trial> {
    let n = KEY_SIZES[key];
    // Values in [-1, 1) from a 64-bit LCG (the timing needs no better randomness; no zeros).
    let mut state = 0x9E37_79B9_7F4A_7C15u64 ^ n as u64;
    let data: Vec<f32> = (0..n)
        .map(|_| {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            ((state >> 40) as f32 / (1u64 << 23) as f32) - 1.0
        })
        .collect();
    let stream = Stream::current_for(device)?;
    let x = Array::from_shape_vec_on([n], &data, &stream)?;
    // Into an output of its own: a run allocates nothing, so the tuner can record it in a graph.
    let mut out = Array::<f32>::from_shape_vec_on(Vec::<usize>::new(), &[0.0], &stream)?;
    Ok(Box::new(move || x.sum().out(&mut out).run().map(drop)))
}

/// The site with its problem, for the tuner.
pub(crate) static TUNABLE: Tunable = Tunable { site: &SITE, package: "cuprum-runtime", prepare };

crate::register_tunable!(Tunable { site: &SITE, package: "cuprum-runtime", prepare });

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tuning::{Options, measure};

    /// The tuner times the sum's candidates as replayed graphs (the GPU's time alone, not the
    /// host's launch rate): every run of a trial records, since it sums into an output of its
    /// own, and every candidate gets a median.
    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn the_tuner_replays_recorded_sums_on_the_gpu() {
        let device = Device::get(0).unwrap();
        let _on = device.use_scoped().unwrap();
        let before = crate::stats::snapshot().tuning_trials;
        let opts = Options { warmup: 1, samples: 3, sample_ms: 0.5 };
        let m = measure(&device, &TUNABLE, 0, true, &opts).unwrap();
        assert!(m.recorded, "{m:?}");
        assert!(m.candidates.iter().all(|c| matches!(c, Ok(t) if *t > 0.0)), "{m:?}");
        assert!(m.baked.is_some_and(|b| b.0 > 0.0), "{m:?}");
        assert!(m.note(&SITE).starts_with("median ms: "), "{}", m.note(&SITE));
        assert!(crate::stats::snapshot().tuning_trials > before);
        // The forcing ends with the measurement: the program's own choice again.
        assert_eq!(SITE.choice(device.compute_capability(), 0), m.baked.map(|b| (b.1, b.2)).unwrap());
    }
}
