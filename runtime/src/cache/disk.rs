//! The on-disk layer: opaque payloads stored under a [`CacheKey`], one file per entry.
//!
//! Layout: `<dir>/<first two hex digits of the key>/<64 hex digits>.cuprum`, the shard folder made
//! when its first entry is written (so nothing is created until something is stored). With
//! `save_source`, the CUDA source goes next to a new entry as `<64 hex digits>.cu`.
//!
//! An entry file is `MAGIC`, the format version, the key, the payload's length, the payload and a
//! SHA-256 over everything before it. A file that is short, has another key, another version or a
//! wrong checksum is [`Lookup::Corrupt`]: a miss, and the next `put` replaces it.
//!
//! Writes go to a temporary file in the shard folder that is then renamed over the entry, so a
//! reader sees either no entry or a whole one, and concurrent writers of one key (threads or
//! processes) leave one valid entry. Nothing is fsynced: after a crash the checksum catches a torn
//! entry. When a write fails (read-only or missing permissions), the layer logs one warning and
//! stops writing; reads continue.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::key::CacheKey;
use super::sha256::Sha256;

const MAGIC: &[u8; 8] = b"CUPRUMKC";
const FORMAT: u32 = 1;
const HEADER_LEN: usize = 8 + 4 + 32 + 8;
const CHECKSUM_LEN: usize = 32;
/// File extension of an entry.
pub const ENTRY_EXT: &str = "cuprum";
/// File extension of a saved source (`CUPY_CACHE_SAVE_CUDA_SOURCE=1`).
pub const SOURCE_EXT: &str = "cu";
const TMP_PREFIX: &str = ".tmp.";

/// The result of a lookup.
#[derive(Debug, PartialEq, Eq)]
pub enum Lookup {
    /// A valid entry's payload.
    Hit(Vec<u8>),
    /// No entry (or the directory does not exist).
    Miss,
    /// An entry exists but is damaged; treat as a miss (the next `put` rewrites it).
    Corrupt,
}

/// The on-disk cache in one directory.
#[derive(Debug)]
pub struct DiskCache {
    dir: PathBuf,
    save_source: bool,
    unwritable: AtomicBool,
}

impl DiskCache {
    /// A cache in `dir`; nothing is created until the first `put`.
    pub fn new(dir: impl Into<PathBuf>) -> DiskCache {
        DiskCache {
            dir: dir.into(),
            save_source: false,
            unwritable: AtomicBool::new(false),
        }
    }

    /// Whether `put` also saves the source it is given (`CUPY_CACHE_SAVE_CUDA_SOURCE`).
    pub fn with_save_source(mut self, save: bool) -> DiskCache {
        self.save_source = save;
        self
    }

    /// The cache directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// False once a write has failed (then the layer only reads).
    pub fn is_writable(&self) -> bool {
        !self.unwritable.load(Ordering::Relaxed)
    }

    fn shard(&self, key: &CacheKey) -> PathBuf {
        self.dir.join(&key.hex()[..2])
    }

    /// Where the entry for `key` lives.
    pub fn entry_path(&self, key: &CacheKey) -> PathBuf {
        self.shard(key).join(format!("{}.{ENTRY_EXT}", key.hex()))
    }

    /// Where the saved source for `key` lives.
    pub fn source_path(&self, key: &CacheKey) -> PathBuf {
        self.shard(key).join(format!("{}.{SOURCE_EXT}", key.hex()))
    }

    /// Reads and checks the entry for `key`.
    pub fn get(&self, key: &CacheKey) -> Lookup {
        match fs::read(self.entry_path(key)) {
            Ok(bytes) => match decode(key, &bytes) {
                Some(payload) => Lookup::Hit(payload.to_vec()),
                None => Lookup::Corrupt,
            },
            // Missing, or unreadable (permissions, a file where a folder should be, ...): a miss;
            // the write reports the problem if there is one.
            Err(_) => Lookup::Miss,
        }
    }

    /// Stores `payload` under `key` (replacing any entry), and `source` next to it when saving
    /// sources is on. Returns whether the entry was written. The first failure logs a warning and
    /// turns writing off for this cache.
    pub fn put(&self, key: &CacheKey, payload: &[u8], source: Option<&str>) -> bool {
        if !self.is_writable() {
            return false;
        }
        match self.try_put(key, payload, source) {
            Ok(()) => true,
            Err(e) => {
                if !self.unwritable.swap(true, Ordering::Relaxed) {
                    log::warn!(
                        "kernel cache directory {} is not writable ({e}); compiled kernels stay in \
                         memory for the rest of this process. Set CUPY_CACHE_DIR to a writable \
                         directory, or CUPY_CACHE_IN_MEMORY=1 to silence this",
                        self.dir.display()
                    );
                }
                false
            }
        }
    }

    fn try_put(&self, key: &CacheKey, payload: &[u8], source: Option<&str>) -> io::Result<()> {
        let shard = self.shard(key);
        fs::create_dir_all(&shard).map_err(|e| with_path(e, &shard))?;
        let bytes = encode(key, payload);
        write_atomically(&shard, &self.entry_path(key), &bytes)?;
        if self.save_source {
            if let Some(src) = source {
                write_atomically(&shard, &self.source_path(key), src.as_bytes())?;
            }
        }
        Ok(())
    }
}

fn with_path(e: io::Error, path: &Path) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

/// Writes `bytes` to a fresh temporary file in `folder`, then renames it to `dest`.
fn write_atomically(folder: &Path, dest: &Path, bytes: &[u8]) -> io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let name = dest.file_name().and_then(|s| s.to_str()).unwrap_or("entry");
    let tmp = folder.join(format!("{TMP_PREFIX}{name}.{}.{n}", std::process::id()));
    let result = (|| {
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| with_path(e, &tmp))?;
        f.write_all(bytes).map_err(|e| with_path(e, &tmp))?;
        drop(f);
        fs::rename(&tmp, dest).map_err(|e| with_path(e, dest))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

fn encode(key: &CacheKey, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len() + CHECKSUM_LEN);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(payload);
    let sum = Sha256::digest(&out);
    out.extend_from_slice(&sum);
    out
}

fn decode<'a>(key: &CacheKey, bytes: &'a [u8]) -> Option<&'a [u8]> {
    if bytes.len() < HEADER_LEN + CHECKSUM_LEN || &bytes[..8] != MAGIC {
        return None;
    }
    let (body, sum) = bytes.split_at(bytes.len() - CHECKSUM_LEN);
    if u32::from_le_bytes(body[8..12].try_into().ok()?) != FORMAT || &body[12..44] != key.as_bytes()
    {
        return None;
    }
    let len = u64::from_le_bytes(body[44..52].try_into().ok()?);
    if len != (body.len() - HEADER_LEN) as u64 || Sha256::digest(body) != sum {
        return None;
    }
    Some(&body[HEADER_LEN..])
}

/// What a cache directory holds (cuprum's files only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// Entry files.
    pub entries: u64,
    /// Saved `.cu` sources.
    pub sources: u64,
    /// Leftover temporary files (from a writer that died mid-write).
    pub temporaries: u64,
    /// Bytes of all of the above.
    pub bytes: u64,
}

/// Which of cuprum's cache files `name` is, if any.
fn classify(name: &str) -> Option<FileKind> {
    if name.starts_with(TMP_PREFIX) {
        return Some(FileKind::Temporary);
    }
    let (stem, ext) = name.rsplit_once('.')?;
    CacheKey::from_hex(stem)?;
    match ext {
        ENTRY_EXT => Some(FileKind::Entry),
        SOURCE_EXT => Some(FileKind::Source),
        _ => None,
    }
}

enum FileKind {
    Entry,
    Source,
    Temporary,
}

fn is_shard_name(name: &str) -> bool {
    name.len() == 2 && name.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Visits cuprum's files in `dir` (shard folders only: other files, such as CuPy's own cache
/// entries in a shared directory, are never touched). A missing directory is empty.
fn walk(
    dir: &Path,
    mut visit: impl FnMut(&Path, FileKind, u64) -> io::Result<()>,
) -> io::Result<()> {
    let top = match fs::read_dir(dir) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(with_path(e, dir)),
    };
    for shard in top {
        let shard = shard?;
        let name = shard.file_name();
        if !name.to_str().is_some_and(is_shard_name) || !shard.file_type()?.is_dir() {
            continue;
        }
        let path = shard.path();
        for f in fs::read_dir(&path).map_err(|e| with_path(e, &path))? {
            let f = f?;
            let Some(kind) = f.file_name().to_str().and_then(classify) else {
                continue;
            };
            let len = f.metadata().map(|m| m.len()).unwrap_or(0);
            visit(&f.path(), kind, len)?;
        }
    }
    Ok(())
}

fn count(u: &mut Usage, kind: &FileKind, len: u64) {
    match kind {
        FileKind::Entry => u.entries += 1,
        FileKind::Source => u.sources += 1,
        FileKind::Temporary => u.temporaries += 1,
    }
    u.bytes += len;
}

/// What `dir` holds.
pub fn usage(dir: &Path) -> io::Result<Usage> {
    let mut u = Usage::default();
    walk(dir, |_, kind, len| {
        count(&mut u, &kind, len);
        Ok(())
    })?;
    Ok(u)
}

/// Deletes cuprum's entries, sources and temporaries from `dir`, and shard folders left empty.
/// Returns what was deleted.
pub fn clear(dir: &Path) -> io::Result<Usage> {
    let mut u = Usage::default();
    walk(dir, |path, kind, len| {
        match fs::remove_file(path) {
            Ok(()) => count(&mut u, &kind, len),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(with_path(e, path)),
        }
        Ok(())
    })?;
    if let Ok(top) = fs::read_dir(dir) {
        for shard in top.flatten() {
            if shard.file_name().to_str().is_some_and(is_shard_name) {
                // Fails (and is left) when not empty.
                let _ = fs::remove_dir(shard.path());
            }
        }
    }
    Ok(u)
}
