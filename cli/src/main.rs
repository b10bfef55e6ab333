//! `cuprum`: the command-line tool. One file per subcommand; arguments are parsed by hand.
//!
//! ```text
//! cuprum emit [--lines] FILE.rs
//!                            the CUDA C translation unit for a kernel file
//! cuprum info                devices, driver and NVRTC versions, the kernel cache, embedded kernels
//! cuprum audit EXECUTABLE [--arch sm_XY] [--deny-jit]
//!                            the kernels another program carries and which need a JIT on a GPU
//! cuprum cache stats|verify|clear   what the on-disk kernel cache holds / check it / empty it
//! cuprum tune [--out DIR] [--list]   time the runtime's tuned sites, write DIR/sm_XY.toml
//! ```

#![warn(missing_docs)]

mod audit;
mod cache;
mod emit;
mod info;
mod tune;

const USAGE: &str = "\
usage: cuprum <command> [args]

commands:
  emit [--lines] FILE.rs
                         print the CUDA C that the build hands nvcc for FILE.rs
                         (--lines: with #line directives, as with CUPRUM_LINEINFO=1)
  info                   devices, compute capabilities, driver and NVRTC versions, kernel cache,
                         the kernels this binary embeds (a program: cuprum::audit::report)
  audit EXECUTABLE [--arch sm_XY] [--deny-jit]
                         every kernel instance EXECUTABLE can launch (read from the file, not
                         run), its precompiled targets and bytes, and which would need NVRTC or
                         the driver's PTX JIT on that GPU (default: this machine's; exit 3 with
                         --deny-jit when any would; cuprum audit --help: details)
  cache stats [--dir D]  valid and damaged entries and bytes in the on-disk kernel cache
  cache verify [--remove] [--dir D]
                         check every entry, list the damaged ones (--remove: delete them)
  cache clear [--dir D]  delete cuprum's entries from the on-disk kernel cache
                         (cuprum cache --help: details)
  tune [--out DIR] [--device N] [--samples N] [--list]
                         time every candidate launch configuration of the runtime's tuned sites
                         on this GPU, write the fastest into DIR/sm_XY.toml (default DIR: tuning;
                         the runtime embeds runtime/tuning/ when built; cuprum tune --help)
  help                   this text

The kernel cache directory is CUPY_CACHE_DIR, default ${HOME}/.cupy/kernel_cache.";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rest = args.get(1..).unwrap_or(&[]);
    let code = match args.first().map(String::as_str) {
        Some("emit") => emit::run(rest),
        Some("info") => info::run(rest),
        Some("cache") => cache::run(rest),
        Some("audit") => audit::run(rest),
        Some("tune") => tune::run(rest),
        Some("help" | "-h" | "--help") => {
            println!("{USAGE}");
            0
        }
        Some("-V" | "--version") => {
            println!("cuprum {}", env!("CARGO_PKG_VERSION"));
            0
        }
        Some(other) => {
            eprintln!("cuprum: unknown command `{other}`\n\n{USAGE}");
            2
        }
        None => {
            eprintln!("{USAGE}");
            2
        }
    };
    std::process::exit(code);
}
