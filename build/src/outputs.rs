//! Files under `OUT_DIR`: written only when their bytes change (so cargo and rustc see no change
//! when there is none), and the stamps that let an unchanged kernel skip nvcc.
//!
//! For a unit `<id>` (see `cuprum_abi::mangle`), `OUT_DIR/cuprum/` holds:
//!
//! | file | what |
//! | --- | --- |
//! | `<id>.cu` | the generated CUDA C, exactly `Unit::source` |
//! | `<id>.fatbin` | nvcc's fat binary (only when nvcc ran) |
//! | `<id>.targets` | the fat binary's targets, one per line (`sm_80`, `compute_90`) |
//! | `<id>.stamp` | what produced the fat binary: the source, headers, nvcc and its command line |
//! | `<id>.build` | what this build did for the unit and what it cost ([`build_info`]) |
//! | `<plain>.lines` | for a unit with `#line` directives: its `<id>`, named by the id of the same unit without them ([`write_lines_index`]) |
//! | `include/cuprum/*.h` | the headers generated code includes |
//!
//! The fat binary cache shared by every `OUT_DIR` is described in [`crate::cache`].

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::Error;

/// Writes `bytes` to `path` unless it already holds exactly them; creates parent folders.
/// Returns whether the file was written.
pub fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<bool, Error> {
    match fs::read(path) {
        Ok(old) if old == bytes => return Ok(false),
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io(path, "read", e)),
    }
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(|e| Error::io(parent, "create the folder", e))?;
    }
    fs::write(path, bytes).map_err(|e| Error::io(path, "write", e))?;
    Ok(true)
}

/// For a unit written with `#line` directives, `cuprum/<plain>.lines` (`mangle::lines_file`) holds
/// its id, `<plain>` being the id of the unit without them: a macro can write only that one (the
/// compiler's spans carry no lines inside a macro), and finds the unit the build compiled through
/// it. A unit without directives removes the file an earlier build may have left
/// (`CUPRUM_LINEINFO=0` after a build with line info).
pub fn write_lines_index(out_dir: &Path, source: &str) -> Result<(), Error> {
    let id = cuprum_abi::mangle::unit_id(source);
    let plain = cuprum_abi::mangle::unit_id(&cuprum_abi::unit::without_line_directives(source));
    let index = out_dir.join(cuprum_abi::mangle::lines_file(&plain));
    if plain == id {
        remove(&index)
    } else {
        write_if_changed(&index, id.as_bytes()).map(|_| ())
    }
}

/// Writes every header of `cuprum_abi::headers::HEADERS` under `include_dir` (each only when
/// its bytes change), as `cuprum_abi::headers::as_written` gives it.
pub fn write_headers(include_dir: &Path) -> Result<(), Error> {
    for (name, text) in cuprum_abi::headers::HEADERS {
        write_if_changed(&include_dir.join(name), cuprum_abi::headers::as_written(name, text).as_bytes())?;
    }
    Ok(())
}

/// A hash of every header generated code may include (16 hex digits).
pub fn headers_hash() -> String {
    let headers: String = cuprum_abi::headers::HEADERS
        .iter()
        .map(|(n, t)| format!("{n}\n{t}\n"))
        .collect();
    cuprum_abi::mangle::unit_id(&headers)
}

/// The stamp of a fat binary: everything that decides its bytes, as text (readable when debugging
/// a rebuild). The unit's id covers its source; the headers are hashed because they are included.
pub fn stamp(id: &str, nvcc_version: &str, command_line: &str) -> String {
    format!(
        "cuprum-build stamp 1\nunit {id}\nheaders {}\nnvcc {}\ncommand {command_line}\n",
        headers_hash(),
        nvcc_version.trim().replace('\n', " | "),
    )
}

/// The text of a `<id>.build` file: what one build did for one unit. Line-based, one
/// `key value` per line (the value runs to the end of the line), after a first line naming the
/// format; readers skip keys they do not know:
///
/// ```text
/// cuprum-build 1
/// status compiled
/// targets sm_80 sm_90 compute_90
/// instances 3
/// fatbin_bytes 84016
/// nvcc_seconds 0.812
/// nvcc 13.0.88
/// ```
///
/// `status`: `compiled` (nvcc ran), `cached` (the fat binary came from the shared cache),
/// `up-to-date` (this `OUT_DIR` already had it) or `no-nvcc` (no fat binary). `targets`: read back
/// from the fat binary, space-separated, empty without one. `instances`: the kernel entry points
/// the unit defines. `nvcc_seconds`: the time nvcc ran in this build (`0` unless `compiled`).
/// `nvcc`: its version (absent without nvcc). The runtime parses it with
/// `cuprum_runtime::audit::BuildInfo::parse`.
pub fn build_info(
    status: crate::Status,
    targets: &[String],
    instances: usize,
    fatbin_bytes: u64,
    nvcc_seconds: f64,
    nvcc_version: Option<&str>,
) -> String {
    let mut text = format!(
        "cuprum-build 1\nstatus {}\ntargets {}\ninstances {instances}\nfatbin_bytes {fatbin_bytes}\nnvcc_seconds {nvcc_seconds:.3}\n",
        status.name(),
        targets.join(" "),
    );
    if let Some(v) = nvcc_version {
        text.push_str(&format!("nvcc {}\n", short_version(v)));
    }
    text
}

/// `13.0.88` from `nvcc --version` (its `Cuda compilation tools, release 13.0, V13.0.88` line);
/// else the output's last line.
pub fn short_version(version: &str) -> String {
    let line = version
        .lines()
        .find(|l| l.contains("release"))
        .or_else(|| version.lines().rfind(|l| !l.trim().is_empty()))
        .unwrap_or("unknown")
        .trim();
    match line.rsplit([' ', ',']).next() {
        Some(v) if v.starts_with('V') && v.len() > 1 => v[1..].to_owned(),
        _ => line.to_owned(),
    }
}

/// Whether the fat binary at `fatbin` exists and its stamp at `stamp_path` equals `stamp`.
pub fn up_to_date(fatbin: &Path, stamp_path: &Path, stamp: &str) -> bool {
    fatbin.is_file() && fs::read_to_string(stamp_path).is_ok_and(|s| s == stamp)
}

/// Removes `path` if it exists.
pub fn remove(path: &Path) -> Result<(), Error> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(path, "remove", e)),
    }
}

/// Every `.rs` file under `dir`, recursively, sorted by path.
pub fn rust_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), Error> {
        let entries = fs::read_dir(dir).map_err(|e| Error::io(dir, "read the folder", e))?;
        for entry in entries {
            let path = entry
                .map_err(|e| Error::io(dir, "read the folder", e))?
                .path();
            if path.is_dir() {
                walk(&path, out)?;
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(dir, &mut out)?;
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cuprum_abi::mangle::build_file;

    #[test]
    fn writes_only_changed_bytes() {
        let tmp = tempfile::Builder::new()
            .prefix("cuprum-build-outputs-")
            .tempdir()
            .unwrap();
        let dir = tmp.path();
        let file = dir.join("a/b.txt");
        assert!(write_if_changed(&file, b"one").unwrap());
        assert!(!write_if_changed(&file, b"one").unwrap());
        assert!(write_if_changed(&file, b"two").unwrap());
        assert_eq!(fs::read(&file).unwrap(), b"two");
        fs::write(dir.join("a/c.rs"), "").unwrap();
        fs::create_dir_all(dir.join("a/sub")).unwrap();
        fs::write(dir.join("a/sub/d.rs"), "").unwrap();
        assert_eq!(
            rust_files(dir).unwrap(),
            [dir.join("a/c.rs"), dir.join("a/sub/d.rs")]
        );
    }

    #[test]
    fn build_info_is_line_based() {
        let text = build_info(
            crate::Status::Compiled,
            &["sm_80".into(), "compute_90".into()],
            3,
            84016,
            0.8124,
            Some("nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 13.0, V13.0.88\nBuild cuda_13.0\n"),
        );
        assert_eq!(
            text,
            "cuprum-build 1\nstatus compiled\ntargets sm_80 compute_90\ninstances 3\nfatbin_bytes 84016\nnvcc_seconds 0.812\nnvcc 13.0.88\n"
        );
        let none = build_info(crate::Status::NoNvcc, &[], 2, 0, 0.0, None);
        assert_eq!(
            none,
            "cuprum-build 1\nstatus no-nvcc\ntargets \ninstances 2\nfatbin_bytes 0\nnvcc_seconds 0.000\n"
        );
        assert_eq!(build_file("00ff"), "cuprum/00ff.build");
        assert_eq!(short_version("odd nvcc 1.2"), "odd nvcc 1.2");
    }

    #[test]
    fn stamp_changes_with_its_inputs() {
        let a = stamp("00ff", "nvcc 13.0", "nvcc -fatbin x.cu");
        assert_ne!(a, stamp("00fe", "nvcc 13.0", "nvcc -fatbin x.cu"));
        assert_ne!(a, stamp("00ff", "nvcc 13.1", "nvcc -fatbin x.cu"));
        assert_ne!(
            a,
            stamp("00ff", "nvcc 13.0", "nvcc -fatbin -use_fast_math x.cu")
        );
    }
}
