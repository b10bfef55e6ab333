//! `cuprum tune` (docs/tuning.md): `--list` names the runtime's tuned sites without running
//! anything; bad arguments are refused with the usage. The tuning run itself needs a GPU
//! (`tune_writes_a_file_for_this_gpu`, ignored here).

use std::process::Command;

fn tune(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cuprum")).arg("tune").args(args).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn list_names_the_runtime_sites_and_runs_nothing() {
    let (code, out, err) = tune(&["--list"]);
    assert_eq!(code, 0, "{err}");
    let line = out.lines().find(|l| l.starts_with("reduce_full: ")).unwrap_or_else(|| panic!("no reduce_full line in {out}"));
    assert!(line.contains("keys [under_1m, under_8m, under_64m, from_64m]") && line.contains("default b256_w4_p16k"), "{line}");
    assert!(!out.contains("problem:"), "the runtime's embedded files are stale for its sites: {out}");
}

#[test]
fn bad_arguments_are_refused() {
    for (args, want) in [(&["--samples", "0"][..], "at least 1"), (&["--out"][..], "needs a value"), (&["--fast"][..], "unknown argument `--fast`")] {
        let (code, _, err) = tune(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(want) && err.contains("usage: cuprum tune"), "{args:?}: {err}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn tune_writes_a_file_for_this_gpu() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = tune(&["--out", dir.path().to_str().unwrap(), "--samples", "3"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let file = std::fs::read_dir(dir.path()).unwrap().next().expect("a tuning file").unwrap().path();
    let name = file.file_name().unwrap().to_str().unwrap().to_string();
    let f = cuprum_runtime::abi::tuning::parse_named(&name, &std::fs::read_to_string(&file).unwrap()).unwrap();
    let site = f.site("reduce_full").expect("a [reduce_full] table");
    let keys: Vec<&str> = site.choices.iter().map(|c| c.key.as_str()).collect();
    assert_eq!(keys, ["under_1m", "under_8m", "under_64m", "from_64m"]);
    for c in &site.choices {
        assert!(c.note.as_deref().is_some_and(|n| n.starts_with("median ms: b256_w4_p16k ")), "{c:?}");
    }
}
