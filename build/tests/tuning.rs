//! The embedding of tuning files (`cuprum_build::Tuning`, docs/tuning.md): what the generated
//! `cuprum_tuning.rs` holds, and the build errors for bad files. No nvcc needed.

use std::fs;
use std::path::{Path, PathBuf};

use cuprum_abi::tuning::{self, Choice, SiteChoices, TuningFile};
use cuprum_build::{Error, Tuning};

/// A fresh, empty folder for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cuprum-build-tuning").join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn file(arch: &str, choice: &str) -> TuningFile {
    TuningFile {
        arch: arch.into(),
        device: Some("a test".into()),
        sites: vec![SiteChoices {
            name: "site".into(),
            candidates: vec!["a".into(), "b".into()],
            choices: vec![Choice { key: "k".into(), candidate: choice.into(), note: Some("median ms: a 1.0, b 0.9".into()) }],
        }],
    }
}

/// The generated expression, read back as the runtime reads it: `(arch, text)` pairs.
fn embedded(generated: &Path) -> Vec<(String, String)> {
    let src = fs::read_to_string(generated).unwrap();
    let body = src.trim().strip_prefix("&[").and_then(|s| s.strip_suffix(']')).expect("a slice expression");
    let mut out = Vec::new();
    for line in body.lines().map(str::trim).filter(|l| !l.is_empty()) {
        // `("sm_90", "...")`, the strings as `{:?}` writes them.
        let inner = line.strip_prefix('(').and_then(|l| l.strip_suffix("),")).unwrap();
        let (arch, text) = inner.split_once(", ").unwrap();
        let unescape = |s: &str| -> String {
            let s = s.strip_prefix('"').unwrap().strip_suffix('"').unwrap();
            s.replace("\\n", "\n").replace("\\\"", "\"").replace("\\\\", "\\")
        };
        out.push((unescape(arch), unescape(text)));
    }
    out
}

#[test]
fn embeds_every_architecture_file() {
    let root = scratch("embeds");
    let dir = root.join("tuning");
    fs::create_dir_all(&dir).unwrap();
    let (f80, f90) = (file("sm_80", "a"), file("sm_90", "b"));
    fs::write(dir.join("sm_90.toml"), f90.write()).unwrap();
    fs::write(dir.join("sm_80.toml"), f80.write()).unwrap();
    fs::write(dir.join("README.md"), "not a tuning file\n").unwrap();
    let report = Tuning::new().dir(&dir).out_dir(root.join("out")).try_embed().unwrap();
    assert_eq!(report.archs, ["sm_80", "sm_90"]);
    assert_eq!(report.directives, [format!("cargo:rerun-if-changed={}", dir.display())]);
    let got = embedded(&report.generated);
    assert_eq!(got.len(), 2);
    assert_eq!(tuning::parse(&got[0].1).unwrap(), f80);
    assert_eq!(tuning::parse(&got[1].1).unwrap(), f90);
    assert_eq!((got[0].0.as_str(), got[1].0.as_str()), ("sm_80", "sm_90"));
}

#[test]
fn without_a_folder_the_list_is_empty_and_the_parent_is_watched() {
    let root = scratch("missing");
    let dir = root.join("tuning");
    let report = Tuning::new().dir(&dir).out_dir(root.join("out")).try_embed().unwrap();
    assert!(report.archs.is_empty());
    assert_eq!(fs::read_to_string(&report.generated).unwrap().trim(), "&[\n]".trim());
    assert_eq!(report.directives, [format!("cargo:rerun-if-changed={}", root.display())]);
}

#[test]
fn bad_files_fail_the_build_naming_file_and_line() {
    let root = scratch("bad");
    let dir = root.join("tuning");
    fs::create_dir_all(&dir).unwrap();
    // Misnamed: an sm_90 file saved as sm_80.toml.
    fs::write(dir.join("sm_80.toml"), file("sm_90", "a").write()).unwrap();
    // Malformed: a choice that is not a candidate.
    let bad = file("sm_90", "a").write().replace("k = \"a\"", "k = \"c\"");
    fs::write(dir.join("sm_90.toml"), &bad).unwrap();
    let err = Tuning::new().dir(&dir).out_dir(root.join("out")).try_embed().unwrap_err();
    let all = err.all();
    assert_eq!(all.len(), 2, "{}", err.rendered());
    for (e, name, want) in [(all[0], "sm_80.toml", "name it `sm_90.toml`"), (all[1], "sm_90.toml", "`c` is not a candidate of `[site]`")] {
        let Error::Tuning { file, message } = e else { panic!("not a tuning error: {e}") };
        assert!(file.ends_with(name), "{}", file.display());
        assert!(message.contains(want), "{message}");
    }
    let line = bad.lines().position(|l| l.starts_with("k = ")).unwrap() + 1;
    assert!(err.rendered().contains(&format!("line {line}: ")), "{}", err.rendered());
    assert!(err.rendered().starts_with("error: tuning file "), "{}", err.rendered());
    // Nothing half-written: no generated file.
    assert!(!root.join("out").join(cuprum_build::TUNING_GENERATED).exists());
}
