//! The kernel cache (docs/architecture.md): compiled images in memory, then on disk, keyed by a hash of
//! everything that determines them.
//!
//! This layer stores opaque compiled images ([`CompiledImage`]) under a [`CacheKey`] and knows
//! nothing about GPUs or compilers: [`KernelCache::get_or_compile`] takes the compile step as a
//! closure. Loading an image onto a device (and the per-device map of loaded modules) lives in
//! `module.rs`. The process-wide instance ([`global`]) is configured from the environment on first
//! use (`CUPY_CACHE_DIR`, `CUPY_CACHE_IN_MEMORY`, `CUPY_CACHE_SAVE_CUDA_SOURCE`,
//! `CUPRUM_CACHE_QUIET`) or by [`set_global`]. The disk layer degrades per entry (`disk.rs`); its
//! warnings reach the user once per cause, with or without a logger (`warn.rs`).

pub mod disk;
pub mod entry;
pub mod format;
pub mod key;
pub mod scan;
mod warn;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

pub use disk::{DiskCache, Lookup};
pub use entry::{CompiledImage, ImageKind};
pub use format::Damage;
pub use key::{CacheKey, KeyInputs, headers_digest};
pub use scan::Usage;
pub use warn::TARGET as LOG_TARGET;

use crate::env;
use crate::error::Result;
use crate::stats::{self, Layer};
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

/// Compiled images in memory, backed by a [`DiskCache`] unless the configuration says memory only.
#[derive(Debug)]
pub struct KernelCache {
    config: CacheConfig,
    disk: Option<DiskCache>,
    images: Mutex<HashMap<CacheKey, Arc<CompiledImage>>>,
    /// One lock per key being resolved, so concurrent callers compile once.
    inflight: Mutex<HashMap<CacheKey, Arc<Mutex<()>>>>,
}

impl KernelCache {
    /// A cache with this configuration; nothing is created on disk until an entry is written.
    pub fn new(config: CacheConfig) -> KernelCache {
        let disk = config
            .disk_dir()
            .map(|d| {
                DiskCache::new(d)
                    .with_save_source(config.save_source)
                    .with_quiet(config.quiet)
            });
        KernelCache {
            config,
            disk,
            images: Mutex::new(HashMap::new()),
            inflight: Mutex::new(HashMap::new()),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &CacheConfig {
        &self.config
    }

    /// The disk layer, `None` in memory-only mode.
    pub fn disk(&self) -> Option<&DiskCache> {
        self.disk.as_ref()
    }

    /// The image for `key` from memory, else from disk, else from `compile` (then stored in both
    /// layers, with `source` saved next to the entry when configured). Concurrent callers with one
    /// key run `compile` once; the others wait and get its image. Returns the layer that served it
    /// ([`Layer::Nvrtc`] for a compile) and counts memory and disk hits in [`stats`].
    pub fn get_or_compile(
        &self,
        key: &CacheKey,
        source: Option<&str>,
        compile: impl FnOnce() -> Result<CompiledImage>,
    ) -> Result<(Arc<CompiledImage>, Layer)> {
        if let Some(img) = sync::lock(&self.images).get(key) {
            stats::record_hit(Layer::Memory);
            return Ok((img.clone(), Layer::Memory));
        }
        let key_lock = sync::lock(&self.inflight).entry(*key).or_default().clone();
        let result = {
            let _guard = sync::lock(&key_lock);
            self.resolve_locked(key, source, compile)
        };
        let mut inflight = sync::lock(&self.inflight);
        // Ours and the map's: nobody else waits on this key.
        if Arc::strong_count(&key_lock) == 2 {
            inflight.remove(key);
        }
        result
    }

    fn resolve_locked(
        &self,
        key: &CacheKey,
        source: Option<&str>,
        compile: impl FnOnce() -> Result<CompiledImage>,
    ) -> Result<(Arc<CompiledImage>, Layer)> {
        // Another thread may have finished while we waited.
        if let Some(img) = sync::lock(&self.images).get(key) {
            stats::record_hit(Layer::Memory);
            return Ok((img.clone(), Layer::Memory));
        }
        if let Some(disk) = &self.disk {
            match disk.get(key) {
                Lookup::Hit(bytes) => match CompiledImage::decode(&bytes) {
                    Some(img) => {
                        let img = Arc::new(img);
                        sync::lock(&self.images).insert(*key, img.clone());
                        stats::record_hit(Layer::Disk);
                        return Ok((img, Layer::Disk));
                    }
                    None => self.note_corrupt(disk, key, &Damage::Payload),
                },
                Lookup::Corrupt(damage) => self.note_corrupt(disk, key, &damage),
                Lookup::Miss => {}
            }
        }
        let img = Arc::new(compile()?);
        if let Some(disk) = &self.disk {
            if disk.put(key, &img.encode(), source) {
                stats::record_disk_write();
            }
        }
        sync::lock(&self.images).insert(*key, img.clone());
        Ok((img, Layer::Nvrtc))
    }

    /// Compiles the image for `key` again and replaces what both layers hold: for an entry whose
    /// checksum is right but whose image the loader refused (`module.rs` reports it). Concurrent
    /// callers with one key wait for one another, as in [`get_or_compile`](Self::get_or_compile).
    pub fn recompile(
        &self,
        key: &CacheKey,
        source: Option<&str>,
        compile: impl FnOnce() -> Result<CompiledImage>,
    ) -> Result<Arc<CompiledImage>> {
        let key_lock = sync::lock(&self.inflight).entry(*key).or_default().clone();
        let result = {
            let _guard = sync::lock(&key_lock);
            sync::lock(&self.images).remove(key);
            compile().map(|img| {
                let img = Arc::new(img);
                if let Some(disk) = &self.disk {
                    if disk.put(key, &img.encode(), source) {
                        stats::record_disk_write();
                    }
                }
                sync::lock(&self.images).insert(*key, img.clone());
                img
            })
        };
        let mut inflight = sync::lock(&self.inflight);
        if Arc::strong_count(&key_lock) == 2 {
            inflight.remove(key);
        }
        result
    }

    fn note_corrupt(&self, disk: &DiskCache, key: &CacheKey, damage: &Damage) {
        stats::record_disk_corrupt();
        disk.warn_damaged(key, damage);
    }

    /// The image for `key` if this process holds it in memory.
    pub fn get_in_memory(&self, key: &CacheKey) -> Option<Arc<CompiledImage>> {
        sync::lock(&self.images).get(key).cloned()
    }

    /// Forgets the images held in memory (modules already loaded on devices stay loaded).
    pub fn clear_memory(&self) {
        sync::lock(&self.images).clear();
    }

    /// How many images are held in memory.
    pub fn memory_len(&self) -> usize {
        sync::lock(&self.images).len()
    }
}

static GLOBAL: RwLock<Option<Arc<KernelCache>>> = RwLock::new(None);

/// The process-wide kernel cache, configured from the environment on first use.
pub fn global() -> Result<Arc<KernelCache>> {
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
pub fn set_global(config: CacheConfig) -> Arc<KernelCache> {
    let c = Arc::new(KernelCache::new(config));
    *sync::write(&GLOBAL) = Some(c.clone());
    c
}
