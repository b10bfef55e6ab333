//! Launch geometry tuned once and baked in (docs/tuning.md).
//!
//! A *tuned site* ([`Site`]) is a launch whose configuration is one of a few named candidates (a
//! block size, a grid, items per thread, or one of several kernels compiled from the same
//! source), chosen per *key* (a problem-size class the site computes from its arguments). The
//! tuner ([`tune`], `cuprum tune`) runs every candidate of every key on the GPU it finds, warm
//! and timed with CUDA events (the median of repeated samples), and writes the fastest into the
//! package's tuning file for the GPU's architecture, `tuning/sm_XY.toml`
//! ([`cuprum_abi::tuning`]). The package's build script embeds the files
//! (`cuprum_build::Tuning`), checked at build time, and [`tuning_table!`](crate::tuning_table)
//! makes them the site's [`Table`]: each launch takes the measured best with no tuning run and
//! no compile in the program. Without a file for the GPU (or on the CPU device) a site launches
//! its documented default; a file whose candidates differ from the program's (stale) is ignored
//! with a warning, never read as another candidate.
//!
//! - [`Table`]: a package's embedded tuning files;
//! - [`Site`]: a tuned launch site, [`Site::choose`] its candidate for a key;
//! - [`Tunable`]: a site registered for the tuner, with what runs one candidate
//!   ([`register_tunable!`](crate::register_tunable));
//! - [`tune`], [`measure`]: the tuner and its measurements.
//!
//! [`crate::stats`] counts the choices served by a file (`tuning_file_choices`), by the
//! default (`tuning_default_choices`), and the tuner's candidate runs (`tuning_trials`): a
//! program that never tunes shows zero trials.

mod table;
mod site;
mod run;

pub use run::{Measured, Options, Trial, Tunable, measure, registered, tune};
pub use site::{Site, Source};
pub use table::Table;

#[doc(hidden)]
pub use inventory as __inventory;

/// The tuning files the package's build script embedded (`cuprum_build::Tuning` in `build.rs`),
/// as a [`Table`]: `static TABLE: Table = cuprum::runtime::tuning_table!();`.
///
/// It includes `$OUT_DIR/cuprum_tuning.rs`; a package whose build script does not call
/// `cuprum_build::Tuning::new().embed()` fails to compile here, the file not being found.
#[macro_export]
macro_rules! tuning_table {
    () => {
        $crate::tuning::Table::new(include!(concat!(env!("OUT_DIR"), "/cuprum_tuning.rs")))
    };
}

/// Registers a [`Tunable`] for the tuner ([`registered`], [`tune`]):
/// `cuprum::runtime::register_tunable!(Tunable { site: &SITE, package: env!("CARGO_PKG_NAME"), prepare });`
#[macro_export]
macro_rules! register_tunable {
    ($tunable:expr) => {
        $crate::tuning::__inventory::submit! { $tunable }
    };
}
