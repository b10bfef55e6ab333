//! Copies between two GPUs' memory: peer to peer (`cuMemcpyPeerAsync`) once peer access is on
//! between the two contexts, which `Device::can_access_peer` turns on where
//! `cuDeviceCanAccessPeer` allows it (once per pair of devices, both ways, for the rest of the
//! process). Where it does not, `Array::to_device` stages the elements through host memory
//! instead (`array/mod.rs`).

use std::collections::HashMap;
use std::sync::Mutex;

use cudarc::driver::sys;

use super::DeviceBuffer;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::stream::{Event, Stream};
use crate::sync;

/// Whether each ordered pair of devices (by ordinal) has peer access on: asked once per pair.
static PEERS: Mutex<Option<HashMap<(usize, usize), bool>>> = Mutex::new(None);

impl Device {
    /// Whether this GPU and `peer` (another GPU) reach each other's memory directly
    /// (`cuDeviceCanAccessPeer` both ways); when they do, peer access is turned on between
    /// their contexts (`cuCtxEnablePeerAccess`, once per process), and copies between them
    /// ([`Array::to_device`](crate::Array::to_device)) go peer to peer. `false` for the CPU
    /// device and for the device itself.
    pub fn can_access_peer(&self, peer: &Device) -> Result<bool> {
        if self.is_cpu() || peer.is_cpu() || self == peer {
            return Ok(false);
        }
        let key = (self.ordinal(), peer.ordinal());
        if let Some(known) = sync::lock(&PEERS).as_ref().and_then(|m| m.get(&key)) {
            return Ok(*known);
        }
        let on = enable(self, peer)? && enable(peer, self)?;
        let mut peers = sync::lock(&PEERS);
        let map = peers.get_or_insert_with(HashMap::new);
        map.insert(key, on);
        map.insert((key.1, key.0), on);
        Ok(on)
    }
}

/// Turns on `from`'s access to `to`'s memory when the hardware allows it; whether it is on.
fn enable(from: &Device, to: &Device) -> Result<bool> {
    let (from_ctx, to_ctx) = (from.cuda_context("peer access")?, to.cuda_context("peer access")?);
    let mut can = 0;
    // SAFETY: `can` is a place for the answer; both handles are live devices of this process.
    let r = unsafe { sys::cuDeviceCanAccessPeer(&mut can, from_ctx.cu_device(), to_ctx.cu_device()) };
    r.result().map_err(from.driver_fn("cuDeviceCanAccessPeer"))?;
    if can == 0 {
        return Ok(false);
    }
    from.bind_to_thread()?;
    // SAFETY: `from`'s context is current; `to_ctx` is a live context of another device.
    let r = unsafe { sys::cuCtxEnablePeerAccess(to_ctx.cu_ctx(), 0) };
    match r {
        sys::CUresult::CUDA_SUCCESS | sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => Ok(true),
        e => Err(from.driver_error("cuCtxEnablePeerAccess", cudarc::driver::DriverError(e))),
    }
}

/// Makes `stream` wait for the work queued on `other` so far (the two may be streams of
/// different devices, which `Stream::wait_event` refuses).
fn wait_for(stream: &Stream, other: &Stream) -> Result<()> {
    let event = Event::record(other)?;
    stream.raw()?.wait(event.raw()?).map_err(stream.device().driver_fn("cuStreamWaitEvent"))
}

impl DeviceBuffer {
    /// Copies `bytes` bytes from `src` (at `src_offset`, a buffer of another GPU) into this
    /// buffer (at `offset`) on `stream`, a stream of this buffer's device: after the work queued
    /// so far on `src_stream` (a stream of `src`'s device) and on `src`'s own stream, and before
    /// anything later on `src`'s own stream (which orders its free). Does not wait for the copy.
    /// Peer to peer when peer access is on (`Device::can_access_peer`), else the driver stages it.
    pub(crate) fn copy_from_peer(
        &self,
        offset: usize,
        src: &DeviceBuffer,
        src_offset: usize,
        bytes: usize,
        src_stream: &Stream,
        stream: &Stream,
    ) -> Result<()> {
        let (dst_dev, src_dev) = (self.device(), src.device());
        if dst_dev.is_cpu() || src_dev.is_cpu() || stream.device() != dst_dev || src_stream.device() != src_dev {
            return Err(Error::DeviceMismatch {
                context: "a copy between GPUs (each stream on its buffer's GPU)".into(),
                expected: dst_dev.ordinal(),
                found: stream.device().ordinal(),
            });
        }
        let fits = |off: usize, len: usize| off.checked_add(bytes).is_some_and(|end| end <= len);
        if !fits(offset, self.len_bytes()) || !fits(src_offset, src.len_bytes()) {
            return Err(Error::InvalidSlice {
                detail: format!(
                    "a copy of {bytes} bytes between GPUs from byte {src_offset} of {} to byte {offset} of {}",
                    src.len_bytes(),
                    self.len_bytes()
                ),
            });
        }
        if bytes == 0 {
            return Ok(());
        }
        stream.refuse_if_recording("a copy between GPUs")?;
        wait_for(stream, src_stream)?;
        if src.stream() != src_stream {
            wait_for(stream, src.stream())?;
        }
        let (dst_ctx, src_ctx) = (dst_dev.cuda_context("a copy")?, src_dev.cuda_context("a copy")?);
        dst_dev.bind_to_thread()?;
        // SAFETY: both ranges lie inside live buffers (checked above) of these two contexts; the
        // source's pending writes are ordered before (the waits above) and its free after (the
        // wait below) the copy on `stream`, a live stream of the destination's device.
        unsafe {
            cudarc::driver::result::memcpy_peer_async(
                dst_ctx.cu_ctx(),
                self.ptr() + offset as u64,
                src_ctx.cu_ctx(),
                src.ptr() + src_offset as u64,
                bytes,
                stream.handle(),
            )
        }
        .map_err(dst_dev.driver_fn("cuMemcpyPeerAsync"))?;
        wait_for(src.stream(), stream)
    }
}
