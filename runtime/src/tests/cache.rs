//! CPU tests of the kernel cache (no GPU, and no compiler for the cache itself: the cache stores
//! opaque images and takes the compile step as a closure), and of NVRTC without a GPU (needs
//! libnvrtc: `source scripts/cuda-env.sh`; without it they fail unless
//! `CUPRUM_SKIP_CUDA_COMPILE=1`).
//!
//! Environment variables are tested in child processes (this test binary re-run with the
//! variable set and `CUPRUM_CACHE_TEST_CHILD` naming the check), so no test changes the
//! environment of the running process.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex, OnceLock};

use crate::cache::{
    self, CacheConfig, CacheKey, CompiledImage, Damage, DiskCache, ImageKind, KernelCache,
    KeyInputs, Lookup,
};
use crate::cache::key::headers_digest;
use crate::stats::Layer;
use crate::{Error, nvrtc};
use tempfile::TempDir;

use crate::test_support as support;

// ------------------------------------------------------------------------------------------
// Helpers
// ------------------------------------------------------------------------------------------

/// A fresh, empty directory under the system temp dir, removed when dropped.
fn tempdir(tag: &str) -> TempDir {
    tempfile::Builder::new()
        .prefix(&format!("cuprum-cache-test-{tag}-"))
        .tempdir()
        .unwrap()
}

/// Every file under `dir`, relative, sorted.
fn files(dir: &Path) -> Vec<String> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(base, &p, out);
            } else {
                out.push(p.strip_prefix(base).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

fn image(tag: &str) -> CompiledImage {
    CompiledImage {
        kind: ImageKind::Cubin,
        image: format!("\x7fELF fake image {tag}").into_bytes(),
        lowered_names: vec![("fx3<float>".into(), format!("_Z3fx3IfEvPT_i_{tag}"))],
    }
}

fn key(tag: &str) -> CacheKey {
    let opts = vec!["--gpu-architecture=sm_90".to_string()];
    KeyInputs::new(tag, [0; 32], &opts, &[], "sm_90", (13, 0)).key()
}

/// Captures log records so a test can count warnings.
struct Capture;

static LOGS: Mutex<Vec<(log::Level, String)>> = Mutex::new(Vec::new());

impl log::Log for Capture {
    fn enabled(&self, _: &log::Metadata) -> bool {
        true
    }
    fn log(&self, r: &log::Record) {
        LOGS.lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((r.level(), r.args().to_string()));
    }
    fn flush(&self) {}
}

fn capture_logs() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        log::set_logger(&Capture).unwrap();
        log::set_max_level(log::LevelFilter::Trace);
    });
}

fn warnings_mentioning(text: &str) -> usize {
    LOGS.lock()
        .unwrap()
        .iter()
        .filter(|(l, m)| *l == log::Level::Warn && m.contains(text))
        .count()
}

/// Re-runs this test binary for one child check with extra environment.
fn run_child(check: &str, env: &[(&str, &str)], remove: &[&str]) -> std::process::Output {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", "tests::cache::child_entry", "--nocapture", "--test-threads=1"])
        .env("CUPRUM_CACHE_TEST_CHILD", check);
    for (k, v) in env {
        cmd.env(k, v);
    }
    for k in remove {
        cmd.env_remove(k);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "child `{check}` failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The entry point of child processes (does nothing in a normal run).
#[test]
fn child_entry() {
    let Ok(check) = std::env::var("CUPRUM_CACHE_TEST_CHILD") else {
        return;
    };
    match check.as_str() {
        "config" => {
            let c = CacheConfig::from_env().unwrap();
            println!(
                "CONFIG dir={:?} in_memory={} save={}",
                c.dir, c.in_memory, c.save_source
            );
            // The process-wide cache follows the environment.
            let g = cache::global().unwrap();
            assert_eq!(g.config(), &c);
            // Store something through the global cache; the parent inspects the directory.
            let (_, layer) = g
                .get_or_compile(&key("from-env"), Some("// source"), || Ok(image("env")))
                .unwrap();
            assert_eq!(layer, Layer::Nvrtc);
        }
        "bad-flag" => {
            let e = CacheConfig::from_env().unwrap_err().to_string();
            assert!(
                e.contains("CUPY_CACHE_IN_MEMORY") && e.contains("0 or 1"),
                "{e}"
            );
            println!("BAD-FLAG ok");
        }
        "warn" => {
            // No logger is installed in this process: warnings go to stderr unless quiet.
            let g = cache::global().unwrap();
            for i in 0..3 {
                let (_, layer) = g
                    .get_or_compile(&key(&format!("warn{i}")), None, || Ok(image("w")))
                    .unwrap();
                assert_eq!(layer, Layer::Nvrtc);
            }
            println!("WARN quiet={}", g.config().quiet);
        }
        "bad-quiet" => {
            let e = CacheConfig::from_env().unwrap_err().to_string();
            assert!(
                e.contains("CUPRUM_CACHE_QUIET") && e.contains("0 or 1"),
                "{e}"
            );
            println!("BAD-QUIET ok");
        }
        "nvrtc-info" => match nvrtc::info() {
            Ok(i) => println!("NVRTC ok {:?} from {:?}", i.version, i.loaded_from),
            Err(e) => {
                assert!(matches!(e, Error::NoNvrtc { .. }), "{e}");
                println!("NVRTC missing: {e}");
            }
        },
        other => panic!("unknown child check {other}"),
    }
}

// ------------------------------------------------------------------------------------------
// Keys
// ------------------------------------------------------------------------------------------

fn base_inputs<'a>(opts: &'a [String], names: &'a [String]) -> KeyInputs<'a> {
    KeyInputs {
        source: "extern \"C\" __global__ void k(float* x) { x[0] = 1; }",
        headers_digest: headers_digest(&[("cuprum/types.h", "typedef int i32;")]),
        options: opts,
        name_expressions: names,
        target: "sm_90",
        compiler_version: (13, 0),
        cuprum_version: "0.0.0-test",
    }
}

#[test]
fn key_is_stable() {
    let opts = vec!["--gpu-architecture=sm_90".to_string(), "-DN=4".to_string()];
    let names = vec!["fx3<float>".to_string()];
    let k = base_inputs(&opts, &names).key();
    // The same inputs give the same key, in this process and (golden value) on any machine: a
    // change here invalidates every user's cache, so it must be deliberate.
    assert_eq!(k, base_inputs(&opts, &names).key());
    assert_eq!(
        k.hex(),
        "7b8e04f61b2f46225ddb12ef83a774e186af2f40a04a105f13242bce9911a32c"
    );
    assert_eq!(CacheKey::from_hex(&k.hex()), Some(k));
    assert_eq!(CacheKey::from_hex(&k.hex().to_uppercase()), Some(k));
    assert_eq!(CacheKey::from_hex("zz"), None);
}

#[test]
fn key_changes_with_every_input() {
    let opts = vec!["--gpu-architecture=sm_90".to_string(), "-DN=4".to_string()];
    let names = vec!["fx3<float>".to_string()];
    let base = base_inputs(&opts, &names);
    let k0 = base.key();

    let mut seen = vec![k0];
    let mut differs = |what: &str, k: CacheKey| {
        assert!(
            !seen.contains(&k),
            "changing the {what} did not change the key (or collided)"
        );
        seen.push(k);
    };

    differs(
        "source",
        KeyInputs {
            source: "extern \"C\" __global__ void k(float* x) { x[0] = 2; }",
            ..base
        }
        .key(),
    );
    differs(
        "source whitespace",
        KeyInputs {
            source: "extern \"C\" __global__ void k(float* x) { x[0] = 1; } ",
            ..base
        }
        .key(),
    );
    differs(
        "headers",
        KeyInputs {
            headers_digest: headers_digest(&[("cuprum/types.h", "typedef int  i32;")]),
            ..base
        }
        .key(),
    );
    differs(
        "header name",
        KeyInputs {
            headers_digest: headers_digest(&[("cuprum/other.h", "typedef int i32;")]),
            ..base
        }
        .key(),
    );
    let o2 = vec!["--gpu-architecture=sm_90".to_string(), "-DN=5".to_string()];
    differs(
        "options",
        KeyInputs {
            options: &o2,
            ..base
        }
        .key(),
    );
    let o3 = vec!["-DN=4".to_string(), "--gpu-architecture=sm_90".to_string()];
    differs(
        "option order",
        KeyInputs {
            options: &o3,
            ..base
        }
        .key(),
    );
    // Field boundaries are unambiguous: splitting or joining options changes the key.
    let o4 = vec!["--gpu-architecture=sm_90-DN=4".to_string()];
    differs(
        "option split",
        KeyInputs {
            options: &o4,
            ..base
        }
        .key(),
    );
    let o5 = vec![
        "--gpu-architecture=sm_90".to_string(),
        "-DN=4".to_string(),
        "--device-debug".to_string(),
        "--generate-line-info".to_string(),
    ];
    differs(
        "debug options",
        KeyInputs {
            options: &o5,
            ..base
        }
        .key(),
    );
    let n2 = vec!["fx3<double>".to_string()];
    differs(
        "name expressions",
        KeyInputs {
            name_expressions: &n2,
            ..base
        }
        .key(),
    );
    differs(
        "no name expressions",
        KeyInputs {
            name_expressions: &[],
            ..base
        }
        .key(),
    );
    differs(
        "target",
        KeyInputs {
            target: "sm_80",
            ..base
        }
        .key(),
    );
    differs(
        "target kind",
        KeyInputs {
            target: "compute_90",
            ..base
        }
        .key(),
    );
    differs(
        "NVRTC major",
        KeyInputs {
            compiler_version: (12, 0),
            ..base
        }
        .key(),
    );
    differs(
        "NVRTC minor",
        KeyInputs {
            compiler_version: (13, 1),
            ..base
        }
        .key(),
    );
    differs(
        "cuprum version",
        KeyInputs {
            cuprum_version: "0.0.1-test",
            ..base
        }
        .key(),
    );

    // `new` fills in this crate's version.
    let k = KeyInputs::new(
        base.source,
        base.headers_digest,
        &opts,
        &names,
        "sm_90",
        (13, 0),
    );
    assert_eq!(k.cuprum_version, env!("CARGO_PKG_VERSION"));
}

// ------------------------------------------------------------------------------------------
// Disk layer
// ------------------------------------------------------------------------------------------

#[test]
fn disk_round_trip_layout_and_lazy_creation() {
    let tmp = tempdir("layout");
    let dir = tmp.path().join("kernel_cache");
    let disk = DiskCache::new(&dir);
    let k = key("layout");
    assert_eq!(disk.get(&k), Lookup::Miss);
    assert!(!dir.exists(), "a lookup must not create the directory");

    assert!(disk.put(&k, b"payload", Some("// source")));
    assert_eq!(disk.get(&k), Lookup::Hit(b"payload".to_vec()));
    let hex = k.hex();
    // Sharded by the first two hex digits; no source saved unless asked.
    assert_eq!(files(&dir), vec![format!("{}/{hex}.cuprum", &hex[..2])]);
    assert_eq!(
        disk.entry_path(&k),
        dir.join(&hex[..2]).join(format!("{hex}.cuprum"))
    );

    // The directory's usage checks payloads as the kernel cache reads them: compiled images.
    let u = cache::scan::usage(&dir).unwrap();
    assert_eq!((u.entries, u.damaged), (0, 1));

    // Replacing an entry.
    let other = image("other").encode();
    assert!(disk.put(&k, &other, None));
    assert_eq!(disk.get(&k), Lookup::Hit(other));
    assert_eq!(files(&dir).len(), 1);

    let u = cache::scan::usage(&dir).unwrap();
    assert_eq!(
        (u.entries, u.damaged, u.sources, u.temporaries),
        (1, 0, 0, 0)
    );
    assert!(u.bytes > 5);
}

#[test]
fn save_source_writes_the_cu_next_to_new_entries() {
    let tmp = tempdir("source");
    let kc = KernelCache::new(CacheConfig {
        dir: Some(tmp.path().to_path_buf()),
        in_memory: false,
        save_source: true,
        quiet: false,
    });
    let k = key("with-source");
    kc.get_or_compile(&k, Some("__global__ void k() {}"), || Ok(image("s")))
        .unwrap();
    let src = kc.disk().unwrap().source_path(&k);
    assert_eq!(
        std::fs::read_to_string(&src).unwrap(),
        "__global__ void k() {}"
    );
    assert_eq!(src.extension().unwrap(), "cu");
    // An entry served from disk does not (re)write its source (CuPy's rule).
    std::fs::remove_file(&src).unwrap();
    let kc2 = KernelCache::new(kc.config().clone());
    let (_, layer) = kc2
        .get_or_compile(&k, Some("__global__ void k() {}"), || panic!("no compile"))
        .unwrap();
    assert_eq!(layer, Layer::Disk);
    assert!(!src.exists());
}

#[test]
fn corrupt_entries_are_misses_and_get_rewritten() {
    let tmp = tempdir("corrupt");
    let cfg = CacheConfig::at(tmp.path());
    let k = key("corrupt");
    let compiles = AtomicUsize::new(0);
    let compile = || {
        compiles.fetch_add(1, Ordering::SeqCst);
        Ok(image("c"))
    };
    KernelCache::new(cfg.clone())
        .get_or_compile(&k, None, compile)
        .unwrap();
    let path = KernelCache::new(cfg.clone()).disk().unwrap().entry_path(&k);
    let good = std::fs::read(&path).unwrap();

    let damage: Vec<(&str, Vec<u8>)> = vec![
        ("flipped payload byte", {
            let mut b = good.clone();
            let mid = b.len() / 2;
            b[mid] ^= 0x40;
            b
        }),
        ("truncated", good[..good.len() - 7].to_vec()),
        ("empty", Vec::new()),
        ("bad magic", {
            let mut b = good.clone();
            b[0] = b'X';
            b
        }),
        ("flipped checksum", {
            let mut b = good.clone();
            let last = b.len() - 1;
            b[last] ^= 1;
            b
        }),
        ("another key's entry", {
            let other = KernelCache::new(cfg.clone());
            let k2 = key("other");
            other.get_or_compile(&k2, None, || Ok(image("c"))).unwrap();
            std::fs::read(other.disk().unwrap().entry_path(&k2)).unwrap()
        }),
    ];
    for (what, bytes) in damage {
        std::fs::write(&path, &bytes).unwrap();
        let disk = DiskCache::new(tmp.path());
        assert!(
            matches!(disk.get(&k), Lookup::Corrupt(_)),
            "{what}: {:?}",
            disk.get(&k)
        );
        // A fresh process-like cache: recompiles, rewrites, and the next one hits the disk.
        let before = compiles.load(Ordering::SeqCst);
        let (img, layer) = KernelCache::new(cfg.clone())
            .get_or_compile(&k, None, || {
                compiles.fetch_add(1, Ordering::SeqCst);
                Ok(image("c"))
            })
            .unwrap();
        assert_eq!((layer, &*img), (Layer::Nvrtc, &image("c")), "{what}");
        assert_eq!(compiles.load(Ordering::SeqCst), before + 1, "{what}");
        assert_eq!(
            std::fs::read(&path).unwrap(),
            good,
            "{what}: entry not rewritten"
        );
        let (_, layer) = KernelCache::new(cfg.clone())
            .get_or_compile(&k, None, || panic!("no compile"))
            .unwrap();
        assert_eq!(layer, Layer::Disk, "{what}");
    }

    // A valid entry whose payload is not a compiled image is also a miss.
    DiskCache::new(tmp.path()).put(&k, b"not an image", None);
    let (_, layer) = KernelCache::new(cfg.clone())
        .get_or_compile(&k, None, || Ok(image("c")))
        .unwrap();
    assert_eq!(layer, Layer::Nvrtc);
}

#[test]
fn a_failed_write_costs_one_entry_and_writing_stays_on() {
    capture_logs();
    let tmp = tempdir("per-entry");
    // The cache directory cannot be made while a regular file has its parent's name (not even by
    // root): every write fails with "not a directory", a cause that can go away.
    let blocker = tmp.path().join("file");
    std::fs::write(&blocker, b"x").unwrap();
    let dir = blocker.join("cache");
    let dir_text = dir.display().to_string();
    let kc = KernelCache::new(CacheConfig::at(&dir));
    for i in 0..3 {
        let k = key(&format!("pe{i}"));
        let (img, layer) = kc
            .get_or_compile(&k, Some("src"), || Ok(image("pe")))
            .unwrap();
        assert_eq!((layer, &*img), (Layer::Nvrtc, &image("pe")));
        // Served from memory afterwards.
        let (_, layer) = kc
            .get_or_compile(&k, None, || panic!("no compile"))
            .unwrap();
        assert_eq!(layer, Layer::Memory);
    }
    assert_eq!(kc.memory_len(), 3);
    assert!(
        kc.disk().unwrap().is_writable(),
        "only permission and read-only errors turn writing off"
    );
    // One warning for the three failures, saying what is in the way (not "not writable").
    let logs = LOGS.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let ours: Vec<&String> = logs
        .iter()
        .filter(|(l, m)| *l == log::Level::Warn && m.contains(&dir_text))
        .map(|(_, m)| m)
        .collect();
    assert_eq!(ours.len(), 1, "{logs:?}");
    assert!(
        ours[0].contains("a file is where a folder of")
            && ours[0].contains("other entries are still written")
            && !ours[0].contains("not writable"),
        "{}",
        ours[0]
    );

    // The obstacle goes: the next entry is written, by the same cache.
    std::fs::remove_file(&blocker).unwrap();
    let k = key("pe-after");
    kc.get_or_compile(&k, None, || Ok(image("after"))).unwrap();
    assert_eq!(
        DiskCache::new(&dir).get(&k),
        Lookup::Hit(image("after").encode())
    );
}

#[test]
fn a_directory_in_place_of_an_entry_is_skipped() {
    capture_logs();
    let tmp = tempdir("eisdir");
    let kc = KernelCache::new(CacheConfig::at(tmp.path()));
    let disk = kc.disk().unwrap();
    let k = key("eisdir");
    let path = disk.entry_path(&k);
    std::fs::create_dir_all(path.join("inside")).unwrap();
    assert_eq!(
        disk.get(&k),
        Lookup::Corrupt(Damage::NotAFile("a directory"))
    );
    // A miss, compiled; the rename over the directory fails (EISDIR), which costs this entry.
    let (_, layer) = kc.get_or_compile(&k, None, || Ok(image("d"))).unwrap();
    assert_eq!(layer, Layer::Nvrtc);
    assert!(path.is_dir());
    assert!(disk.is_writable());
    let path_text = path.display().to_string();
    assert_eq!(
        warnings_mentioning(&path_text),
        2,
        "damaged, then unwritable"
    );
    let logs = LOGS.lock().unwrap_or_else(|e| e.into_inner()).clone();
    assert!(
        logs.iter()
            .any(|(_, m)| m.contains(&path_text) && m.contains("a directory has the entry's name")),
        "{logs:?}"
    );
    // The next entry is written, and no temporary file is left behind.
    let k2 = key("eisdir-next");
    kc.get_or_compile(&k2, None, || Ok(image("n"))).unwrap();
    assert!(matches!(disk.get(&k2), Lookup::Hit(_)));
    let u = cache::scan::usage(tmp.path()).unwrap();
    assert_eq!((u.entries, u.damaged, u.temporaries), (1, 1, 0));
}

/// Runs `f` in a thread and fails the test if it does not finish within a minute (a read that
/// blocks on a FIFO never would).
#[cfg(unix)]
fn within<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(v) => v,
        Err(_) => panic!("{what} did not return within a minute: blocked on the FIFO"),
    }
}

#[cfg(unix)]
#[test]
fn a_fifo_in_place_of_an_entry_does_not_block() {
    let tmp = tempdir("fifo");
    let dir = tmp.path().to_path_buf();
    let k = key("fifo");
    let path = DiskCache::new(&dir).entry_path(&k);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let status = Command::new("mkfifo")
        .arg(&path)
        .status()
        .expect("this test makes its FIFO with `mkfifo` (coreutils); install it");
    assert!(status.success(), "mkfifo {}: {status}", path.display());

    let d = dir.clone();
    let got = within("a lookup", move || DiskCache::new(&d).get(&k));
    assert_eq!(got, Lookup::Corrupt(Damage::NotAFile("a FIFO")));
    let d = dir.clone();
    let u = within("stats", move || cache::scan::usage(&d).unwrap());
    assert_eq!((u.entries, u.damaged), (0, 1));
    let d = dir.clone();
    let v = within("verify", move || cache::scan::verify(&d, false).unwrap());
    assert_eq!((v.valid, v.damaged.len()), (0, 1));
    assert_eq!(v.damaged[0].path, path);
    assert_eq!(v.damaged[0].damage, Damage::NotAFile("a FIFO"));
    assert!(
        v.damaged[0]
            .damage
            .to_string()
            .contains("a FIFO, not a regular file")
    );

    // A compile replaces the FIFO with a valid entry, which the next cache reads.
    let d = dir.clone();
    let layer = within("a compile", move || {
        let kc = KernelCache::new(CacheConfig {
            quiet: true,
            ..CacheConfig::at(&d)
        });
        kc.get_or_compile(&k, None, || Ok(image("f"))).unwrap().1
    });
    assert_eq!(layer, Layer::Nvrtc);
    assert!(std::fs::symlink_metadata(&path).unwrap().is_file());
    let (_, layer) = KernelCache::new(CacheConfig::at(&dir))
        .get_or_compile(&k, None, || panic!("no compile"))
        .unwrap();
    assert_eq!(layer, Layer::Disk);

    // verify --remove deletes a FIFO too.
    std::fs::remove_file(&path).unwrap();
    assert!(
        Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap()
            .success()
    );
    let d = dir.clone();
    let v = within("verify --remove", move || {
        cache::scan::verify(&d, true).unwrap()
    });
    assert_eq!(v.damaged.len(), 1);
    assert!(matches!(v.damaged[0].removed, Some(Ok(()))), "{v:?}");
    assert!(std::fs::symlink_metadata(&path).is_err());
}

#[test]
fn verify_finds_and_removes_damaged_entries_and_stats_count_them_apart() {
    let tmp = tempdir("verify");
    let kc = KernelCache::new(CacheConfig {
        save_source: true,
        ..CacheConfig::at(tmp.path())
    });
    let disk = kc.disk().unwrap();
    for tag in ["good", "flipped", "not-an-image"] {
        kc.get_or_compile(&key(tag), Some("src"), || Ok(image(tag)))
            .unwrap();
    }
    let flipped = disk.entry_path(&key("flipped"));
    let mut bytes = std::fs::read(&flipped).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x10;
    std::fs::write(&flipped, &bytes).unwrap();
    // A whole entry whose payload is not a compiled image.
    assert!(disk.put(&key("not-an-image"), b"garbage", None));
    // CuPy's file in the shared directory is never read or removed.
    std::fs::write(tmp.path().join("0123abcd.cubin"), b"cupy").unwrap();

    let u = cache::scan::usage(tmp.path()).unwrap();
    assert_eq!((u.entries, u.damaged, u.sources), (1, 2, 3));

    let v = cache::scan::verify(tmp.path(), false).unwrap();
    assert_eq!(v.valid, 1);
    let mut found: Vec<(PathBuf, Damage)> = v
        .damaged
        .iter()
        .map(|d| (d.path.clone(), d.damage.clone()))
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    let mut expected = vec![
        (flipped.clone(), Damage::Checksum),
        (disk.entry_path(&key("not-an-image")), Damage::Payload),
    ];
    expected.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(found, expected);
    assert!(v.damaged.iter().all(|d| d.removed.is_none()));
    assert!(flipped.exists(), "verify without --remove removes nothing");

    let v = cache::scan::verify(tmp.path(), true).unwrap();
    assert_eq!((v.valid, v.damaged.len()), (1, 2));
    assert!(
        v.damaged.iter().all(|d| matches!(d.removed, Some(Ok(())))),
        "{v:?}"
    );
    assert!(!flipped.exists());
    let u = cache::scan::usage(tmp.path()).unwrap();
    assert_eq!((u.entries, u.damaged), (1, 0));
    assert!(tmp.path().join("0123abcd.cubin").exists());
    assert_eq!(
        KernelCache::new(CacheConfig::at(tmp.path()))
            .get_or_compile(&key("good"), None, || panic!("no compile"))
            .unwrap()
            .1,
        Layer::Disk
    );
}

#[test]
fn clear_while_writing_does_not_turn_writers_off() {
    let tmp = tempdir("clear-race");
    let writers = 4;
    // Writers keep writing until the clearer has run this many times, so the two overlap.
    let min_clears = 50;
    let done = Arc::new(AtomicUsize::new(0));
    let clears = Arc::new(AtomicUsize::new(0));
    let clearer = {
        let (dir, done, clears) = (tmp.path().to_path_buf(), done.clone(), clears.clone());
        std::thread::spawn(move || {
            while done.load(Ordering::SeqCst) < writers {
                let c = cache::scan::clear(&dir).unwrap();
                assert!(c.failed.is_empty(), "{:?}", c.failed);
                clears.fetch_add(1, Ordering::SeqCst);
            }
        })
    };
    let handles: Vec<_> = (0..writers)
        .map(|w| {
            let (dir, done, clears) = (tmp.path().to_path_buf(), done.clone(), clears.clone());
            std::thread::spawn(move || {
                // One cache per thread, as separate processes would have.
                let disk = DiskCache::new(dir).with_quiet(true);
                let payload = image("w").encode();
                let (mut tried, mut written) = (0, 0);
                while tried < 100 || clears.load(Ordering::SeqCst) < min_clears {
                    // 50 keys per writer, rewritten: the directory stays small, clears fast.
                    let k = key(&format!("w{w}-{}", tried % 50));
                    written += disk.put(&k, &payload, None) as usize;
                    tried += 1;
                }
                done.fetch_add(1, Ordering::SeqCst);
                (disk, tried, written)
            })
        })
        .collect();
    let caches: Vec<(DiskCache, usize, usize)> =
        handles.into_iter().map(|h| h.join().unwrap()).collect();
    clearer.join().unwrap();
    for (w, (disk, tried, written)) in caches.iter().enumerate() {
        assert!(disk.is_writable(), "writer {w}");
        // A write is tried again when a clear takes its folder or temporary file; one that lost
        // every try costs only its entry.
        assert!(
            *written * 10 >= *tried * 9,
            "writer {w}: {written} of {tried} written"
        );
        let k = key(&format!("after-{w}"));
        assert!(disk.put(&k, &image("after").encode(), None), "writer {w}");
        assert_eq!(disk.get(&k), Lookup::Hit(image("after").encode()));
    }
    let u = cache::scan::usage(tmp.path()).unwrap();
    assert_eq!((u.damaged, u.temporaries), (0, 0));
    eprintln!(
        "{} clears while {writers} writers wrote; (tried, written): {:?}",
        clears.load(Ordering::SeqCst),
        caches.iter().map(|c| (c.1, c.2)).collect::<Vec<_>>()
    );
}

#[test]
fn permission_denied_turns_writing_off_with_one_warning() {
    capture_logs();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempdir("perm");
        let ro = tmp.path().join("ro");
        std::fs::create_dir(&ro).unwrap();
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
        let enforced = std::fs::write(ro.join("probe"), b"x").is_err();
        if enforced {
            let kc = KernelCache::new(CacheConfig::at(&ro));
            for i in 0..3 {
                kc.get_or_compile(&key(&format!("ro-perm{i}")), None, || Ok(image("p")))
                    .unwrap();
            }
            assert!(!kc.disk().unwrap().is_writable());
            let logs = LOGS.lock().unwrap_or_else(|e| e.into_inner()).clone();
            let ro_text = ro.display().to_string();
            let ours: Vec<_> = logs.iter().filter(|(_, m)| m.contains(&ro_text)).collect();
            assert_eq!(ours.len(), 1, "{logs:?}");
            assert!(ours[0].1.contains("permission denied"), "{}", ours[0].1);
            assert!(files(&ro).is_empty());
        } else {
            eprintln!(
                "permission_denied_turns_writing_off_with_one_warning: permissions are not \
                 enforced for this user (root), so only the unit test \
                 cache::disk::tests::read_only_and_permission_errors_turn_writing_off (an \
                 injected error) checks this"
            );
        }
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

#[test]
fn concurrent_writers_leave_one_valid_entry() {
    let tmp = tempdir("race");
    let k = key("race");
    // Independent caches (as separate processes would be) writing one key at once, repeatedly.
    let threads = 8;
    let barrier = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let dir = tmp.path().to_path_buf();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                let disk = DiskCache::new(dir);
                barrier.wait();
                for _ in 0..50 {
                    assert!(disk.put(&k, b"the same compiled bytes", None));
                    match disk.get(&k) {
                        Lookup::Hit(b) => assert_eq!(b, b"the same compiled bytes", "thread {t}"),
                        other => panic!("thread {t}: a reader saw {other:?}"),
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let hex = k.hex();
    assert_eq!(
        files(tmp.path()),
        vec![format!("{}/{hex}.cuprum", &hex[..2])],
        "one entry, no temporaries"
    );
    assert_eq!(
        DiskCache::new(tmp.path()).get(&k),
        Lookup::Hit(b"the same compiled bytes".to_vec())
    );
}

#[test]
fn threads_sharing_a_cache_compile_once() {
    let tmp = tempdir("once");
    let kc = Arc::new(KernelCache::new(CacheConfig::at(tmp.path())));
    let compiles = Arc::new(AtomicUsize::new(0));
    let threads = 8;
    let barrier = Arc::new(Barrier::new(threads));
    let k = key("once");
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let (kc, compiles, barrier) = (kc.clone(), compiles.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                kc.get_or_compile(&k, None, || {
                    compiles.fetch_add(1, Ordering::SeqCst);
                    std::thread::sleep(std::time::Duration::from_millis(50));
                    Ok(image("once"))
                })
                .unwrap()
            })
        })
        .collect();
    let layers: Vec<Layer> = handles.into_iter().map(|h| h.join().unwrap().1).collect();
    assert_eq!(compiles.load(Ordering::SeqCst), 1);
    assert_eq!(layers.iter().filter(|&&l| l == Layer::Nvrtc).count(), 1);
    assert!(
        layers
            .iter()
            .all(|&l| l == Layer::Nvrtc || l == Layer::Memory)
    );
    assert_eq!(files(tmp.path()).len(), 1);
}

#[test]
fn compile_errors_are_not_cached() {
    let tmp = tempdir("err");
    let kc = KernelCache::new(CacheConfig::at(tmp.path()));
    let k = key("err");
    let e = kc
        .get_or_compile(&k, None, || {
            Err(Error::Unsupported {
                what: "boom".into(),
            })
        })
        .unwrap_err();
    assert!(e.to_string().contains("boom"));
    assert!(files(tmp.path()).is_empty());
    let (_, layer) = kc.get_or_compile(&k, None, || Ok(image("ok"))).unwrap();
    assert_eq!(layer, Layer::Nvrtc);
}

#[test]
fn in_memory_mode_writes_nothing() {
    let tmp = tempdir("inmem");
    let dir = tmp.path().join("cache");
    let kc = KernelCache::new(CacheConfig {
        dir: Some(dir.clone()),
        in_memory: true,
        save_source: true,
        quiet: false,
    });
    assert!(kc.disk().is_none());
    for i in 0..3 {
        let k = key(&format!("mem{i}"));
        assert_eq!(
            kc.get_or_compile(&k, Some("src"), || Ok(image("m")))
                .unwrap()
                .1,
            Layer::Nvrtc
        );
        assert_eq!(
            kc.get_or_compile(&k, Some("src"), || panic!()).unwrap().1,
            Layer::Memory
        );
    }
    assert!(!dir.exists());
    assert!(files(tmp.path()).is_empty());
}

#[test]
fn usage_and_clear_touch_only_cuprums_files() {
    let tmp = tempdir("clear");
    let kc = KernelCache::new(CacheConfig {
        dir: Some(tmp.path().to_path_buf()),
        in_memory: false,
        save_source: true,
        quiet: false,
    });
    for i in 0..4 {
        kc.get_or_compile(&key(&format!("c{i}")), Some("src"), || Ok(image("x")))
            .unwrap();
    }
    // CuPy shares the default directory: its files, and anything else, stay.
    std::fs::write(tmp.path().join("0123abcd.cubin"), b"cupy").unwrap();
    let shard = kc
        .disk()
        .unwrap()
        .entry_path(&key("c0"))
        .parent()
        .unwrap()
        .to_path_buf();
    std::fs::write(shard.join("notes.txt"), b"mine").unwrap();
    std::fs::write(shard.join(".tmp.leftover.1.2"), b"half").unwrap();
    let u = cache::scan::usage(tmp.path()).unwrap();
    assert_eq!((u.entries, u.sources, u.temporaries), (4, 4, 1));

    let cleared = cache::scan::clear(tmp.path()).unwrap();
    assert!(cleared.failed.is_empty(), "{:?}", cleared.failed);
    let removed = cleared.removed;
    assert_eq!(
        (removed.entries, removed.sources, removed.temporaries),
        (4, 4, 1)
    );
    let left = files(tmp.path());
    let shard_name = shard.file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(
        left,
        vec![
            "0123abcd.cubin".to_string(),
            format!("{shard_name}/notes.txt")
        ]
    );
    assert_eq!(cache::scan::usage(tmp.path()).unwrap().entries, 0);
    // A missing directory is empty, not an error.
    assert_eq!(
        cache::scan::usage(&tmp.path().join("none"))
            .unwrap()
            .entries,
        0
    );
}

// ------------------------------------------------------------------------------------------
// Environment (child processes)
// ------------------------------------------------------------------------------------------

#[test]
fn environment_configures_the_process_cache() {
    let tmp = tempdir("env");
    let dir = tmp.path().join("from-env");
    let d = dir.to_str().unwrap();
    // CUPY_CACHE_DIR (+ CUPY_CACHE_SAVE_CUDA_SOURCE): the entry and its source land there.
    let out = run_child(
        "config",
        &[("CUPY_CACHE_DIR", d), ("CUPY_CACHE_SAVE_CUDA_SOURCE", "1")],
        &["CUPY_CACHE_IN_MEMORY"],
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("in_memory=false save=true"));
    let u = cache::scan::usage(&dir).unwrap();
    assert_eq!((u.entries, u.sources), (1, 1));

    // CUPY_CACHE_IN_MEMORY=1: nothing is written.
    let dir2 = tmp.path().join("in-memory");
    let out = run_child(
        "config",
        &[
            ("CUPY_CACHE_DIR", dir2.to_str().unwrap()),
            ("CUPY_CACHE_IN_MEMORY", "1"),
        ],
        &[],
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("in_memory=true"));
    assert!(!dir2.exists());

    // Default: ${HOME}/.cupy/kernel_cache.
    let home = tmp.path().join("home");
    let out = run_child(
        "config",
        &[("HOME", home.to_str().unwrap())],
        &[
            "CUPY_CACHE_DIR",
            "CUPY_CACHE_IN_MEMORY",
            "CUPY_CACHE_SAVE_CUDA_SOURCE",
        ],
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains(".cupy/kernel_cache"));
    assert_eq!(
        cache::scan::usage(&home.join(".cupy").join("kernel_cache"))
            .unwrap()
            .entries,
        1
    );

    // A malformed flag is an error that names the variable.
    run_child("bad-flag", &[("CUPY_CACHE_IN_MEMORY", "yes")], &[]);
}

#[test]
fn warnings_reach_stderr_without_a_logger_once_per_cause() {
    let tmp = tempdir("stderr");
    // Every write fails (a file is where the cache's parent folder should be).
    std::fs::write(tmp.path().join("file"), b"x").unwrap();
    let dir = tmp.path().join("file").join("cache");
    let d = dir.to_str().unwrap();
    let out = run_child(
        "warn",
        &[("CUPY_CACHE_DIR", d)],
        &["CUPY_CACHE_IN_MEMORY", "CUPRUM_CACHE_QUIET"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("cuprum: warning: kernel cache"))
        .collect();
    assert_eq!(
        warnings.len(),
        1,
        "three failed writes, one cause:\n{stderr}"
    );
    assert!(warnings[0].contains(d), "{}", warnings[0]);

    // CUPRUM_CACHE_QUIET=1: nothing on stderr, the program runs the same.
    let out = run_child(
        "warn",
        &[("CUPY_CACHE_DIR", d), ("CUPRUM_CACHE_QUIET", "1")],
        &["CUPY_CACHE_IN_MEMORY"],
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("WARN quiet=true"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("cuprum: warning"), "{stderr}");

    // Anything but 0 or 1 is an error that names the variable.
    run_child("bad-quiet", &[("CUPRUM_CACHE_QUIET", "yes")], &[]);
}

// ------------------------------------------------------------------------------------------
// NVRTC without a GPU
// ------------------------------------------------------------------------------------------

/// libnvrtc, or `None` after printing why `test` is skipped (`CUPRUM_SKIP_CUDA_COMPILE=1`);
/// without libnvrtc and without that variable, the test fails.
#[track_caller]
fn nvrtc_or_skip(test: &str) -> Option<&'static nvrtc::NvrtcInfo> {
    let info = nvrtc::info();
    let missing = info.as_ref().err().map(|e| format!("no libnvrtc ({e})"));
    if support::skip_without(info.is_ok(), test, missing.as_deref().unwrap_or("")) {
        return None;
    }
    info.ok()
}

fn program<'a>(source: &'a str, options: &'a [String], names: &'a [String]) -> nvrtc::Program<'a> {
    nvrtc::Program {
        name: "test",
        file_name: "test",
        source,
        options,
        name_expressions: names,
        dump_source_on_error: false,
    }
}

const ADD: &str = r#"extern "C" __global__ void my_add(const float* x1, const float* x2, float* y) {
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    y[tid] = x1[tid] + x2[tid];
}
"#;

#[test]
fn nvrtc_compiles_cubin_and_ptx_without_a_gpu() {
    let Some(info) = nvrtc_or_skip("nvrtc_compiles_cubin_and_ptx_without_a_gpu") else {
        return;
    };
    assert!(info.version.0 >= 11, "{info:?}");
    assert!(info.supported_archs.contains(&90), "{info:?}");

    let target = nvrtc::choose_target((9, 0), &info.supported_archs, false, info.version).unwrap();
    assert_eq!(target, nvrtc::CodeTarget::Cubin(90));
    let opts = nvrtc::effective_options(&[], target, false);
    let out = nvrtc::compile(&program(ADD, &opts, &[]), target).unwrap();
    assert_eq!(out.image.kind, ImageKind::Cubin);
    assert!(out.image.image.starts_with(b"\x7fELF"));
    assert!(out.elapsed.as_nanos() > 0);

    let ptx = nvrtc::CodeTarget::Ptx(90);
    let opts = nvrtc::effective_options(&[], ptx, true);
    let out = nvrtc::compile(&program(ADD, &opts, &[]), ptx).unwrap();
    assert_eq!(out.image.kind, ImageKind::Ptx);
    let text = String::from_utf8_lossy(&out.image.image);
    assert!(
        text.contains(".entry my_add") && text.contains(".target sm_90"),
        "{text}"
    );
    assert!(text.contains(".loc"), "debug build has line info");
    assert_eq!(ImageKind::sniff(&out.image.image), ImageKind::Ptx);
}

#[test]
fn nvrtc_lowers_name_expressions() {
    let Some(info) = nvrtc_or_skip("nvrtc_lowers_name_expressions") else {
        return;
    };
    let src = r#"
template <typename T> __global__ void fx3(T* a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = a[i] * 3;
}
"#;
    let names: Vec<String> = ["fx3<float>", "fx3<double>", "fx3<int>"]
        .map(String::from)
        .to_vec();
    let target = nvrtc::choose_target((9, 0), &info.supported_archs, false, info.version).unwrap();
    let opts = nvrtc::effective_options(&[], target, false);
    let out = nvrtc::compile(&program(src, &opts, &names), target).unwrap();
    assert_eq!(out.image.lowered_name("fx3<float>"), Some("_Z3fx3IfEvPT_i"));
    assert_eq!(
        out.image.lowered_name("fx3<double>"),
        Some("_Z3fx3IdEvPT_i")
    );
    assert_eq!(out.image.lowered_name("fx3<int>"), Some("_Z3fx3IiEvPT_i"));
    // The lowered names survive the cache's encoding.
    assert_eq!(
        CompiledImage::decode(&out.image.encode()).unwrap(),
        out.image
    );
}

#[test]
fn nvrtc_errors_carry_the_log_and_on_request_the_source() {
    let Some(info) = nvrtc_or_skip("nvrtc_errors_carry_the_log_and_on_request_the_source") else {
        return;
    };
    let target = nvrtc::choose_target((9, 0), &info.supported_archs, false, info.version).unwrap();
    let opts = nvrtc::effective_options(&[], target, false);
    let src = "// line one\n#error cuprum test error\n";
    let e = nvrtc::compile(&program(src, &opts, &[]), target).unwrap_err();
    let m = e.to_string();
    assert!(matches!(e, Error::Compile { .. }), "{m}");
    assert!(
        m.contains("cuprum test error") && m.contains("CUPY_DUMP_CUDA_SOURCE_ON_ERROR"),
        "{m}"
    );
    assert!(!m.contains("1 // line one"), "{m}");

    let mut p = program(src, &opts, &[]);
    p.dump_source_on_error = true;
    let m = nvrtc::compile(&p, target).unwrap_err().to_string();
    assert!(
        m.contains("1 // line one") && m.contains("2 #error cuprum test error"),
        "{m}"
    );

    // A bad option is a compile error that names it.
    let bad = nvrtc::effective_options(&["--no-such-option".to_string()], target, false);
    let m = nvrtc::compile(&program(ADD, &bad, &[]), target)
        .unwrap_err()
        .to_string();
    assert!(m.contains("--no-such-option"), "{m}");
}

#[test]
fn nvrtc_sees_the_embedded_headers() {
    let Some(info) = nvrtc_or_skip("nvrtc_sees_the_embedded_headers") else {
        return;
    };
    let headers = nvrtc::program::headers();
    assert!(!headers.is_empty());
    let target = nvrtc::choose_target((9, 0), &info.supported_archs, false, info.version).unwrap();
    let opts = nvrtc::effective_options(&[], target, false);
    // Every embedded header compiles on its own, with only libnvrtc (no toolkit include path).
    for (name, _) in headers {
        let src = format!("#include <{name}>\nextern \"C\" __global__ void k() {{}}\n");
        if let Err(e) = nvrtc::compile(&program(&src, &opts, &[]), target) {
            panic!("#include <{name}> does not compile with NVRTC:\n{e}");
        }
    }
}

/// The file of the libnvrtc this process has loaded (from `CUDA_PATH`, `LD_LIBRARY_PATH` or the
/// loader's default path), read from the process's memory map.
fn loaded_libnvrtc() -> PathBuf {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .map(PathBuf::from)
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("libnvrtc.so"))
        })
        .unwrap_or_else(|| panic!("libnvrtc is loaded but not in /proc/self/maps:\n{maps}"))
}

#[test]
fn cuda_path_is_honoured_and_a_missing_nvrtc_is_an_error() {
    if nvrtc_or_skip("cuda_path_is_honoured_and_a_missing_nvrtc_is_an_error").is_none() {
        return;
    }
    // A CUDA root of its own, `lib64/` holding links to the loaded libnvrtc and the files beside it
    // (libnvrtc-builtins): with LD_LIBRARY_PATH removed, only CUDA_PATH leads the child there,
    // wherever this process found its libnvrtc.
    let lib = loaded_libnvrtc();
    let tmp = tempdir("cuda-root");
    let lib64 = tmp.path().join("lib64");
    std::fs::create_dir_all(&lib64).unwrap();
    for e in std::fs::read_dir(lib.parent().unwrap()).unwrap().flatten() {
        if e.file_name().to_string_lossy().starts_with("libnvrtc") {
            std::os::unix::fs::symlink(e.path(), lib64.join(e.file_name())).unwrap();
        }
    }
    let out = run_child(
        "nvrtc-info",
        &[("CUDA_PATH", tmp.path().to_str().unwrap())],
        &["LD_LIBRARY_PATH"],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("NVRTC ok"), "{text}");
    let from_root = format!("from Some(\"{}/libnvrtc.so", lib64.display());
    assert!(
        text.contains(&from_root),
        "not loaded from CUDA_PATH={}:\n{text}",
        tmp.path().display()
    );

    // Neither: a clean NoNvrtc error, or, where the system has a libnvrtc on the loader's default
    // path, that one (not from a CUDA_PATH).
    let out = run_child("nvrtc-info", &[], &["LD_LIBRARY_PATH", "CUDA_PATH"]);
    let text = String::from_utf8_lossy(&out.stdout);
    if text.contains("NVRTC missing") {
        assert!(
            text.contains("nvidia-cuda-nvrtc") && text.contains("CUDA_PATH"),
            "{text}"
        );
    } else {
        assert!(
            text.contains("NVRTC ok") && text.contains("from None"),
            "{text}"
        );
    }
}
