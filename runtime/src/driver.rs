//! The CUDA driver, loaded and initialised once behind a guard (cudarc panics when `libcuda`
//! cannot be loaded: a machine without a driver gets [`Error::NoDriver`], never a panic), and the
//! ordinal of the CPU device, which no CUDA device has. Below `bounds` and `device`, which both
//! ask how many devices there are.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;

use cudarc::driver::sys::CUresult;
use cudarc::driver::{DriverError, result};

use crate::culib;
use crate::error::{Error, Result};

/// The ordinal of the CPU device ([`Device::cpu`](crate::Device::cpu)): never a CUDA device's
/// (those count from 0). [`Device::get`](crate::Device::get) and
/// [`Device::use_device`](crate::Device::use_device) take it like any ordinal.
pub const CPU_ORDINAL: usize = usize::MAX;

/// What the one-time driver initialisation found.
enum DriverState {
    /// The driver works; this many devices.
    Ready(usize),
    /// No usable driver (library missing, symbol missing, `cuInit` failed).
    Missing(String),
}

fn probe_driver() -> DriverState {
    // `nvcuda` is the Windows name; elsewhere its 17 candidate names would only cost failed
    // searches of the library path, about 0.6 ms on a machine without a driver.
    let names: &[&str] = if cfg!(windows) { &["nvcuda", "cuda"] } else { &["cuda"] };
    // SAFETY: `culib::present` dlopens the NVIDIA driver library under its usual names (and
    // closes it again); loading it runs only the driver's own initialisers, as in any CUDA program.
    let present = unsafe { culib::present(names) };
    if !present {
        return DriverState::Missing(
            "the driver library (libcuda.so / nvcuda.dll) was not found".to_string(),
        );
    }
    // cudarc panics when a symbol is missing (a driver older than the bindings): catch it.
    let outcome = catch_unwind(AssertUnwindSafe(|| -> Result<usize, DriverError> {
        match result::init() {
            Ok(()) => {}
            Err(DriverError(CUresult::CUDA_ERROR_NO_DEVICE)) => return Ok(0),
            Err(e) => return Err(e),
        }
        match result::device::get_count() {
            Ok(n) => Ok(n.max(0) as usize),
            Err(DriverError(CUresult::CUDA_ERROR_NO_DEVICE)) => Ok(0),
            Err(e) => Err(e),
        }
    }));
    match outcome {
        Ok(Ok(n)) => DriverState::Ready(n),
        Ok(Err(e)) => DriverState::Missing(format!("cuInit failed: {e}")),
        Err(p) => DriverState::Missing(crate::error::panic_text(&*p, "the CUDA driver bindings panicked")),
    }
}

/// Loads and initialises the driver once; returns the number of devices.
pub(crate) fn driver_device_count() -> Result<usize> {
    static STATE: OnceLock<DriverState> = OnceLock::new();
    match STATE.get_or_init(probe_driver) {
        DriverState::Ready(n) => Ok(*n),
        DriverState::Missing(detail) => Err(Error::NoDriver {
            detail: detail.clone(),
        }),
    }
}
