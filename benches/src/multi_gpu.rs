//! The rows of issue 38 (several GPUs, docs/multi-gpu.md), each beside its ceiling measured in the
//! same run:
//!
//! - `all_reduce` (sum) of 256 MiB of f32 on each of 2 GPUs from one process (cuprum's
//!   `Communicator::all` and `nccl::group`), as nccl-tests' bus bandwidth (`2 (n-1)/n x bytes /
//!   time`), beside the same all-reduce made by calling libnccl directly (`ncclCommInitAll`,
//!   `ncclGroupStart`, `ncclAllReduce` on each device's raw pointer and raw stream,
//!   `ncclGroupEnd`): the library cuprum loaded (`nccl::version`'s file, found through
//!   `CUPRUM_NCCL_PATH`, the loader's path or `CUDA_PATH` as the runtime does), loaded again here;
//! - a peer copy of 1 GiB from device 0 to device 1 (`Array::to_device`) beside
//!   `cuMemcpyPeerAsync` of the same bytes on the same stream (the driver's peer copy; its
//!   synchronous form `cuMemcpyPeer` may return before a device-to-device copy ends, so both are
//!   timed up to a synchronize of the destination stream).
//!
//! Each figure is the median of 10 after 3 warm-ups, host time from before the call to after the
//! synchronize of the streams it ran on, the figure and its ceiling taking turns. The rows need two
//! GPUs: with fewer, [`rows`] prints one line saying so and gives none; without libnccl it prints
//! why and gives the peer copy row alone. `NCCL_NVLS_ENABLE=0` is set
//! before the first communicator.

use std::ffi::{c_int, c_void};
use std::time::Instant;

use cuprum_runtime::nccl::{self, Communicator, ReduceOp};
use cuprum_runtime::{Array, Device, Error, Result, Stream};

use crate::{Row, median};

/// NCCL's `ncclComm_t`.
type Comm = *mut c_void;

/// NCCL's `ncclFloat32` and `ncclSum` (nccl.h).
const NCCL_FLOAT32: c_int = 7;
const NCCL_SUM: c_int = 0;

/// Warm-ups, then timed rounds.
const WARM: usize = 3;
const TIMED: usize = 10;

/// The rows (none, after one printed line, where the machine has fewer than two GPUs).
pub fn rows() -> Result<Vec<Row>> {
    let count = Device::count()?;
    if count < 2 {
        println!("multi-GPU rows (all_reduce, peer copy): they need two GPUs, this machine has {count}");
        return Ok(Vec::new());
    }
    // SAFETY: no other thread of the bench reads or writes the environment (the rows run one at
    // a time on this thread); NCCL reads the variable at its first communicator, below.
    unsafe { nccl::disable_nvls() };
    let devices = [Device::get(0)?, Device::get(1)?];
    let mut rows = Vec::new();
    // Without libnccl the all-reduce row is left out, saying why (the rest of the table stands).
    match nccl::version() {
        Ok(_) => rows.push(all_reduce_row(&devices)?),
        Err(e) => println!("multi-GPU all_reduce row left out: {e}"),
    }
    rows.push(peer_copy_row(&devices)?);
    Ok(rows)
}

/// Host milliseconds of `f`, up to the synchronize of `streams`.
fn host_ms(streams: &[Stream], f: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
    for s in streams {
        s.synchronize()?;
    }
    let t0 = Instant::now();
    f()?;
    for s in streams {
        s.synchronize()?;
    }
    Ok(t0.elapsed().as_secs_f64() * 1e3)
}

/// An error of the bench's direct NCCL calls.
fn nccl_err(call: &'static str, code: c_int) -> Error {
    Error::Nccl { call, detail: format!("result code {code} (the bench's direct call)") }
}

/// libnccl's functions the ceiling calls, loaded from the file cuprum loaded.
struct Direct {
    _lib: libloading::Library,
    comm_init_all: unsafe extern "C" fn(*mut Comm, c_int, *const c_int) -> c_int,
    comm_destroy: unsafe extern "C" fn(Comm) -> c_int,
    #[allow(clippy::type_complexity)]
    all_reduce: unsafe extern "C" fn(*const c_void, *mut c_void, usize, c_int, c_int, Comm, *mut c_void) -> c_int,
    group_start: unsafe extern "C" fn() -> c_int,
    group_end: unsafe extern "C" fn() -> c_int,
}

impl Direct {
    fn load() -> Result<Direct> {
        // The file the runtime found (CUPRUM_NCCL_PATH, the loader's path, CUDA_PATH's folders).
        let (_, from) = nccl::version()?;
        let fail = |e: libloading::Error| Error::NoNccl { detail: format!("the bench could not load {from}: {e}") };
        // SAFETY: the runtime loaded the same file already (its initialisers have run).
        let lib = unsafe { libloading::Library::new(&from) }.map_err(fail)?;
        macro_rules! sym {
            ($name:literal) => {
                // SAFETY: NCCL's function of that name, whose C signature (nccl.h) is the field's
                // type; used only while `_lib` keeps the library loaded (the same `Direct`).
                *unsafe { lib.get(concat!($name, "\0").as_bytes()) }.map_err(fail)?
            };
        }
        Ok(Direct {
            comm_init_all: sym!("ncclCommInitAll"),
            comm_destroy: sym!("ncclCommDestroy"),
            all_reduce: sym!("ncclAllReduce"),
            group_start: sym!("ncclGroupStart"),
            group_end: sym!("ncclGroupEnd"),
            _lib: lib,
        })
    }
}

/// `all_reduce` (sum) of 256 MiB of f32 per GPU: cuprum against libnccl called directly.
fn all_reduce_row(devices: &[Device; 2]) -> Result<Row> {
    let n = (256usize << 20) / 4;
    let bytes = (n * 4) as f64;
    let direct = Direct::load()?;
    let comms = Communicator::all(devices)?;
    let mut raw: Vec<Comm> = vec![std::ptr::null_mut(); 2];
    let ordinals: Vec<c_int> = devices.iter().map(|d| d.ordinal() as c_int).collect();
    // SAFETY: `raw` has room for 2 communicators, `ordinals` lists 2 devices.
    let code = unsafe { (direct.comm_init_all)(raw.as_mut_ptr(), 2, ordinals.as_ptr()) };
    if code != 0 {
        return Err(nccl_err("ncclCommInitAll", code));
    }
    let streams = [Stream::current_for(&devices[0])?, Stream::current_for(&devices[1])?];
    // Each rank's data: rank r holds r + 1 + i % 7 (small integers: the sums stay exact).
    let mut bufs = Vec::new();
    for (r, d) in devices.iter().enumerate() {
        let _on = d.use_scoped()?;
        bufs.push(Array::from_vec((0..n).map(|i| (r + 1 + i % 7) as f32).collect())?);
    }
    let cuprum_ar = |bufs: &mut Vec<Array<f32>>| {
        nccl::group(|| {
            for (c, b) in comms.iter().zip(bufs.iter_mut()) {
                c.all_reduce_in_place(b, ReduceOp::Sum)?;
            }
            Ok(())
        })
    };
    let ptrs: Vec<u64> = bufs.iter().map(|b| b.device_ptr()).collect();
    let direct_ar = || -> Result<()> {
        // SAFETY: each pointer is an array of `n` f32 on the device of the communicator and
        // stream it is given with (rank i on devices[i]); the arrays outlive the calls (the
        // timing synchronizes both streams before they can be dropped).
        unsafe {
            let c = (direct.group_start)();
            if c != 0 {
                return Err(nccl_err("ncclGroupStart", c));
            }
            for r in 0..2 {
                let p = ptrs[r] as *mut c_void;
                let c = (direct.all_reduce)(p, p, n, NCCL_FLOAT32, NCCL_SUM, raw[r], streams[r].handle() as *mut c_void);
                if c != 0 {
                    return Err(nccl_err("ncclAllReduce", c));
                }
            }
            let c = (direct.group_end)();
            if c != 0 {
                return Err(nccl_err("ncclGroupEnd", c));
            }
        }
        Ok(())
    };
    let (mut t_cuprum, mut t_direct) = (Vec::new(), Vec::new());
    for i in 0..WARM + TIMED {
        let a = host_ms(&streams, &mut || cuprum_ar(&mut bufs))?;
        let b = host_ms(&streams, &mut || direct_ar())?;
        if i >= WARM {
            t_cuprum.push(a);
            t_direct.push(b);
        }
    }
    // Check the result of one all-reduce of fresh data (the timed ones doubled the sums each
    // time): element i is (1 + i % 7) + (2 + i % 7) on both ranks.
    for (r, d) in devices.iter().enumerate() {
        let _on = d.use_scoped()?;
        bufs[r] = Array::from_vec((0..n).map(|i| (r + 1 + i % 7) as f32).collect())?;
    }
    cuprum_ar(&mut bufs)?;
    for (r, d) in devices.iter().enumerate() {
        let _on = d.use_scoped()?;
        let got = bufs[r].to_vec()?;
        if let Some(i) = (0..n).find(|&i| got[i] != (3 + 2 * (i % 7)) as f32) {
            return Err(Error::Unsupported {
                what: format!("the bench's all_reduce gave {} at element {i} on rank {r}, not {}", got[i], 3 + 2 * (i % 7)),
            });
        }
    }
    for c in raw {
        // SAFETY: a communicator made above, destroyed once, after its work (synchronized).
        let code = unsafe { (direct.comm_destroy)(c) };
        if code != 0 {
            return Err(nccl_err("ncclCommDestroy", code));
        }
    }
    // nccl-tests' bus bandwidth of an all-reduce: 2 (n-1)/n x bytes / time, n ranks.
    let ranks = devices.len() as f64;
    let busbw = |t: Vec<f64>| 2.0 * (ranks - 1.0) / ranks * bytes / (median(t) * 1e-3) / 1e9;
    let (ms_cuprum, ms_direct) = (median(t_cuprum.clone()), median(t_direct.clone()));
    Ok(Row {
        name: "all_reduce sum 256 MiB f32, 2 GPUs (Communicator::all + group)",
        value: busbw(t_cuprum),
        unit: "GB/s",
        ceiling_name: "ncclAllReduce called directly (ncclCommInitAll)",
        ceiling: busbw(t_direct),
        target: Some((">=", 0.90)),
        note: format!(
            "bus bandwidth (nccl-tests); {ms_cuprum:.3} ms vs {ms_direct:.3} ms, medians of 10 after 3 warm-ups, alternating; NCCL_NVLS_ENABLE=0"
        ),
    })
}

/// A peer copy of 1 GiB from device 0 to device 1: `to_device` against `cuMemcpyPeerAsync`.
fn peer_copy_row(devices: &[Device; 2]) -> Result<Row> {
    let [d0, d1] = devices;
    let n = (1usize << 30) / 4;
    let bytes = (n * 4) as f64;
    let peer = d0.can_access_peer(d1)?;
    let host: Vec<f32> = (0..n).map(|i| (i % 1_000_003) as f32).collect();
    let x = {
        let _on = d0.use_scoped()?;
        Array::from_slice(&host)?
    };
    let y = {
        let _on = d1.use_scoped()?;
        Array::<f32>::zeros(n)?
    };
    let (s0, s1) = (Stream::current_for(d0)?, Stream::current_for(d1)?);
    let streams = [s0, s1.clone()];
    let (ctx0, ctx1) = (d0.context()?.clone(), d1.context()?.clone());
    let (xp, yp) = (x.device_ptr(), y.device_ptr());
    let mut last = None;
    let (mut t_cuprum, mut t_driver) = (Vec::new(), Vec::new());
    for i in 0..WARM + TIMED {
        // The previous copy goes back to the pool before the clock starts.
        drop(last.take());
        let a = host_ms(&streams, &mut || {
            last = Some(x.to_device(d1)?);
            Ok(())
        })?;
        let b = host_ms(&streams, &mut || {
            // SAFETY: both buffers hold `n` f32 in these two contexts and outlive the copy (the
            // timing synchronizes the stream, of d1's context, before anything is dropped).
            unsafe {
                cudarc::driver::result::memcpy_peer_async(ctx1.cu_ctx(), yp, ctx0.cu_ctx(), xp, n * 4, s1.handle())
            }
            .map_err(Error::driver_fn("cuMemcpyPeerAsync"))
        })?;
        if i >= WARM {
            t_cuprum.push(a);
            t_driver.push(b);
        }
    }
    let copied = last.expect("the loop ran");
    let _on = d1.use_scoped()?;
    if copied.device() != d1 || copied.to_vec()? != host || y.to_vec()? != host {
        return Err(Error::Unsupported { what: "the bench's peer copies produced wrong data".into() });
    }
    let gbs = |t: Vec<f64>| bytes / (median(t) * 1e-3) / 1e9;
    let (ms_cuprum, ms_driver) = (median(t_cuprum.clone()), median(t_driver.clone()));
    Ok(Row {
        name: "peer copy 1 GiB GPU 0 -> GPU 1 (Array::to_device)",
        value: gbs(t_cuprum),
        unit: "GB/s",
        ceiling_name: "cuMemcpyPeerAsync, same bytes and stream",
        ceiling: gbs(t_driver),
        target: Some((">=", 0.90)),
        note: format!(
            "bytes copied / time; {ms_cuprum:.3} ms vs {ms_driver:.3} ms, medians of 10 after 3 warm-ups, alternating; peer access {}",
            if peer { "on" } else { "not available (the driver stages both)" }
        ),
    })
}
