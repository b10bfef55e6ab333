//! `cuprum emit [--lines] FILE.rs`: prints the CUDA C translation unit the build hands nvcc for a
//! kernel file (every kernel with its precompiled instances; `#include <cuprum/...>` resolves with
//! `-I include`), or rustc-style errors on stderr and exit status 1. `--lines` prints it with
//! `#line` directives naming the Rust lines, as the build writes it with `CUPRUM_LINEINFO=1`
//! (docs/debugging.md).

use std::path::Path;

pub fn run(args: &[String]) -> i32 {
    let (lines, file) = match args {
        [file] => (false, file),
        [flag, file] if flag == "--lines" => (true, file),
        _ => {
            eprintln!("usage: cuprum emit [--lines] FILE.rs");
            return 2;
        }
    };
    match cuprum_compiler::compile_file(Path::new(file), lines) {
        Ok(compiled) => {
            print!("{}", compiled.unit.source);
            0
        }
        Err(rendered) => {
            eprint!("{rendered}");
            1
        }
    }
}
