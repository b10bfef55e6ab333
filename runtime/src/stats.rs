//! Which layer served each kernel, and how long the JIT took: process-wide counters.
//!
//! Kernel lookup goes, in order: modules already loaded in this process ([`Layer::Loaded`]) ->
//! the fat binary embedded at build time ([`Layer::Aot`]) -> compiled images kept in memory
//! ([`Layer::Memory`]: another device, or a cache that cannot write to disk) -> the on-disk cache
//! ([`Layer::Disk`]) -> NVRTC ([`Layer::Nvrtc`]). Each lookup bumps one counter; each compile also
//! adds its time and emits a `log::info!` event (target `cuprum::jit`), so users can see when they
//! hit the JIT.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Where a kernel came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layer {
    /// A module already loaded on this device in this process.
    Loaded,
    /// The fat binary embedded at build time.
    Aot,
    /// A compiled image kept in this process's memory, loaded onto a device.
    Memory,
    /// The on-disk kernel cache.
    Disk,
    /// A fresh NVRTC compile.
    Nvrtc,
}

impl Layer {
    /// A short lower-case name (`loaded`, `aot`, `memory`, `disk`, `nvrtc`).
    pub fn name(self) -> &'static str {
        match self {
            Layer::Loaded => "loaded",
            Layer::Aot => "aot",
            Layer::Memory => "memory",
            Layer::Disk => "disk",
            Layer::Nvrtc => "nvrtc",
        }
    }
}

/// A copy of the counters at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Lookups served by a module already loaded on the device.
    pub loaded: u64,
    /// Lookups served by a build-time fat binary (reserved for precompiled kernels).
    pub aot: u64,
    /// Lookups served by a compiled image in memory (loaded onto another device, or kept because
    /// the disk cache is off or unwritable).
    pub memory: u64,
    /// Lookups served by the on-disk cache.
    pub disk: u64,
    /// NVRTC compiles (successful or not).
    pub nvrtc: u64,
    /// Total wall time spent in NVRTC compiles.
    pub compile_time: Duration,
    /// Entries written to the disk cache.
    pub disk_writes: u64,
    /// Damaged disk entries found (each counted as a miss and rewritten).
    pub disk_corrupt: u64,
    /// Module images handed to the driver (`cuModuleLoadData`): one per fat binary, cached image or
    /// NVRTC output loaded onto a device. A kernel file's fat binary is loaded once per device,
    /// however many of its kernels run.
    pub module_loads: u64,
    /// Total wall time of those loads: the image checks, `cuModuleLoadData` and the index-check
    /// set-up of each module (not the decompression of a compressed part, nor the first launch).
    pub module_load_time: Duration,
    /// Launches of tuned sites that took their configuration from an embedded tuning file
    /// (`tuning::Site::choose`, docs/tuning.md).
    pub tuning_file_choices: u64,
    /// Launches of tuned sites that took their default (no file for the GPU, the CPU device, a
    /// stale file).
    pub tuning_default_choices: u64,
    /// Candidate runs of the tuner (`tuning::measure`, `tuning::tune`): zero in a program that
    /// launches its baked choices and never tunes.
    pub tuning_trials: u64,
}

struct Counters {
    loaded: AtomicU64,
    aot: AtomicU64,
    memory: AtomicU64,
    disk: AtomicU64,
    nvrtc: AtomicU64,
    compile_nanos: AtomicU64,
    disk_writes: AtomicU64,
    disk_corrupt: AtomicU64,
    module_loads: AtomicU64,
    module_load_nanos: AtomicU64,
    tuning_file_choices: AtomicU64,
    tuning_default_choices: AtomicU64,
    tuning_trials: AtomicU64,
}

static COUNTERS: Counters = Counters {
    loaded: AtomicU64::new(0),
    aot: AtomicU64::new(0),
    memory: AtomicU64::new(0),
    disk: AtomicU64::new(0),
    nvrtc: AtomicU64::new(0),
    compile_nanos: AtomicU64::new(0),
    disk_writes: AtomicU64::new(0),
    disk_corrupt: AtomicU64::new(0),
    module_loads: AtomicU64::new(0),
    module_load_nanos: AtomicU64::new(0),
    tuning_file_choices: AtomicU64::new(0),
    tuning_default_choices: AtomicU64::new(0),
    tuning_trials: AtomicU64::new(0),
};

/// The counters now.
pub fn snapshot() -> Stats {
    let c = &COUNTERS;
    let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
    Stats {
        loaded: get(&c.loaded),
        aot: get(&c.aot),
        memory: get(&c.memory),
        disk: get(&c.disk),
        nvrtc: get(&c.nvrtc),
        compile_time: Duration::from_nanos(get(&c.compile_nanos)),
        disk_writes: get(&c.disk_writes),
        disk_corrupt: get(&c.disk_corrupt),
        module_loads: get(&c.module_loads),
        module_load_time: Duration::from_nanos(get(&c.module_load_nanos)),
        tuning_file_choices: get(&c.tuning_file_choices),
        tuning_default_choices: get(&c.tuning_default_choices),
        tuning_trials: get(&c.tuning_trials),
    }
}

/// Sets every counter to zero.
pub fn reset() {
    let c = &COUNTERS;
    for a in [
        &c.loaded,
        &c.aot,
        &c.memory,
        &c.disk,
        &c.nvrtc,
        &c.compile_nanos,
        &c.disk_writes,
        &c.disk_corrupt,
        &c.module_loads,
        &c.module_load_nanos,
        &c.tuning_file_choices,
        &c.tuning_default_choices,
        &c.tuning_trials,
    ] {
        a.store(0, Ordering::Relaxed);
    }
}

/// Counts one lookup served by `layer` (kernel paths outside this crate, e.g. precompiled
/// kernels, report theirs here too). A `Nvrtc` lookup is counted by the NVRTC compile itself (with its time), not here.
pub(crate) fn record_hit(layer: Layer) {
    let c = &COUNTERS;
    let a = match layer {
        Layer::Loaded => &c.loaded,
        Layer::Aot => &c.aot,
        Layer::Memory => &c.memory,
        Layer::Disk => &c.disk,
        Layer::Nvrtc => &c.nvrtc,
    };
    a.fetch_add(1, Ordering::Relaxed);
    if layer != Layer::Loaded {
        log::debug!(target: "cuprum::jit", "kernel served by the {} layer", layer.name());
    }
}

/// Counts one NVRTC compile of `name` that took `elapsed`, and logs it.
pub(crate) fn record_compile(name: &str, target: &str, elapsed: Duration, ok: bool) {
    COUNTERS.nvrtc.fetch_add(1, Ordering::Relaxed);
    COUNTERS.compile_nanos.fetch_add(
        u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX),
        Ordering::Relaxed,
    );
    log::info!(
        target: "cuprum::jit",
        "NVRTC compiled `{name}` for {target} in {:.1} ms{}",
        elapsed.as_secs_f64() * 1e3,
        if ok { "" } else { " (failed)" }
    );
}

pub(crate) fn record_disk_write() {
    COUNTERS.disk_writes.fetch_add(1, Ordering::Relaxed);
}

/// Counts one module handed to the driver, whose load took `elapsed`.
pub(crate) fn record_module_load(elapsed: Duration) {
    COUNTERS.module_loads.fetch_add(1, Ordering::Relaxed);
    COUNTERS.module_load_nanos.fetch_add(
        u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX),
        Ordering::Relaxed,
    );
}

pub(crate) fn record_disk_corrupt() {
    COUNTERS.disk_corrupt.fetch_add(1, Ordering::Relaxed);
}

/// Counts one choice of a tuned site: from an embedded tuning file, or its default.
pub(crate) fn record_tuning_choice(from_file: bool) {
    let c = &COUNTERS;
    let a = if from_file { &c.tuning_file_choices } else { &c.tuning_default_choices };
    a.fetch_add(1, Ordering::Relaxed);
}

/// Counts `n` candidate runs of the tuner.
pub(crate) fn record_tuning_trials(n: u64) {
    COUNTERS.tuning_trials.fetch_add(n, Ordering::Relaxed);
}
