//! A package's embedded tuning files: `(arch, text)` pairs, read once at first use.

use std::sync::OnceLock;

use cuprum_abi::tuning::{self, TuningFile};

/// The tuning files one package embeds (one per architecture), parsed at the first lookup.
///
/// Made by [`tuning_table!`](crate::tuning_table) from what the build script embedded, or by
/// [`Table::new`] from texts (tests, tools). The build checked each file; one that still does not
/// parse (a text given to `new` by hand) is skipped with a warning, so its sites launch their
/// defaults.
pub struct Table {
    files: &'static [(&'static str, &'static str)],
    parsed: OnceLock<Vec<TuningFile>>,
}

impl Table {
    /// A table of `(arch, text)` pairs (`("sm_90", "format = 1\n...")`).
    pub const fn new(files: &'static [(&'static str, &'static str)]) -> Table {
        Table { files, parsed: OnceLock::new() }
    }

    /// A table without files: every site launches its default.
    pub const fn empty() -> Table {
        Table::new(&[])
    }

    /// The embedded `(arch, text)` pairs, as the build embedded them.
    pub fn texts(&self) -> &'static [(&'static str, &'static str)] {
        self.files
    }

    /// The parsed files (those that parse and whose `arch` is the one they were embedded as).
    pub fn files(&self) -> &[TuningFile] {
        self.parsed.get_or_init(|| {
            let mut out = Vec::new();
            for &(arch, text) in self.files {
                match tuning::parse_named(&tuning::file_name(arch), text) {
                    Ok(f) => out.push(f),
                    Err(e) => log::warn!(
                        target: "cuprum::tuning",
                        "the embedded tuning file {}: {e}; its sites launch their defaults (rerun the tuner)",
                        tuning::file_name(arch)
                    ),
                }
            }
            out
        })
    }

    /// The file of architecture `arch` (`sm_90`), if embedded.
    pub fn file(&self, arch: &str) -> Option<&TuningFile> {
        self.files().iter().find(|f| f.arch == arch)
    }
}
