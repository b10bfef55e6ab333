//! `cuprum cache stats|verify|clear [--dir DIR]`: the on-disk kernel cache. Only cuprum's own
//! files are read or deleted (CuPy's files in a shared directory are left alone).

use std::path::PathBuf;

use cuprum_runtime::cache::{self, CacheConfig};

const HELP: &str = "\
usage: cuprum cache <action> [--dir DIR]

actions:
  stats              valid and damaged entries, saved sources, temporary files and bytes
                     (reads and checks every entry)
  verify [--remove]  check every entry as a program would read it; print each damaged one with
                     what is wrong. --remove deletes them (a program also replaces a damaged entry
                     when it next compiles that kernel). Exit status 1 while damaged entries remain
  clear              delete cuprum's entries, saved sources and temporary files; programs writing
                     meanwhile are not disturbed

DIR is CUPY_CACHE_DIR by default, else ${HOME}/.cupy/kernel_cache.";

const USAGE: &str =
    "usage: cuprum cache stats|verify [--remove]|clear [--dir DIR] (cuprum cache --help: details)";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Action {
    Stats,
    Verify { remove: bool },
    Clear,
}

/// The action and directory the arguments ask for, or the exit status to leave with.
fn parse(args: &[String]) -> Result<(Action, PathBuf), i32> {
    let Some((action, mut rest)) = args.split_first() else {
        eprintln!("{HELP}");
        return Err(2);
    };
    let mut action = match action.as_str() {
        "stats" => Action::Stats,
        "verify" => Action::Verify { remove: false },
        "clear" => Action::Clear,
        "help" | "-h" | "--help" => {
            println!("{HELP}");
            return Err(0);
        }
        other => {
            eprintln!("cuprum cache: unknown action `{other}`\n{USAGE}");
            return Err(2);
        }
    };
    let mut dir = None;
    while let Some((arg, tail)) = rest.split_first() {
        rest = tail;
        match arg.as_str() {
            "--dir" => {
                let Some((d, tail)) = rest.split_first() else {
                    eprintln!("cuprum cache: `--dir` needs a directory\n{USAGE}");
                    return Err(2);
                };
                rest = tail;
                dir = Some(PathBuf::from(d));
            }
            "--remove" if matches!(action, Action::Verify { .. }) => {
                action = Action::Verify { remove: true };
            }
            "--remove" => {
                eprintln!("cuprum cache: `--remove` belongs to `verify`\n{USAGE}");
                return Err(2);
            }
            "-h" | "--help" => {
                println!("{HELP}");
                return Err(0);
            }
            other => {
                eprintln!("cuprum cache: unknown argument `{other}`\n{USAGE}");
                return Err(2);
            }
        }
    }
    if let Some(d) = dir {
        return Ok((action, d));
    }
    match CacheConfig::from_env() {
        Ok(CacheConfig { dir: Some(d), .. }) => Ok((action, d)),
        Ok(_) => {
            eprintln!(
                "cuprum cache: no cache directory: set CUPY_CACHE_DIR (or HOME), or pass --dir DIR"
            );
            Err(1)
        }
        Err(e) => {
            eprintln!("cuprum cache: {e}");
            Err(1)
        }
    }
}

pub fn run(args: &[String]) -> i32 {
    let (action, dir) = match parse(args) {
        Ok(a) => a,
        Err(code) => return code,
    };
    match action {
        Action::Stats => stats(&dir),
        Action::Verify { remove } => verify(&dir, remove),
        Action::Clear => clear(&dir),
    }
}

fn stats(dir: &std::path::Path) -> i32 {
    let u = match cache::scan::usage(dir) {
        Ok(u) => u,
        Err(e) => {
            eprintln!("cuprum cache: cannot read {}: {e}", dir.display());
            return 1;
        }
    };
    println!("{}", dir.display());
    println!("  entries:     {} valid", u.entries);
    if u.damaged > 0 {
        println!(
            "  damaged:     {} (`cuprum cache verify` lists them, `--remove` deletes them)",
            u.damaged
        );
    } else {
        println!("  damaged:     0");
    }
    println!("  sources:     {}", u.sources);
    if u.temporaries > 0 {
        println!(
            "  temporaries: {} (being written, or left by interrupted writers)",
            u.temporaries
        );
    }
    println!("  size:        {}", human_bytes(u.bytes));
    0
}

fn verify(dir: &std::path::Path, remove: bool) -> i32 {
    let v = match cache::scan::verify(dir, remove) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("cuprum cache: cannot read {}: {e}", dir.display());
            return 1;
        }
    };
    let mut left = 0;
    for d in &v.damaged {
        let what = match &d.removed {
            None => {
                left += 1;
                String::new()
            }
            Some(Ok(())) => " (removed)".to_string(),
            Some(Err(e)) => {
                left += 1;
                format!(" (not removed: {e})")
            }
        };
        println!("damaged: {}: {}{what}", d.path.display(), d.damage);
    }
    let checked = v.valid + v.damaged.len() as u64;
    let removed = v.damaged.len() - left;
    let noun = if checked == 1 { "entry" } else { "entries" };
    print!(
        "{}: {checked} {noun} checked, {} valid, {} damaged",
        dir.display(),
        v.valid,
        v.damaged.len()
    );
    if remove {
        println!(", {removed} removed");
    } else if left > 0 {
        println!("; `cuprum cache verify --remove` deletes them");
    } else {
        println!();
    }
    if left > 0 { 1 } else { 0 }
}

fn clear(dir: &std::path::Path) -> i32 {
    let c = match cache::scan::clear(dir) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("cuprum cache: cannot clear {}: {e}", dir.display());
            return 1;
        }
    };
    let u = c.removed;
    println!(
        "removed {} entries, {} sources and {} temporaries ({}) from {}",
        u.entries,
        u.sources,
        u.temporaries,
        human_bytes(u.bytes),
        dir.display()
    );
    for e in &c.failed {
        eprintln!("cuprum cache: not removed: {e}");
    }
    if c.failed.is_empty() { 0 } else { 1 }
}

/// `1234567` -> `1.2 MiB`.
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} bytes")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}
