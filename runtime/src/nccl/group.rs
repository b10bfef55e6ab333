//! `group`: NCCL's group calls (`ncclGroupStart`/`ncclGroupEnd`), and what keeps a collective's
//! arrays alive and ordered until NCCL has queued it.
//!
//! NCCL queues a collective on its stream when it is called, or, inside a group, at the group's
//! end. Its arrays' memory must not go back to the pool for another array before the collective
//! has run: a buffer freed on its own stream is reused in that stream's order (docs/runtime.md,
//! Memory), so a collective queued on the buffer's stream is safe once queued. Hence:
//! - each collective makes its stream wait for the streams of its arrays' buffers (when they
//!   differ), so that it runs after what was queued on them;
//! - once it is queued, each buffer's stream (when it differs) waits for an event recorded after
//!   it, so that a later free on that stream comes after the collective ([`after`]);
//! - inside a group, the buffers are held (a reference each) until the group's end, and the
//!   second step is taken then, once NCCL has queued the group's work.

use std::cell::{Cell, RefCell};
use std::sync::Arc;

use super::communicator::rebind_current;
use super::library::api;
use crate::error::Result;
use crate::memory::DeviceBuffer;
use crate::stream::{Event, Stream};

/// A collective queued (or, in a group, to be queued) on a stream, with the buffers it uses.
type Queued = (Stream, Vec<Arc<DeviceBuffer>>);

thread_local! {
    /// How deep this thread is in `group` calls.
    static DEPTH: Cell<usize> = const { Cell::new(0) };
    /// The collectives of this thread's open group.
    static PENDING: RefCell<Vec<Queued>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` between `ncclGroupStart` and `ncclGroupEnd`: the collectives it calls are queued
/// together at the end. One process driving several GPUs must call the collectives of all its
/// communicators inside one group (else the first rank's call waits for the others, which this
/// thread has not called yet: a hang); a rank's `send` and `recv` with each other (and with
/// itself) go in one group too. Groups nest; the outermost end queues the work.
///
/// Returns `f`'s result, or the group end's error ([`Error::Nccl`](crate::Error::Nccl)).
pub fn group<R>(f: impl FnOnce() -> Result<R>) -> Result<R> {
    let api = api()?;
    // SAFETY: no arguments; every start is matched by the end in `Open::end` (also on a panic).
    api.check("ncclGroupStart", unsafe { (api.group_start)() }, std::ptr::null_mut())?;
    DEPTH.with(|d| d.set(d.get() + 1));
    let mut open = Open { ended: false };
    let r = f();
    let end = open.end();
    let r = r.and_then(|r| end.map(|()| r));
    if DEPTH.with(|d| d.get()) == 0 {
        let pending = PENDING.with(|p| std::mem::take(&mut *p.borrow_mut()));
        if r.is_ok() {
            for (stream, bufs) in &pending {
                join(stream, bufs)?;
            }
        } else {
            // Whatever NCCL queued before failing must finish before the buffers can go.
            for (stream, _) in &pending {
                let _ = stream.synchronize();
            }
        }
    }
    r
}

/// The group `group` opened: ended once, by `end` or, when `f` panics, by the drop.
struct Open {
    ended: bool,
}

impl Open {
    fn end(&mut self) -> Result<()> {
        self.ended = true;
        DEPTH.with(|d| d.set(d.get() - 1));
        let api = api()?;
        // SAFETY: no arguments; ends the group `group` started.
        let code = unsafe { (api.group_end)() };
        rebind_current();
        api.check("ncclGroupEnd", code, std::ptr::null_mut())
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        if !self.ended {
            let _ = self.end();
        }
    }
}

/// Whether this thread is inside a `group`.
pub(super) fn in_group() -> bool {
    DEPTH.with(|d| d.get() > 0)
}

/// Called after a collective was handed to NCCL on `stream`: orders the buffers' later frees after
/// it now, or, inside a group, keeps them until the group's end and orders them then.
pub(super) fn after(stream: Stream, bufs: Vec<Arc<DeviceBuffer>>) -> Result<()> {
    if in_group() {
        PENDING.with(|p| p.borrow_mut().push((stream, bufs)));
        return Ok(());
    }
    join(&stream, &bufs)
}

/// Makes each buffer's stream that is not `stream` wait for the work queued on `stream` so far.
fn join(stream: &Stream, bufs: &[Arc<DeviceBuffer>]) -> Result<()> {
    let mut event = None;
    for b in bufs.iter().filter(|b| b.stream() != stream) {
        if event.is_none() {
            event = Some(Event::record(stream)?);
        }
        if let Some(e) = &event {
            b.stream().wait_event(e)?;
        }
    }
    Ok(())
}
