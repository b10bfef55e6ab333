//! The on-disk layer: opaque payloads stored under a [`CacheKey`], one file per entry.
//!
//! Layout: `<dir>/<first two hex digits of the key>/<64 hex digits>.cuprum`, the shard folder made
//! when its first entry is written (so nothing is created until something is stored). With
//! `save_source`, the CUDA source goes next to a new entry as `<64 hex digits>.cu`. The file's
//! format is in `format.rs`; an entry that fails its checks is [`Lookup::Corrupt`]: a miss, and
//! the next `put` replaces it.
//!
//! Reads open regular files only. Anything else with an entry's name (a FIFO, a directory, a
//! device) is [`Damage::NotAFile`] without being opened: opening a FIFO for reading would block
//! until some process opens it for writing.
//!
//! Writes go to a temporary file in the shard folder that is then renamed over the entry, so a
//! reader sees either no entry or a whole one, and concurrent writers of one key (threads or
//! processes) leave one valid entry. When the folder or the temporary file disappears mid-write
//! (`cuprum cache clear` in another process), the writer makes them again and rewrites, up to
//! `WRITE_TRIES` times. Nothing is fsynced: after a crash the checksum catches a torn entry.
//!
//! A failed write costs one entry, not the cache: that kernel stays in memory and the next entry is
//! written as usual. Only the errors that fail every write turn writing off for the rest of the
//! process: permission denied and a read-only file system. Reads continue either way. Each cause is
//! warned about once (`warn.rs`).

use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::format::{self, Damage};
use super::key::CacheKey;
use super::warn::{Cause, Warnings};

/// File extension of an entry.
pub const ENTRY_EXT: &str = "cuprum";
/// File extension of a saved source (`CUPY_CACHE_SAVE_CUDA_SOURCE=1`).
pub const SOURCE_EXT: &str = "cu";
/// Name prefix of a temporary file being written.
pub const TMP_PREFIX: &str = ".tmp.";
/// How many times one write is tried when its folder or temporary file vanishes under it.
const WRITE_TRIES: usize = 3;

/// The result of a lookup.
#[derive(Debug, PartialEq, Eq)]
pub enum Lookup {
    /// A valid entry's payload.
    Hit(Vec<u8>),
    /// No entry (or the directory does not exist).
    Miss,
    /// An entry exists but is damaged in this way; treat as a miss (the next `put` rewrites it).
    Corrupt(Damage),
}

/// The on-disk cache in one directory.
#[derive(Debug)]
pub struct DiskCache {
    dir: PathBuf,
    save_source: bool,
    unwritable: AtomicBool,
    warnings: Warnings,
    /// Errors the next writes fail with, instead of touching the disk (tests of the
    /// classification: root ignores permissions, and a read-only file system needs a mount).
    #[cfg(test)]
    injected: std::sync::Mutex<Vec<io::ErrorKind>>,
}

impl DiskCache {
    /// A cache in `dir`; nothing is created until the first `put`.
    pub fn new(dir: impl Into<PathBuf>) -> DiskCache {
        DiskCache {
            dir: dir.into(),
            save_source: false,
            unwritable: AtomicBool::new(false),
            warnings: Warnings::new(false),
            #[cfg(test)]
            injected: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Whether `put` also saves the source it is given (`CUPY_CACHE_SAVE_CUDA_SOURCE`).
    pub fn with_save_source(mut self, save: bool) -> DiskCache {
        self.save_source = save;
        self
    }

    /// Whether warnings stay off stderr (`CUPRUM_CACHE_QUIET`); they still go to `log`.
    pub fn with_quiet(mut self, quiet: bool) -> DiskCache {
        self.warnings = Warnings::new(quiet);
        self
    }

    /// The cache directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// False once a write has failed for lack of permission or on a read-only file system (then
    /// the layer only reads). Other failures cost only the entry being written.
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
        match read_entry_file(&self.entry_path(key)) {
            Ok(Some(bytes)) => match format::decode(key, &bytes) {
                Ok(payload) => Lookup::Hit(payload.to_vec()),
                Err(damage) => Lookup::Corrupt(damage),
            },
            Ok(None) => Lookup::Miss,
            Err(damage) => Lookup::Corrupt(damage),
        }
    }

    /// Stores `payload` under `key` (replacing any entry), and `source` next to it when saving
    /// sources is on. Returns whether the entry was written. A failure is warned about once per
    /// cause; it turns writing off only for permission or read-only errors.
    pub fn put(&self, key: &CacheKey, payload: &[u8], source: Option<&str>) -> bool {
        if !self.is_writable() {
            return false;
        }
        if let Err(e) = self.write(&self.entry_path(key), &format::encode(key, payload)) {
            self.write_failed(&e);
            return false;
        }
        if let (true, Some(src)) = (self.save_source, source) {
            if let Err(e) = self.write(&self.source_path(key), src.as_bytes()) {
                self.write_failed(&e);
            }
        }
        true
    }

    fn write(&self, dest: &Path, bytes: &[u8]) -> io::Result<()> {
        #[cfg(test)]
        if let Some(kind) = crate::sync::lock(&self.injected).pop()
        {
            return Err(io::Error::new(
                kind,
                format!("{}: injected", dest.display()),
            ));
        }
        write_atomically(dest, bytes)
    }

    /// Warns about a failed write (`e` names its path), and turns writing off when every later
    /// write would fail too.
    fn write_failed(&self, e: &io::Error) {
        let kind = e.kind();
        let off = match kind {
            io::ErrorKind::PermissionDenied => Some("permission denied"),
            io::ErrorKind::ReadOnlyFilesystem => Some("the file system is read-only"),
            _ => None,
        };
        if let Some(why) = off {
            self.unwritable.store(true, Ordering::Relaxed);
            self.warnings.warn(Cause::WritingOff, || {
                format!(
                    "kernel cache: cannot write to {} ({why}: {e}); this process writes no more \
                     entries and keeps the kernels it compiles in memory. Make the directory \
                     writable, set CUPY_CACHE_DIR to a writable directory, or set \
                     CUPY_CACHE_IN_MEMORY=1 to not use the disk",
                    self.dir.display()
                )
            });
            return;
        }
        let hint = match kind {
            io::ErrorKind::StorageFull => format!(
                "; the file system holding {} is full: free space, or run `cuprum cache clear`",
                self.dir.display()
            ),
            io::ErrorKind::IsADirectory => "; a directory has the entry's name: remove it \
                                            (`cuprum cache verify --remove` removes an empty one)"
                .to_string(),
            io::ErrorKind::NotADirectory | io::ErrorKind::AlreadyExists => format!(
                "; a file is where a folder of {} should be: remove it, or set CUPY_CACHE_DIR \
                 to another directory",
                self.dir.display()
            ),
            io::ErrorKind::NotFound => format!(
                "; {} kept disappearing while the entry was written (is `cuprum cache clear` \
                 running in a loop?)",
                self.dir.display()
            ),
            _ => String::new(),
        };
        self.warnings.warn(Cause::WriteFailed(kind), || {
            format!(
                "kernel cache: an entry could not be written: {e}{hint}. Its kernel stays in \
                 memory for this process; other entries are still written"
            )
        });
    }

    /// Reports a damaged entry found by a lookup (once per kind of damage).
    pub(crate) fn warn_damaged(&self, key: &CacheKey, damage: &Damage) {
        self.warnings
            .warn(Cause::Damaged(std::mem::discriminant(damage)), || {
                format!(
                    "kernel cache entry {} is damaged ({damage}); its kernel is compiled again \
                     and the entry rewritten. `cuprum cache verify` checks every entry \
                     (`--remove` deletes the damaged ones)",
                    self.entry_path(key).display()
                )
            });
    }

    /// Errors the next writes fail with (last one first), instead of touching the disk.
    #[cfg(test)]
    pub(crate) fn inject_write_errors(&self, kinds: &[io::ErrorKind]) {
        let mut v = crate::sync::lock(&self.injected);
        v.extend(kinds.iter().rev());
    }

    /// The causes warned about so far.
    #[cfg(test)]
    pub(crate) fn warned(&self) -> Vec<Cause> {
        self.warnings.seen()
    }
}

/// An I/O error whose message starts with `path`.
pub(super) fn with_path(e: io::Error, path: &Path) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

/// What a non-regular file is, in words.
fn describe(t: fs::FileType) -> &'static str {
    if t.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_block_device() || t.is_char_device() {
            return "a device";
        }
    }
    "a special file"
}

/// The bytes of the entry file at `path` (symbolic links followed); `Ok(None)` when there is
/// none. A non-regular file is `Damage::NotAFile` and is not opened (a FIFO would block the open).
/// The file is opened non-blocking (on Unix), so that a FIFO swapped in between the check and the
/// open does not block either, and the opened file's type is checked again.
pub(super) fn read_entry_file(path: &Path) -> Result<Option<Vec<u8>>, Damage> {
    let unreadable = |e: io::Error| match e.kind() {
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory => Ok(None),
        _ => Err(Damage::Unreadable(e.to_string())),
    };
    let meta = match fs::metadata(path) {
        Ok(m) => m,
        Err(e) => return unreadable(e),
    };
    if !meta.is_file() {
        return Err(Damage::NotAFile(describe(meta.file_type())));
    }
    let mut f = match open_nonblocking(path) {
        Ok(f) => f,
        Err(e) => return unreadable(e),
    };
    let meta = match f.metadata() {
        Ok(m) => m,
        Err(e) => return unreadable(e),
    };
    if !meta.is_file() {
        return Err(Damage::NotAFile(describe(meta.file_type())));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    match f.read_to_end(&mut bytes) {
        Ok(_) => Ok(Some(bytes)),
        Err(e) => unreadable(e),
    }
}

/// Opens `path` for reading without blocking on a FIFO (`O_NONBLOCK`, which changes nothing for
/// the regular files that are read).
fn open_nonblocking(path: &Path) -> io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    options.open(path)
}

/// Writes `bytes` to `dest` through a fresh temporary file in its folder, making the folder when
/// missing. Tried again when the folder or the temporary vanishes meanwhile (`NotFound`), or the
/// temporary's name is taken (`AlreadyExists`: left by a crashed process with the same id).
fn write_atomically(dest: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut tries = 0;
    loop {
        tries += 1;
        match write_once(dest, bytes) {
            Err(e)
                if tries < WRITE_TRIES
                    && matches!(
                        e.kind(),
                        io::ErrorKind::NotFound | io::ErrorKind::AlreadyExists
                    ) => {}
            result => return result,
        }
    }
}

// Not tempfile's NamedTempFile: it would add a dependency to every program for these few lines.
fn write_once(dest: &Path, bytes: &[u8]) -> io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let folder = dest.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(folder).map_err(|e| with_path(e, folder))?;
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
        #[cfg(test)]
        tests::before_rename(folder);
        fs::rename(&tmp, dest).map_err(|e| with_path(e, dest))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    type Hook = Box<dyn FnMut(&Path)>;

    /// The open itself does not block on a FIFO (what a FIFO swapped in after the type check
    /// would otherwise do): it returns at once, and the type check after it refuses the file.
    #[cfg(unix)]
    #[test]
    fn opening_a_fifo_does_not_block() {
        let dir = tempfile::Builder::new()
            .prefix("cuprum-fifo-open-")
            .tempdir()
            .unwrap();
        let fifo = dir.path().join("entry");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs");
        assert!(made.success());
        let (tx, rx) = std::sync::mpsc::channel();
        let path = fifo.clone();
        std::thread::spawn(move || {
            let f = open_nonblocking(&path).expect("the FIFO opens");
            tx.send(f.metadata().unwrap().file_type().is_file()).unwrap();
        });
        let is_file = rx.recv_timeout(std::time::Duration::from_secs(10)).expect("the open returned within 10 s");
        assert!(!is_file);
    }

    thread_local! {
        /// Runs in this thread's writes between writing the temporary file and renaming it.
        static BEFORE_RENAME: RefCell<Option<Hook>> = RefCell::new(None);
    }

    pub(super) fn before_rename(folder: &Path) {
        BEFORE_RENAME.with(|h| {
            if let Some(f) = h.borrow_mut().as_mut() {
                f(folder)
            }
        });
    }

    /// A fresh temporary directory (removed when the first is dropped) and a cache folder in it
    /// that does not exist yet.
    fn tempdir(tag: &str) -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::Builder::new()
            .prefix(&format!("cuprum-disk-unit-{tag}-"))
            .tempdir()
            .unwrap();
        let dir = tmp.path().join("cache");
        (tmp, dir)
    }

    fn key(n: u8) -> CacheKey {
        CacheKey::from_bytes([n; 32])
    }

    #[test]
    fn read_only_and_permission_errors_turn_writing_off() {
        for kind in [
            io::ErrorKind::ReadOnlyFilesystem,
            io::ErrorKind::PermissionDenied,
        ] {
            let (_tmp, dir) = tempdir("off");
            let disk = DiskCache::new(&dir).with_quiet(true);
            disk.inject_write_errors(&[kind]);
            assert!(!disk.put(&key(1), b"a", None), "{kind:?}");
            assert!(!disk.is_writable(), "{kind:?}");
            assert_eq!(disk.warned(), vec![Cause::WritingOff]);
            // Later writes are not tried, and nothing reached the disk.
            assert!(!disk.put(&key(2), b"b", None), "{kind:?}");
            assert!(!dir.exists(), "{kind:?}");
        }
    }

    #[test]
    fn other_errors_cost_one_entry_and_warn_once_per_kind() {
        let (_tmp, dir) = tempdir("per-entry");
        let disk = DiskCache::new(&dir).with_quiet(true);
        disk.inject_write_errors(&[
            io::ErrorKind::StorageFull,
            io::ErrorKind::StorageFull,
            io::ErrorKind::IsADirectory,
        ]);
        assert!(!disk.put(&key(1), b"a", None));
        assert!(!disk.put(&key(2), b"b", None));
        assert!(!disk.put(&key(3), b"c", None));
        assert!(disk.is_writable());
        // The next entry is written.
        assert!(disk.put(&key(4), b"d", None));
        assert_eq!(disk.get(&key(4)), Lookup::Hit(b"d".to_vec()));
        assert_eq!(disk.get(&key(1)), Lookup::Miss);
        let mut warned = disk.warned();
        warned.sort_by_key(|c| format!("{c:?}"));
        assert_eq!(
            warned,
            vec![
                Cause::WriteFailed(io::ErrorKind::IsADirectory),
                Cause::WriteFailed(io::ErrorKind::StorageFull),
            ]
        );
    }

    #[test]
    fn a_vanished_folder_is_made_again() {
        let (_tmp, dir) = tempdir("vanish");
        let disk = DiskCache::new(&dir);
        assert!(disk.put(&key(5), b"x", None));
        fs::remove_dir_all(&dir).unwrap();
        assert!(disk.put(&key(6), b"y", None));
        assert_eq!(disk.get(&key(6)), Lookup::Hit(b"y".to_vec()));
    }

    #[test]
    fn a_clear_in_the_middle_of_a_write_does_not_lose_it() {
        let (_tmp, dir) = tempdir("clear-mid-write");
        let disk = DiskCache::new(&dir).with_quiet(true);
        assert!(disk.put(&key(7), b"old", None));
        // `cuprum cache clear` runs while the temporary file is written (the first try only): it
        // deletes the temporary, the entry and the then empty shard folder.
        let cleared = std::rc::Rc::new(std::cell::Cell::new(0));
        let (c, d) = (cleared.clone(), dir.clone());
        BEFORE_RENAME.with(|h| {
            *h.borrow_mut() = Some(Box::new(move |_: &Path| {
                if c.get() == 0 {
                    let r = crate::cache::scan::clear(&d).unwrap();
                    assert_eq!((r.removed.entries, r.removed.temporaries), (1, 1));
                    assert!(r.failed.is_empty());
                }
                c.set(c.get() + 1);
            }))
        });
        let written = disk.put(&key(7), b"new", None);
        BEFORE_RENAME.with(|h| *h.borrow_mut() = None);
        assert!(written);
        assert_eq!(
            cleared.get(),
            2,
            "one try lost to the clear, one that renamed"
        );
        assert_eq!(disk.get(&key(7)), Lookup::Hit(b"new".to_vec()));
        assert!(disk.is_writable());
        assert!(disk.warned().is_empty(), "{:?}", disk.warned());
    }
}
