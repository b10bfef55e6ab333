//! NCCL's collectives on cuprum arrays (`cuprum::runtime::nccl`, docs/multi-gpu.md) with one rank
//! on one GPU: every collective and reduction operator on fresh random inputs of every dtype NCCL
//! has, checked against the host's values (with one rank each collective's result is its input:
//! the reduction of one value, the gather of one block), outputs poisoned before; a rank's send
//! to itself in a group; both ways of making a communicator, and a rank in a process of its own
//! (a child process given the unique id, `nccl_setup/ranks.rs`); the refusals (CPU arrays, wrong
//! sizes, non-contiguous arrays, unsupported dtypes, a root past the ranks) with nothing written.
//!
//! GPU tests are `#[ignore = "needs a CUDA GPU"]` and need libnccl.so.2 (docs/multi-gpu.md, Missing
//! library): `CUPRUM_NCCL_PATH=/path/to/nccl/lib cargo test -p cuprum-testsuite --test gpu_nccl
//! -- --include-ignored` on a machine with one GPU or more. The tests that need two GPUs are in
//! `gpu_multi.rs`. What runs without a GPU (in CI): the CPU device's refusals.
//!
//! Every test takes [`setup`] first: it sets `NCCL_NVLS_ENABLE=0` once, while no other test of
//! this binary runs (they all wait on its lock), before any communicator exists.

#[path = "../../runtime/tests/support/mod.rs"]
mod support;
use support::Rng;

mod nccl_setup;
use nccl_setup::setup;

use cuprum::runtime::nccl::{self, Communicator, ReduceOp, UniqueId};
use cuprum::runtime::{Array, Device, Element, Error, Stream};
use half::{bf16, f16};


const N: usize = 3001;

/// One rank on GPU 0, made by `ncclCommInitAll`.
fn one_rank() -> Communicator {
    let mut comms = Communicator::all(&[Device::get(0).unwrap()]).unwrap();
    assert_eq!(comms.len(), 1);
    comms.pop().unwrap()
}

/// A dtype of the tests: random values and a poison, from f64.
trait Value: Element + Copy + PartialEq + std::fmt::Debug {
    fn from_f64(v: f64) -> Self;
    fn random(rng: &mut Rng) -> Self;
}

macro_rules! int_value {
    ($($t:ty),*) => {$(
        impl Value for $t {
            fn from_f64(v: f64) -> Self { v as $t }
            fn random(rng: &mut Rng) -> Self {
                // Across the type's range (for 64-bit types, the high bits too).
                (rng.next() as $t) | 1
            }
        }
    )*};
}
int_value!(i8, u8, i32, u32, i64, u64);

macro_rules! float_value {
    ($($t:ty => $from:expr),*) => {$(
        impl Value for $t {
            fn from_f64(v: f64) -> Self { $from(v) }
            fn random(rng: &mut Rng) -> Self { $from(rng.range(-100.0, 100.0)) }
        }
    )*};
}
float_value!(f32 => |v| v as f32, f64 => |v| v, f16 => f16::from_f64, bf16 => bf16::from_f64);

fn random<T: Value>(rng: &mut Rng, n: usize) -> Vec<T> {
    (0..n).map(|_| T::random(rng)).collect()
}

fn poisoned<T: Value>(n: usize) -> Array<T> {
    Array::from_vec(vec![T::from_f64(77.0); n]).unwrap()
}

/// Every collective and operator on one rank for dtype `T`: each result equals the input.
fn every_collective<T: Value>(comm: &Communicator, rng: &mut Rng) {
    let name = std::any::type_name::<T>();
    for op in [ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Min, ReduceOp::Max, ReduceOp::Avg] {
        let xs = random::<T>(rng, N);
        let send = Array::from_vec(xs.clone()).unwrap();
        let mut recv = poisoned::<T>(N);
        comm.all_reduce(&send, &mut recv, op).unwrap();
        assert_eq!(recv.to_vec().unwrap(), xs, "{name} all_reduce {op:?}");

        let mut buf = Array::from_vec(xs.clone()).unwrap();
        comm.all_reduce_in_place(&mut buf, op).unwrap();
        assert_eq!(buf.to_vec().unwrap(), xs, "{name} all_reduce_in_place {op:?}");

        let mut recv = poisoned::<T>(N);
        comm.reduce(&send, &mut recv, op, 0).unwrap();
        assert_eq!(recv.to_vec().unwrap(), xs, "{name} reduce {op:?}");

        let mut buf = Array::from_vec(xs.clone()).unwrap();
        comm.reduce_in_place(&mut buf, op, 0).unwrap();
        assert_eq!(buf.to_vec().unwrap(), xs, "{name} reduce_in_place {op:?}");

        let mut recv = poisoned::<T>(N);
        comm.reduce_scatter(&send, &mut recv, op).unwrap();
        assert_eq!(recv.to_vec().unwrap(), xs, "{name} reduce_scatter {op:?}");
    }
    let xs = random::<T>(rng, N);
    let send = Array::from_shape_vec([N], xs.clone()).unwrap();
    let mut recv = poisoned::<T>(N);
    comm.broadcast(&send, &mut recv, 0).unwrap();
    assert_eq!(recv.to_vec().unwrap(), xs, "{name} broadcast");
    let mut buf = send.copy().unwrap();
    comm.broadcast_in_place(&mut buf, 0).unwrap();
    assert_eq!(buf.to_vec().unwrap(), xs, "{name} broadcast_in_place");
    let mut recv = poisoned::<T>(N);
    comm.all_gather(&send, &mut recv).unwrap();
    assert_eq!(recv.to_vec().unwrap(), xs, "{name} all_gather");
    // A rank's send to itself: NCCL allows it when the send and the receive are in one group.
    let mut recv = poisoned::<T>(N);
    nccl::group(|| {
        comm.send(&send, 0)?;
        comm.recv(&mut recv, 0)
    })
    .unwrap();
    assert_eq!(recv.to_vec().unwrap(), xs, "{name} send/recv to self");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_collective_and_dtype_on_one_rank() {
    let _s = setup();
    let gpu = Device::get(0).unwrap();
    let _on = gpu.use_scoped().unwrap();
    let comm = one_rank();
    assert_eq!((comm.rank(), comm.size(), comm.device()), (0, 1, &gpu));
    let mut rng = Rng::new();
    every_collective::<i8>(&comm, &mut rng);
    every_collective::<u8>(&comm, &mut rng);
    every_collective::<i32>(&comm, &mut rng);
    every_collective::<u32>(&comm, &mut rng);
    every_collective::<i64>(&comm, &mut rng);
    every_collective::<u64>(&comm, &mut rng);
    every_collective::<f16>(&comm, &mut rng);
    every_collective::<bf16>(&comm, &mut rng);
    every_collective::<f32>(&comm, &mut rng);
    every_collective::<f64>(&comm, &mut rng);
}

/// The one-process-per-GPU form: a unique id through its bytes, `ncclCommInitRank` with one rank.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_communicator_from_a_unique_id_s_bytes() {
    let _s = setup();
    let gpu = Device::get(0).unwrap();
    let _on = gpu.use_scoped().unwrap();
    let ((major, _, _), from) = nccl::version().unwrap();
    assert_eq!(major, 2, "NCCL from {from}");
    let id = UniqueId::new().unwrap();
    let id = UniqueId::from_bytes(&id.to_bytes()).unwrap();
    let comm = Communicator::new(&gpu, 0, 1, &id).unwrap();
    let mut rng = Rng::new();
    let xs: Vec<f32> = (0..N).map(|_| rng.range(-3.0, 3.0) as f32).collect();
    let send = Array::from_shape_vec([N], xs.clone()).unwrap().reshape([1, N]).unwrap();
    let mut recv = poisoned::<f32>(N);
    comm.all_reduce(&send, &mut recv, ReduceOp::Sum).unwrap();
    assert_eq!(recv.to_vec().unwrap(), xs);
}

/// A rank of the one-process-per-GPU tests, run as a child process by
/// [`nccl_setup::ranks::run_ranks`] (by itself it does nothing).
#[test]
#[ignore = "needs a CUDA GPU"]
fn nccl_rank_child() {
    let _s = setup();
    nccl_setup::ranks::rank_child();
}

/// One process per GPU with one rank: a child process of this binary gets the unique id's bytes
/// (in hex, through its environment), makes its communicator with `ncclCommInitRank` and checks an
/// all-reduce (gpu_multi's `two_gpus_one_process_per_gpu` runs two ranks).
#[test]
#[ignore = "needs a CUDA GPU"]
fn one_process_per_rank_with_one_rank() {
    let _s = setup();
    nccl_setup::ranks::run_ranks("nccl_rank_child", 1, Rng::new().next());
}

/// Collectives on the current stream when it is not the arrays' own: the send array is written on
/// stream A, the collective runs on stream B (which must wait for A), and the arrays are dropped
/// right after (their frees must come after the collective).
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_collective_on_another_stream_is_ordered_after_the_arrays_streams() {
    let _s = setup();
    let gpu = Device::get(0).unwrap();
    let _on = gpu.use_scoped().unwrap();
    let comm = one_rank();
    let (a, b) = (Stream::new(&gpu).unwrap(), Stream::new(&gpu).unwrap());
    let mut rng = Rng::new();
    let big = 1 << 22;
    for _ in 0..3 {
        let xs: Vec<f32> = (0..big).map(|_| rng.range(-1.0, 1.0) as f32).collect();
        let send = Array::from_shape_vec_on([big], &xs, &a).unwrap();
        let mut recv = Array::<f32>::empty_on([big], &a).unwrap();
        recv.fill(-5.0).unwrap();
        let out = {
            let _b = b.use_scoped();
            comm.all_reduce(&send, &mut recv, ReduceOp::Max).unwrap();
            drop(send);
            // A new array on stream A may reuse the send array's memory, and a kernel on A writes
            // it: both must come after the collective read the send array (else recv holds 123s).
            let mut reuse = Array::<f32>::empty_on([big], &a).unwrap();
            let _a = a.use_scoped();
            reuse.fill(123.0).unwrap();
            (recv, reuse)
        };
        b.synchronize().unwrap();
        assert_eq!(out.0.to_vec().unwrap(), xs);
    }
}

/// Refused before anything is queued, on a GPU communicator: CPU arrays, sizes, layouts, dtypes,
/// roots and peers; the output keeps its poison.
#[test]
#[ignore = "needs a CUDA GPU"]
fn bad_operands_are_refused_and_nothing_is_written() {
    let _s = setup();
    let gpu = Device::get(0).unwrap();
    let _on = gpu.use_scoped().unwrap();
    let comm = one_rank();
    let send = Array::from_vec((0..12).map(|i| i as f32 + 0.5).collect()).unwrap();
    let mut recv = poisoned::<f32>(12);
    let unchanged = |recv: &Array<f32>| assert_eq!(recv.to_vec().unwrap(), vec![77.0; recv.len()]);

    let cpu_send = send.to_device(&Device::cpu()).unwrap();
    let e = comm.all_reduce(&cpu_send, &mut recv, ReduceOp::Sum).unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }) && e.to_string().contains("CPU device"), "{e}");
    unchanged(&recv);

    let mut short = poisoned::<f32>(11);
    let e = comm.all_reduce(&send, &mut short, ReduceOp::Sum).unwrap_err();
    assert!(e.to_string().contains("11 element(s), 12 expected"), "{e}");
    unchanged(&short);
    let e = comm.all_gather(&send, &mut short).unwrap_err();
    assert!(e.to_string().contains("1 ranks times send's 12"), "{e}");
    unchanged(&short);
    let e = comm.reduce_scatter(&send, &mut short, ReduceOp::Sum).unwrap_err();
    assert!(e.to_string().contains("divided by 1 ranks"), "{e}");
    unchanged(&short);

    let strided = send.reshape([3, 4]).unwrap().transpose();
    let e = comm.all_reduce(&strided, &mut recv, ReduceOp::Sum).unwrap_err();
    assert!(matches!(e, Error::NeedsCopy { .. }) && e.to_string().contains("not C-contiguous"), "{e}");
    unchanged(&recv);

    let flags = Array::from_vec(vec![true; 12]).unwrap();
    let mut out = Array::from_vec(vec![false; 12]).unwrap();
    let e = comm.all_reduce(&flags, &mut out, ReduceOp::Max).unwrap_err();
    assert!(e.to_string().contains(nccl::SUPPORTED_DTYPES) && e.to_string().contains("bool"), "{e}");
    assert_eq!(out.to_vec().unwrap(), vec![false; 12]);

    let e = comm.broadcast(&send, &mut recv, 1).unwrap_err();
    assert!(e.to_string().contains("root is rank 1") && e.to_string().contains("1 rank(s)"), "{e}");
    let e = comm.send(&send, 3).unwrap_err();
    assert!(e.to_string().contains("peer is rank 3"), "{e}");
    unchanged(&recv);

    let overlapping = recv.slice(0, 2..12).unwrap();
    let e = comm.all_reduce(&overlapping, &mut recv.slice(0, 0..10).unwrap(), ReduceOp::Sum).unwrap_err();
    assert!(e.to_string().contains("overlap"), "{e}");
    unchanged(&recv);

    let e = Communicator::all(&[gpu.clone(), gpu.clone()]).unwrap_err();
    assert!(e.to_string().contains("given twice"), "{e}");
}

// ---- without a GPU (CI) ------------------------------------------------------------------------

#[test]
fn the_cpu_device_has_no_communicator() {
    let _s = setup();
    let e = Communicator::all(&[Device::cpu()]).unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e:?}");
    assert!(e.to_string().contains("CPU device") && e.to_string().contains("CUDA GPUs only"), "{e}");
    // The id's bytes need no library; the device is refused before NCCL is asked.
    let id = UniqueId::from_bytes(&[7u8; UniqueId::BYTES]).unwrap();
    let e = Communicator::new(&Device::cpu(), 0, 1, &id).unwrap_err();
    assert!(e.to_string().contains("Communicator::new on the CPU device"), "{e}");
    let e = Communicator::all(&[]).unwrap_err();
    assert!(e.to_string().contains("no device"), "{e}");
}

#[test]
fn a_rank_past_the_ranks_is_refused() {
    let _s = setup();
    let id = UniqueId::from_bytes(&[1u8; UniqueId::BYTES]).unwrap();
    // Refused before the device or the library is asked anything, so this runs anywhere.
    let e = Communicator::new(&Device::cpu(), 2, 2, &id).unwrap_err();
    assert!(e.to_string().contains("rank 2 of 2 ranks"), "{e}");
    assert!(UniqueId::from_bytes(&[0u8; 127]).is_err());
}

/// Without libnccl every call is `Error::NoNccl` naming the library and what to install; with it
/// (a GPU machine where NCCL is installed) it reports its version.
#[test]
fn nccl_is_found_or_named() {
    let _s = setup();
    match nccl::version() {
        Ok(((major, minor, _), from)) => assert!(major == 2 && minor >= 13, "NCCL {major}.{minor} from {from}"),
        Err(e) => {
            assert!(!nccl::is_available());
            assert!(matches!(e, Error::NoNccl { .. }), "{e:?}");
            let text = e.to_string();
            assert!(text.contains("libnccl.so.2") && text.contains("nvidia-nccl-cu13"), "{text}");
            let e = UniqueId::new().unwrap_err();
            assert!(matches!(e, Error::NoNccl { .. }), "{e:?}");
        }
    }
}
