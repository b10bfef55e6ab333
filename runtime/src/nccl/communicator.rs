//! `Communicator`: one rank of an NCCL communicator, on one GPU.

use std::ffi::c_int;

use cudarc::nccl::sys::ncclComm_t;

use super::library::api;
use super::unique_id::UniqueId;
use crate::device::Device;
use crate::error::{Error, Result};

/// One rank of a group of GPUs that run collectives together (NCCL's `ncclComm_t`), bound to one
/// GPU. Made per process with [`Communicator::new`] (one process per GPU) or for all of a
/// process's GPUs at once with [`Communicator::all`]; destroyed when dropped (`ncclCommDestroy`,
/// after the collectives queued on it). The collectives are its methods (`collectives.rs`).
///
/// A communicator may move to another thread but is used by one thread at a time (NCCL's rule):
/// it is `Send`, not `Sync`.
pub struct Communicator {
    pub(super) comm: ncclComm_t,
    pub(super) device: Device,
    rank: usize,
    size: usize,
}

// SAFETY: an NCCL communicator may be used from any thread, one thread at a time; `Communicator`
// is not `Sync` and its methods take `&self` from the one thread that holds it.
unsafe impl Send for Communicator {}

/// Refuses the CPU device (`what` names the call) before NCCL is asked anything.
fn gpu_only(device: &Device, what: &str) -> Result<()> {
    if device.is_cpu() {
        return Err(Error::Unsupported {
            what: format!(
                "{what} on the CPU device: NCCL's communicators and collectives run on CUDA GPUs only \
                 (`Device::get(i)`); on the CPU device there is one rank, and its arrays need no collective"
            ),
        });
    }
    Ok(())
}

impl Communicator {
    /// Rank `rank` of `nranks` on `device`, in the communicator `id` names (`ncclCommInitRank`):
    /// the one-process-per-GPU form, where each process calls this with the id rank 0 made and
    /// sent to it. Returns once all `nranks` ranks have called it (a rank that never calls makes
    /// the others wait). Errors: `rank >= nranks`, the CPU device, no libnccl
    /// ([`Error::NoNccl`]), NCCL's own ([`Error::Nccl`]).
    ///
    /// Set `NCCL_NVLS_ENABLE=0` in the environment before the first communicator to keep NCCL
    /// off NVLink multicast (docs/multi-gpu.md).
    pub fn new(device: &Device, rank: usize, nranks: usize, id: &UniqueId) -> Result<Communicator> {
        if rank >= nranks || c_int::try_from(nranks).is_err() {
            return Err(Error::InvalidValue {
                op: "Communicator::new",
                detail: format!("rank {rank} of {nranks} ranks: the rank must be below the number of ranks"),
            });
        }
        gpu_only(device, "Communicator::new")?;
        let api = api()?;
        device.bind_to_thread()?;
        let mut comm: ncclComm_t = std::ptr::null_mut();
        // SAFETY: `comm` is a place for the new communicator; the id is NCCL's 128 bytes; the
        // device's context is current on this thread (NCCL makes the communicator on it).
        let code = unsafe { (api.comm_init_rank)(&mut comm, nranks as c_int, id.0, rank as c_int) };
        api.check("ncclCommInitRank", code, std::ptr::null_mut())?;
        Ok(Communicator { comm, device: device.clone(), rank, size: nranks })
    }

    /// One communicator for each of `devices`, rank `i` on `devices[i]` (`ncclCommInitAll`): the
    /// form for one process driving all its GPUs (their collectives then go in one
    /// [`group`](super::group)). Errors: no device, the CPU device, a device given twice, no
    /// libnccl, NCCL's own.
    pub fn all(devices: &[Device]) -> Result<Vec<Communicator>> {
        if devices.is_empty() {
            return Err(Error::InvalidValue { op: "Communicator::all", detail: "no device given".into() });
        }
        for (i, d) in devices.iter().enumerate() {
            gpu_only(d, "Communicator::all")?;
            if devices[..i].contains(d) {
                return Err(Error::InvalidValue {
                    op: "Communicator::all",
                    detail: format!("device {} is given twice: NCCL puts one rank on each GPU", d.ordinal()),
                });
            }
        }
        let api = api()?;
        let ordinals: Vec<c_int> = devices.iter().map(|d| d.ordinal() as c_int).collect();
        let mut comms: Vec<ncclComm_t> = vec![std::ptr::null_mut(); devices.len()];
        for d in devices {
            // Each device's primary context exists before NCCL (which uses the runtime API's
            // current device) makes its communicator on it.
            d.bind_to_thread()?;
        }
        // SAFETY: `comms` has room for one communicator per ordinal of `ordinals` (same length).
        let code = unsafe { (api.comm_init_all)(comms.as_mut_ptr(), ordinals.len() as c_int, ordinals.as_ptr()) };
        // NCCL made each device current in turn: the thread's current device is cuprum's again.
        rebind_current();
        api.check("ncclCommInitAll", code, std::ptr::null_mut())?;
        let n = devices.len();
        Ok(comms
            .into_iter()
            .zip(devices)
            .enumerate()
            .map(|(rank, (comm, d))| Communicator { comm, device: d.clone(), rank, size: n })
            .collect())
    }

    /// This rank's number, `0..size()`.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The number of ranks.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The GPU this rank runs on (its arrays must live there).
    pub fn device(&self) -> &Device {
        &self.device
    }
}

/// Binds the context of this thread's current cuprum device again (NCCL's calls that span
/// several GPUs leave the last one's current).
pub(super) fn rebind_current() {
    if let Ok(d) = Device::current() {
        let _ = d.bind_to_thread();
    }
}

impl Drop for Communicator {
    fn drop(&mut self) {
        let Ok(api) = api() else { return };
        let _ = self.device.bind_to_thread();
        // SAFETY: `comm` was made by NCCL for this value and is destroyed only here; NCCL
        // finishes the operations queued on it first.
        let code = unsafe { (api.comm_destroy)(self.comm) };
        if let Err(e) = api.check("ncclCommDestroy", code, std::ptr::null_mut()) {
            log::warn!(target: "cuprum::nccl", "dropping rank {} of {}: {e}", self.rank, self.size);
        }
    }
}

impl std::fmt::Debug for Communicator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Communicator(rank {} of {}, device {})", self.rank, self.size, self.device.ordinal())
    }
}
