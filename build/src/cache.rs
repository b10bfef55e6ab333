//! The fat binary cache: fat binaries keyed by their content, shared by every profile and every
//! `OUT_DIR` of a target directory (debug, release, `cargo check`, clippy, doc and rust-analyzer
//! each get an `OUT_DIR` of their own; without the cache each would run nvcc again).
//!
//! Where: `CUPRUM_FATBIN_CACHE=<dir>` when set (`off`: no shared cache), else
//! `<target dir>/cuprum-fatbin/`, the target directory found from `OUT_DIR`
//! (`<target dir>[/<triple>]/<profile>/build/<pkg>-<hash>/out`), else `$CARGO_TARGET_DIR` when it is
//! an absolute path. With none of them there is no shared cache (each `OUT_DIR` keeps its own stamps).
//!
//! An entry is two files:
//!
//! | file | what |
//! | --- | --- |
//! | `<key>.fatbin` | the fat binary |
//! | `<key>.stamp` | the text [`key_text`] hashed into `<key>`: checked on every hit, so a hash collision is a miss |
//!
//! The key covers the unit id (a hash of the CUDA C), a hash of the headers, the resolved targets,
//! `nvcc --version` and nvcc's full command line with the paths of one build replaced by
//! placeholders. Both files are written to a temporary name and renamed into place, the fat binary
//! first: two build scripts that run at once never read a partial entry. An entry whose stamp does
//! not match or whose fat binary is unreadable or malformed is a miss, and is replaced.
//! Nothing is ever evicted: `cargo clean` removes the cache with the target directory.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::Error;
use crate::env::{self, Env};

/// The folder under the target directory.
pub const DIR_NAME: &str = "cuprum-fatbin";

/// Where the shared cache is for a build writing to `out_dir`, or `None` for no shared cache.
pub fn dir(env: &Env, out_dir: &Path) -> Option<PathBuf> {
    if let Some(value) = env.var(env::FATBIN_CACHE) {
        return match value.trim() {
            "off" | "0" | "false" | "no" => None,
            _ => env.path(env::FATBIN_CACHE),
        };
    }
    if let Some(target) = target_dir_of(out_dir) {
        return Some(target.join(DIR_NAME));
    }
    env.path(env::CARGO_TARGET_DIR)
        .filter(|p| p.is_absolute())
        .map(|p| p.join(DIR_NAME))
}

/// The target directory of a cargo `OUT_DIR`: `<target>/<profile>/build/<pkg>-<hash>/out` (or with
/// `<target>/<triple>/<profile>` when cross-compiling, recognised by cargo's `CACHEDIR.TAG` in the
/// target directory). `None` when `out_dir` is not shaped like one.
pub fn target_dir_of(out_dir: &Path) -> Option<PathBuf> {
    if out_dir.file_name()? != "out" {
        return None;
    }
    let build = out_dir.parent()?.parent()?;
    if build.file_name()? != "build" {
        return None;
    }
    let above_profile = build.parent()?.parent()?;
    let tagged = |p: &Path| p.join("CACHEDIR.TAG").is_file();
    if !tagged(above_profile) {
        if let Some(up) = above_profile.parent().filter(|p| tagged(p)) {
            return Some(up.to_path_buf());
        }
    }
    Some(above_profile.to_path_buf())
}

/// The text hashed into an entry's key. `command_line` must hold no path of one build (it is the
/// command line with placeholders for the build's folders).
pub fn key_text(
    id: &str,
    headers_hash: &str,
    targets: &[String],
    nvcc_version: &str,
    command_line: &str,
) -> String {
    format!(
        "cuprum-fatbin 1\nunit {id}\nheaders {headers_hash}\ntargets {}\nnvcc {}\ncommand {command_line}\n",
        targets.join(" "),
        nvcc_version.trim().replace('\n', " | "),
    )
}

/// The key of `key_text`: its hash, 16 hex digits.
pub fn key(key_text: &str) -> String {
    cuprum_abi::mangle::unit_id(key_text)
}

/// The fat binary of entry `key` in `dir`, when the entry is whole: its stamp equals `key_text`
/// and its bytes are a well-formed fat binary.
pub fn lookup(dir: &Path, key: &str, key_text: &str) -> Option<Vec<u8>> {
    let stamp = fs::read_to_string(dir.join(format!("{key}.stamp"))).ok()?;
    if stamp != key_text {
        return None;
    }
    let bytes = fs::read(dir.join(format!("{key}.fatbin"))).ok()?;
    crate::compress::targets(&bytes).ok()?;
    Some(bytes)
}

/// Stores `fatbin` as entry `key`: each file written to a temporary name, then renamed into place
/// (the fat binary before the stamp, so a stamp never names a partial fat binary).
pub fn store(dir: &Path, key: &str, key_text: &str, fatbin: &[u8]) -> Result<(), Error> {
    fs::create_dir_all(dir).map_err(|e| Error::io(dir, "create the folder", e))?;
    write_atomic(&dir.join(format!("{key}.fatbin")), fatbin)?;
    write_atomic(&dir.join(format!("{key}.stamp")), key_text.as_bytes())
}

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename: readers see
/// the old file or the new one, never a part.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(
        ".{name}.tmp-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let written = fs::write(&tmp, bytes).and_then(|()| fs::rename(&tmp, path));
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(Error::io(path, "write", e));
    }
    Ok(())
}

/// Puts a cached fat binary at `dest` (an `OUT_DIR` file): unchanged when it already holds these
/// bytes, else a copy written atomically. A copy, not a link: `cargo clean -p` or a rebuilt cache
/// entry must never change a file rustc already embedded.
pub fn install(bytes: &[u8], dest: &Path) -> Result<(), Error> {
    match fs::read(dest) {
        Ok(old) if old == bytes => return Ok(()),
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io(dest, "read", e)),
    }
    if let Some(parent) = dest.parent() {
        fs::create_dir_all(parent).map_err(|e| Error::io(parent, "create the folder", e))?;
    }
    write_atomic(dest, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_target_dir_from_out_dir() {
        let tmp = tempfile::Builder::new()
            .prefix("cuprum-build-cache-")
            .tempdir()
            .unwrap();
        let root = tmp.path();
        let out = root.join("target/debug/build/app-0123abcd/out");
        assert_eq!(target_dir_of(&out), Some(root.join("target")));
        assert_eq!(target_dir_of(&root.join("elsewhere/out")), None);
        assert_eq!(
            target_dir_of(&root.join("target/debug/build/app-0123abcd")),
            None
        );
        // Cross-compiling: the triple's folder sits between; cargo's CACHEDIR.TAG marks the root.
        let cross = root.join("target/x86_64-unknown-linux-gnu/release/build/app-1/out");
        assert_eq!(
            target_dir_of(&cross),
            Some(root.join("target/x86_64-unknown-linux-gnu"))
        );
        fs::create_dir_all(root.join("target")).unwrap();
        fs::write(root.join("target/CACHEDIR.TAG"), "").unwrap();
        assert_eq!(target_dir_of(&cross), Some(root.join("target")));
        assert_eq!(target_dir_of(&out), Some(root.join("target")));

        let mut env = Env::default();
        env.remove(env::FATBIN_CACHE);
        env.remove(env::CARGO_TARGET_DIR);
        assert_eq!(dir(&env, &out), Some(root.join("target/cuprum-fatbin")));
        assert_eq!(dir(&env, Path::new("/tmp/x")), None);
        env.set(env::CARGO_TARGET_DIR, "relative/target");
        assert_eq!(dir(&env, Path::new("/tmp/x")), None);
        env.set(env::CARGO_TARGET_DIR, "/abs/target");
        assert_eq!(
            dir(&env, Path::new("/tmp/x")),
            Some(PathBuf::from("/abs/target/cuprum-fatbin"))
        );
        env.set(env::FATBIN_CACHE, "/shared/fatbins");
        assert_eq!(dir(&env, &out), Some(PathBuf::from("/shared/fatbins")));
        env.set(env::FATBIN_CACHE, "off");
        assert_eq!(dir(&env, &out), None);
    }

    #[test]
    fn a_damaged_or_foreign_entry_is_a_miss() {
        let tmp = tempfile::Builder::new()
            .prefix("cuprum-build-cache-entries-")
            .tempdir()
            .unwrap();
        let dir = tmp.path().join("cache");
        let text = key_text("00ff", "11", &["sm_90".into()], "nvcc 13.0", "nvcc -fatbin");
        let k = key(&text);
        assert_eq!(lookup(&dir, &k, &text), None);
        // A minimal well-formed fat binary: one container with one sm_90 cubin of 8 bytes.
        let mut fb = Vec::new();
        fb.extend(cuprum_abi::fatbin::MAGIC.to_le_bytes());
        fb.extend(1u16.to_le_bytes());
        fb.extend(16u16.to_le_bytes());
        fb.extend(72u64.to_le_bytes());
        let mut entry = vec![0u8; 64];
        entry[0] = 2;
        entry[4] = 64;
        entry[8] = 8;
        entry[28] = 90;
        entry.extend([0xAB; 8]);
        fb.extend(entry);
        store(&dir, &k, &text, &fb).unwrap();
        assert_eq!(lookup(&dir, &k, &text).as_deref(), Some(fb.as_slice()));
        // No temporary file is left behind.
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 2);
        // Another key text with the same key (a collision) is a miss.
        assert_eq!(lookup(&dir, &k, "other"), None);
        // A truncated fat binary is a miss.
        fs::write(dir.join(format!("{k}.fatbin")), &fb[..40]).unwrap();
        assert_eq!(lookup(&dir, &k, &text), None);
    }

    #[test]
    fn the_key_changes_with_every_input() {
        let t = |id: &str, h: &str, targets: &[&str], v: &str, c: &str| {
            key(&key_text(
                id,
                h,
                &targets.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
                v,
                c,
            ))
        };
        let a = t("00ff", "11", &["sm_90"], "13.0", "nvcc -fatbin");
        assert_eq!(a, t("00ff", "11", &["sm_90"], "13.0", "nvcc -fatbin"));
        assert_ne!(a, t("00fe", "11", &["sm_90"], "13.0", "nvcc -fatbin"));
        assert_ne!(a, t("00ff", "12", &["sm_90"], "13.0", "nvcc -fatbin"));
        assert_ne!(
            a,
            t("00ff", "11", &["sm_80", "sm_90"], "13.0", "nvcc -fatbin")
        );
        assert_ne!(a, t("00ff", "11", &["sm_90"], "13.1", "nvcc -fatbin"));
        assert_ne!(
            a,
            t(
                "00ff",
                "11",
                &["sm_90"],
                "13.0",
                "nvcc -fatbin -use_fast_math"
            )
        );
    }
}
