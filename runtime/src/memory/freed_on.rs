//! What a free chunk of the pool is ordered after: the stream it was freed on, or, for a stream
//! another library owns (`Stream::from_raw`), an event recorded on that stream at the free. Such a
//! stream may be destroyed by its owner as soon as cuprum's arrays on it are gone, so the pool
//! never touches its handle afterwards: another stream that takes the chunk waits for the event,
//! and a release waits for the event, not for the stream (docs/interop.md).

use std::sync::Arc;

use cudarc::driver::CudaEvent;

use super::wait_stream;
use crate::error::{Error, Result};
use crate::stream::{Stream, StreamKind};

#[derive(Clone)]
pub(crate) enum FreedOn {
    /// One of cuprum's streams (or a null stream), alive as long as the pool holds it.
    Stream(Stream),
    /// A foreign stream's frees: the event recorded at the latest of them (re-recorded at each,
    /// so it covers all) and the stream's kind.
    Foreign { event: Arc<CudaEvent>, kind: StreamKind },
}

impl FreedOn {
    /// The kind of the stream the chunk was freed on.
    pub(crate) fn kind(&self) -> StreamKind {
        match self {
            FreedOn::Stream(s) => s.kind(),
            FreedOn::Foreign { kind, .. } => *kind,
        }
    }

    /// Makes `stream` wait for the work queued before the free.
    pub(crate) fn order_before(&self, stream: &Stream) -> Result<()> {
        let device = stream.device();
        let event = match self {
            FreedOn::Stream(s) => Arc::new(s.raw()?.record_event(None).map_err(device.driver_fn("cuEventRecord"))?),
            FreedOn::Foreign { event, .. } => event.clone(),
        };
        stream.raw()?.wait(&event).map_err(device.driver_fn("cuStreamWaitEvent"))
    }

    /// Waits on the host for the work queued before the free (without reporting index errors).
    pub(crate) fn wait(&self) -> Result<()> {
        match self {
            FreedOn::Stream(s) => wait_stream(s),
            FreedOn::Foreign { event, .. } => event.synchronize().map_err(Error::driver_fn("cuEventSynchronize")),
        }
    }
}
