//! The kernel cache (docs/architecture.md, docs/runtime.md "Kernel lookup and the cache"):
//! compiled images in memory, then on disk, keyed by a hash of everything that determines them.
//!
//! What programs and tools use: [`set_global`] points the process at another configuration
//! ([`CacheConfig`]; by default the environment's: `CUPY_CACHE_DIR`, `CUPY_CACHE_IN_MEMORY`,
//! `CUPY_CACHE_SAVE_CUDA_SOURCE`, `CUPRUM_CACHE_QUIET`), [`scan`] reads a cache directory (what
//! `cuprum cache stats|verify|clear` prints), and the warnings go to `log` with target
//! [`LOG_TARGET`].
//!
//! Inside the runtime: the cache stores opaque compiled images (`CompiledImage`) under a
//! `CacheKey` and knows nothing about GPUs or compilers: `KernelCache::get_or_compile` takes the
//! compile step as a closure. Loading an image onto a device (and the per-device map of loaded
//! modules) lives in `module.rs`. The process-wide instance (`global`) is configured from the
//! environment on first use or by [`set_global`]. The disk layer degrades per entry (`disk.rs`);
//! its warnings reach the user once per cause, with or without a logger (`warn.rs`).

pub(crate) mod disk;
pub(crate) mod entry;
mod format;
pub(crate) mod key;
pub(crate) mod kernel_cache;
pub mod scan;
mod warn;

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

pub use format::Damage;
pub use scan::Usage;
pub use warn::TARGET as LOG_TARGET;
pub(crate) use disk::{DiskCache, Lookup};
pub(crate) use entry::{CompiledImage, ImageKind};
pub(crate) use key::{CacheKey, KeyInputs};
pub(crate) use kernel_cache::KernelCache;

use crate::env;
use crate::error::Result;
use crate::sync;

/// How the kernel cache is set up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheConfig {
    /// The on-disk cache's directory; `None`: memory only.
    pub dir: Option<PathBuf>,
    /// Keep everything in memory and write nothing (`CUPY_CACHE_IN_MEMORY=1`).
    pub in_memory: bool,
    /// Save the CUDA source next to each new entry (`CUPY_CACHE_SAVE_CUDA_SOURCE=1`).
    pub save_source: bool,
    /// Never print the cache's warnings to stderr; they still go to `log`
    /// (`CUPRUM_CACHE_QUIET=1`).
    pub quiet: bool,
}

impl CacheConfig {
    /// The configuration the environment asks for, read now.
    pub fn from_env() -> Result<CacheConfig> {
        Ok(CacheConfig {
            dir: env::cache_dir(),
            in_memory: env::flag(env::CACHE_IN_MEMORY)?,
            save_source: env::flag(env::CACHE_SAVE_CUDA_SOURCE)?,
            quiet: env::flag(env::CACHE_QUIET)?,
        })
    }

    /// A disk cache in `dir`.
    pub fn at(dir: impl Into<PathBuf>) -> CacheConfig {
        CacheConfig {
            dir: Some(dir.into()),
            in_memory: false,
            save_source: false,
            quiet: false,
        }
    }

    /// Memory only.
    pub fn memory_only() -> CacheConfig {
        CacheConfig {
            dir: None,
            in_memory: true,
            save_source: false,
            quiet: false,
        }
    }

    /// The directory that is actually used: `None` in memory-only mode.
    pub fn disk_dir(&self) -> Option<&std::path::Path> {
        if self.in_memory {
            None
        } else {
            self.dir.as_deref()
        }
    }
}

static GLOBAL: RwLock<Option<Arc<KernelCache>>> = RwLock::new(None);

/// The process-wide kernel cache, configured from the environment on first use.
pub(crate) fn global() -> Result<Arc<KernelCache>> {
    if let Some(c) = sync::read(&GLOBAL).as_ref() {
        return Ok(c.clone());
    }
    let mut slot = sync::write(&GLOBAL);
    if let Some(c) = slot.as_ref() {
        return Ok(c.clone());
    }
    let c = Arc::new(KernelCache::new(CacheConfig::from_env()?));
    *slot = Some(c.clone());
    Ok(c)
}

/// Replaces the process-wide kernel cache with a fresh one (the images the old one held in memory
/// are dropped; modules already loaded on devices stay loaded). For tools, benchmarks and tests.
pub fn set_global(config: CacheConfig) {
    *sync::write(&GLOBAL) = Some(Arc::new(KernelCache::new(config)));
}
