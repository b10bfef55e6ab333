//! The kernel cache's warnings: each cause once per cache, where the user sees it.
//!
//! A warning goes to `log` (target `cuprum::cache`, level warn). When no logger takes it (none is
//! installed, or the installed one filters that target or level out), it is also printed to
//! stderr, unless the cache is quiet (`CUPRUM_CACHE_QUIET=1`). So a program without a logger still
//! learns that its kernels are not being cached, and a program with one sees each warning once, in
//! its own log. Later occurrences of a cause are logged at debug level only.

use std::collections::HashSet;
use std::io;
use std::mem::Discriminant;
use std::sync::Mutex;

use crate::sync;

use super::format::Damage;

/// The `log` target of the cache's warnings.
pub const TARGET: &str = "cuprum::cache";

/// What a warning is about; each is reported once per cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Cause {
    /// Writing was turned off for the process (permission denied, read-only file system).
    WritingOff,
    /// One write failed with this kind of error; writing stays on.
    WriteFailed(io::ErrorKind),
    /// An entry was damaged in this way.
    Damaged(Discriminant<Damage>),
}

/// The causes already reported by one cache.
#[derive(Debug)]
pub(crate) struct Warnings {
    quiet: bool,
    seen: Mutex<HashSet<Cause>>,
}

impl Warnings {
    /// `quiet`: never print to stderr (warnings still go to `log`).
    pub(crate) fn new(quiet: bool) -> Warnings {
        Warnings {
            quiet,
            seen: Mutex::new(HashSet::new()),
        }
    }

    /// Reports `message` if this is the first warning about `cause`; returns whether it did.
    pub(crate) fn warn(&self, cause: Cause, message: impl FnOnce() -> String) -> bool {
        let first = sync::lock(&self.seen).insert(cause);
        let message = message();
        if !first {
            log::debug!(target: TARGET, "{message}");
            return false;
        }
        log::warn!(target: TARGET, "{message}");
        if !self.quiet && !log::log_enabled!(target: TARGET, log::Level::Warn) {
            eprintln!("cuprum: warning: {message}");
        }
        true
    }

    /// The causes reported so far.
    #[cfg(test)]
    pub(crate) fn seen(&self) -> Vec<Cause> {
        sync::lock(&self.seen).iter().copied().collect()
    }
}
