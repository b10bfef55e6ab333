//! `cuprum audit EXECUTABLE`: reads the kernel records of another executable without running it.
//!
//! The executables audited: the `cuprum` binary cargo builds for these tests (it links the
//! runtime's built-in kernel files, precompiled by the runtime's build script for
//! `CUPY_NVCC_GENERATE_CODE`), this test executable itself (compared with what the running
//! program's own unit table says), and files made here from `cuprum_abi::record` (routes that do
//! not depend on the build's targets, duplicates, damaged records).

use std::path::Path;
use std::process::{Command, Output};

use cuprum_runtime::abi::record::{self, KernelRecord, UnitRecord};

fn cuprum(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cuprum")).args(args).output().unwrap()
}

fn audit(file: &Path, args: &[&str]) -> Output {
    let mut all = vec!["audit", file.to_str().unwrap()];
    all.extend_from_slice(args);
    cuprum(&all)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The targets the audit lists for `file`'s unit (`None`: no fat binary).
fn targets_of(report: &str, file: &str) -> Option<Vec<String>> {
    let mut lines = report.lines().skip_while(|l| !l.starts_with(&format!("{file} (unit ")));
    lines.next().unwrap_or_else(|| panic!("{file} is not in the audit:\n{report}"));
    let line = lines.find(|l| l.starts_with("  fat binary: ")).unwrap();
    if line == "  fat binary: none" {
        return None;
    }
    let (_, targets) = line.split_once(", targets ").unwrap();
    Some(targets.split_whitespace().map(String::from).collect())
}

#[test]
fn audits_the_cuprum_binary_for_named_architectures() {
    let exe = Path::new(env!("CARGO_BIN_EXE_cuprum"));
    let out = audit(exe, &["--arch", "sm_90"]);
    let report = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{report}{}", text(&out.stderr));
    for line in [
        // Named relative to their package (cuprum-runtime), never by the build machine's folders.
        "\nkernels/elementwise.rs (unit ",
        "\nkernels/reductions.rs (unit ",
        "  #[elementwise] add (",
        "    cuprum_elementwise_add_contig__f32\n",
        "; for sm_90 (--arch)\n",
    ] {
        assert!(report.contains(line), "{line}\nnot in:\n{report}");
    }
    let targets = targets_of(&report, "kernels/elementwise.rs");
    let has = |t: &str| targets.as_ref().is_some_and(|ts| ts.iter().any(|x| x == t));
    let Some(targets) = &targets else {
        // Built without nvcc: every instance goes to NVRTC.
        assert!(report.contains("  on sm_90: NVRTC at first use (no fat binary in this build)"), "{report}");
        let out = audit(exe, &["--arch", "sm_90", "--deny-jit"]);
        assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
        return;
    };
    // sm_90 (CUPY_NVCC_GENERATE_CODE of CI and of the default list): the machine code runs.
    if has("sm_90") {
        assert!(report.contains("  on sm_90: precompiled (sm_90)\n"), "{report}");
        assert!(report.contains("on sm_90: every listed instance is precompiled; nothing is JIT-compiled"), "{report}");
        let out = audit(exe, &["--arch", "sm_90", "--deny-jit"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    // sm_80: precompiled only when the list has sm_80 (as the default list does); CI's sm_90 machine code
    // does not run on 8.0 and no PTX older than 8.0 is embedded: NVRTC, and --deny-jit fails.
    let out = audit(exe, &["--arch", "sm_80", "--deny-jit"]);
    let stderr = text(&out.stderr);
    if has("sm_80") {
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        assert!(text(&out.stdout).contains("  on sm_80: precompiled (sm_80)\n"));
    } else {
        assert_eq!(out.status.code(), Some(3), "{stderr}");
        assert!(stderr.contains("would be compiled at run time on sm_80:"), "{stderr}");
        assert!(
            stderr.contains("  cuprum_elementwise_add_contig__f32 (kernels/elementwise.rs): NVRTC at first use"),
            "{stderr}"
        );
    }
    // sm_70: no target of CUDA 13 serves it (nothing below sm_75); the same without --deny-jit
    // is a report, exit 0.
    let serves_70 = targets.iter().any(|t| t == "sm_70" || t.strip_prefix("compute_").and_then(|n| n.parse::<u32>().ok()).is_some_and(|n| n <= 70));
    if !serves_70 {
        let out = audit(exe, &["--arch", "7.0", "--deny-jit"]);
        assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
        assert!(text(&out.stdout).contains("  on sm_70: NVRTC at first use (the fat binary ("));
        let out = audit(exe, &["--arch", "sm_70"]);
        assert_eq!(out.status.code(), Some(0));
    }
}

#[test]
fn the_audit_of_this_executable_agrees_with_its_unit_table() {
    // The built-in kernels: linked in through the audit (as in `cuprum info`).
    let own = cuprum_runtime::audit::report(None);
    let units = cuprum_runtime::audit::units();
    assert!(!units.is_empty() && !own.units.is_empty(), "this test links the runtime's built-in kernels");
    let exe = std::env::current_exe().unwrap();
    let out = audit(&exe, &["--arch", "sm_90"]);
    let report = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{report}{}", text(&out.stderr));
    for u in units.iter().filter(|u| !u.id().is_empty()) {
        // The record the macro embedded describes the unit it is embedded with.
        let (r, _) = record::decode(u.record()).unwrap_or_else(|e| panic!("{}: {e}", u.file()));
        assert_eq!((r.id.as_str(), r.file.as_str()), (u.id(), u.file()));
        // The file relative to its package (`kernels/elementwise.rs`, `tests/...`): no folder of
        // the build machine (issue 34, item 10).
        assert!(
            !Path::new(&r.file).is_absolute() && !r.file.starts_with("runtime/") && !r.file.contains(".."),
            "{}",
            r.file
        );
        assert_eq!(r.targets, u.targets());
        assert_eq!(r.fatbin_bytes, u.fatbin().map(|f| f.len() as u64));
        assert_eq!(r.build, u.build_record());
        let mut listed: Vec<&str> = r.kernels.iter().flat_map(|k| k.instances.iter().map(String::as_str)).collect();
        let mut precompiled = u.precompiled().to_vec();
        listed.sort_unstable();
        precompiled.sort_unstable();
        assert_eq!(listed, precompiled, "{}", u.file());
        // And `cuprum audit` found it in the file.
        assert!(report.contains(&format!("{} (unit {})\n", u.file(), u.id())), "{}\nnot in:\n{report}", u.file());
        if let Some(f) = u.fatbin() {
            assert!(report.contains(&format!("({} bytes)", f.len())), "{report}");
        }
        for s in u.precompiled() {
            assert!(report.contains(&format!("    {s}\n")), "{s}");
        }
    }
    let files = report.lines().filter(|l| l.contains(" (unit ")).count();
    assert_eq!(files, units.len(), "{report}");
}

fn unit(id: &str, targets: &[&str]) -> UnitRecord {
    UnitRecord {
        id: id.into(),
        file: format!("kernels/{id}.rs"),
        targets: targets.iter().map(|t| (*t).to_owned()).collect(),
        fatbin_bytes: Some(4096),
        build: "cuprum-build 1\nstatus compiled\ninstances 1\nnvcc 13.0.88\nnvcc_seconds 1.5\n".into(),
        kernels: vec![KernelRecord {
            kind: "rawkernel".into(),
            name: "scale".into(),
            instances: vec![format!("cuprum_rawkernel_scale_{id}__f32")],
        }],
    }
}

#[test]
fn routes_duplicates_and_damaged_records_of_a_made_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("prog");
    let a = record::encode(&unit("aa", &["sm_90", "compute_90"]));
    let bytes = [b"\x7fELF".as_slice(), &a, b"\0\0", &a, &record::encode(&unit("bb", &["sm_80"]))].concat();
    std::fs::write(&file, &bytes).unwrap();

    let out = audit(&file, &["--arch", "sm_120"]);
    let report = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{report}");
    for line in [
        "2 kernel files, 2 kernels, 2 precompiled instances; for sm_120 (--arch)\n",
        "kernels/aa.rs (unit aa)\n  embedded 2 times",
        "  fat binary: 4.0 KiB (4096 bytes), targets sm_90 compute_90\n  build: compiled by nvcc 13.0.88 in 1.50 s; 1 instance\n  on sm_120: PTX JIT by the driver (compute_90)\n",
        "  on sm_120: NVRTC at first use (the fat binary (sm_80) has no code for sm_120)\n",
        "  #[rawkernel] scale (1 instance)\n    cuprum_rawkernel_scale_bb__f32\n",
        "on sm_120: 2 listed instances would be JIT-compiled",
    ] {
        assert!(report.contains(line), "{line}\nnot in:\n{report}");
    }
    let out = audit(&file, &["--arch=sm_120", "--deny-jit"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("2 instances of"), "{stderr}");
    assert!(stderr.contains("  cuprum_rawkernel_scale_aa__f32 (kernels/aa.rs): PTX JIT by the driver (compute_90)\n"), "{stderr}");
    assert!(stderr.contains("  cuprum_rawkernel_scale_bb__f32 (kernels/bb.rs): NVRTC at first use"), "{stderr}");
    // 8.6 runs sm_80 machine code, not sm_90's: one of two.
    let out = audit(&file, &["--arch", "8.6", "--deny-jit"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(text(&out.stdout).contains("  on sm_86: precompiled (sm_80)\n"));
    let out = audit(&file, &["--arch", "sm_90", "--deny-jit"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(!text(&out.stderr).contains("_aa__f32"), "{}", text(&out.stderr));

    // A damaged record: the others are listed, the damage is reported, exit 1.
    let mut damaged = bytes.clone();
    let at = bytes.len() - 5;
    damaged.truncate(at);
    std::fs::write(&file, &damaged).unwrap();
    let out = audit(&file, &["--arch", "sm_90"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).contains("kernels/aa.rs (unit aa)"));
    assert!(text(&out.stderr).contains("cannot be read: the record is truncated"), "{}", text(&out.stderr));
}

#[test]
fn usage_errors() {
    let out = cuprum(&["--help"]);
    assert!(text(&out.stdout).contains("audit EXECUTABLE [--arch sm_XY] [--deny-jit]"));
    let out = cuprum(&["audit", "--help"]);
    assert_eq!(out.status.code(), Some(0));
    for word in ["--arch sm_XY", "--deny-jit", "PTX JIT by the driver", "NVRTC at first use", "exit status"] {
        assert!(text(&out.stdout).contains(word), "{word}");
    }
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain");
    std::fs::write(&plain, b"\x7fELF nothing of cuprum's here CUPRUM-UNIT-v").unwrap();
    let plain = plain.to_str().unwrap();
    let missing = dir.path().join("missing");
    let missing = missing.to_str().unwrap();
    let exe = env!("CARGO_BIN_EXE_cuprum");
    for (args, says) in [
        (&["audit"][..], "which executable?"),
        (&["audit", missing][..], "cannot read"),
        (&["audit", dir.path().to_str().unwrap()][..], "is a directory"),
        (&["audit", plain][..], "no cuprum kernels found in"),
        (&["audit", exe, "--arch", "sm_9"][..], "bad architecture `sm_9` for --arch"),
        (&["audit", exe, "--arch", "compute_90"][..], "bad architecture `compute_90`"),
        (&["audit", exe, "--arch"][..], "`--arch` needs an architecture"),
        (&["audit", exe, "--frob"][..], "unknown argument `--frob`"),
        (&["audit", exe, exe][..], "one executable at a time"),
    ] {
        let out = cuprum(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(text(&out.stderr).contains(says), "{args:?}: {}", text(&out.stderr));
    }
    // Without a GPU and without --arch: what each target serves; --deny-jit needs one of them.
    let out = cuprum(&["audit", exe]);
    assert_eq!(out.status.code(), Some(0));
    if text(&out.stdout).contains("no GPU and no --arch: what each target serves") {
        let out = cuprum(&["audit", exe, "--deny-jit"]);
        assert_eq!(out.status.code(), Some(2));
        assert!(text(&out.stderr).contains("--deny-jit needs a GPU to check against: name one with --arch sm_XY"));
    }
}
