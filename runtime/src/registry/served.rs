//! Which layer of the lookup chain served each kernel instance (docs/architecture.md, The lookup
//! chain).

use std::sync::{Mutex, OnceLock};

use crate::stats::Layer;
use crate::sync;

/// Which layer served one kernel instance on one device, the first time it was needed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Served {
    /// The kernel's name (the Rust function's name).
    pub kernel: &'static str,
    /// The instance's symbol.
    pub symbol: String,
    /// The ordinal of the device it was served for.
    pub device: usize,
    /// Which layer served it.
    pub layer: Layer,
}

fn served_list() -> &'static Mutex<Vec<Served>> {
    static SERVED: OnceLock<Mutex<Vec<Served>>> = OnceLock::new();
    SERVED.get_or_init(|| Mutex::new(Vec::new()))
}

pub(super) fn record_served(s: Served) {
    log::info!(target: "cuprum::jit", "kernel `{}` on device {} served by the {} layer", s.symbol, s.device, s.layer.name());
    sync::lock(served_list()).push(s);
}

/// Every generated kernel instance loaded so far in this process and the layer that served it
/// (`aot`: the embedded fat binary; `disk`/`memory`: the kernel cache; `nvrtc`: compiled now).
pub fn served() -> Vec<Served> {
    sync::lock(served_list()).clone()
}
