//! Lost contexts: a device's record of the fault that lost its CUDA context.
//!
//! A kernel that traps or touches an illegal address leaves the driver in a *sticky* error state
//! ([`sticky_fault`]): every later call in the context fails with that code, each as if it had
//! failed by itself. Each device keeps a [`FaultRecord`] instead: the first sticky result seen on
//! the device is recorded (with the call that reported it and the kernel launched last there) and
//! returned as [`Error::KernelFault`]; from then on every fallible entry point (launches,
//! allocations, copies, synchronizations: whatever binds the device, `Device::check_alive`)
//! returns [`Error::ContextLost`] naming that fault, before it calls the driver.
//!
//! Costs on the launch path: [`FaultRecord::check`] is one atomic load (a `OnceLock` read) and
//! [`FaultRecord::note_launch`] one relaxed atomic store of a pointer to the kernel's interned
//! name (`intern`, done once when a kernel is loaded).

use std::collections::HashMap;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Mutex, OnceLock};

use cudarc::driver::DriverError;

use crate::env;
use crate::error::{Error, Fault, Result, sticky_fault};
use crate::sync;

/// The one driver call that launches kernels (`launch::launch`).
pub(crate) const LAUNCH_CALL: &str = "cuLaunchKernel";

/// A device's fault record: the fault that lost its context (set once), and the name of the
/// kernel launched last there.
pub(crate) struct FaultRecord {
    first: OnceLock<Fault>,
    /// An interned name (never freed), or null before the first launch.
    last_kernel: AtomicPtr<String>,
}

impl FaultRecord {
    pub(crate) fn new() -> FaultRecord {
        FaultRecord {
            first: OnceLock::new(),
            last_kernel: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// `Err(ContextLost)` once the context is lost.
    #[inline]
    pub(crate) fn check(&self) -> Result<()> {
        match self.first.get() {
            None => Ok(()),
            Some(f) => Err(lost(f)),
        }
    }

    /// The fault that lost the context, if it is lost.
    pub(crate) fn fault(&self) -> Option<&Fault> {
        self.first.get()
    }

    /// Records that `name` (from [`intern`]) is being launched on the device.
    #[inline]
    pub(crate) fn note_launch(&self, name: &'static String) {
        self.last_kernel
            .store(std::ptr::from_ref(name).cast_mut(), Ordering::Relaxed);
    }

    /// The kernel launched last on the device.
    pub(crate) fn last_kernel(&self) -> Option<&'static str> {
        let p = self.last_kernel.load(Ordering::Relaxed);
        // SAFETY: the pointer is null or came from `note_launch`, whose `&'static String` comes
        // from `intern`, which leaks every name it hands out: it is never freed nor changed.
        unsafe { p.as_ref() }.map(String::as_str)
    }

    /// The error for a failed driver call `call` on device `device`: a sticky result records the
    /// fault (the first is [`Error::KernelFault`]); any failure once the context is lost is
    /// [`Error::ContextLost`]; anything else is [`Error::driver`].
    #[cold]
    pub(crate) fn driver_error(&self, device: usize, call: &'static str, e: DriverError) -> Error {
        if let Some(f) = self.first.get() {
            return lost(f);
        }
        if sticky_fault(e.0).is_none() {
            return Error::driver(call, e);
        }
        let mut recorded = false;
        let fault = self.first.get_or_init(|| {
            recorded = true;
            Fault {
                device,
                code: e.0,
                call,
                kernel: self.last_kernel().map(str::to_string),
                at_launch: call == LAUNCH_CALL && env::launch_blocking(),
            }
        });
        if recorded {
            let e = Error::KernelFault {
                fault: fault.clone(),
            };
            log::error!(target: "cuprum::fault", "{e}");
            e
        } else {
            lost(fault)
        }
    }
}

#[cold]
fn lost(f: &Fault) -> Error {
    Error::ContextLost {
        original: f.clone(),
    }
}

/// `name` as a `&'static String`, one allocation per distinct name for the life of the process
/// (kernel names are few: one per kernel a program loads).
pub(crate) fn intern(name: &str) -> &'static String {
    static NAMES: Mutex<Option<HashMap<String, &'static String>>> = Mutex::new(None);
    let mut names = sync::lock(&NAMES);
    let names = names.get_or_insert_with(HashMap::new);
    if let Some(n) = names.get(name) {
        return n;
    }
    let leaked: &'static String = Box::leak(Box::new(name.to_string()));
    names.insert(name.to_string(), leaked);
    leaked
}

#[cfg(test)]
mod tests {
    use super::*;
    use cudarc::driver::sys::CUresult;

    #[test]
    fn the_first_sticky_result_is_the_fault_and_the_rest_is_context_lost() {
        let r = FaultRecord::new();
        assert!(r.check().is_ok() && r.fault().is_none() && r.last_kernel().is_none());
        // Ordinary failures pass through and lose nothing.
        let e = r.driver_error(0, "cuMemAlloc", DriverError(CUresult::CUDA_ERROR_INVALID_VALUE));
        assert!(matches!(e, Error::Driver { call: "cuMemAlloc", .. }), "{e}");
        assert!(r.check().is_ok());

        r.note_launch(intern("first_kernel"));
        r.note_launch(intern("faulty"));
        assert_eq!(r.last_kernel(), Some("faulty"));
        let e = r.driver_error(3, "cuStreamSynchronize", DriverError(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS));
        let Error::KernelFault { fault } = &e else {
            panic!("{e}")
        };
        assert_eq!(
            (fault.device, fault.code, fault.call, fault.kernel.as_deref(), fault.at_launch),
            (3, CUresult::CUDA_ERROR_ILLEGAL_ADDRESS, "cuStreamSynchronize", Some("faulty"), false)
        );
        assert!(e.is_context_lost());

        // Later: the check fails before any driver call, and every driver failure (the same
        // sticky code, another one, or an ordinary one) names the original fault.
        let later = r.check().unwrap_err();
        assert!(matches!(&later, Error::ContextLost { original } if original == fault), "{later}");
        assert!(later.to_string().contains("`faulty`"), "{later}");
        for code in [CUresult::CUDA_ERROR_ILLEGAL_ADDRESS, CUresult::CUDA_ERROR_LAUNCH_FAILED, CUresult::CUDA_ERROR_INVALID_VALUE] {
            let e = r.driver_error(3, "cuMemAlloc", DriverError(code));
            assert!(matches!(&e, Error::ContextLost { original } if original == fault), "{e}");
        }
        // A launch after the fault does not change the record.
        r.note_launch(intern("innocent"));
        assert_eq!(r.fault().unwrap().kernel.as_deref(), Some("faulty"));
    }

    #[test]
    fn names_are_interned_once() {
        let a = intern("k_interned");
        let b = intern(&String::from("k_interned"));
        assert!(std::ptr::eq(a, b));
        assert!(!std::ptr::eq(a, intern("k_other")));
    }

    /// The cost that launches pay: `check` and `note_launch` (a launch costs 2-4 us).
    /// `cargo test --release -p cuprum-runtime --lib -- --ignored --nocapture fault_record_cost`
    #[test]
    #[ignore = "CPU timing; run with --release"]
    fn fault_record_cost() {
        let r = FaultRecord::new();
        let name = intern("timed");
        let n = 10_000_000;
        let t = std::time::Instant::now();
        for _ in 0..n {
            std::hint::black_box(&r).check().unwrap();
            std::hint::black_box(&r).note_launch(std::hint::black_box(name));
        }
        let ns = t.elapsed().as_nanos() as f64 / n as f64;
        println!("FaultRecord::check + note_launch: {ns:.2} ns per launch");
    }
}
