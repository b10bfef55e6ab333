//! The tuner: every candidate of a registered site run and timed, the fastest per key written
//! into the tuning file of the GPU's architecture.

use std::path::{Path, PathBuf};

use cuprum_abi::tuning::{self, Choice, SiteChoices, TuningFile};

use super::site::{Site, Source};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::graph::Graph;
use crate::stats;
use crate::stream::{Event, Stream};

/// One key's problem, set up once (its arrays allocated and filled): each call launches the
/// site once on the device's current stream, taking the candidate the tuner forces.
pub type Trial = Box<dyn FnMut() -> Result<()>>;

/// A tuned site registered for the tuner ([`register_tunable!`](crate::register_tunable)).
pub struct Tunable {
    /// The site.
    pub site: &'static Site,
    /// The package whose tuning file holds the site's choices (`env!("CARGO_PKG_NAME")`): a
    /// program tunes its own package's sites into its own `tuning/` folder.
    pub package: &'static str,
    /// Sets up the representative problem of key `key` (an index in the site's keys) on the
    /// device: what the tuner times.
    pub prepare: fn(&Device, usize) -> Result<Trial>,
}

inventory::collect!(Tunable);

/// Every registered site of the program (of every package linked in).
pub fn registered() -> impl Iterator<Item = &'static Tunable> {
    inventory::iter::<Tunable>.into_iter()
}

/// How the tuner times.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Untimed runs of each candidate first (module loads, clocks, caches).
    pub warmup: u32,
    /// Timed samples per candidate; the median is kept.
    pub samples: u32,
    /// The least time of one sample, in milliseconds: a fast launch is repeated within a sample
    /// (the same count for every candidate) so that the events' resolution does not matter.
    pub sample_ms: f64,
}

impl Default for Options {
    /// 3 warm-up runs, 15 samples of at least 2 ms.
    fn default() -> Self {
        Options { warmup: 3, samples: 15, sample_ms: 2.0 }
    }
}

/// What [`measure`] found for one key.
#[derive(Clone, Debug)]
pub struct Measured {
    /// The key's index.
    pub key: usize,
    /// The median milliseconds of one launch of each candidate (in the site's order), or why
    /// the candidate could not run (it is then never chosen).
    pub candidates: Vec<std::result::Result<f64, String>>,
    /// With `baked`: the median of the site's own choice (not forced: what the program
    /// launches), and where that choice came from.
    pub baked: Option<(f64, usize, Source)>,
    /// Whether the samples replayed CUDA graphs of the runs (the GPU's time alone), not runs
    /// issued one by one (with the host's cost of each launch).
    pub recorded: bool,
}

impl Measured {
    /// The fastest candidate that ran and its median, if any ran.
    pub fn best(&self) -> Option<(usize, f64)> {
        self.candidates
            .iter()
            .enumerate()
            .filter_map(|(k, t)| t.as_ref().ok().map(|&t| (k, t)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// The medians as the tuning file's note: `median ms: b256_w4 0.5210, b128_w4 0.5302 (...)`.
    pub fn note(&self, site: &Site) -> String {
        let parts: Vec<String> = site
            .candidates()
            .iter()
            .zip(&self.candidates)
            .map(|(n, t)| match t {
                Ok(t) => format!("{n} {t:.4}"),
                Err(_) => format!("{n} failed"),
            })
            .collect();
        let how = if self.recorded { "" } else { " (issued, not recorded)" };
        format!("median ms{how}: {}", parts.join(", "))
    }
}

/// Resets the forced candidate when dropped (also when a trial fails or panics).
struct Forced<'a>(&'a Site);

impl Drop for Forced<'_> {
    fn drop(&mut self) {
        self.0.force(None);
    }
}

/// Times every candidate of `t`'s site for key `key` on `device` (and, with `baked`, the site's
/// own choice, unforced), interleaved sample by sample so that a drift of the clocks touches
/// every candidate alike. Counts each forced run in `stats().tuning_trials`.
///
/// What is timed is the GPU's work: each variant's runs of a sample are recorded once into a CUDA
/// graph on a stream of their own and the samples replay the graphs, so that the host's cost of a
/// launch (the same for every candidate) neither hides the candidates' differences on a small
/// problem nor adds its jitter. A problem that cannot be recorded (a trial that allocates or
/// copies to the host; the CPU device) is timed as its launches are issued.
pub fn measure(device: &Device, t: &Tunable, key: usize, baked: bool, opts: &Options) -> Result<Measured> {
    let site = t.site;
    let mut trial = (t.prepare)(device, key)?;
    let n = site.candidates().len();
    // Variant v < n: candidate v forced; v == n: the site's own choice.
    let variants: Vec<usize> = (0..n + usize::from(baked)).collect();
    let run = |trial: &mut Trial, v: usize, times: u32| -> Result<()> {
        let _reset = Forced(site);
        if v < n {
            site.force(Some(v));
        }
        for _ in 0..times {
            trial()?;
            if v < n {
                stats::record_tuning_trials(1);
            }
        }
        Ok(())
    };
    // The recording stream, current for the device while the variants warm up (the first runs on
    // a stream set up what its launches keep, such as the reductions' scratch memory, which a
    // recording may not allocate); the device's current stream where there is none. A blocking
    // stream, ordered after the problem's uploads on the legacy stream. While it records, the
    // runtime refuses other threads' host copies on the legacy stream (docs/graphs.md): tune in
    // a process of its own, as `cuprum tune` and `--tune` do.
    let own = if device.is_cpu() { None } else { Stream::new(device).ok() };
    let stream = match &own {
        Some(s) => s.clone(),
        None => Stream::current_for(device)?,
    };
    let _on = own.as_ref().map(Stream::use_scoped);
    // Warm-up, and one timed run each to size the samples; a candidate that fails is left out.
    let mut failed: Vec<Option<String>> = vec![None; variants.len()];
    let mut fastest = f64::INFINITY;
    for &v in &variants {
        let once = (|| -> Result<f64> {
            run(&mut trial, v, opts.warmup)?;
            let start = Event::record(&stream)?;
            run(&mut trial, v, 1)?;
            let end = Event::record(&stream)?;
            end.synchronize()?;
            Ok(Event::elapsed_ms(&start, &end)? as f64)
        })();
        match once {
            Ok(ms) => fastest = fastest.min(ms),
            Err(e) if v < n => failed[v] = Some(e.to_string()),
            Err(e) => return Err(e),
        }
    }
    if failed.iter().take(n).all(Option::is_some) {
        return Err(Error::Unsupported {
            what: format!(
                "tuning site `{}`, key `{}`: no candidate runs on this device (first: {})",
                site.name(),
                site.keys()[key],
                failed[0].as_deref().unwrap_or("")
            ),
        });
    }
    let repeat = if fastest > 0.0 { (opts.sample_ms / fastest).ceil().clamp(1.0, 10_000.0) as u32 } else { 100 };
    // One graph of `repeat` runs per variant that runs, or none at all (every variant is timed
    // the same way).
    let graphs: Option<Vec<Option<Graph>>> = own.as_ref().and_then(|s| {
        let recorded: Result<Vec<Option<Graph>>> = variants
            .iter()
            .map(|&v| match failed[v] {
                Some(_) => Ok(None),
                None => Graph::capture(s, |_| run(&mut trial, v, repeat)).map(Some),
            })
            .collect();
        match recorded {
            Ok(g) => Some(g),
            Err(e) => {
                log::debug!(target: "cuprum::tuning", "{} {}: timed as issued, not recorded ({e})", site.name(), site.keys()[key]);
                None
            }
        }
    });
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); variants.len()];
    for _ in 0..opts.samples.max(1) {
        for &v in variants.iter().filter(|&&v| failed[v].is_none()) {
            let start = Event::record(&stream)?;
            match graphs.as_ref().and_then(|g| g[v].as_ref()) {
                Some(g) => {
                    g.replay()?;
                    if v < n {
                        stats::record_tuning_trials(u64::from(repeat));
                    }
                }
                None => run(&mut trial, v, repeat)?,
            }
            let end = Event::record(&stream)?;
            end.synchronize()?;
            samples[v].push(Event::elapsed_ms(&start, &end)? as f64 / f64::from(repeat));
        }
    }
    let median = |s: &mut Vec<f64>| {
        s.sort_by(f64::total_cmp);
        s[s.len() / 2]
    };
    let candidates = (0..n)
        .map(|v| match &failed[v] {
            Some(e) => Err(e.clone()),
            None => Ok(median(&mut samples[v])),
        })
        .collect();
    let baked = if baked {
        let (c, source) = site.choice(device.compute_capability(), key);
        Some((median(&mut samples[n]), c, source))
    } else {
        None
    };
    Ok(Measured { key, candidates, baked, recorded: graphs.is_some() })
}

/// Tunes `sites` on `device`: [`measure`]s every key of each and writes the fastest candidate
/// per key into `dir/<arch>.toml` (the device's architecture, `sm_90.toml`), keeping the other
/// sites of an existing file. Returns the file's path and contents. The program's launches of
/// these sites take the new choices only once the package is built again (the build embeds the
/// file).
pub fn tune(device: &Device, sites: &[&Tunable], dir: &Path, opts: &Options) -> Result<(PathBuf, TuningFile)> {
    if device.is_cpu() {
        return Err(Error::Unsupported {
            what: "tuning on the CPU device: it has no GPU architecture to tune for (every tuned site launches its default there)".into(),
        });
    }
    let (major, minor) = device.compute_capability();
    let mut tuned = Vec::new();
    for t in sites {
        let mut choices = Vec::new();
        for (key, name) in t.site.keys().iter().enumerate() {
            let m = measure(device, t, key, false, opts)?;
            let (best, ms) = m.best().expect("measure fails when no candidate runs");
            log::info!(target: "cuprum::tuning", "{} {name}: {} ({ms:.4} ms)", t.site.name(), t.site.candidates()[best]);
            choices.push(Choice { key: name.to_string(), candidate: t.site.candidates()[best].to_string(), note: Some(m.note(t.site)) });
        }
        tuned.push(SiteChoices {
            name: t.site.name().to_string(),
            candidates: t.site.candidates().iter().map(|c| c.to_string()).collect(),
            choices,
        });
    }
    write_file(dir, &tuning::arch_name(major, minor), device.name(), tuned)
}

/// Writes `sites` into `dir/<arch>.toml`, replacing those sites' tables of an existing file and
/// keeping its others.
pub(crate) fn write_file(dir: &Path, arch: &str, device: &str, sites: Vec<SiteChoices>) -> Result<(PathBuf, TuningFile)> {
    let path = dir.join(tuning::file_name(arch));
    let fail = |what: String| Error::TuningFile { path: path.clone(), what };
    let mut file = match std::fs::read_to_string(&path) {
        Ok(text) => tuning::parse_named(&tuning::file_name(arch), &text)
            .map_err(|e| fail(format!("the existing file does not read ({e}); fix or delete it, then tune again")))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => TuningFile { arch: arch.to_string(), device: None, sites: Vec::new() },
        Err(e) => return Err(fail(format!("cannot read it: {e}"))),
    };
    file.device = Some(device.to_string());
    for s in sites {
        match file.sites.iter_mut().find(|x| x.name == s.name) {
            Some(x) => *x = s,
            None => file.sites.push(s),
        }
    }
    file.check().map_err(|e| fail(format!("the tuned choices do not make a valid file: {e} (a site's names must be letters, digits, `_`, `-`)")))?;
    std::fs::create_dir_all(dir).map_err(|e| fail(format!("cannot create the folder: {e}")))?;
    std::fs::write(&path, file.write()).map_err(|e| fail(format!("cannot write it: {e}")))?;
    Ok((path, file))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tuning::Table;
    use std::time::Duration;

    static TABLE: Table = Table::empty();
    static SLEEPY: Site = Site::new("sleepy", &["slow", "fast", "broken"], &["one"], "slow", &TABLE);

    fn prepare(_: &Device, _: usize) -> Result<Trial> {
        Ok(Box::new(|| {
            let c = SLEEPY.choose((0, 0), 0);
            if c == 2 {
                return Err(Error::Unsupported { what: "candidate `broken`".into() });
            }
            std::thread::sleep(Duration::from_micros([2000, 300][c]));
            Ok(())
        }))
    }

    static T: Tunable = Tunable { site: &SLEEPY, package: "test", prepare };

    #[test]
    fn measures_every_candidate_on_the_cpu_device() {
        let before = stats::snapshot().tuning_trials;
        let opts = Options { warmup: 1, samples: 3, sample_ms: 1.0 };
        let m = measure(&Device::cpu(), &T, 0, true, &opts).unwrap();
        assert_eq!(m.best().map(|b| b.0), Some(1));
        let slow = *m.candidates[0].as_ref().unwrap();
        let fast = *m.candidates[1].as_ref().unwrap();
        assert!(slow >= 1.9 && fast >= 0.29 && fast < slow, "{m:?}");
        assert!(m.candidates[2].as_ref().unwrap_err().contains("broken"), "{m:?}");
        // The site's own choice, unforced: its default (no file), timed like the slow one.
        let (baked, c, source) = m.baked.unwrap();
        assert_eq!((c, source), (0, Source::Default));
        assert!(baked >= 1.9, "{m:?}");
        assert!(stats::snapshot().tuning_trials > before);
        assert_eq!(SLEEPY.choice((0, 0), 0), (0, Source::Default), "forcing ends with the measurement");
        // The CPU device records no graph: its runs are timed as issued, and the note says so.
        assert!(!m.recorded);
        assert!(m.note(&SLEEPY).starts_with("median ms (issued, not recorded): slow 2.") && m.note(&SLEEPY).ends_with("broken failed"), "{}", m.note(&SLEEPY));
    }

    #[test]
    fn tuning_needs_a_gpu() {
        let dir = std::env::temp_dir().join("cuprum-tuning-cpu-refused");
        let e = tune(&Device::cpu(), &[&T], &dir, &Options::default()).unwrap_err();
        assert!(e.to_string().contains("CPU device"), "{e}");
        assert!(!dir.join("sm_00.toml").exists());
    }

    #[test]
    fn writing_keeps_the_other_sites() {
        let dir = std::env::temp_dir().join(format!("cuprum-tuning-write-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let site = |name: &str, c: &str| SiteChoices {
            name: name.into(),
            candidates: vec!["a".into(), "b".into()],
            choices: vec![Choice { key: "k".into(), candidate: c.into(), note: None }],
        };
        write_file(&dir, "sm_90", "GPU 1", vec![site("x", "a"), site("y", "a")]).unwrap();
        let (path, f) = write_file(&dir, "sm_90", "GPU 2", vec![site("y", "b"), site("z", "b")]).unwrap();
        assert_eq!(path, dir.join("sm_90.toml"));
        let back = tuning::parse_named("sm_90.toml", &std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(back, f);
        assert_eq!(back.device.as_deref(), Some("GPU 2"));
        let names: Vec<_> = back.sites.iter().map(|s| (s.name.as_str(), s.choices[0].candidate.as_str())).collect();
        assert_eq!(names, [("x", "a"), ("y", "b"), ("z", "b")]);
        // A damaged file is not overwritten.
        std::fs::write(&path, "format = 1\narch = \"sm_90\"\n[x]\nk = \"a\"\n").unwrap();
        let e = write_file(&dir, "sm_90", "GPU 3", vec![site("x", "b")]).unwrap_err();
        assert!(e.to_string().contains("does not read") && e.to_string().contains("line 4"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
