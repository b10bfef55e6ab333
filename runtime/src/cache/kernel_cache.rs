//! The kernel cache's two layers: compiled images in memory, backed by the disk cache
//! (`DiskCache`) unless the configuration says memory only.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::{CacheConfig, CacheKey, CompiledImage, Damage, DiskCache, Lookup};
use crate::error::Result;
use crate::stats::{self, Layer};
use crate::sync;

/// Compiled images in memory, backed by a `DiskCache` unless the configuration says memory only.
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
