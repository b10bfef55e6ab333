//! `UniqueId`: what the ranks of one communicator share (one process makes it, the others get
//! its bytes).

use cudarc::nccl::sys::ncclUniqueId;

use super::library::api;
use crate::error::{Error, Result};

/// The identity of a communicator to be made: rank 0's process makes it ([`UniqueId::new`]) and
/// hands its [`bytes`](UniqueId::to_bytes) to the other processes (a file, a socket, MPI), which
/// rebuild it with [`UniqueId::from_bytes`]; every rank then calls
/// [`Communicator::new`](super::Communicator::new) with it.
#[derive(Clone, Copy)]
pub struct UniqueId(pub(super) ncclUniqueId);

impl UniqueId {
    /// The number of bytes of an id (`NCCL_UNIQUE_ID_BYTES`).
    pub const BYTES: usize = 128;

    /// A new id (`ncclGetUniqueId`: NCCL opens its bootstrap socket in this process; no GPU is
    /// needed). [`Error::NoNccl`] without libnccl.
    pub fn new() -> Result<UniqueId> {
        let api = api()?;
        let mut id = ncclUniqueId { internal: [0; UniqueId::BYTES] };
        // SAFETY: `id` is a place for NCCL's 128 bytes.
        let code = unsafe { (api.get_unique_id)(&mut id) };
        api.check("ncclGetUniqueId", code, std::ptr::null_mut())?;
        Ok(UniqueId(id))
    }

    /// The id's bytes, to send to the other ranks' processes.
    pub fn to_bytes(&self) -> [u8; UniqueId::BYTES] {
        self.0.internal.map(|c| c as u8)
    }

    /// The id of [`UniqueId::to_bytes`]; an error unless `bytes` has [`UniqueId::BYTES`] bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<UniqueId> {
        let Ok(b) = <[u8; UniqueId::BYTES]>::try_from(bytes) else {
            return Err(Error::InvalidValue {
                op: "UniqueId::from_bytes",
                detail: format!(
                    "{} bytes: an NCCL unique id has {} (what `UniqueId::to_bytes` returns)",
                    bytes.len(),
                    UniqueId::BYTES
                ),
            });
        };
        Ok(UniqueId(ncclUniqueId { internal: b.map(|c| c as std::ffi::c_char) }))
    }
}

impl std::fmt::Debug for UniqueId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let hex: String = self.to_bytes()[..8].iter().map(|b| format!("{b:02x}")).collect();
        write!(f, "UniqueId({hex}...)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_round_trip() {
        let bytes: Vec<u8> = (0..128u32).map(|i| (i * 37 + 11) as u8).collect();
        let id = UniqueId::from_bytes(&bytes).unwrap();
        assert_eq!(id.to_bytes().to_vec(), bytes);
        let e = UniqueId::from_bytes(&bytes[..100]).unwrap_err();
        assert!(e.to_string().contains("100 bytes") && e.to_string().contains("128"), "{e}");
    }

    /// Runs where libnccl is installed (`CUPRUM_NCCL_PATH=... cargo test -- --ignored`): NCCL
    /// makes ids without a GPU.
    #[test]
    #[ignore = "needs libnccl.so.2 (set CUPRUM_NCCL_PATH)"]
    fn nccl_makes_distinct_ids() {
        let (a, b) = (UniqueId::new().unwrap(), UniqueId::new().unwrap());
        assert!(a.to_bytes().iter().any(|&x| x != 0), "{a:?}");
        assert_ne!(a.to_bytes(), b.to_bytes());
        assert_eq!(UniqueId::from_bytes(&a.to_bytes()).unwrap().to_bytes(), a.to_bytes());
    }
}
