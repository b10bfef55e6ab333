//! The graph rows (issue 17, docs/graphs.md): 1,000 one-element kernels (`empty4` of
//! `kernels.rs`, on one-element arrays) launched eagerly and replayed from a `cuprum::Graph`,
//! against a native CUDA graph of 1,000 bare launches of an empty kernel (recorded with cudarc's
//! own stream capture) and against a bare launch. Targets: the GPU time per replayed node at most
//! 1.1x the native graph's; the host cost of a replay, per kernel, at most 0.3x a bare launch's.

use std::time::Instant;

use cudarc::driver::{LaunchConfig as CuLaunchConfig, PushKernelArg, sys};
use cuprum_runtime::{Array, Device, Error, Graph, LaunchConfig, Result, Stream};

use super::kernels::empty4;
use super::{Row, median};

/// Kernels per graph.
const K: usize = 1000;

/// GPU time per node of `replay` (which queues one run of `K` nodes): the reduction rows'
/// event timing (median of `rounds` rounds of 10 calls) divided by `K`.
fn per_node_us(stream: &Stream, rounds: usize, replay: impl FnMut() -> Result<()>) -> Result<f64> {
    Ok(super::reduction::time_ms(stream, rounds, replay)? * 1e3 / K as f64)
}

/// `empty_cubin`: the bare launch row's empty kernel (`main.rs`), for the native graph.
pub fn rows(dev: &Device, empty_cubin: &[u8], bare_launch_us: f64, rounds: usize) -> Result<Vec<Row>> {
    let stream = Stream::new(dev)?;
    let _current = stream.use_scoped();
    let (a, b) = (Array::<f32>::zeros(1)?, Array::<f32>::zeros(1)?);
    let mut c = Array::<f32>::zeros(1)?;
    let cfg = LaunchConfig::new(1u32, 32u32);
    let launch_all = |c: &mut Array<f32>| -> Result<()> {
        for _ in 0..K {
            empty4::launch(&cfg, &a, &b, c, 1)?;
        }
        Ok(())
    };

    // Eager: K launches and a synchronize, per kernel.
    launch_all(&mut c)?;
    stream.synchronize()?;
    let mut eager = Vec::new();
    for _ in 0..rounds.max(3) {
        let t = Instant::now();
        launch_all(&mut c)?;
        stream.synchronize()?;
        eager.push(t.elapsed().as_secs_f64() * 1e6 / K as f64);
    }
    let eager_us = median(eager);

    // cuprum's graph: GPU time per node, and the host cost of one replay call per kernel.
    let graph = Graph::capture(&stream, |_| launch_all(&mut c))?;
    let ours_node_us = per_node_us(&stream, rounds, || graph.replay())?;
    let mut host = Vec::new();
    for _ in 0..rounds.max(3) * 10 {
        stream.synchronize()?;
        let t = Instant::now();
        graph.replay()?;
        host.push(t.elapsed().as_secs_f64() * 1e6 / K as f64);
    }
    stream.synchronize()?;
    let replay_host_us = median(host);
    let nodes = graph.nodes();

    // A native CUDA graph: K bare launches of an empty kernel, captured by cudarc.
    let native_node_us = {
        let ctx = dev.context()?;
        let module = ctx.load_module(cudarc::nvrtc::Ptx::from_binary(empty_cubin.to_vec())).map_err(Error::driver_fn("cuModuleLoadData"))?;
        let f = module.load_function("empty_kernel").map_err(Error::driver_fn("cuModuleGetFunction"))?;
        let raw = stream.raw()?.clone();
        let (pa, pb, pc, n) = (a.device_ptr(), b.device_ptr(), c.device_ptr(), 1u32);
        let cu_cfg = CuLaunchConfig { grid_dim: (1, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: 0 };
        raw.begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED).map_err(Error::driver_fn("cuStreamBeginCapture"))?;
        for _ in 0..K {
            let mut builder = raw.launch_builder(&f);
            builder.arg(&pa).arg(&pb).arg(&pc).arg(&n);
            // SAFETY: empty_kernel takes (const float*, const float*, float*, unsigned int); the
            // pointers are live device arrays (kept until the graph is dropped below); the kernel
            // touches nothing.
            unsafe { builder.launch(cu_cfg) }.map_err(Error::driver_fn("cuLaunchKernel"))?;
        }
        let native = raw
            .end_capture(sys::CUgraphInstantiate_flags(0))
            .map_err(Error::driver_fn("cuStreamEndCapture"))?
            .ok_or_else(|| Error::Unsupported { what: "the native capture recorded nothing".into() })?;
        let us = per_node_us(&stream, rounds, || native.launch().map_err(Error::driver_fn("cuGraphLaunch")))?;
        stream.synchronize()?;
        us
    };
    Ok(vec![
        Row {
            name: "graph: 1000 one-element kernels replayed, GPU time per node",
            value: ours_node_us,
            unit: "us",
            ceiling_name: "native CUDA graph, per node",
            ceiling: native_node_us,
            target: Some(("<=", 1.1)),
            note: format!("{nodes} nodes (empty4::launch x {K}); native: {K} bare launches of an empty kernel captured by cudarc; 10 replays per round"),
        },
        Row {
            name: "graph: replay host cost per kernel",
            value: replay_host_us,
            unit: "us",
            ceiling_name: "bare cudarc launch",
            ceiling: bare_launch_us,
            target: Some(("<=", 0.3)),
            note: format!("one Graph::replay() of {K} kernels, divided by {K}"),
        },
        Row {
            name: "graph: the same 1000 kernels launched eagerly, per kernel",
            value: eager_us,
            unit: "us",
            ceiling_name: "bare cudarc launch",
            ceiling: bare_launch_us,
            target: None,
            note: format!("{K} empty4::launch calls and a synchronize, per kernel; replayed: {:.2} us per node on the GPU", ours_node_us),
        },
    ])
}
