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

