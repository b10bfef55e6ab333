//! `cuprum tune`: times every candidate of the runtime's tuned sites on this machine's GPU and
//! writes the fastest per key into `DIR/sm_XY.toml` (docs/tuning.md). The runtime's build embeds
//! `runtime/tuning/`; a program's own sites are tuned by the program (`cuprum::runtime::tuning::tune`),
//! since only it holds their kernels.

use std::path::PathBuf;

use cuprum_runtime::Device;
use cuprum_runtime::tuning::{self, Options, Source, Tunable};

const USAGE: &str = "\
usage: cuprum tune [--out DIR] [--device N] [--samples N] [--list]

Runs every candidate configuration of the runtime's tuned launch sites on GPU N (default 0), warm,
timed with CUDA events (the median of --samples samples, default 15), and writes the fastest per
key into DIR/sm_XY.toml (default DIR: tuning), keeping the file's other sites. Rebuild the runtime
with the file in runtime/tuning/ (`--out runtime/tuning` in the repository) to launch the measured
best with no tuning at run time. --list: the sites, their keys and candidates, and the choices
this build embeds per architecture (exit 1 when a file is stale for its site); nothing is run.
docs/tuning.md.";

/// The runtime's sites: its own list, and any other registered under its package name.
fn sites() -> Vec<&'static Tunable> {
    let mut out: Vec<&'static Tunable> = cuprum_runtime::reduction::tunables().to_vec();
    for t in tuning::registered().filter(|t| t.package == "cuprum-runtime") {
        if !out.iter().any(|o| o.site.name() == t.site.name()) {
            out.push(t);
        }
    }
    out
}

pub fn run(args: &[String]) -> i32 {
    let mut out = PathBuf::from("tuning");
    let (mut ordinal, mut opts, mut list) = (0usize, Options::default(), false);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| match it.next() {
            Some(v) => Ok(v.clone()),
            None => Err(format!("cuprum tune: {name} needs a value")),
        };
        let parsed: Result<(), String> = match a.as_str() {
            "--out" => value("--out").map(|v| out = PathBuf::from(v)),
            "--device" => value("--device").and_then(|v| v.parse().map(|n| ordinal = n).map_err(|_| format!("cuprum tune: --device {v}: not a number"))),
            "--samples" => value("--samples").and_then(|v| match v.parse::<u32>() {
                Ok(n) if n > 0 => {
                    opts.samples = n;
                    Ok(())
                }
                _ => Err(format!("cuprum tune: --samples {v}: a count of at least 1")),
            }),
            "--list" => {
                list = true;
                Ok(())
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                return 0;
            }
            other => Err(format!("cuprum tune: unknown argument `{other}`")),
        };
        if let Err(e) = parsed {
            eprintln!("{e}\n\n{USAGE}");
            return 2;
        }
    }
    let sites = sites();
    if list {
        let mut stale = false;
        for t in &sites {
            let s = t.site;
            println!("{}: keys [{}], candidates [{}], default {}", s.name(), s.keys().join(", "), s.candidates().join(", "), s.candidates()[s.default_candidate()]);
            for p in s.problems() {
                println!("  problem: {p}");
                stale = true;
            }
            // What this build embedded: each architecture's choice per key.
            for f in s.table().files() {
                let digits = f.arch.trim_start_matches("sm_");
                let (major, minor) = digits.split_at(digits.len().saturating_sub(1));
                let cc = (major.parse().unwrap_or(0), minor.parse().unwrap_or(0));
                let choices: Vec<String> = (0..s.keys().len())
                    .map(|k| {
                        let (c, source) = s.choice(cc, k);
                        format!("{} = {}{}", s.keys()[k], s.candidates()[c], if source == Source::File { "" } else { " (default)" })
                    })
                    .collect();
                println!("  embedded {}: {}", f.arch, choices.join(", "));
            }
        }
        // A stale or bad declaration: exit 1, so that scripts notice.
        return i32::from(stale);
    }
    let device = match Device::count() {
        Ok(n) if ordinal < n => match Device::get(ordinal) {
            Ok(d) => d,
            Err(e) => {
                eprintln!("cuprum tune: GPU {ordinal}: {e}");
                return 1;
            }
        },
        Ok(n) => {
            eprintln!("cuprum tune: no GPU {ordinal} ({n} found): tuning measures on a CUDA GPU");
            return 1;
        }
        Err(e) => {
            eprintln!("cuprum tune: no CUDA GPU: {e}");
            return 1;
        }
    };
    let (major, minor) = device.compute_capability();
    println!("tuning {} site(s) on GPU {ordinal}, {} (sm_{major}{minor})", sites.len(), device.name());
    match tuning::tune(&device, &sites, &out, &opts) {
        Ok((path, file)) => {
            for s in file.sites.iter().filter(|s| sites.iter().any(|t| t.site.name() == s.name)) {
                for c in &s.choices {
                    println!("  {} {}: {}  ({})", s.name, c.key, c.candidate, c.note.as_deref().unwrap_or(""));
                }
            }
            println!("wrote {}; rebuild to embed it (the runtime embeds runtime/tuning/)", path.display());
            0
        }
        Err(e) => {
            eprintln!("cuprum tune: {e}");
            1
        }
    }
}
