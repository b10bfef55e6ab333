//! `cuprum cache`: stats count damaged entries apart, verify lists them and with `--remove`
//! deletes them, and the arguments are checked.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cuprum_runtime::cache::CacheConfig;
// The fixtures are entries written through the kernel cache itself, which is the runtime's, not
// API (its `__workspace`): a program writes them by compiling kernels, which needs NVRTC.
use cuprum_runtime::__workspace::cache::{CompiledImage, ImageKind, KernelCache, KeyInputs};

/// A fresh, empty directory under the system temp dir, removed when dropped.
fn tempdir(tag: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("cuprum-cli-cache-{tag}-"))
        .tempdir()
        .unwrap()
}

fn cuprum(args: &[&str], dir: Option<&Path>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cuprum"));
    cmd.args(args);
    if let Some(d) = dir {
        cmd.arg("--dir").arg(d);
    }
    cmd.output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Writes entries for `tags` through the kernel cache; returns their files.
fn entries(dir: &Path, tags: &[&str]) -> Vec<PathBuf> {
    let kc = KernelCache::new(CacheConfig::at(dir));
    tags.iter()
        .map(|tag| {
            let key = KeyInputs::new(tag, [0; 32], &[], &[], "sm_90", (13, 0)).key();
            let img = CompiledImage {
                kind: ImageKind::Cubin,
                image: format!("\x7fELF {tag}").into_bytes(),
                lowered_names: Vec::new(),
            };
            kc.get_or_compile(&key, None, || Ok(img)).unwrap();
            kc.disk().unwrap().entry_path(&key)
        })
        .collect()
}

#[test]
fn help_lists_the_actions() {
    let out = cuprum(&["cache", "--help"], None);
    assert_eq!(out.status.code(), Some(0));
    let help = text(&out.stdout);
    for word in [
        "stats",
        "verify [--remove]",
        "clear",
        "--dir DIR",
        "CUPY_CACHE_DIR",
    ] {
        assert!(help.contains(word), "{word}: {help}");
    }
    // Without an action: the same text on stderr, and a usage error.
    let out = cuprum(&["cache"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("verify [--remove]"));
}

#[test]
fn bad_arguments_are_usage_errors_that_say_what_is_wrong() {
    for (args, says) in [
        (&["cache", "frob"][..], "unknown action `frob`"),
        (
            &["cache", "stats", "--remove"][..],
            "`--remove` belongs to `verify`",
        ),
        (
            &["cache", "verify", "--dir"][..],
            "`--dir` needs a directory",
        ),
        (
            &["cache", "verify", "--force"][..],
            "unknown argument `--force`",
        ),
    ] {
        let out = cuprum(args, None);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = text(&out.stderr);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}

#[test]
fn stats_count_damaged_entries_apart_and_verify_removes_them() {
    let tmp = tempdir("verify");
    let dir = tmp.path();
    let files = entries(dir, &["good", "truncated", "flipped"]);
    let bytes = std::fs::read(&files[1]).unwrap();
    std::fs::write(&files[1], &bytes[..bytes.len() - 7]).unwrap();
    let mut bytes = std::fs::read(&files[2]).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&files[2], &bytes).unwrap();

    let out = cuprum(&["cache", "stats"], Some(dir));
    assert_eq!(out.status.code(), Some(0));
    let stats = text(&out.stdout);
    assert!(stats.contains("entries:     1 valid"), "{stats}");
    assert!(
        stats.contains("damaged:     2 (`cuprum cache verify`"),
        "{stats}"
    );

    // verify: each damaged entry with its reason; exit 1 while they remain; nothing removed.
    let out = cuprum(&["cache", "verify"], Some(dir));
    assert_eq!(out.status.code(), Some(1));
    let report = text(&out.stdout);
    let lines: Vec<&str> = report
        .lines()
        .filter(|l| l.starts_with("damaged: "))
        .collect();
    assert_eq!(lines.len(), 2, "{report}");
    let line_of = |f: &Path| {
        let p = f.display().to_string();
        lines
            .iter()
            .find(|l| l.contains(&p))
            .copied()
            .unwrap_or_else(|| panic!("{p}: {report}"))
    };
    assert!(line_of(&files[1]).contains("payload bytes"), "{report}");
    assert!(line_of(&files[2]).contains("checksum mismatch"), "{report}");
    assert!(
        report.contains("3 entries checked, 1 valid, 2 damaged; `cuprum cache verify --remove`"),
        "{report}"
    );
    assert!(files[1].exists() && files[2].exists());

    // --remove: deleted, exit 0; the valid entry stays.
    let out = cuprum(&["cache", "verify", "--remove"], Some(dir));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    assert_eq!(report.matches("(removed)").count(), 2, "{report}");
    assert!(report.contains("2 damaged, 2 removed"), "{report}");
    assert!(!files[1].exists() && !files[2].exists() && files[0].exists());

    let out = cuprum(&["cache", "verify"], Some(dir));
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).contains("1 entry checked, 1 valid, 0 damaged"));
    let stats = text(&cuprum(&["cache", "stats"], Some(dir)).stdout);
    assert!(
        stats.contains("entries:     1 valid") && stats.contains("damaged:     0"),
        "{stats}"
    );
}

#[cfg(unix)]
#[test]
fn a_fifo_is_reported_without_blocking() {
    let tmp = tempdir("fifo");
    let dir = tmp.path();
    let files = entries(dir, &["one"]);
    std::fs::remove_file(&files[0]).unwrap();
    let status = Command::new("mkfifo")
        .arg(&files[0])
        .status()
        .expect("this test makes its FIFO with `mkfifo` (coreutils); install it");
    assert!(status.success());
    // Output() would wait forever for a blocked child: wait with a deadline instead.
    let mut child = Command::new(env!("CARGO_BIN_EXE_cuprum"))
        .args(["cache", "verify", "--remove", "--dir"])
        .arg(dir)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            panic!("`cuprum cache verify` blocked on a FIFO");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let report = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{report}");
    assert!(
        report.contains("a FIFO, not a regular file (removed)"),
        "{report}"
    );
    assert!(std::fs::symlink_metadata(&files[0]).is_err());
}

#[test]
fn clear_reports_what_it_removed() {
    let tmp = tempdir("clear");
    let dir = tmp.path();
    entries(dir, &["a", "b"]);
    std::fs::write(dir.join("0123abcd.cubin"), b"cupy").unwrap();
    let out = cuprum(&["cache", "clear"], Some(dir));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("removed 2 entries, 0 sources and 0 temporaries"));
    assert!(dir.join("0123abcd.cubin").exists());
    let stats = text(&cuprum(&["cache", "stats"], Some(dir)).stdout);
    assert!(stats.contains("entries:     0 valid"), "{stats}");
}
