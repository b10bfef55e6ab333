//! The tuned geometry of a reduction to one value (a whole-array `sum`, `max`, ...): the
//! tuned site `reduce_full` (docs/tuning.md). A reduction to one output splits its row over
//! whole waves of resident blocks (`plan::plan_with`); how many threads a block has, how many
//! waves at most, and the least elements per block part are the candidates, keyed by the number
//! of elements reduced. Without a tuning file for the GPU: `b256_w4_p16k`, the plan measured on
//! the H200 before tuning existed (256 threads, up to 4 waves, parts of at least 16K elements).

use crate::tuning::{Site, Table};

/// The runtime's embedded tuning files (`runtime/tuning/`, embedded by `runtime/build.rs`).
pub(crate) static TABLE: Table = crate::tuning_table!();

/// The candidates' names, in the order of [`GEOMETRY`].
const CANDIDATES: &[&str] =
    &["b256_w4_p16k", "b256_w1_p16k", "b256_w2_p16k", "b256_w8_p16k", "b128_w4_p16k", "b128_w8_p16k", "b256_w4_p4k", "b256_w4_p64k"];

/// The keys: the number of elements reduced, below 2^20, 2^23, 2^26, and from 2^26 on.
pub(crate) const KEYS: &[&str] = &["under_1m", "under_8m", "under_64m", "from_64m"];

/// The representative size of each key, which the tuner times (f32 `sum`): 2^19, 2^22, 2^24
/// (the 256^3 row of the benchmark) and 2^27 elements.
pub(crate) const KEY_SIZES: [usize; 4] = [1 << 19, 1 << 22, 1 << 24, 1 << 27];

/// The tuned site.
pub static SITE: Site = Site::new("reduce_full", CANDIDATES, KEYS, "b256_w4_p16k", &TABLE);

/// One candidate's geometry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Geometry {
    /// Threads per block (a multiple of 32, at most `plan::THREADS`, the kernels' launch bound).
    pub block: u32,
    /// At most this many waves of resident blocks.
    pub waves: u64,
    /// Elements per block part, at least.
    pub min_part: u64,
}

const fn g(block: u32, waves: u64, min_part: u64) -> Geometry {
    Geometry { block, waves, min_part }
}

/// The candidates' geometries, in the order of `CANDIDATES`.
const GEOMETRY: [Geometry; 8] = [
    g(256, 4, 16 * 1024),
    g(256, 1, 16 * 1024),
    g(256, 2, 16 * 1024),
    g(256, 8, 16 * 1024),
    g(128, 4, 16 * 1024),
    g(128, 8, 16 * 1024),
    g(256, 4, 4 * 1024),
    g(256, 4, 64 * 1024),
];

/// The key of a reduction of `red` elements.
pub(crate) fn key_of(red: u64) -> usize {
    match red {
        r if r < 1 << 20 => 0,
        r if r < 1 << 23 => 1,
        r if r < 1 << 26 => 2,
        _ => 3,
    }
}

/// The geometry of a reduction of `red` elements to one value on a device of compute capability
/// `cc` ((0, 0): the default).
pub(crate) fn geometry(cc: (u32, u32), red: u64) -> Geometry {
    GEOMETRY[SITE.choose(cc, key_of(red))]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::Array;
    use crate::device::Device;

    #[test]
    fn candidates_and_geometries_agree() {
        assert_eq!(CANDIDATES.len(), GEOMETRY.len());
        for (name, g) in CANDIDATES.iter().zip(GEOMETRY) {
            assert_eq!(*name, format!("b{}_w{}_p{}k", g.block, g.waves, g.min_part / 1024));
            assert!(g.block % 32 == 0 && g.block <= super::super::plan::THREADS);
        }
        assert!(SITE.problems().is_empty(), "{:?}", SITE.problems());
        // The default is today's plan, the one used without a file.
        assert_eq!(geometry((0, 0), 1 << 24), g(256, 4, 16 * 1024));
        assert_eq!(KEY_SIZES.map(|n| key_of(n as u64)), [0, 1, 2, 3]);
        assert_eq!([0, (1 << 20) - 1, 1 << 20, 1 << 23, 1 << 26].map(key_of), [0, 0, 1, 2, 3]);
    }

    /// Every candidate computes the same results on the GPU (forced on this thread, as the tuner
    /// forces it): f32 `sum` against an f64 host sum, `max` and `argmax` exactly, at sizes of each
    /// key with tails, so that no baked choice can launch a wrong reduction. Values in [0, 1): a
    /// part left out or counted twice (4K elements at least) moves the sum by far more than the
    /// tolerance.
    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn every_candidate_reduces_correctly_on_the_gpu() {
        let device = Device::get(0).unwrap();
        let _on = device.use_scoped().unwrap();
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for n in [1usize, 1000, (1 << 19) + 3, (1 << 22) + 17, (1 << 24) + 5, (1 << 26) + 1] {
            let data: Vec<f32> = (0..n)
                .map(|_| {
                    state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                    (state >> 40) as f32 / (1u64 << 24) as f32
                })
                .collect();
            let want: f64 = data.iter().map(|&v| f64::from(v)).sum();
            let scale: f64 = data.iter().map(|&v| f64::from(v).abs()).sum();
            let (imax, vmax) = data.iter().enumerate().fold((0, f32::NEG_INFINITY), |(i, m), (k, &v)| if v > m { (k, v) } else { (i, m) });
            let x = Array::from_slice(&data).unwrap();
            for (c, name) in CANDIDATES.iter().enumerate() {
                SITE.force(Some(c));
                let got = x.sum().run().and_then(|s| s.item());
                let max = x.max().run().and_then(|s| s.item());
                let arg = x.argmax().run().and_then(|s| s.item());
                SITE.force(None);
                let got = f64::from(got.unwrap());
                assert!((got - want).abs() <= 1e-5 * scale + 1e-6, "{name}, n = {n}: sum {got} against {want}");
                assert_eq!(max.unwrap(), vmax, "{name}, n = {n}: max");
                assert_eq!(arg.unwrap(), imax as i64, "{name}, n = {n}: argmax");
            }
        }
    }
}
