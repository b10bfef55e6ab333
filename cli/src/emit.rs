//! `cuprum emit FILE.rs`: prints the CUDA C translation unit the build hands nvcc for a kernel
//! file (every kernel with its precompiled instances; `#include <cuprum/...>` resolves with
//! `-I include`), or rustc-style errors on stderr and exit status 1.

use std::path::Path;

pub fn run(args: &[String]) -> i32 {
    let [file] = args else {
        eprintln!("usage: cuprum emit FILE.rs");
        return 2;
    };
    match cuprum_compiler::compile_file(Path::new(file)) {
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
