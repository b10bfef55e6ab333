//! `cuprum cache stats|clear [--dir DIR]`: the on-disk kernel cache. Only cuprum's own files are
//! counted or deleted (CuPy's files in a shared directory are left alone).

use std::path::PathBuf;

use cuprum_runtime::cache::{self, CacheConfig};

const USAGE: &str = "usage: cuprum cache stats|clear [--dir DIR]";

pub fn run(args: &[String]) -> i32 {
    let Some((action, rest)) = args.split_first() else {
        eprintln!("{USAGE}");
        return 2;
    };
    let dir = match rest {
        [] => match CacheConfig::from_env() {
            Ok(c) => match c.dir {
                Some(d) => d,
                None => {
                    eprintln!("cuprum cache: no cache directory: set CUPY_CACHE_DIR (or HOME)");
                    return 1;
                }
            },
            Err(e) => {
                eprintln!("cuprum cache: {e}");
                return 1;
            }
        },
        [flag, d] if flag == "--dir" => PathBuf::from(d),
        _ => {
            eprintln!("{USAGE}");
            return 2;
        }
    };
    match action.as_str() {
        "stats" => match cache::disk::usage(&dir) {
            Ok(u) => {
                println!("{}", dir.display());
                println!("  entries:     {}", u.entries);
                println!("  sources:     {}", u.sources);
                if u.temporaries > 0 {
                    println!(
                        "  temporaries: {} (left by interrupted writers)",
                        u.temporaries
                    );
                }
                println!("  size:        {}", human_bytes(u.bytes));
                0
            }
            Err(e) => {
                eprintln!("cuprum cache: cannot read {}: {e}", dir.display());
                1
            }
        },
        "clear" => match cache::disk::clear(&dir) {
            Ok(u) => {
                println!(
                    "removed {} entries, {} sources and {} temporaries ({}) from {}",
                    u.entries,
                    u.sources,
                    u.temporaries,
                    human_bytes(u.bytes),
                    dir.display()
                );
                0
            }
            Err(e) => {
                eprintln!("cuprum cache: cannot clear {}: {e}", dir.display());
                1
            }
        },
        other => {
            eprintln!("cuprum cache: unknown action `{other}`\n{USAGE}");
            2
        }
    }
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
