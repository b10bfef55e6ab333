//! Snapshot tests: every kernel file in `tests/in` translates to the committed CUDA C in
//! `tests/out` (review changes as diffs; regenerate with `CUPRUM_BLESS=1 cargo test`), and every
//! file in `tests/errors` yields the committed rustc-style messages in its `.stderr`.

use std::fs;
use std::path::{Path, PathBuf};

fn dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join(name)
}

fn inputs(d: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(d)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", d.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    v.sort();
    v
}

fn bless() -> bool {
    std::env::var_os("CUPRUM_BLESS").is_some()
}

fn check(expected_path: &Path, actual: &str, failures: &mut Vec<String>) {
    if bless() {
        fs::write(expected_path, actual).unwrap();
        return;
    }
    match fs::read_to_string(expected_path) {
        Ok(expected) if expected == actual => {}
        Ok(expected) => failures.push(format!(
            "{} differs:\n--- expected\n{expected}\n--- actual\n{actual}",
            expected_path.display()
        )),
        Err(_) => failures.push(format!("{} is missing; run with CUPRUM_BLESS=1", expected_path.display())),
    }
}

#[test]
fn kernels_translate_to_committed_cuda() {
    let files = inputs(&dir("in"));
    assert!(files.len() >= 40, "the snapshot corpus has {} kernels files; it must have at least 40", files.len());
    let mut failures = Vec::new();
    for f in &files {
        let name = f.file_stem().unwrap().to_str().unwrap();
        let rel = format!("tests/in/{name}.rs");
        let source = fs::read_to_string(f).unwrap();
        match cuprum_compiler::compile_source(&source) {
            Ok(c) => check(&dir("out").join(format!("{name}.cu")), &c.unit.source, &mut failures),
            Err(e) => failures.push(format!("{rel} failed to compile:\n{}", cuprum_compiler::diag::render(&rel, &source, &e))),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn errors_render_as_committed() {
    let files = inputs(&dir("errors"));
    assert!(files.len() >= 20, "the error corpus has {} files; it must have at least 20", files.len());
    let mut failures = Vec::new();
    for f in &files {
        let name = f.file_stem().unwrap().to_str().unwrap();
        let rel = format!("tests/errors/{name}.rs");
        let source = fs::read_to_string(f).unwrap();
        match cuprum_compiler::compile_source(&source) {
            Ok(_) => failures.push(format!("{rel} compiled, but it is an error case")),
            Err(e) => {
                let rendered = cuprum_compiler::diag::render(&rel, &source, &e);
                check(&dir("errors").join(format!("{name}.stderr")), &rendered, &mut failures);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
