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
        // With `#line` directives, as the build compiles a file with `CUPRUM_LINEINFO=1` and
        // `cuprum emit --lines` prints it (the file's name relative to this package:
        // `tests/in/NAME.rs`); without them it is the same text less the directives (checked).
        match cuprum_compiler::compile_source_with_lines(&source, &rel) {
            Ok(c) => {
                let plain = cuprum_compiler::compile_source(&source).unwrap().unit.source;
                if cuprum_abi::unit::without_line_directives(&c.unit.source) != plain {
                    failures.push(format!("{rel}: the unit without its #line directives is not the unit written without them"));
                }
                check(&dir("out").join(format!("{name}.cu")), &c.unit.source, &mut failures)
            }
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

/// A method called as a path (`f32::sin(x)`, `T::powf(x, y)`) is the method call: the CUDA of
/// `tests/in/path_method_calls.rs` is that of the same kernels written `x.sin()`, `x.powf(y)`.
#[test]
fn path_method_calls_translate_as_method_calls() {
    let paths = fs::read_to_string(dir("in").join("path_method_calls.rs")).unwrap();
    let methods = paths
        .replace(
            "f32::sin(x) + f32::max(x, 1.0) + f32::atan2(y, x) + f32::clamp(y, -1.0, 1.0) + f32::sqrt(2.0)",
            "x.sin() + x.max(1.0) + y.atan2(x) + y.clamp(-1.0, 1.0) + 2.0f32.sqrt()",
        )
        .replace(
            "f64::sqrt(f64::abs(x)) + f64::powi(x, n) + f64::mul_add(x, 2.0, 1.0) + f64::hypot(3.0, x)",
            "x.abs().sqrt() + x.powi(n) + x.mul_add(2.0, 1.0) + 3.0f64.hypot(x)",
        )
        .replace("T::ln_1p(T::exp(T::copysign(x, y)))", "x.copysign(y).exp().ln_1p()")
        .replace(
            "T::sin(x) + T::powf(x, y) + T::atan2(y, x) + T::mul_add(x, y, T::one())",
            "x.sin() + x.powf(y) + y.atan2(x) + x.mul_add(y, T::one())",
        )
        .replace("u32::count_ones(u) + u32::rotate_left(u, 3)", "u.count_ones() + u.rotate_left(3)")
        .replace("i32::wrapping_add(i32::pow(n, 2), i32::abs(n))", "n.pow(2).wrapping_add(n.abs())")
        .replace(
            "(u32::to_f64(k) + i32::to_f64(m), f16::to_f32(h), Complex::<f32>::conj(z), Complex::norm(z))",
            "(k.to_f64() + m.to_f64(), h.to_f32(), z.conj(), z.norm())",
        );
    // Every path call was rewritten (the doc comments aside).
    let code = methods.lines().filter(|l| !l.starts_with("use ") && !l.trim_start().starts_with("///")).collect::<Vec<_>>().join("\n");
    assert!(!code.replace("T::one()", "").contains("::"), "{code}");
    let unit = |s: &str| match cuprum_compiler::compile_source(s) {
        Ok(c) => c.unit.source,
        Err(e) => panic!("{}", cuprum_compiler::diag::render("path_method_calls.rs", s, &e)),
    };
    assert_eq!(unit(&paths), unit(&methods));
}
