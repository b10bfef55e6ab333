//! Loading a kernel ahead of its first call, on a thread of its own (docs/runtime.md, "First
//! calls"). An operation of several kernels whose later kernel's instance and launch variant are
//! known once the first is planned (`argmax`: the maximum, then the first index holding it;
//! `var`: the mean, then the squared deviations) asks for the later one here, and the loader
//! decompresses and loads its part while the caller loads and launches the first: a first call
//! then costs about one kernel's load, not two.
//!
//! Only a hint: a prefetch that cannot be queued (no loader yet, the loader could not start)
//! does nothing, and whatever the loader does is what the caller's own lookup would do
//! (`Kernel::instance`), under the same per-kernel lock, so the caller finds the kernel loaded or
//! waits for the load in flight; an error is reported by the caller's lookup, not here.

use std::sync::OnceLock;
use std::sync::mpsc::{Sender, channel};

use cuprum_abi::Variant;

use super::Kernel;
use crate::DType;

/// One kernel instance to load.
struct Job {
    kernel: &'static Kernel,
    ordinal: usize,
    instance: Vec<DType>,
    variant: Option<Variant>,
}

static LOADER: OnceLock<Sender<Job>> = OnceLock::new();

/// Starts the loader thread (a warm-up hook: off the first calls' path).
fn start() {
    LOADER.get_or_init(|| {
        let (queue, jobs) = channel::<Job>();
        // A loader that cannot start only means no prefetch (the sends fail, unnoticed).
        let _ = std::thread::Builder::new()
            .name("cuprum-loader".into())
            .spawn(move || {
                for job in jobs {
                    let _ = job.kernel.instance(job.ordinal, &job.instance, job.variant);
                }
            });
        queue
    });
}

inventory::submit!(crate::device::WarmUp(start));

/// Loads entry point (`instance`, `variant`) of `kernel` on device `ordinal` in the background,
/// unless it is loaded already.
pub(crate) fn prefetch(kernel: &'static Kernel, ordinal: usize, instance: &[DType], variant: Option<Variant>) {
    if kernel.is_loaded(ordinal, instance, variant) {
        return;
    }
    if let Some(queue) = LOADER.get() {
        let _ = queue.send(Job {
            kernel,
            ordinal,
            instance: instance.to_vec(),
            variant,
        });
    }
}
