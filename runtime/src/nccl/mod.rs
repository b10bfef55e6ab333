//! NCCL's collectives on cuprum arrays: the GPUs of one machine (or of several) reduce, broadcast,
//! gather and exchange arrays through NVIDIA's library (docs/multi-gpu.md).
//!
//! libnccl is loaded at run time, at the first use (`library.rs`: `libnccl.so.2`, from
//! `CUPRUM_NCCL_PATH`, the loader's path or `CUDA_PATH`'s neighbourhood); without it every call
//! is [`Error::NoNccl`](crate::Error::NoNccl), naming the library and what to install, never a
//! panic. One concept per file: `library.rs` the loaded functions, `dtype.rs` NCCL's dtypes,
//! `op.rs` [`ReduceOp`], `unique_id.rs` [`UniqueId`], `communicator.rs` [`Communicator`],
//! `group.rs` [`group`] and the lifetime of a collective's arrays, `collectives.rs` the
//! collectives (methods of `Communicator`).
//!
//! Two ways to run:
//! - **one process per GPU**: rank 0 makes a [`UniqueId`] and sends its bytes to the others;
//!   each process calls [`Communicator::new`]`(device, rank, nranks, &id)` and then the same
//!   collectives in the same order;
//! - **one process driving all GPUs**: [`Communicator::all`]`(&devices)` gives one communicator
//!   per device, and each collective is called for every communicator inside one [`group`].
//!
//! Set `NCCL_NVLS_ENABLE=0` in the environment before the first communicator is made (NVLink
//! multicast stays off; cuprum's tests and examples do, with [`disable_nvls`]).

mod collectives;
mod communicator;
mod dtype;
mod group;
mod library;
mod op;
mod unique_id;

pub use communicator::Communicator;
pub use dtype::SUPPORTED as SUPPORTED_DTYPES;
pub use group::group;
pub use op::ReduceOp;
pub use unique_id::UniqueId;

use crate::error::Result;

/// Whether libnccl can be loaded (loads it, once per process).
pub fn is_available() -> bool {
    library::api().is_ok()
}

/// NCCL's version as `(major, minor, patch)` (`ncclGetVersion`; 2.18.5 is `(2, 18, 5)`), and the
/// library file it was loaded from. [`Error::NoNccl`](crate::Error::NoNccl) without libnccl.
pub fn version() -> Result<((u32, u32, u32), String)> {
    let api = library::api()?;
    let mut v = 0;
    // SAFETY: `v` is a place for the answer.
    let code = unsafe { (api.get_version)(&mut v) };
    api.check("ncclGetVersion", code, std::ptr::null_mut())?;
    let v = v as u32;
    Ok(((v / 10000, v / 100 % 100, v % 100), api.from.clone()))
}

/// Sets `NCCL_NVLS_ENABLE=0` in this process's environment (NCCL reads it when it makes its first
/// communicator), unless the variable is set already.
///
/// # Safety
///
/// Changing the environment is undefined behaviour while another thread reads or writes it
/// (`std::env::set_var`'s rule): call this at the start of `main` or of a test, before other
/// threads run.
pub unsafe fn disable_nvls() {
    if std::env::var_os(crate::env::NCCL_NVLS_ENABLE).is_none() {
        // SAFETY: the caller's: no other thread touches the environment now.
        unsafe { std::env::set_var(crate::env::NCCL_NVLS_ENABLE, "0") };
    }
}
