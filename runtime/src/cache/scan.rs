//! What a cache directory holds, entry by entry: [`usage`] counts the valid and the damaged
//! entries, [`verify`] lists the damaged ones (and removes them when asked), [`clear`] deletes.
//!
//! Only cuprum's files are touched: in the two-hex-digit shard folders, files named like an entry,
//! a saved source or a temporary. Anything else, such as CuPy's own cache files in a shared
//! directory, is never read or deleted. An entry is checked as a lookup checks it (`disk.rs`,
//! `format.rs`), and its payload must also be a compiled image; a non-regular file with an entry's
//! name is damaged and never opened.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::disk::{ENTRY_EXT, SOURCE_EXT, TMP_PREFIX, read_entry_file, with_path};
use super::entry::CompiledImage;
use super::format::{self, Damage};
use super::key::CacheKey;

/// What a cache directory holds (cuprum's files only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// Valid entries ([`usage`]); every entry file removed ([`clear`]).
    pub entries: u64,
    /// Entries that fail their checks ([`verify`] lists them).
    pub damaged: u64,
    /// Saved `.cu` sources.
    pub sources: u64,
    /// Temporary files: being written now, or left by a writer that died mid-write.
    pub temporaries: u64,
    /// Bytes of all of the above.
    pub bytes: u64,
}

/// A damaged entry that [`verify`] found.
#[derive(Debug)]
pub struct DamagedEntry {
    /// The entry's file.
    pub path: PathBuf,
    /// What is wrong with it.
    pub damage: Damage,
    /// `None`: removal not asked for; else whether removing it worked.
    pub removed: Option<io::Result<()>>,
}

/// What [`verify`] found.
#[derive(Debug, Default)]
pub struct Verified {
    /// Entries that passed every check.
    pub valid: u64,
    /// Entries that did not, in the order they were found.
    pub damaged: Vec<DamagedEntry>,
}

/// What [`clear`] did.
#[derive(Debug, Default)]
pub struct Cleared {
    /// What was deleted.
    pub removed: Usage,
    /// Files that could not be deleted, with why.
    pub failed: Vec<io::Error>,
}

enum FileKind {
    Entry(CacheKey),
    Source,
    Temporary,
}

/// Which of cuprum's cache files `name` is, if any.
fn classify(name: &str) -> Option<FileKind> {
    if name.starts_with(TMP_PREFIX) {
        return Some(FileKind::Temporary);
    }
    let (stem, ext) = name.rsplit_once('.')?;
    let key = CacheKey::from_hex(stem)?;
    match ext {
        ENTRY_EXT => Some(FileKind::Entry(key)),
        SOURCE_EXT => Some(FileKind::Source),
        _ => None,
    }
}

fn is_shard_name(name: &str) -> bool {
    name.len() == 2 && name.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Visits cuprum's files in `dir` with their kind and size (0 for anything but a regular file).
/// A missing directory is empty; a shard folder removed meanwhile (a concurrent `clear`) is
/// skipped.
fn walk(dir: &Path, mut visit: impl FnMut(&Path, FileKind, u64)) -> io::Result<()> {
    let top = match fs::read_dir(dir) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(with_path(e, dir)),
    };
    for shard in top {
        let shard = shard.map_err(|e| with_path(e, dir))?;
        let name = shard.file_name();
        if !name.to_str().is_some_and(is_shard_name) || !shard.file_type().is_ok_and(|t| t.is_dir())
        {
            continue;
        }
        let path = shard.path();
        let files = match fs::read_dir(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(with_path(e, &path)),
        };
        for f in files {
            let f = f.map_err(|e| with_path(e, &path))?;
            let Some(kind) = f.file_name().to_str().and_then(classify) else {
                continue;
            };
            let len = f
                .metadata()
                .ok()
                .filter(|m| m.is_file())
                .map_or(0, |m| m.len());
            visit(&f.path(), kind, len);
        }
    }
    Ok(())
}

/// Checks the entry file at `path`, read for `key`, as a lookup would, and its payload; `None`
/// when it is gone.
fn check_entry(path: &Path, key: &CacheKey) -> Option<Result<(), Damage>> {
    match read_entry_file(path) {
        Ok(None) => None,
        Err(damage) => Some(Err(damage)),
        Ok(Some(bytes)) => Some(match format::decode(key, &bytes) {
            Ok(payload) => CompiledImage::decode(payload)
                .map(|_| ())
                .ok_or(Damage::Payload),
            Err(damage) => Err(damage),
        }),
    }
}

/// Deletes one of cuprum's files (an empty directory with its name too); gone already is done.
fn remove(path: &Path) -> io::Result<()> {
    let result = match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => fs::remove_dir(path),
        Ok(_) => fs::remove_file(path),
        Err(e) => Err(e),
    };
    match result {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(with_path(e, path)),
        _ => Ok(()),
    }
}

/// What `dir` holds, every entry checked (so this reads every entry).
pub fn usage(dir: &Path) -> io::Result<Usage> {
    let mut u = Usage::default();
    walk(dir, |path, kind, len| {
        match kind {
            FileKind::Entry(key) => match check_entry(path, &key) {
                None => return,
                Some(Ok(())) => u.entries += 1,
                Some(Err(_)) => u.damaged += 1,
            },
            FileKind::Source => u.sources += 1,
            FileKind::Temporary => u.temporaries += 1,
        }
        u.bytes += len;
    })?;
    Ok(u)
}

/// Checks every entry in `dir`; with `remove`, deletes the damaged ones.
pub fn verify(dir: &Path, remove_damaged: bool) -> io::Result<Verified> {
    let mut v = Verified::default();
    walk(dir, |path, kind, _| {
        let FileKind::Entry(key) = kind else {
            return;
        };
        match check_entry(path, &key) {
            None => {}
            Some(Ok(())) => v.valid += 1,
            Some(Err(damage)) => v.damaged.push(DamagedEntry {
                path: path.to_path_buf(),
                damage,
                removed: remove_damaged.then(|| remove(path)),
            }),
        }
    })?;
    Ok(v)
}

/// Deletes cuprum's entries, sources and temporaries from `dir`, and shard folders left empty.
/// A program writing meanwhile is not disturbed: its write makes the folder and the temporary
/// file again (`disk.rs`). Files that cannot be deleted are listed, and the others deleted.
pub fn clear(dir: &Path) -> io::Result<Cleared> {
    let mut c = Cleared::default();
    walk(dir, |path, kind, len| {
        if let Err(e) = remove(path) {
            c.failed.push(e);
            return;
        }
        let u = &mut c.removed;
        match kind {
            FileKind::Entry(_) => u.entries += 1,
            FileKind::Source => u.sources += 1,
            FileKind::Temporary => u.temporaries += 1,
        }
        u.bytes += len;
    })?;
    if let Ok(top) = fs::read_dir(dir) {
        for shard in top.flatten() {
            if shard.file_name().to_str().is_some_and(is_shard_name) {
                // Fails (and is left) when not empty.
                let _ = fs::remove_dir(shard.path());
            }
        }
    }
    Ok(c)
}
