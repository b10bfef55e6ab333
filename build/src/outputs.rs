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
//! | `include/cuprum/*.h` | the headers generated code includes |

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

/// Writes every header of `cuprum_abi::headers::HEADERS` under `include_dir` (each only when
/// its bytes change).
pub fn write_headers(include_dir: &Path) -> Result<(), Error> {
    for (name, text) in cuprum_abi::headers::HEADERS {
        write_if_changed(&include_dir.join(name), text.as_bytes())?;
    }
    Ok(())
}

/// The stamp of a fat binary: everything that decides its bytes, as text (readable when debugging
/// a rebuild). The unit's id covers its source; the headers are hashed because they are included.
pub fn stamp(id: &str, nvcc_version: &str, command_line: &str) -> String {
    let headers: String = cuprum_abi::headers::HEADERS
        .iter()
        .map(|(n, t)| format!("{n}\n{t}\n"))
        .collect();
    format!(
        "cuprum-build stamp 1\nunit {id}\nheaders {}\nnvcc {}\ncommand {command_line}\n",
        cuprum_abi::mangle::unit_id(&headers),
        nvcc_version.trim().replace('\n', " | "),
    )
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

    #[test]
    fn writes_only_changed_bytes() {
        let dir = std::env::temp_dir().join(format!("cuprum-build-outputs-{}", std::process::id()));
        let file = dir.join("a/b.txt");
        assert!(write_if_changed(&file, b"one").unwrap());
        assert!(!write_if_changed(&file, b"one").unwrap());
        assert!(write_if_changed(&file, b"two").unwrap());
        assert_eq!(fs::read(&file).unwrap(), b"two");
        fs::write(dir.join("a/c.rs"), "").unwrap();
        fs::create_dir_all(dir.join("a/sub")).unwrap();
        fs::write(dir.join("a/sub/d.rs"), "").unwrap();
        assert_eq!(
            rust_files(&dir).unwrap(),
            [dir.join("a/c.rs"), dir.join("a/sub/d.rs")]
        );
        fs::remove_dir_all(&dir).unwrap();
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
