//! The collectives on cuprum arrays: `all_reduce`, `broadcast`, `reduce`, `all_gather`,
//! `reduce_scatter`, `send` and `recv`, methods of [`Communicator`].
//!
//! Each runs on the current stream of the communicator's device (`Stream::current_for`; change it
//! with `stream.use_scoped()`), as a kernel launch does, and returns once NCCL has queued it (or,
//! inside a [`group`](super::group), once it is recorded for the group's end). Before anything is
//! queued every operand is checked: NCCL's dtypes (`dtype.rs`), C-contiguous arrays, the element
//! counts the collective needs, arrays that do not partly overlap, arrays on the communicator's
//! GPU (not the CPU device, not another GPU), a root or peer below the number of ranks. While a
//! graph records the stream, collectives are refused. `group.rs` says how the arrays stay alive
//! and ordered until the collective has run.

use std::ffi::c_int;
use std::sync::Arc;

use super::communicator::Communicator;
use super::dtype::nccl_dtype;
use super::group;
use super::library::{Api, RawStream, api};
use super::op::ReduceOp;
use crate::array::Array;
use crate::device::Device;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::memory::DeviceBuffer;
use crate::stream::{Event, Stream};

use cudarc::nccl::sys::ncclComm_t;

/// A checked array: its address, size and buffer.
pub(super) struct Operand {
    ptr: u64,
    bytes: usize,
    buf: Arc<DeviceBuffer>,
}

/// `a` as an operand of collective `op` (its `role`, for errors), if it is C-contiguous.
pub(super) fn contiguous<T: Element>(op: &str, role: &str, a: &Array<T>) -> Result<Operand> {
    if !a.is_c_contiguous() {
        return Err(Error::NeedsCopy {
            op: "an NCCL collective",
            detail: format!(
                "{op}: the {role} array (shape {:?}, strides {:?}) is not C-contiguous: NCCL reads and writes one \
                 span of memory",
                a.shape(),
                a.strides()
            ),
        });
    }
    Ok(Operand { ptr: a.device_ptr(), bytes: a.nbytes(), buf: a.buffer().clone() })
}

/// An error unless `found` elements are the `expected` that collective `op` needs (`rule` says why).
pub(super) fn count(op: &str, role: &str, expected: usize, found: usize, rule: &str) -> Result<()> {
    if expected != found {
        return Err(Error::InvalidShape {
            op: "an NCCL collective",
            detail: format!("{op}: the {role} array has {found} element(s), {expected} expected ({rule})"),
        });
    }
    Ok(())
}

/// An error when `a` and `b` overlap without being the same span (NCCL reads one while it writes
/// the other); `same_ok`: whether the same span is an in-place call NCCL allows.
pub(super) fn disjoint(op: &str, a: &Operand, b: &Operand, same_ok: bool) -> Result<()> {
    let same = a.ptr == b.ptr && a.bytes == b.bytes;
    let overlap = a.buf.device() == b.buf.device()
        && a.bytes > 0
        && b.bytes > 0
        && a.ptr < b.ptr + b.bytes as u64
        && b.ptr < a.ptr + a.bytes as u64;
    if overlap && !(same && same_ok) {
        return Err(Error::InvalidValue {
            op: "an NCCL collective",
            detail: format!(
                "the arrays of {op} overlap in memory: give disjoint arrays{}",
                if same_ok { ", or call the `_in_place` form" } else { "" }
            ),
        });
    }
    Ok(())
}

/// An error unless `found` (an array of collective `op`, its `role`) is on `device`, the
/// communicator's GPU.
pub(super) fn on_device(op: &str, role: &str, device: &Device, found: &Device) -> Result<()> {
    if found.is_cpu() {
        return Err(Error::Unsupported {
            what: format!(
                "NCCL's {op} of an array on the CPU device (the {role} array): NCCL moves GPU memory only; \
                 copy it to the communicator's GPU first (`a.to_device(comm.device())`)"
            ),
        });
    }
    if found != device {
        return Err(Error::DeviceMismatch {
            context: format!("NCCL's {op} (the {role} array; the communicator's rank runs on device {})", device.ordinal()),
            expected: device.ordinal(),
            found: found.ordinal(),
        });
    }
    Ok(())
}

/// Whether the loaded NCCL predates 2.29.7 (NVIDIA/nccl#1950, `Communicator::raw_op`): asked of
/// the library once per process, not at every collective.
fn one_rank_avg_is_broken() -> bool {
    static BROKEN: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *BROKEN.get_or_init(|| super::version().is_ok_and(|(v, _)| v < (2, 29, 7)))
}

/// An error unless `rank` (a root or peer) is one of the `size` ranks.
fn rank_below(op: &str, what: &str, rank: usize, size: usize) -> Result<c_int> {
    if rank >= size {
        return Err(Error::InvalidValue {
            op: "an NCCL collective",
            detail: format!("{op}'s {what} is rank {rank}, but the communicator has {size} rank(s)"),
        });
    }
    Ok(rank as c_int)
}

impl Communicator {
    /// Queues `call` (NCCL's function `name`) on the device's current stream, ordered after the
    /// streams of `operands`' buffers, and orders their later frees after it (`group.rs`).
    fn enqueue(
        &self,
        name: &'static str,
        operands: &[&Operand],
        call: impl FnOnce(&Api, ncclComm_t, RawStream) -> c_int,
    ) -> Result<()> {
        let api = api()?;
        let stream = Stream::current_for(&self.device)?;
        stream.refuse_if_recording(&format!("NCCL's {name} (NCCL calls are not recorded into cuprum's graphs)"))?;
        self.device.bind_to_thread()?;
        for o in operands.iter().filter(|o| o.buf.stream() != &stream) {
            stream.wait_event(&Event::record(o.buf.stream())?)?;
        }
        let code = call(api, self.comm, stream.handle() as RawStream);
        api.check(name, code, self.comm)?;
        group::after(stream, operands.iter().map(|o| o.buf.clone()).collect())
    }

    /// NCCL's operator for `op` on this communicator. NCCL before 2.29.7 leaves the last elements
    /// of a one-rank average unwritten when the count is not a multiple of the kernel's blocks
    /// (NVIDIA/nccl#1950, fixed in 2.29.7; seen here with 2.28.9 on an H200: the last of 3001
    /// f64): with one rank the average is the sum (the one rank's values), which NCCL copies.
    fn raw_op(&self, op: ReduceOp) -> c_int {
        if op == ReduceOp::Avg && self.size() == 1 && one_rank_avg_is_broken() {
            return ReduceOp::Sum.raw();
        }
        op.raw()
    }

    /// Checks that the arrays of `op` are on this rank's GPU.
    fn here(&self, op: &str, arrays: &[(&str, &Device)]) -> Result<()> {
        arrays.iter().try_for_each(|(role, d)| on_device(op, role, &self.device, d))
    }

    /// `recv = op(send of every rank)`, element by element, on every rank (`ncclAllReduce`).
    /// `recv` has `send`'s number of elements (any shape).
    pub fn all_reduce<T: Element>(&self, send: &Array<T>, recv: &mut Array<T>, op: ReduceOp) -> Result<()> {
        const OP: &str = "all_reduce";
        let dtype = nccl_dtype(T::ELEM, OP)?;
        let (s, r) = (contiguous(OP, "send", send)?, contiguous(OP, "recv", recv)?);
        count(OP, "recv", send.len(), recv.len(), "recv has send's number of elements")?;
        disjoint(OP, &s, &r, true)?;
        self.here(OP, &[("send", send.device()), ("recv", recv.device())])?;
        let n = send.len();
        if n == 0 {
            return Ok(());
        }
        let op = self.raw_op(op);
        self.enqueue("ncclAllReduce", &[&s, &r], |api, comm, st| {
            // SAFETY: both spans hold `n` elements of `dtype` on this rank's device (checked
            // above), are alive and ordered until the collective has run (`enqueue`), and are
            // the same span or disjoint.
            unsafe { (api.all_reduce)(s.ptr as _, r.ptr as _, n, dtype, op, comm, st) }
        })
    }

    /// [`Communicator::all_reduce`] with `buf` as both send and recv array.
    pub fn all_reduce_in_place<T: Element>(&self, buf: &mut Array<T>, op: ReduceOp) -> Result<()> {
        const OP: &str = "all_reduce_in_place";
        let dtype = nccl_dtype(T::ELEM, OP)?;
        let b = contiguous(OP, "buf", buf)?;
        self.here(OP, &[("buf", buf.device())])?;
        let n = buf.len();
        if n == 0 {
            return Ok(());
        }
        let op = self.raw_op(op);
        self.enqueue("ncclAllReduce", &[&b], |api, comm, st| {
            // SAFETY: as in `all_reduce`, with one span read and written in place (which NCCL
            // allows).
            unsafe { (api.all_reduce)(b.ptr as _, b.ptr as _, n, dtype, op, comm, st) }
        })
    }

    /// `recv = send of rank root` on every rank (`ncclBroadcast`); `send` is read on the root only
    /// (other ranks may pass any array of the right size on their device).
    pub fn broadcast<T: Element>(&self, send: &Array<T>, recv: &mut Array<T>, root: usize) -> Result<()> {
        const OP: &str = "broadcast";
        let dtype = nccl_dtype(T::ELEM, OP)?;
        let (s, r) = (contiguous(OP, "send", send)?, contiguous(OP, "recv", recv)?);
        count(OP, "recv", send.len(), recv.len(), "recv has send's number of elements")?;
        disjoint(OP, &s, &r, true)?;
        self.here(OP, &[("send", send.device()), ("recv", recv.device())])?;
        let root = rank_below(OP, "root", root, self.size())?;
        let n = send.len();
        if n == 0 {
            return Ok(());
        }
        self.enqueue("ncclBroadcast", &[&s, &r], |api, comm, st| {
            // SAFETY: as in `all_reduce`; `root` is a rank of the communicator.
            unsafe { (api.broadcast)(s.ptr as _, r.ptr as _, n, dtype, root, comm, st) }
        })
    }

    /// [`Communicator::broadcast`] in place: `buf` of the root is written into `buf` of every rank.
    pub fn broadcast_in_place<T: Element>(&self, buf: &mut Array<T>, root: usize) -> Result<()> {
        const OP: &str = "broadcast_in_place";
        let dtype = nccl_dtype(T::ELEM, OP)?;
        let b = contiguous(OP, "buf", buf)?;
        self.here(OP, &[("buf", buf.device())])?;
        let root = rank_below(OP, "root", root, self.size())?;
        let n = buf.len();
        if n == 0 {
            return Ok(());
        }
        self.enqueue("ncclBroadcast", &[&b], |api, comm, st| {
            // SAFETY: as in `broadcast_in_place`'s checks above; one span, in place.
            unsafe { (api.broadcast)(b.ptr as _, b.ptr as _, n, dtype, root, comm, st) }
        })
    }

    /// `recv = op(send of every rank)` on rank `root` only (`ncclReduce`); `recv` is written on
    /// the root only (other ranks still pass an array of the right size on their device).
    pub fn reduce<T: Element>(&self, send: &Array<T>, recv: &mut Array<T>, op: ReduceOp, root: usize) -> Result<()> {
        const OP: &str = "reduce";
        let dtype = nccl_dtype(T::ELEM, OP)?;
        let (s, r) = (contiguous(OP, "send", send)?, contiguous(OP, "recv", recv)?);
        count(OP, "recv", send.len(), recv.len(), "recv has send's number of elements")?;
        disjoint(OP, &s, &r, true)?;
        self.here(OP, &[("send", send.device()), ("recv", recv.device())])?;
        let root = rank_below(OP, "root", root, self.size())?;
        let n = send.len();
        if n == 0 {
            return Ok(());
        }
        let op = self.raw_op(op);
        self.enqueue("ncclReduce", &[&s, &r], |api, comm, st| {
            // SAFETY: as in `all_reduce`; `root` is a rank of the communicator.
            unsafe { (api.reduce)(s.ptr as _, r.ptr as _, n, dtype, op, root, comm, st) }
        })
    }

    /// [`Communicator::reduce`] in place: the root's `buf` becomes the reduction of every rank's.
    pub fn reduce_in_place<T: Element>(&self, buf: &mut Array<T>, op: ReduceOp, root: usize) -> Result<()> {
        const OP: &str = "reduce_in_place";
        let dtype = nccl_dtype(T::ELEM, OP)?;
        let b = contiguous(OP, "buf", buf)?;
        self.here(OP, &[("buf", buf.device())])?;
        let root = rank_below(OP, "root", root, self.size())?;
        let n = buf.len();
        if n == 0 {
            return Ok(());
        }
        let op = self.raw_op(op);
        self.enqueue("ncclReduce", &[&b], |api, comm, st| {
            // SAFETY: as in `reduce`; one span, in place.
            unsafe { (api.reduce)(b.ptr as _, b.ptr as _, n, dtype, op, root, comm, st) }
        })
    }

    /// `recv = [send of rank 0, send of rank 1, ...]` on every rank (`ncclAllGather`): `recv`
    /// has `size() * send.len()` elements, rank `i`'s at `i * send.len()` in C order.
    pub fn all_gather<T: Element>(&self, send: &Array<T>, recv: &mut Array<T>) -> Result<()> {
        const OP: &str = "all_gather";
        let dtype = nccl_dtype(T::ELEM, OP)?;
        let (s, r) = (contiguous(OP, "send", send)?, contiguous(OP, "recv", recv)?);
        let rule = format!("{} ranks times send's {} element(s)", self.size(), send.len());
        count(OP, "recv", self.size() * send.len(), recv.len(), &rule)?;
        disjoint(OP, &s, &r, false)?;
        self.here(OP, &[("send", send.device()), ("recv", recv.device())])?;
        let n = send.len();
        if n == 0 {
            return Ok(());
        }
        self.enqueue("ncclAllGather", &[&s, &r], |api, comm, st| {
            // SAFETY: `send` holds `n` and `recv` `size() * n` elements of `dtype` on this rank's
            // device (checked above), disjoint, alive and ordered until the collective has run.
            unsafe { (api.all_gather)(s.ptr as _, r.ptr as _, n, dtype, comm, st) }
        })
    }

    /// `recv = op(send of every rank)[rank * recv.len() ..][.. recv.len()]` (`ncclReduceScatter`):
    /// each rank gets its block of the reduction; `send` has `size() * recv.len()` elements.
    pub fn reduce_scatter<T: Element>(&self, send: &Array<T>, recv: &mut Array<T>, op: ReduceOp) -> Result<()> {
        const OP: &str = "reduce_scatter";
        let dtype = nccl_dtype(T::ELEM, OP)?;
        let (s, r) = (contiguous(OP, "send", send)?, contiguous(OP, "recv", recv)?);
        let size = self.size();
        if !send.len().is_multiple_of(size) {
            return Err(Error::InvalidShape {
                op: "an NCCL collective",
                detail: format!("{OP}: send's {} element(s) do not split into {size} equal blocks, one per rank", send.len()),
            });
        }
        let rule = format!("send's {} element(s) divided by {size} ranks", send.len());
        count(OP, "recv", send.len() / size, recv.len(), &rule)?;
        disjoint(OP, &s, &r, false)?;
        self.here(OP, &[("send", send.device()), ("recv", recv.device())])?;
        let n = recv.len();
        if n == 0 {
            return Ok(());
        }
        let op = self.raw_op(op);
        self.enqueue("ncclReduceScatter", &[&s, &r], |api, comm, st| {
            // SAFETY: `recv` holds `n` and `send` `size() * n` elements of `dtype` on this rank's
            // device (checked above), disjoint, alive and ordered until the collective has run.
            unsafe { (api.reduce_scatter)(s.ptr as _, r.ptr as _, n, dtype, op, comm, st) }
        })
    }

    /// Sends `data` to rank `peer` (`ncclSend`), which receives it with a `recv` of as many
    /// elements. A rank that both sends and receives (or sends to itself) puts both in one
    /// [`group`](super::group).
    pub fn send<T: Element>(&self, data: &Array<T>, peer: usize) -> Result<()> {
        const OP: &str = "send";
        let dtype = nccl_dtype(T::ELEM, OP)?;
        let d = contiguous(OP, "data", data)?;
        self.here(OP, &[("data", data.device())])?;
        let peer = rank_below(OP, "peer", peer, self.size())?;
        let n = data.len();
        if n == 0 {
            return Ok(());
        }
        self.enqueue("ncclSend", &[&d], |api, comm, st| {
            // SAFETY: `data` holds `n` elements of `dtype` on this rank's device (checked above),
            // alive and ordered until the send has run; `peer` is a rank of the communicator.
            unsafe { (api.send)(d.ptr as _, n, dtype, peer, comm, st) }
        })
    }

    /// Receives into `data` what rank `peer` sends (`ncclRecv`): as many elements as `data` has.
    pub fn recv<T: Element>(&self, data: &mut Array<T>, peer: usize) -> Result<()> {
        const OP: &str = "recv";
        let dtype = nccl_dtype(T::ELEM, OP)?;
        let d = contiguous(OP, "data", data)?;
        self.here(OP, &[("data", data.device())])?;
        let peer = rank_below(OP, "peer", peer, self.size())?;
        let n = data.len();
        if n == 0 {
            return Ok(());
        }
        self.enqueue("ncclRecv", &[&d], |api, comm, st| {
            // SAFETY: as in `send`; NCCL writes the `n` elements.
            unsafe { (api.recv)(d.ptr as _, n, dtype, peer, comm, st) }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operands_are_checked_on_the_cpu_device() {
        let cpu = Device::cpu();
        let s = cpu.clone().use_scoped().unwrap();
        let a = Array::<f32>::from_shape_vec([4, 6], (0..24).map(|i| i as f32 * 0.5 + 1.0).collect()).unwrap();
        let t = a.transpose();
        let e = contiguous("all_reduce", "send", &t).err().unwrap();
        assert!(matches!(e, Error::NeedsCopy { .. }) && e.to_string().contains("send"), "{e}");
        assert!(contiguous("all_reduce", "send", &a).is_ok());
        let e = count("all_gather", "recv", 48, 24, "2 ranks times send's 24 element(s)").unwrap_err();
        assert!(e.to_string().contains("24 element(s), 48 expected"), "{e}");
        let e = on_device("all_reduce", "send", &cpu, a.device()).unwrap_err();
        assert!(matches!(e, Error::Unsupported { .. }) && e.to_string().contains("CPU device"), "{e}");
        let half = a.reshape([24]).unwrap().slice(0, 6..18).unwrap();
        let (x, y) = (contiguous("x", "send", &a).unwrap(), contiguous("x", "recv", &half).unwrap());
        assert!(disjoint("all_reduce", &x, &y, true).is_err(), "a partial overlap passed");
        assert!(disjoint("all_reduce", &x, &x, true).is_ok());
        assert!(disjoint("all_gather", &x, &x, false).is_err());
        assert!(rank_below("send", "peer", 2, 2).is_err() && rank_below("send", "peer", 1, 2).is_ok());
        drop(s);
    }
}
