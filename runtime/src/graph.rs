//! [`Graph`]: launches recorded once on a stream and replayed with one driver call (a CUDA
//! graph; docs/graphs.md).
//!
//! A capture runs a closure with the stream made current and the driver recording instead of
//! running; the work becomes a graph, instantiated once. What a graph may hold is what cuprum can
//! keep valid for as long as it can replay: launches on arrays that exist before the capture
//! (every array a launch takes is kept alive by the graph, `crate::capture`) and device-to-device
//! work. Allocating, copying to or from host memory and compiling are refused inside a capture,
//! with an error that says so. A graph replays on the stream it was recorded on, ordered with the
//! other work there; dropping it waits for its replays.

use cudarc::driver::sys;

use crate::capture::{self, Kept};
use crate::error::{Error, Result};
use crate::stream::Stream;

/// A recorded sequence of launches, replayed with [`Graph::replay`].
///
/// ```no_run
/// # use cuprum_runtime::{Array, Device, Graph, Stream, Result};
/// # fn step(_: &Array<f32>, _: &mut Array<f32>) -> Result<()> { Ok(()) }
/// # fn main() -> Result<()> {
/// let stream = Stream::new(&Device::get(0)?)?;
/// let x = Array::from_vec(vec![1.0f32; 1024])?;
/// let mut y = Array::<f32>::zeros([1024])?;
/// step(&x, &mut y)?; // once before the capture: loads (or compiles) the kernels
/// let graph = Graph::capture(&stream, |_| step(&x, &mut y))?;
/// for _ in 0..100 {
///     graph.replay()?;
/// }
/// stream.synchronize()?;
/// # Ok(()) }
/// ```
pub struct Graph {
    stream: Stream,
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
    /// The buffers the recorded launches use.
    kept: Kept,
    nodes: usize,
}

impl std::fmt::Debug for Graph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Graph").field("nodes", &self.nodes).field("buffers", &self.kept.len()).finish_non_exhaustive()
    }
}

/// A recorded graph before instantiation.
struct Recorded {
    graph: sys::CUgraph,
    kept: Kept,
    nodes: usize,
}

impl Graph {
    /// Records the work `record` queues on `stream` (made the current stream while it runs) into
    /// a graph. `stream` must be one made with [`Stream::new`] (the legacy default stream cannot
    /// be recorded). Every kernel `record` launches must have run once before (a capture never
    /// compiles), and it may neither allocate (pass outputs: `call_into`, `.out(..)`) nor copy
    /// between host and device; such a call returns an error, and so does the capture.
    pub fn capture(stream: &Stream, record: impl FnOnce(&Stream) -> Result<()>) -> Result<Graph> {
        let r = Graph::record(stream, record)?;
        let exec = Graph::instantiate(stream, &r)?;
        Ok(Graph { stream: stream.clone(), graph: r.graph, exec, kept: r.kept, nodes: r.nodes })
    }

    /// `r`'s graph instantiated; on failure the graph is destroyed.
    fn instantiate(stream: &Stream, r: &Recorded) -> Result<sys::CUgraphExec> {
        let mut exec: sys::CUgraphExec = std::ptr::null_mut();
        // SAFETY: `r.graph` is a graph just recorded on this device's context (bound by
        // `record`), and `exec` a place for the instantiated one.
        let made = unsafe { sys::cuGraphInstantiateWithFlags(&mut exec, r.graph, 0) };
        if let Err(e) = made.result() {
            // SAFETY: `r.graph` is ours and no longer used.
            unsafe { sys::cuGraphDestroy(r.graph) };
            return Err(stream.device().driver_error("cuGraphInstantiateWithFlags", e));
        }
        Ok(exec)
    }

    /// Records `record` as [`Graph::capture`] does, ended and cleaned up on every error.
    fn record(stream: &Stream, record: impl FnOnce(&Stream) -> Result<()>) -> Result<Recorded> {
        let device = stream.device();
        if device.is_cpu() {
            return Err(Error::Unsupported {
                what: "a graph on the CPU device (its launches run at once; call the work directly)".into(),
            });
        }
        let handle = stream.handle();
        if handle.is_null() {
            return Err(Error::Unsupported {
                what: "recording the legacy default stream: capture on a stream made with `Stream::new`".into(),
            });
        }
        if !capture::begin() {
            return Err(Error::Unsupported { what: "a graph capture inside another one on the same thread".into() });
        }
        let began = device.bind_to_thread().and_then(|()| {
            // SAFETY: `handle` is a live stream of the device bound to this thread.
            unsafe { sys::cuStreamBeginCapture_v2(handle, sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED) }
                .result()
                .map_err(device.driver_fn("cuStreamBeginCapture"))
        });
        if let Err(e) = began {
            capture::end();
            return Err(e);
        }
        // A panic in `record` still ends the capture (the stream stays usable), then goes on.
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _current = stream.use_scoped();
            record(stream)
        }));
        let kept = capture::end();
        let mut graph: sys::CUgraph = std::ptr::null_mut();
        // SAFETY: the stream is capturing (begun above); `graph` is a place for the result.
        let ended = unsafe { sys::cuStreamEndCapture(handle, &mut graph) }.result();
        let destroy = |g: sys::CUgraph| {
            if !g.is_null() {
                // SAFETY: `g` is the graph this capture made, used nowhere else.
                unsafe { sys::cuGraphDestroy(g) };
            }
        };
        let ran = match ran {
            Ok(r) => r,
            Err(panic) => {
                destroy(graph);
                std::panic::resume_unwind(panic);
            }
        };
        if let Err(e) = ran {
            destroy(graph);
            return Err(e);
        }
        if let Err(e) = ended {
            destroy(graph);
            return Err(device.driver_error("cuStreamEndCapture", e));
        }
        let mut nodes = 0usize;
        // SAFETY: `graph` is a live graph; a null node array asks for the count only.
        if let Err(e) = unsafe { sys::cuGraphGetNodes(graph, std::ptr::null_mut(), &mut nodes) }.result() {
            destroy(graph);
            return Err(device.driver_error("cuGraphGetNodes", e));
        }
        Ok(Recorded { graph, kept, nodes })
    }

    /// Queues one run of the recorded work on the stream it was recorded on (ordered after what
    /// is queued there before, like a launch).
    pub fn replay(&self) -> Result<()> {
        // Recorded into another graph, it would not keep this one's buffers.
        self.stream.refuse_if_recording("replaying a graph")?;
        let device = self.stream.device();
        device.check_alive()?;
        device.bind_to_thread()?;
        // SAFETY: `exec` is a live graph of this device, whose buffers `self.kept` keeps alive;
        // the stream is live (held by `self`).
        unsafe { sys::cuGraphLaunch(self.exec, self.stream.handle()) }
            .result()
            .map_err(device.driver_fn("cuGraphLaunch"))
    }

    /// Records `record` again (as [`Graph::capture`]) and makes it the work replayed from now on:
    /// for the same launches on other arrays of the same shapes, the driver updates the
    /// instantiated graph in place; otherwise it is instantiated again. Waits for the replays
    /// queued so far.
    pub fn update(&mut self, record: impl FnOnce(&Stream) -> Result<()>) -> Result<()> {
        let stream = self.stream.clone();
        let r = Graph::record(&stream, record)?;
        // The buffers of the old work may go back to the pool only after its replays.
        if let Err(e) = stream.wait_quietly() {
            // SAFETY: `r.graph` is ours and no longer used.
            unsafe { sys::cuGraphDestroy(r.graph) };
            return Err(e);
        }
        let mut info = sys::CUgraphExecUpdateResultInfo { result: sys::CUgraphExecUpdateResult::CU_GRAPH_EXEC_UPDATE_SUCCESS, errorNode: std::ptr::null_mut(), errorFromNode: std::ptr::null_mut() };
        // SAFETY: both handles are live graphs of this device; no replay of `exec` is pending.
        let updated = unsafe { sys::cuGraphExecUpdate_v2(self.exec, r.graph, &mut info) }.result().is_ok();
        if !updated {
            let exec = Graph::instantiate(&stream, &r)?;
            // SAFETY: the old executable graph has no pending replay (waited for above).
            unsafe { sys::cuGraphExecDestroy(self.exec) };
            self.exec = exec;
        }
        // SAFETY: the old graph is ours; the executable graph does not need it.
        unsafe { sys::cuGraphDestroy(self.graph) };
        self.graph = r.graph;
        self.kept = r.kept;
        self.nodes = r.nodes;
        Ok(())
    }

    /// The number of nodes (kernels and other operations) recorded.
    pub fn nodes(&self) -> usize {
        self.nodes
    }

    /// The stream the graph replays on.
    pub fn stream(&self) -> &Stream {
        &self.stream
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        // The recorded buffers go back to the pool only after the replays queued so far.
        let _ = self.stream.wait_quietly();
        // SAFETY: both handles are ours, and no replay is pending.
        unsafe {
            sys::cuGraphExecDestroy(self.exec);
            sys::cuGraphDestroy(self.graph);
        }
    }
}
