//! Whether this thread is recording a CUDA graph ([`crate::graph::Graph::capture`]), for the
//! layers below the graph (docs/graphs.md):
//!
//! - every buffer whose device address a launch takes (`Array::device_ptr`, the reductions'
//!   scratch memory) is kept by the graph being recorded, so that it lives as long as the graph
//!   can replay;
//! - what a graph cannot hold refuses with [`refuse`]: allocating (the memory would be the pool's
//!   again after the capture), copying to or from host memory (the host bytes would have to
//!   outlive the graph), compiling with NVRTC (a capture never compiles: run the work once first).

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::{Error, Result};

/// What a recorded graph keeps alive.
pub(crate) type Kept = Vec<Arc<dyn Any + Send + Sync>>;

/// Captures under way in the process (any thread).
static RECORDING: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static ACTIVE: Cell<bool> = const { Cell::new(false) };
    static KEPT: RefCell<Kept> = const { RefCell::new(Vec::new()) };
}

/// Starts recording on this thread; `false` if a capture is already under way.
pub(crate) fn begin() -> bool {
    let began = !ACTIVE.with(|a| a.replace(true));
    if began {
        RECORDING.fetch_add(1, Ordering::SeqCst);
    }
    began
}

/// Stops recording on this thread; returns what the recorded work uses.
pub(crate) fn end() -> Kept {
    if ACTIVE.with(|a| a.replace(false)) {
        RECORDING.fetch_sub(1, Ordering::SeqCst);
    }
    KEPT.with(|k| std::mem::take(&mut *k.borrow_mut()))
}

/// Whether this thread is recording a graph.
#[inline]
pub(crate) fn active() -> bool {
    ACTIVE.with(Cell::get)
}

/// Keeps `x` alive with the graph being recorded, if one is.
#[inline]
pub(crate) fn keep<T: Any + Send + Sync>(x: &Arc<T>) {
    if active() {
        keep_slow(x.clone());
    }
}

#[cold]
fn keep_slow(x: Arc<dyn Any + Send + Sync>) {
    KEPT.with(|k| {
        let mut k = k.borrow_mut();
        if !k.iter().any(|y| Arc::ptr_eq(y, &x)) {
            k.push(x);
        }
    });
}

/// `Err` naming `what` while a graph is being recorded on this thread.
#[inline]
pub(crate) fn refuse(what: &str) -> Result<()> {
    if active() { Err(refused(what)) } else { Ok(()) }
}

#[cold]
fn refused(what: &str) -> Error {
    Error::Unsupported {
        what: format!(
            "{what} while a graph is being recorded (a graph holds launches and device-to-device \
             work on arrays that exist before the capture): allocate the outputs first and pass \
             them (`call_into`, `.out(..)`), copy to and from the host outside the capture, and \
             run each kernel once before capturing so that nothing compiles (docs/graphs.md)"
        ),
    }
}

/// `Err` when another thread is recording a graph and `stream_is_recorded()` says the stream this
/// work goes to is the one it records: the work would join that graph without the buffers it
/// uses being kept (or with host memory it would read at replay). One atomic load when no
/// capture is under way.
#[inline]
pub(crate) fn refuse_foreign(what: &str, stream_is_recorded: impl FnOnce() -> bool) -> Result<()> {
    if RECORDING.load(Ordering::Relaxed) == 0 || active() || !stream_is_recorded() {
        return Ok(());
    }
    Err(Error::Unsupported {
        what: format!(
            "{what} on a stream that another thread is recording into a graph: queue it from the \
             thread that captures (inside its closure), or on another stream (docs/graphs.md)"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capture_keeps_each_buffer_once_and_refuses_while_active() {
        let a = Arc::new(7u32);
        keep(&a);
        assert!(refuse("x").is_ok() && !active(), "nothing is recorded outside a capture");
        assert!(begin());
        assert!(!begin(), "captures do not nest");
        keep(&a);
        keep(&a);
        keep(&Arc::new(8u32));
        match refuse("allocating") {
            Err(Error::Unsupported { what }) => assert!(what.starts_with("allocating while a graph is being recorded"), "{what}"),
            other => panic!("{other:?}"),
        }
        // This thread's own capture: its work is recorded and kept, not refused.
        assert!(refuse_foreign("a launch", || true).is_ok());
        let kept = end();
        assert_eq!(kept.len(), 2);
        assert_eq!(Arc::strong_count(&a), 2, "the capture holds one reference");
        assert!(!active() && end().is_empty());
    }

    #[test]
    fn another_threads_capture_refuses_work_on_its_stream_only() {
        let (started, stop) = (std::sync::Barrier::new(2), std::sync::Barrier::new(2));
        std::thread::scope(|s| {
            s.spawn(|| {
                assert!(begin());
                started.wait();
                stop.wait();
                end();
            });
            started.wait();
            assert!(refuse_foreign("a launch", || false).is_ok(), "a stream nobody records");
            match refuse_foreign("a launch", || true) {
                Err(Error::Unsupported { what }) => assert!(what.contains("another thread"), "{what}"),
                other => panic!("{other:?}"),
            }
            assert!(refuse("x").is_ok(), "this thread records nothing");
            stop.wait();
        });
        assert!(refuse_foreign("a launch", || true).is_ok(), "no capture under way");
    }
}
