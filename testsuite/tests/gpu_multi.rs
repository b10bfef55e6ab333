//! Several GPUs of one machine (docs/multi-gpu.md): arrays created and kernels run on device 1,
//! copies between GPUs (peer to peer, and staged through the host) checked element by element, a
//! kernel given arrays of two devices refused before launch, and NCCL with two ranks from one
//! process (`Communicator::all` and a group of collectives) against a host reference, outputs
//! poisoned before, and with one process per GPU (two child processes of this binary sharing one
//! unique id: `nccl_setup/ranks.rs`).
//!
//! Every test here is `#[ignore = "needs two CUDA GPUs (nvidia-h200-x2)"]` except
//! `a_kernel_given_a_cpu_and_a_gpu_array_is_refused` and the child `nccl_rank_child` (`needs a
//! CUDA GPU`; by itself the child does nothing). On a machine with two
//! GPUs: `CUPRUM_NCCL_PATH=/path/to/nccl/lib cargo test -p cuprum-testsuite --test gpu_multi --
//! --include-ignored`; on one GPU leave this binary out, or run
//! `-- --include-ignored --skip two_gpus` (the two-GPU tests' names start with `two_gpus`, and
//! they fail, not skip, where there is one GPU).

#[path = "../../runtime/tests/support/mod.rs"]
mod support;
use support::Rng;

mod elementwise_kernels;

mod nccl_setup;
use nccl_setup::setup;

use cuprum::runtime::nccl::{self, Communicator, ReduceOp};
use cuprum::runtime::{Array, Device, Error, Stream};
use elementwise_kernels as k;


/// GPUs 0 and 1 (fails where there are fewer).
fn two_gpus() -> (Device, Device) {
    let n = Device::count().unwrap();
    assert!(n >= 2, "this test needs two GPUs, the machine has {n}");
    (Device::get(0).unwrap(), Device::get(1).unwrap())
}

/// A reduction operator's host version.
type HostOp = fn(f64, f64) -> f64;

fn random(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n).map(|_| rng.range(-4.0, 4.0) as f32).collect()
}

fn close(got: &[f32], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!((g as f64 - w).abs() <= 1e-5 * w.abs().max(1.0), "{what}[{i}] = {g}, want {w}");
    }
}

#[test]
#[ignore = "needs two CUDA GPUs (nvidia-h200-x2)"]
fn two_gpus_arrays_and_kernels_on_device_1() {
    let _s = setup();
    let (d0, d1) = two_gpus();
    let mut rng = Rng::new();
    let (xs, ys) = (random(&mut rng, 5000), random(&mut rng, 5000));
    let _on = d1.use_scoped().unwrap();
    assert_eq!(Device::current().unwrap(), d1);
    let x = Array::from_vec(xs.clone()).unwrap();
    let y = Array::from_vec(ys.clone()).unwrap();
    assert_eq!((x.device(), Stream::current().unwrap().device()), (&d1, &d1));
    let z = k::axpb::call(2.5f32, &x, &y).unwrap();
    assert_eq!(z.device(), &d1);
    let want: Vec<f64> = xs.iter().zip(&ys).map(|(&x, &y)| 2.5 * x as f64 + y as f64).collect();
    close(&z.to_vec().unwrap(), &want, "axpb on device 1");
    let s = z.sum().run().unwrap();
    assert_eq!(s.device(), &d1);
    let total: f64 = want.iter().sum();
    assert!((s.to_vec().unwrap()[0] as f64 - total).abs() <= 1e-3 * want.len() as f64);
    // Device 0 is untouched by device 1's pool.
    assert_eq!(cuprum::runtime::MemoryPool::for_device(&d0).unwrap().device(), &d0);
}

#[test]
#[ignore = "needs two CUDA GPUs (nvidia-h200-x2)"]
fn two_gpus_copies_peer_to_peer_and_through_the_host() {
    let _s = setup();
    let (d0, d1) = two_gpus();
    let mut rng = Rng::new();
    let (rows, cols) = (1024, 1025);
    let n = rows * cols;
    let xs = random(&mut rng, n);
    let x = {
        let _on = d0.use_scoped().unwrap();
        Array::from_vec(xs.clone()).unwrap()
    };
    let peer = d0.can_access_peer(&d1).unwrap();
    eprintln!("peer access between devices 0 and 1: {peer}");
    let poisoned = || {
        let _on = d1.use_scoped().unwrap();
        Array::from_vec(vec![-9.0f32; n]).unwrap()
    };
    // Poisoned memory of the copy's size, freed just before: the pool gives it to the copy.
    drop(poisoned());
    let y = x.to_device(&d1).unwrap();
    assert_eq!(y.device(), &d1);
    {
        let _on = d1.use_scoped().unwrap();
        assert_eq!(y.to_vec().unwrap(), xs, "to_device (peer: {peer})");
    }
    drop(poisoned());
    let h = x.to_device_through_host(&d1).unwrap();
    assert_eq!(h.device(), &d1);
    assert_eq!(h.to_vec().unwrap(), xs, "to_device_through_host");
    // A non-contiguous view, back to device 0.
    let t = y.reshape([rows, cols]).unwrap().transpose();
    assert!(!t.is_c_contiguous());
    let back = t.to_device(&d0).unwrap();
    assert_eq!((back.device(), back.shape()), (&d0, &[cols, rows][..]));
    let want: Vec<f32> = (0..n).map(|k| xs[(k % rows) * cols + k / rows]).collect();
    assert_eq!(back.to_vec().unwrap(), want, "a transposed view to device 0");
}

#[test]
#[ignore = "needs two CUDA GPUs (nvidia-h200-x2)"]
fn two_gpus_a_kernel_given_arrays_of_two_devices_is_refused() {
    let _s = setup();
    let (d0, d1) = two_gpus();
    let x = {
        let _on = d0.use_scoped().unwrap();
        Array::from_vec(vec![1.5f32; 64]).unwrap()
    };
    let _on = d1.use_scoped().unwrap();
    let y = Array::from_vec(vec![2.5f32; 64]).unwrap();
    let mut out = Array::from_vec(vec![-1.0f32; 64]).unwrap();
    let e = k::axpb::call_into(2.0f32, &x, &y, &mut out).unwrap_err();
    assert!(matches!(e, Error::DeviceMismatch { .. }), "{e:?}");
    assert!(e.to_string().contains("device"), "{e}");
    assert_eq!(out.to_vec().unwrap(), vec![-1.0; 64], "the refused kernel wrote its output");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_kernel_given_a_cpu_and_a_gpu_array_is_refused() {
    let _s = setup();
    let gpu = Device::get(0).unwrap();
    let cpu_x = {
        let _on = Device::cpu().use_scoped().unwrap();
        Array::from_vec(vec![1.5f32; 64]).unwrap()
    };
    let _on = gpu.use_scoped().unwrap();
    let y = Array::from_vec(vec![2.5f32; 64]).unwrap();
    let mut out = Array::from_vec(vec![-1.0f32; 64]).unwrap();
    let e = k::axpb::call_into(2.0f32, &cpu_x, &y, &mut out).unwrap_err();
    assert!(matches!(e, Error::DeviceMismatch { .. }), "{e:?}");
    assert_eq!(out.to_vec().unwrap(), vec![-1.0; 64], "the refused kernel wrote its output");
}

/// Two ranks from one process: every collective in a group over both communicators, against
/// the host's reduction of the two ranks' inputs.
/// A rank of [`two_gpus_one_process_per_gpu`], run as a child process (by itself it does
/// nothing).
#[test]
#[ignore = "needs a CUDA GPU"]
fn nccl_rank_child() {
    let _s = setup();
    nccl_setup::ranks::rank_child();
}

/// One process per GPU: two child processes of this binary (ranks 0 and 1 on GPUs 0 and 1) get
/// one unique id's bytes and one seed, make their communicators with `ncclCommInitRank`, and each
/// checks the all-reduce (sum) of both ranks' random data against the host's sum.
#[test]
#[ignore = "needs two CUDA GPUs (nvidia-h200-x2)"]
fn two_gpus_one_process_per_gpu() {
    let _s = setup();
    two_gpus();
    nccl_setup::ranks::run_ranks("nccl_rank_child", 2, Rng::new().next());
}

#[test]
#[ignore = "needs two CUDA GPUs (nvidia-h200-x2)"]
fn two_gpus_nccl_collectives_from_one_process() {
    let _s = setup();
    let (d0, d1) = two_gpus();
    let devices = [d0, d1];
    let comms = Communicator::all(&devices).unwrap();
    assert_eq!(comms.iter().map(|c| (c.rank(), c.size())).collect::<Vec<_>>(), [(0, 2), (1, 2)]);
    let mut rng = Rng::new();
    let n = 4096 + 2;
    let inputs: Vec<Vec<f32>> = (0..2).map(|_| random(&mut rng, n)).collect();
    let on = |r: usize, data: &[f32]| {
        let _g = devices[r].use_scoped().unwrap();
        Array::from_vec(data.to_vec()).unwrap()
    };
    let sends: Vec<Array<f32>> = (0..2).map(|r| on(r, &inputs[r])).collect();
    let reference = |f: HostOp| -> Vec<f64> {
        (0..n).map(|i| f(inputs[0][i] as f64, inputs[1][i] as f64)).collect()
    };
    let ops: [(ReduceOp, HostOp); 5] = [
        (ReduceOp::Sum, |a, b| a + b),
        (ReduceOp::Prod, |a, b| a * b),
        (ReduceOp::Min, f64::min),
        (ReduceOp::Max, f64::max),
        (ReduceOp::Avg, |a, b| (a + b) / 2.0),
    ];
    for (op, f) in ops {
        let want = reference(f);
        let mut recvs: Vec<Array<f32>> = (0..2).map(|r| on(r, &vec![-7.0; n])).collect();
        nccl::group(|| {
            for (r, recv) in recvs.iter_mut().enumerate() {
                comms[r].all_reduce(&sends[r], recv, op)?;
            }
            Ok(())
        })
        .unwrap();
        for r in 0..2 {
            let _g = devices[r].use_scoped().unwrap();
            close(&recvs[r].to_vec().unwrap(), &want, &format!("all_reduce {op:?} rank {r}"));
        }
        // reduce_scatter: rank r gets block r of the reduction.
        let mut blocks: Vec<Array<f32>> = (0..2).map(|r| on(r, &vec![-7.0; n / 2])).collect();
        nccl::group(|| {
            for (r, b) in blocks.iter_mut().enumerate() {
                comms[r].reduce_scatter(&sends[r], b, op)?;
            }
            Ok(())
        })
        .unwrap();
        for r in 0..2 {
            let _g = devices[r].use_scoped().unwrap();
            close(&blocks[r].to_vec().unwrap(), &want[r * n / 2..(r + 1) * n / 2], &format!("reduce_scatter {op:?} rank {r}"));
        }
        // reduce to rank 1.
        let mut recvs: Vec<Array<f32>> = (0..2).map(|r| on(r, &vec![-7.0; n])).collect();
        nccl::group(|| {
            for (r, recv) in recvs.iter_mut().enumerate() {
                comms[r].reduce(&sends[r], recv, op, 1)?;
            }
            Ok(())
        })
        .unwrap();
        let _g = devices[1].use_scoped().unwrap();
        close(&recvs[1].to_vec().unwrap(), &want, &format!("reduce {op:?} to rank 1"));
    }
    // all_gather, broadcast from rank 1, and a swap by send/recv.
    let mut gathered: Vec<Array<f32>> = (0..2).map(|r| on(r, &vec![-7.0; 2 * n])).collect();
    let mut bcast: Vec<Array<f32>> = (0..2).map(|r| on(r, &vec![-7.0; n])).collect();
    let mut swapped: Vec<Array<f32>> = (0..2).map(|r| on(r, &vec![-7.0; n])).collect();
    nccl::group(|| {
        for (r, g) in gathered.iter_mut().enumerate() {
            comms[r].all_gather(&sends[r], g)?;
        }
        for (r, b) in bcast.iter_mut().enumerate() {
            comms[r].broadcast(&sends[r], b, 1)?;
        }
        for (r, s) in swapped.iter_mut().enumerate() {
            comms[r].send(&sends[r], 1 - r)?;
            comms[r].recv(s, 1 - r)?;
        }
        Ok(())
    })
    .unwrap();
    let both: Vec<f32> = inputs.concat();
    for r in 0..2 {
        let _g = devices[r].use_scoped().unwrap();
        assert_eq!(gathered[r].to_vec().unwrap(), both, "all_gather rank {r}");
        assert_eq!(bcast[r].to_vec().unwrap(), inputs[1], "broadcast from rank 1, rank {r}");
        assert_eq!(swapped[r].to_vec().unwrap(), inputs[1 - r], "send/recv rank {r}");
    }
    // An array of the other rank's device is refused before NCCL runs anything.
    let mut wrong = on(0, &vec![-7.0; n]);
    let e = comms[1].all_reduce(&sends[1], &mut wrong, ReduceOp::Sum).unwrap_err();
    assert!(matches!(e, Error::DeviceMismatch { expected: 1, found: 0, .. }), "{e:?}");
}
