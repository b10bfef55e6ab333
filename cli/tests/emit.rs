//! `cuprum emit`: prints the committed translation of every snapshot input (`--lines`: with its
//! `#line` directives, as the snapshots are), and rustc-style
//! errors with a non-zero exit for a file with mistakes.

use std::path::Path;
use std::process::Command;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

#[test]
fn emit_prints_the_snapshot_of_every_input() {
    let dir = repo().join("compiler/tests/in");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let stem = path.file_stem().unwrap().to_str().unwrap();
        // The snapshots are the units with `#line` directives (`emit --lines`); without the flag,
        // the same unit without them.
        let lined = std::fs::read_to_string(repo().join(format!("compiler/tests/out/{stem}.cu"))).unwrap();
        let plain: String = lined.split_inclusive('\n').filter(|l| !l.starts_with("#line ")).collect();
        assert_ne!(lined, plain, "{stem}: the snapshot has no #line directives");
        for (args, expected) in [(&["emit"][..], &plain), (&["emit", "--lines"][..], &lined)] {
            let out = Command::new(env!("CARGO_BIN_EXE_cuprum")).args(args).arg(&path).output().unwrap();
            assert!(out.status.success(), "{}: {}", path.display(), String::from_utf8_lossy(&out.stderr));
            assert_eq!(&String::from_utf8(out.stdout).unwrap(), expected, "{stem} ({args:?})");
        }
        n += 1;
    }
    assert!(n >= 40, "only {n} inputs");
}

#[test]
fn emit_reports_every_mistake_and_fails() {
    let path = repo().join("compiler/tests/errors/three_mistakes.rs");
    let out = Command::new(env!("CARGO_BIN_EXE_cuprum")).arg("emit").arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.matches("error: ").count(), 3, "{stderr}");
    assert!(stderr.contains("three_mistakes.rs:8:"), "{stderr}");
    assert!(out.stdout.is_empty());
}

#[test]
fn emit_without_a_file_is_a_usage_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_cuprum")).arg("emit").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
