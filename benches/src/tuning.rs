//! The tuning rows (`--only tuning`; docs/tuning.md, issue 37 item 3): for each tuned site and
//! key, the configuration the program launches (the choice baked in from the embedded tuning
//! file, or the default without one) timed beside every candidate in the same run, interleaved
//! sample by sample (`cuprum_runtime::tuning::measure`: warm-up, median of 15 samples of at
//! least 2 ms), as the baked choice's time relative to the best candidate's (target: within 3%).
//! The sites: the runtime's `reduce_full` (an f32 `sum` to one value, at each key's size) and, on
//! a compute capability 9.0 GPU, the wgmma GEMM's persistent grid (`gemm_wgmma_grid`, 4096^3 and
//! 8192^3) and the FlashAttention-3 example's consumer schedule (`attention_wgmma_schedule`,
//! ping-pong or not, bf16 B16 H16 S2048 D64 and B4 H32 S4096 D128, causal and not).
//!
//! The first row proves the program tunes nothing: each site's problem is launched as the program
//! launches it, with the choices counted by the runtime (`stats().tuning_file_choices`,
//! `tuning_default_choices`), before the bench times any candidate; the tuner's run counter
//! (`tuning_trials`) must still be zero then.

use cuprum_runtime::tuning::{self, Options, Source, Tunable};
use cuprum_runtime::{Result, Stream, stats};

use crate::Row;
use crate::attention::attention_wgmma_lib;
use crate::gemm_bf16::gemm_wgmma_lib;

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// The rows.
pub fn rows(stream: &Stream) -> Result<Vec<Row>> {
    let device = stream.device().clone();
    let mut sites: Vec<&'static Tunable> = cuprum_runtime::reduction::tunables().to_vec();
    if device.compute_capability() == (9, 0) {
        sites.push(&gemm_wgmma_lib::TUNABLE);
        sites.push(&attention_wgmma_lib::TUNABLE);
    }
    // The program's launches first: every key of every site, as the program launches it.
    let before = stats::snapshot();
    for t in &sites {
        for key in 0..t.site.keys().len() {
            let mut launch = (t.prepare)(&device, key)?;
            for _ in 0..3 {
                launch()?;
            }
            stream.synchronize()?;
        }
    }
    let after = stats::snapshot();
    let (from_file, defaults) =
        (after.tuning_file_choices - before.tuning_file_choices, after.tuning_default_choices - before.tuning_default_choices);
    let mut rows = vec![Row {
        name: "tuned launches: tuning runs in the program",
        value: after.tuning_trials as f64,
        unit: "runs",
        ceiling_name: "none",
        ceiling: 1.0,
        target: Some(("<", 0.5)),
        note: format!(
            "{} launches of {} tuned sites: {from_file} took the embedded tuning file's choice, {defaults} the default (no file for sm_{}{}), before any candidate was timed",
            from_file + defaults,
            sites.len(),
            device.compute_capability().0,
            device.compute_capability().1
        ),
    }];
    let opts = Options::default();
    for t in &sites {
        for (key, key_name) in t.site.keys().iter().enumerate() {
            let m = tuning::measure(&device, t, key, true, &opts)?;
            let (baked_ms, baked, source) = m.baked.expect("measured with the baked choice");
            let Some((best, best_ms)) = m.best() else { continue };
            let names = t.site.candidates();
            rows.push(Row {
                name: leak(format!("tuned {} {key_name}: baked choice", t.site.name())),
                value: baked_ms,
                unit: "ms",
                ceiling_name: "the best candidate, same run",
                ceiling: best_ms,
                target: Some(("<=", 1.03)),
                note: format!(
                    "baked `{}` ({}), best `{}`; {}",
                    names[baked],
                    match source {
                        Source::File => "from the tuning file",
                        Source::Default => "the default: no choice in a file",
                        Source::Forced => "forced",
                    },
                    names[best],
                    m.note(t.site)
                ),
            });
        }
    }
    Ok(rows)
}
