//! What every test of `gpu_nccl` and `gpu_multi` starts with (a module of each binary; a folder, so
//! that cargo does not build it as a test of its own).

pub mod ranks;

use std::sync::{Mutex, MutexGuard, Once};

use cuprum::runtime::nccl;

/// Serialises the binary's tests and sets `NCCL_NVLS_ENABLE=0` before the first communicator.
pub fn setup() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    static NVLS: Once = Once::new();
    let guard = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    // SAFETY: every test of the binary holds the lock, so no other of its threads reads or
    // writes the environment now.
    NVLS.call_once(|| unsafe { nccl::disable_nvls() });
    assert_eq!(std::env::var("NCCL_NVLS_ENABLE").as_deref(), Ok("0"), "NVLink multicast must stay off");
    guard
}
