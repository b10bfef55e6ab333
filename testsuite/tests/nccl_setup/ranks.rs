//! One process per GPU (docs/multi-gpu.md): the parent makes a `UniqueId` and starts one child
//! process per rank, each a run of this test binary's `nccl_rank_child` test, told its rank, the
//! number of ranks, the id's bytes (in hex) and a seed through environment variables. Each child
//! makes `Communicator::new(device rank, rank, nranks, id)`, all-reduces (sum) its own random data
//! and checks the result against the host's sum of every rank's data (each rank's data derives from
//! the one seed, so every child computes all of it). The parent asserts that every child passed,
//! showing their output otherwise.

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use cuprum::runtime::nccl::{Communicator, ReduceOp, UniqueId};
use cuprum::runtime::{Array, Device};

/// The variables that tell a child its part.
const RANK: &str = "CUPRUM_NCCL_TEST_RANK";
const NRANKS: &str = "CUPRUM_NCCL_TEST_NRANKS";
const ID: &str = "CUPRUM_NCCL_TEST_ID";
const SEED: &str = "CUPRUM_NCCL_TEST_SEED";

/// Elements per rank (not a multiple of anything NCCL splits by).
const N: usize = (1 << 20) + 3;

/// How long the children may take together (a rank whose peer failed waits in
/// `ncclCommInitRank` or the collective forever: it is killed then).
const DEADLINE: Duration = Duration::from_secs(240);

/// Rank `rank`'s data: uniform in [-4, 4), never 0 (SplitMix64 of the seed and the rank).
pub fn rank_data(seed: u64, rank: usize, n: usize) -> Vec<f32> {
    let mut state = seed ^ (rank as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (0..n)
        .map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            let v = ((z >> 40) as f64 / (1u64 << 24) as f64) * 8.0 - 4.0;
            if v == 0.0 { 0.5 } else { v as f32 }
        })
        .collect()
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn from_hex(s: &str) -> Vec<u8> {
    assert!(s.len().is_multiple_of(2), "{ID}={s:?} is not hex");
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex digits")).collect()
}

/// Starts `nranks` children running `child_test` of this binary (rank r on GPU r), and asserts
/// that each passed its all-reduce, printing every child's output when one did not.
pub fn run_ranks(child_test: &str, nranks: usize, seed: u64) {
    let id = UniqueId::new().unwrap();
    let hex = to_hex(&id.to_bytes());
    let exe = std::env::current_exe().unwrap();
    let mut children: Vec<(Child, std::thread::JoinHandle<String>)> = (0..nranks)
        .map(|rank| {
            let mut child = Command::new(&exe)
                .args([child_test, "--exact", "--include-ignored", "--nocapture", "--test-threads=1"])
                .env(RANK, rank.to_string())
                .env(NRANKS, nranks.to_string())
                .env(ID, &hex)
                .env(SEED, seed.to_string())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            // Both pipes drained on threads, so that a child never blocks on a full pipe.
            let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
            let reader = std::thread::spawn(move || {
                let e = std::thread::spawn(move || {
                    let mut s = String::new();
                    let _ = err.read_to_string(&mut s);
                    s
                });
                let mut s = String::new();
                let _ = out.read_to_string(&mut s);
                s + &e.join().unwrap()
            });
            (child, reader)
        })
        .collect();
    let start = Instant::now();
    let mut statuses = vec![None; nranks];
    while statuses.iter().any(Option::is_none) && start.elapsed() < DEADLINE {
        for (r, (child, _)) in children.iter_mut().enumerate() {
            if statuses[r].is_none() {
                statuses[r] = child.try_wait().unwrap();
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    for (r, (child, _)) in children.iter_mut().enumerate() {
        if statuses[r].is_none() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
    let outputs: Vec<String> = children.into_iter().map(|(_, reader)| reader.join().unwrap()).collect();
    let all = outputs
        .iter()
        .enumerate()
        .map(|(r, o)| format!("---- rank {r} of {nranks} ({:?}) ----\n{o}", statuses[r]))
        .collect::<String>();
    for r in 0..nranks {
        let ok = statuses[r].is_some_and(|s| s.success());
        assert!(ok, "rank {r} of {nranks} failed or passed the {DEADLINE:?} deadline (killed):\n{all}");
        let ran = format!("rank {r} of {nranks}: all_reduce of {N} f32 matches");
        assert!(outputs[r].contains(&ran) && outputs[r].contains("1 passed"), "rank {r} did not run its check:\n{all}");
    }
}

/// A child's part (the body of `nccl_rank_child`): nothing when the variables are not set (the
/// test run by itself, not by [`run_ranks`]).
pub fn rank_child() {
    let Ok(rank) = std::env::var(RANK) else {
        println!("not started by run_ranks ({RANK} is not set): nothing to do");
        return;
    };
    let rank: usize = rank.parse().unwrap();
    let nranks: usize = std::env::var(NRANKS).unwrap().parse().unwrap();
    let seed: u64 = std::env::var(SEED).unwrap().parse().unwrap();
    let id = UniqueId::from_bytes(&from_hex(&std::env::var(ID).unwrap())).unwrap();
    let device = Device::get(rank).unwrap();
    let _on = device.use_scoped().unwrap();
    let comm = Communicator::new(&device, rank, nranks, &id).unwrap();
    assert_eq!((comm.rank(), comm.size(), comm.device()), (rank, nranks, &device));
    let data: Vec<Vec<f32>> = (0..nranks).map(|r| rank_data(seed, r, N)).collect();
    let send = Array::from_vec(data[rank].clone()).unwrap();
    let mut recv = Array::from_vec(vec![-7.0f32; N]).unwrap();
    comm.all_reduce(&send, &mut recv, ReduceOp::Sum).unwrap();
    let got = recv.to_vec().unwrap();
    for (i, &g) in got.iter().enumerate() {
        let want: f64 = data.iter().map(|d| d[i] as f64).sum();
        // Each rank's partial sums are f32: a few roundings of values below 4 nranks.
        assert!((g as f64 - want).abs() <= 1e-6 * 4.0 * nranks as f64, "rank {rank}: element {i} = {g}, want {want}");
    }
    // The sum differs from this rank's own data (the other ranks took part).
    if nranks > 1 {
        assert!(got.iter().zip(&data[rank]).any(|(g, d)| g != d), "rank {rank}: all_reduce left its own data");
    }
    println!("rank {rank} of {nranks}: all_reduce of {N} f32 matches");
}
