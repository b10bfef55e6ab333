//! `cargo run -p cuprum-compiler --example emit FILE.rs`: the translation of one file (a
//! development aid; users have `cuprum emit`).
fn main() {
    let path = std::env::args().nth(1).expect("usage: emit FILE.rs");
    match cuprum_compiler::compile_file(std::path::Path::new(&path), false) {
        Ok(c) => print!("{}", c.unit.source),
        Err(e) => {
            eprint!("{e}");
            std::process::exit(1);
        }
    }
}
