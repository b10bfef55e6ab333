//! Measures the ahead-of-time build of kernel files: nvcc time and fat binary size per target set
//! (the table in docs/building.md).
//!
//! ```text
//! source scripts/cuda-env.sh
//! cargo run --release -p cuprum-build --example aot_sizes -- compiler/tests/in/sgemm_tiled.rs ...
//! ```
//!
//! With `--together`, all files are built in one `Kernels` (as a build script would, with
//! `CUPY_NUM_BUILD_JOBS` from the environment) and one total row is printed per target set.
//!
//! Target sets: `CUPY_NVCC_GENERATE_CODE` values given with `--targets VALUE` (repeatable; `default`
//! means unset); without any, `sm_90` alone and the default list. Every build starts from an empty
//! output folder and without the shared fat binary cache, so nvcc always runs
//! (`CUPY_NUM_BUILD_JOBS=1`, one file at a time).

use std::path::PathBuf;
use std::time::Instant;

use cuprum_build::Kernels;

fn main() {
    let mut files = Vec::new();
    let mut sets = Vec::new();
    let mut together = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--together" {
            together = true;
        } else if a == "--targets" {
            sets.push(args.next().expect("--targets needs a value"));
        } else {
            files.push(PathBuf::from(a));
        }
    }
    if files.is_empty() {
        eprintln!("usage: aot_sizes [--targets VALUE]... FILE.rs...");
        std::process::exit(2);
    }
    if sets.is_empty() {
        sets = vec!["arch=compute_90,code=sm_90".into(), "default".into()];
    }
    let tmp = tempfile::Builder::new()
        .prefix("cuprum-aot-sizes-")
        .tempdir()
        .expect("a temporary directory");
    let scratch = tmp.path().join("out");
    println!("| file | targets | nvcc time | fat binary |");
    println!("| --- | --- | ---: | ---: |");
    let groups: Vec<Vec<PathBuf>> = if together {
        vec![files.clone()]
    } else {
        files.iter().map(|f| vec![f.clone()]).collect()
    };
    for group in &groups {
        for set in &sets {
            let _ = std::fs::remove_dir_all(&scratch);
            let mut k = Kernels::new();
            // No shared fat binary cache: every build runs nvcc.
            k.out_dir(&scratch).env("CUPRUM_FATBIN_CACHE", "off");
            for file in group {
                k.file(file);
            }
            if !together {
                k.env("CUPY_NUM_BUILD_JOBS", "1");
            }
            if set == "default" {
                k.env_remove("CUPY_NVCC_GENERATE_CODE");
            } else {
                k.env("CUPY_NVCC_GENERATE_CODE", set);
            }
            let start = Instant::now();
            let report = k.try_compile().unwrap_or_else(|e| {
                eprintln!("{}", e.rendered());
                std::process::exit(1);
            });
            let elapsed = start.elapsed();
            let f = &report.files[0];
            let size: u64 = report
                .files
                .iter()
                .filter_map(|f| f.fatbin.as_ref())
                .map(|p| std::fs::metadata(p).map_or(0, |m| m.len()))
                .sum();
            let name = if together {
                format!("{} files together", group.len())
            } else {
                group[0]
                    .file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned()
            };
            let shown = if set == "default" {
                format!("default ({} targets)", f.targets.len())
            } else {
                f.targets.join(", ")
            };
            println!(
                "| {name} | {shown} | {:.2} s | {} KiB |",
                elapsed.as_secs_f64(),
                size.div_ceil(1024)
            );
        }
    }
}
