//! A tuned launch site: its candidates, its keys, its default, and the choice per GPU
//! architecture that its package's tuning files hold.

use std::cell::Cell;
use std::sync::OnceLock;

use cuprum_abi::tuning::{self, TuningFile};

use super::table::Table;
use crate::stats;

thread_local! {
    /// The site (its address) whose candidate this thread's tuner forces, and the candidate: the
    /// launches of the other threads keep their choices.
    static FORCED: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
}

/// A tuned launch site: a launch whose configuration is one of `candidates`, chosen per key.
///
/// Declared as a `static` next to the launch it configures; the launch asks [`Site::choose`] for
/// the candidate of its key on its device and launches that configuration:
///
/// ```
/// use cuprum_runtime::tuning::{Site, Table};
///
/// static TABLE: Table = Table::empty(); // a package's: `cuprum::runtime::tuning_table!()`
/// static BLOCK: Site = Site::new("my_kernel_block", &["b128", "b256"], &["small", "large"], "b256", &TABLE);
///
/// fn block_size(cc: (u32, u32), n: usize) -> u32 {
///     let key = if n < 1 << 20 { 0 } else { 1 };
///     [128, 256][BLOCK.choose(cc, key)]
/// }
/// assert_eq!(block_size((9, 0), 1000), 256); // no tuning file: the default
/// ```
pub struct Site {
    name: &'static str,
    candidates: &'static [&'static str],
    keys: &'static [&'static str],
    default: usize,
    table: &'static Table,
    resolved: OnceLock<Vec<Resolved>>,
}

/// One architecture's choices for a site: the candidate index per key (`None`: the default).
struct Resolved {
    cc: (u32, u32),
    choices: Vec<Option<usize>>,
}

/// Where a site's choice came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The embedded tuning file of the device's architecture.
    File,
    /// The site's default: no file for the architecture (or the CPU device), no choice for the
    /// key, or a stale file.
    Default,
    /// The tuner, timing this candidate.
    Forced,
}

const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The compute capability of an architecture name (`sm_90` -> (9, 0), `sm_100` -> (10, 0)).
fn capability(arch: &str) -> Option<(u32, u32)> {
    let d = arch.strip_prefix("sm_")?;
    if d.len() < 2 {
        return None;
    }
    let (major, minor) = d.split_at(d.len() - 1);
    Some((major.parse().ok()?, minor.parse().ok()?))
}

impl Site {
    /// A site named `name` (unique among the package's sites; the tuning file's table name)
    /// choosing among `candidates` per key of `keys`, `default` (one of `candidates`) without a
    /// choice, its choices read from `table`. Names are letters, digits, `_` and `-`.
    ///
    /// # Panics
    ///
    /// At compile time (in a `static`) if `default` is not one of `candidates`.
    pub const fn new(
        name: &'static str,
        candidates: &'static [&'static str],
        keys: &'static [&'static str],
        default: &'static str,
        table: &'static Table,
    ) -> Site {
        let mut k = 0;
        while k < candidates.len() && !same(candidates[k], default) {
            k += 1;
        }
        assert!(k < candidates.len(), "a tuned site's default must be one of its candidates");
        assert!(!keys.is_empty(), "a tuned site needs at least one key");
        Site { name, candidates, keys, default: k, table, resolved: OnceLock::new() }
    }

    /// The site's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The candidates' names, in order (what [`Site::choose`] indexes).
    pub fn candidates(&self) -> &'static [&'static str] {
        self.candidates
    }

    /// The keys' names, in order.
    pub fn keys(&self) -> &'static [&'static str] {
        self.keys
    }

    /// The tuning files the site reads its choices from.
    pub fn table(&self) -> &'static Table {
        self.table
    }

    /// The default candidate's index.
    pub fn default_candidate(&self) -> usize {
        self.default
    }

    /// The candidate (its index in [`Site::candidates`]) for key `key` (an index in
    /// [`Site::keys`]) on a device of compute capability `cc` ((0, 0) for the CPU device), counted
    /// in [`crate::stats`]. Cheap after the first call: no file is read, nothing is timed.
    pub fn choose(&self, cc: (u32, u32), key: usize) -> usize {
        let (c, source) = self.choice(cc, key);
        if source != Source::Forced {
            stats::record_tuning_choice(source == Source::File);
        }
        c
    }

    /// [`Site::choose`] without counting, with where the choice came from.
    pub fn choice(&self, cc: (u32, u32), key: usize) -> (usize, Source) {
        let (site, forced) = FORCED.with(Cell::get);
        if site == self as *const Site as usize {
            return (forced, Source::Forced);
        }
        let resolved = self.resolved.get_or_init(|| self.resolve());
        match resolved.iter().find(|r| r.cc == cc).and_then(|r| r.choices.get(key).copied().flatten()) {
            Some(c) => (c, Source::File),
            None => (self.default, Source::Default),
        }
    }

    /// Makes every launch of the site on this thread take candidate `c` (the tuner's timing), or
    /// (`None`) the choice again. One site at a time per thread.
    pub(crate) fn force(&self, c: Option<usize>) {
        FORCED.with(|f| f.set(c.map_or((0, 0), |c| (self as *const Site as usize, c))));
    }

    /// The site's choices from each of its table's files, a stale file's left out with a warning.
    fn resolve(&self) -> Vec<Resolved> {
        let mut out = Vec::new();
        for f in self.table.files() {
            let Some(cc) = capability(&f.arch) else { continue };
            match self.read(f) {
                Ok(choices) => out.push(Resolved { cc, choices }),
                Err(problem) => log::warn!(target: "cuprum::tuning", "{problem}; launching the default `{}`", self.candidates[self.default]),
            }
        }
        out
    }

    /// The site's choice per key in file `f` (`None`: not in the file), or why the file is stale
    /// for this site.
    fn read(&self, f: &TuningFile) -> Result<Vec<Option<usize>>, String> {
        let file = tuning::file_name(&f.arch);
        let Some(t) = f.site(self.name) else {
            return Ok(vec![None; self.keys.len()]);
        };
        if t.candidates.iter().map(String::as_str).ne(self.candidates.iter().copied()) {
            return Err(format!(
                "the tuning file {file} is stale for site `{}`: it was tuned with the candidates [{}], the program declares [{}] (rerun the tuner)",
                self.name,
                t.candidates.join(", "),
                self.candidates.join(", ")
            ));
        }
        if let Some(c) = t.choices.iter().find(|c| !self.keys.contains(&c.key.as_str())) {
            return Err(format!(
                "the tuning file {file} is stale for site `{}`: it has key `{}`, the program's keys are [{}] (rerun the tuner)",
                self.name,
                c.key,
                self.keys.join(", ")
            ));
        }
        Ok(self
            .keys
            .iter()
            .map(|k| {
                let c = t.choices.iter().find(|c| c.key == *k)?;
                self.candidates.iter().position(|n| *n == c.candidate)
            })
            .collect())
    }

    /// Every problem of the declaration (a name that is not a bare key, a repeated candidate or
    /// key) and of its table's files for it (stale), one sentence each: what a test of a
    /// package's sites asserts empty.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (what, names) in [("site", &[self.name][..]), ("candidate", self.candidates), ("key", self.keys)] {
            for (k, n) in names.iter().enumerate() {
                if !tuning::is_name(n) {
                    out.push(format!("site `{}`: {what} `{n}` is not a name (letters, digits, `_`, `-`)", self.name));
                }
                if names[..k].contains(n) {
                    out.push(format!("site `{}`: {what} `{n}` is declared twice", self.name));
                }
            }
        }
        for f in self.table.files() {
            if let Err(e) = self.read(f) {
                out.push(e);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static TEXTS: &[(&str, &str)] = &[
        ("sm_90", "format = 1\narch = \"sm_90\"\n[s]\ncandidates = [\"a\", \"b\", \"c\"]\nsmall = \"c\"\n[stale]\ncandidates = [\"a\", \"b\"]\nk = \"b\"\n[stale_key]\ncandidates = [\"a\", \"b\"]\nold = \"b\"\n"),
        ("sm_80", "format = 1\narch = \"sm_80\"\n[s]\ncandidates = [\"a\", \"b\", \"c\"]\nsmall = \"a\"\nlarge = \"b\"\n"),
    ];
    static TABLE: Table = Table::new(TEXTS);
    static S: Site = Site::new("s", &["a", "b", "c"], &["small", "large"], "b", &TABLE);
    static STALE: Site = Site::new("stale", &["a", "b", "x"], &["k"], "a", &TABLE);
    static STALE_KEY: Site = Site::new("stale_key", &["a", "b"], &["new"], "a", &TABLE);
    static ABSENT: Site = Site::new("absent", &["p", "q"], &["k"], "q", &TABLE);

    #[test]
    fn choices_per_architecture_and_key() {
        assert_eq!(S.choice((9, 0), 0), (2, Source::File));
        assert_eq!(S.choice((9, 0), 1), (1, Source::Default), "no `large` in sm_90.toml");
        assert_eq!(S.choice((8, 0), 0), (0, Source::File));
        assert_eq!(S.choice((8, 0), 1), (1, Source::File));
        assert_eq!(S.choice((8, 6), 0), (1, Source::Default), "no sm_86.toml");
        assert_eq!(S.choice((0, 0), 0), (1, Source::Default), "the CPU device");
        assert_eq!(S.choice((9, 0), 7), (1, Source::Default), "a key out of range");
        assert_eq!(ABSENT.choice((9, 0), 0), (1, Source::Default), "a site the file does not name");
        assert!(S.problems().is_empty(), "{:?}", S.problems());
    }

    #[test]
    fn a_stale_file_gives_the_default_and_a_problem() {
        assert_eq!(STALE.choice((9, 0), 0), (0, Source::Default));
        let p = STALE.problems();
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].contains("sm_90.toml is stale for site `stale`") && p[0].contains("[a, b]") && p[0].contains("[a, b, x]"), "{p:?}");
        assert_eq!(STALE_KEY.choice((9, 0), 0), (0, Source::Default));
        let p = STALE_KEY.problems();
        assert!(p.len() == 1 && p[0].contains("key `old`"), "{p:?}");
    }

    #[test]
    fn forcing_overrides_the_file_on_this_thread_only() {
        static F: Site = Site::new("s", &["a", "b", "c"], &["small", "large"], "b", &TABLE);
        F.force(Some(1));
        assert_eq!(F.choice((9, 0), 0), (1, Source::Forced));
        assert_eq!(S.choice((9, 0), 0), (2, Source::File), "another site");
        assert_eq!(std::thread::spawn(|| F.choice((9, 0), 0)).join().unwrap(), (2, Source::File), "another thread");
        F.force(None);
        assert_eq!(F.choice((9, 0), 0), (2, Source::File));
    }

    #[test]
    fn bad_declarations_are_problems() {
        static BAD: Site = Site::new("bad site", &["a", "a"], &["k", "k.2"], "a", &TABLE);
        let p = BAD.problems();
        assert_eq!(p.len(), 3, "{p:?}");
        assert!(p[0].contains("site `bad site` is not a name"), "{p:?}");
        assert!(p[1].contains("candidate `a` is declared twice"), "{p:?}");
        assert!(p[2].contains("key `k.2` is not a name"), "{p:?}");
    }

    #[test]
    fn capabilities() {
        assert_eq!(capability("sm_90"), Some((9, 0)));
        assert_eq!(capability("sm_100"), Some((10, 0)));
        assert_eq!(capability("sm_9"), None);
    }
}
