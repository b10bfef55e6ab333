//! `cuprum::Graph` (docs/graphs.md): launches recorded on a stream and replayed. Each test checks
//! the replayed results against a host reference on fresh random inputs, with the outputs
//! poisoned before; and that a capture runs nothing, keeps its arrays alive, takes new arrays on
//! `update`, and refuses what a graph cannot hold.
//!
//! GPU tests are `#[ignore = "needs a CUDA GPU"]`: `cargo test -p cuprum-testsuite --test gpu_graph
//! -- --include-ignored` on a GPU machine. On the CPU device a capture is an error (in CI).

#[path = "../../runtime/tests/support/mod.rs"]
mod support;
use support::Rng;

mod elementwise_kernels;

use cuprum::runtime::{Array, Device, Error, Graph, Result, Stream};
use elementwise_kernels as k;

const N: usize = 4099;
const POISON: f32 = -777.0;

fn random(rng: &mut Rng) -> Vec<f32> {
    (0..N).map(|_| rng.range(-2.0, 2.0) as f32).collect()
}

fn poison(a: &mut Array<f32>) {
    a.copy_from_slice(&vec![POISON; a.len()]).unwrap();
}

/// y = 2x + 1, z = 3y - 1, s = sum(z): two elementwise launches and a reduction into given
/// outputs.
fn chain(x: &Array<f32>, y: &mut Array<f32>, z: &mut Array<f32>, s: &mut Array<f32>) -> Result<()> {
    k::axpb::call_into(2.0f32, x, 1.0f32, y)?;
    k::axpb::call_into(3.0f32, &*y, -1.0f32, z)?;
    z.sum().out(s).run()?;
    Ok(())
}

fn check_chain(xs: &[f32], y: &Array<f32>, z: &Array<f32>, s: &Array<f32>) {
    let (y, z, s) = (y.to_vec().unwrap(), z.to_vec().unwrap(), s.to_vec().unwrap());
    let mut total = 0f64;
    for i in 0..N {
        let wy = 2.0 * xs[i] as f64 + 1.0;
        let wz = 3.0 * y[i] as f64 - 1.0;
        assert!((y[i] as f64 - wy).abs() <= 1e-6 * wy.abs().max(1.0), "y[{i}] = {} want {wy}", y[i]);
        assert!((z[i] as f64 - wz).abs() <= 1e-6 * wz.abs().max(1.0), "z[{i}] = {} want {wz}", z[i]);
        total += z[i] as f64;
    }
    assert!((s[0] as f64 - total).abs() <= 1e-4 * N as f64, "sum {} want {total}", s[0]);
}

fn gpu_stream() -> Stream {
    Stream::new(&Device::get(0).unwrap()).unwrap()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_graph_replays_its_launches_and_reads_the_arrays_at_replay() {
    let stream = gpu_stream();
    let _current = stream.use_scoped();
    let mut rng = Rng::new();
    let xs = random(&mut rng);
    let mut x = Array::from_slice(&xs).unwrap();
    let (mut y, mut z, mut s) = (Array::<f32>::zeros([N]).unwrap(), Array::<f32>::zeros([N]).unwrap(), Array::<f32>::zeros([]).unwrap());
    // Once before the capture: the kernels load, the reduction's scratch memory is made.
    chain(&x, &mut y, &mut z, &mut s).unwrap();
    for a in [&mut y, &mut z, &mut s] {
        poison(a);
    }
    let graph = Graph::capture(&stream, |_| chain(&x, &mut y, &mut z, &mut s)).unwrap();
    assert_eq!(graph.nodes(), 3, "{graph:?}");
    // Recording ran nothing.
    stream.synchronize().unwrap();
    assert!(z.to_vec().unwrap().iter().all(|&v| v == POISON));
    graph.replay().unwrap();
    stream.synchronize().unwrap();
    check_chain(&xs, &y, &z, &s);
    // New values in the same arrays: the next replay reads them.
    let xs2 = random(&mut rng);
    x.copy_from_slice(&xs2).unwrap();
    for a in [&mut y, &mut z, &mut s] {
        poison(a);
    }
    for _ in 0..3 {
        graph.replay().unwrap();
    }
    stream.synchronize().unwrap();
    check_chain(&xs2, &y, &z, &s);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn update_takes_new_arrays_of_the_same_shape() {
    let stream = gpu_stream();
    let _current = stream.use_scoped();
    let mut rng = Rng::new();
    let (xs1, xs2) = (random(&mut rng), random(&mut rng));
    let (x1, x2) = (Array::from_slice(&xs1).unwrap(), Array::from_slice(&xs2).unwrap());
    let mk = || Array::<f32>::zeros([N]).unwrap();
    let (mut y1, mut z1, mut s1) = (mk(), mk(), Array::<f32>::zeros([]).unwrap());
    let (mut y2, mut z2, mut s2) = (mk(), mk(), Array::<f32>::zeros([]).unwrap());
    chain(&x1, &mut y1, &mut z1, &mut s1).unwrap();
    let mut graph = Graph::capture(&stream, |_| chain(&x1, &mut y1, &mut z1, &mut s1)).unwrap();
    for a in [&mut y1, &mut z1, &mut s1, &mut y2, &mut z2, &mut s2] {
        poison(a);
    }
    graph.update(|_| chain(&x2, &mut y2, &mut z2, &mut s2)).unwrap();
    graph.replay().unwrap();
    stream.synchronize().unwrap();
    check_chain(&xs2, &y2, &z2, &s2);
    // The first arrays are not written any more.
    assert!(z1.to_vec().unwrap().iter().all(|&v| v == POISON));
    // A different sequence (one launch) replaces the work too.
    poison(&mut y1);
    graph.update(|_| k::axpb::call_into(2.0f32, &x1, 1.0f32, &mut y1)).unwrap();
    assert_eq!(graph.nodes(), 1);
    graph.replay().unwrap();
    stream.synchronize().unwrap();
    let y = y1.to_vec().unwrap();
    for i in 0..N {
        assert_eq!(y[i], 2.0 * xs1[i] + 1.0, "y[{i}]");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_graph_keeps_its_arrays_alive() {
    let stream = gpu_stream();
    let _current = stream.use_scoped();
    let mut rng = Rng::new();
    let xs = random(&mut rng);
    let mut y = Array::<f32>::zeros([N]).unwrap();
    let graph = {
        let x = Array::from_slice(&xs).unwrap();
        k::axpb::call_into(2.0f32, &x, 1.0f32, &mut y).unwrap();
        Graph::capture(&stream, |_| k::axpb::call_into(2.0f32, &x, 1.0f32, &mut y)).unwrap()
        // `x` is dropped here: the graph holds its buffer.
    };
    // Arrays of the same size made now would take `x`'s memory if the pool had it back.
    let others: Vec<Array<f32>> = (0..8).map(|_| Array::from_vec(vec![1e9f32; N]).unwrap()).collect();
    poison(&mut y);
    graph.replay().unwrap();
    stream.synchronize().unwrap();
    let got = y.to_vec().unwrap();
    for i in 0..N {
        assert_eq!(got[i], 2.0 * xs[i] + 1.0, "y[{i}]");
    }
    drop(others);
}

#[track_caller]
fn assert_refused<T: std::fmt::Debug>(r: Result<T>, what: &str) {
    match r {
        Err(Error::Unsupported { what: w }) => assert!(w.contains(what) && w.contains("graph"), "{w}"),
        other => panic!("expected a refusal mentioning `{what}`, got {other:?}"),
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_capture_refuses_what_a_graph_cannot_hold() {
    // `scale_by_int::<f64, u16>` must compile at its first use in this process: a kernel cache
    // without a disk (a run before this one leaves the instance on disk, where a capture may load
    // it). No other test of this binary launches that instance.
    cuprum::runtime::cache::set_global(cuprum::runtime::cache::CacheConfig::memory_only());
    let stream = gpu_stream();
    let _current = stream.use_scoped();
    let x = Array::from_vec(vec![1.5f32; N]).unwrap();
    let mut y = Array::<f32>::zeros([N]).unwrap();
    k::axpb::call_into(2.0f32, &x, 1.0f32, &mut y).unwrap();
    // An output allocated inside, a copy to the host, a kernel that would compile.
    assert_refused(Graph::capture(&stream, |_| k::axpb::call(2.0f32, &x, 1.0f32).map(drop)), "allocating");
    assert_refused(Graph::capture(&stream, |_| x.to_vec().map(drop)), "copy to host memory");
    let xd = Array::from_vec(vec![1.5f64; 16]).unwrap();
    let mut yd = Array::<f64>::zeros([16]).unwrap();
    assert_refused(Graph::capture(&stream, |_| k::scale_by_int::call_into(&xd, 3u16, &mut yd)), "compiling");
    // The stream still works, and after an eager run the same capture succeeds.
    k::scale_by_int::call_into(&xd, 3u16, &mut yd).unwrap();
    let g = Graph::capture(&stream, |_| k::scale_by_int::call_into(&xd, 3u16, &mut yd)).unwrap();
    g.replay().unwrap();
    stream.synchronize().unwrap();
    assert_eq!(yd.to_vec().unwrap(), vec![4.5f64; 16]);
    // Another thread's launch onto the stream being recorded is refused (its arrays would not be
    // kept); the capture itself goes on.
    let mut foreign = None;
    let g = Graph::capture(&stream, |s| {
        std::thread::scope(|t| {
            foreign = Some(t.spawn(|| {
                let _current = s.use_scoped();
                k::axpb::call_into(2.0f32, &x, 1.0f32, &mut y)
            }).join().unwrap());
        });
        k::scale_by_int::call_into(&xd, 3u16, &mut yd)
    })
    .unwrap();
    assert_refused(foreign.unwrap(), "another thread");
    assert_eq!(g.nodes(), 1);
    // Replaying a graph inside another capture (it would not keep the first graph's buffers).
    assert_refused(Graph::capture(&stream, |_| g.replay()), "replaying a graph");
    // Captures do not nest; the legacy default stream cannot be recorded.
    assert_refused(Graph::capture(&stream, |s| Graph::capture(s, |_| Ok(())).map(drop)), "inside another");
    let legacy = Stream::null(&Device::get(0).unwrap()).unwrap();
    if legacy.handle().is_null() {
        assert!(matches!(Graph::capture(&legacy, |_| Ok(())), Err(Error::Unsupported { .. })));
    }
}

#[test]
fn on_the_cpu_device_a_capture_is_an_error() {
    let cpu = Device::cpu();
    let stream = Stream::new(&cpu).unwrap();
    match Graph::capture(&stream, |_| Ok(())) {
        Err(Error::Unsupported { what }) => assert!(what.contains("CPU device"), "{what}"),
        other => panic!("expected an error, got {other:?}"),
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_graph_keeps_the_module_of_a_dropped_raw_kernel() {
    use cuprum::runtime::{LaunchConfig, RawKernel, SliceArg};
    let stream = gpu_stream();
    let _current = stream.use_scoped();
    let mut rng = Rng::new();
    let xs = random(&mut rng);
    let x = Array::from_slice(&xs).unwrap();
    let mut y = Array::<f32>::zeros([N]).unwrap();
    let graph = {
        let k = RawKernel::new(
            "extern \"C\" __global__ void twice(const float* x, float* y, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = 2.0f * x[i]; }",
            "twice",
        );
        let cfg = LaunchConfig::for_elements(N, 128);
        // SAFETY: `twice` reads `n` floats of `x` and writes `n` of `y`, both of length N.
        let launch = |y: &mut Array<f32>| unsafe { k.launch(&cfg, (SliceArg::of(&x), SliceArg::of(y), N as i32)) };
        launch(&mut y).unwrap();
        Graph::capture(&stream, |_| launch(&mut y)).unwrap()
        // `k` and its module are dropped here: the graph keeps the module loaded.
    };
    poison(&mut y);
    graph.replay().unwrap();
    stream.synchronize().unwrap();
    assert_eq!(y.to_vec().unwrap(), xs.iter().map(|v| 2.0 * v).collect::<Vec<_>>());
}
