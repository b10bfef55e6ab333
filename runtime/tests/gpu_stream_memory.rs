//! GPU tests of devices, streams, events and the memory pool. Run on a GPU machine with
//! `cargo test -p cuprum-runtime --test gpu_stream_memory -- --include-ignored`.
//!
//! The pool is per device and per process, so the tests here take one lock to keep their byte
//! counts apart. The environment-variable tests re-run this test binary as a child process with
//! the variable set (it is read once per process).

use std::sync::{Mutex, MutexGuard};

mod support;
use support::Rng;

use cuprum_runtime::{Array, Device, DeviceBuffer, Error, Event, MemoryPool, Stream, StreamKind};

static LOCK: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

fn dev0() -> Device {
    Device::get(0).expect("these tests need a CUDA GPU")
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn device_properties() {
    let _g = serial();
    let n = Device::count().unwrap();
    assert!(n >= 1);
    let d = dev0();
    assert_eq!(d.ordinal(), 0);
    assert!(!d.name().is_empty());
    let (major, _) = d.compute_capability();
    assert!(major >= 3);
    assert!(d.total_memory() > 0);
    assert!(d.max_threads_per_block() >= 512);
    assert!(d.max_block_dim()[0] >= 512 && d.max_grid_dim()[0] >= 65535);
    assert!(d.max_shared_memory_per_block() >= 48 * 1024);
    assert!(d.max_shared_memory_per_block_optin() >= d.max_shared_memory_per_block());
    assert!(d.multiprocessor_count() >= 1);
    assert_eq!(d.warp_size(), 32);
    assert!(d.driver_version().unwrap() >= 11000);
    let (free, total) = d.memory_info().unwrap();
    assert!(free <= total && total > 0);
    d.synchronize().unwrap();
    // one context per device: the same Arc
    assert!(std::sync::Arc::ptr_eq(d.context().unwrap(), dev0().context().unwrap()));
    assert!(matches!(Device::get(n), Err(Error::InvalidDevice { .. })));
    assert_eq!(Device::current().unwrap(), d);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn current_stream_is_per_device_and_scoped() {
    let _g = serial();
    let d = dev0();
    let null = Stream::current().unwrap();
    assert!(null.is_null());
    assert_eq!(null.kind(), StreamKind::Legacy);
    assert_eq!(null, Stream::null(&d).unwrap());

    let s1 = Stream::new(&d).unwrap();
    let s2 = Stream::new_non_blocking(&d).unwrap();
    let s3 = Stream::new(&d).unwrap();
    assert_ne!(s1, s2);
    assert_eq!(s1.kind(), StreamKind::Blocking);
    {
        let _a = s1.use_scoped();
        assert_eq!(Stream::current().unwrap(), s1);
        {
            let _b = s3.use_scoped();
            assert_eq!(Stream::current().unwrap(), s3);
            // CuPy v10: a stream made current with use() inside a `with` block is not kept
            // when the block exits; the stream current at entry comes back.
            s2.set_current();
            assert_eq!(Stream::current().unwrap(), s2);
        }
        assert_eq!(Stream::current().unwrap(), s1);
    }
    assert_eq!(Stream::current().unwrap(), null);

    // set_current persists
    s2.set_current();
    assert_eq!(Stream::current().unwrap(), s2);
    // another thread has its own current stream
    std::thread::spawn(|| assert!(Stream::current().unwrap().is_null()))
        .join()
        .unwrap();
    // a stream shared with another thread can be made current there
    let s1c = s1.clone();
    std::thread::spawn(move || {
        let _g = s1c.use_scoped();
        let a = Array::from_vec(vec![1u32, 2, 3]).unwrap();
        assert_eq!(a.buffer().stream(), &s1c);
        assert_eq!(a.to_vec().unwrap(), vec![1, 2, 3]);
    })
    .join()
    .unwrap();
    null.set_current();

    // arrays are allocated for and copied on the current stream
    let _g2 = s1.use_scoped();
    let a = Array::<f32>::arange(100).unwrap();
    assert_eq!(a.buffer().stream(), &s1);
    s1.synchronize().unwrap();
    assert!(s1.is_done().unwrap());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn streams_of_other_devices_are_ignored() {
    let _g = serial();
    if Device::count().unwrap() < 2 {
        eprintln!("only one device: skipping the two-device part");
        return;
    }
    let d0 = dev0();
    let d1 = Device::get(1).unwrap();
    let s0 = Stream::new(&d0).unwrap();
    let _g0 = s0.use_scoped();
    assert_eq!(Stream::current().unwrap(), s0);
    {
        let _dg = d1.use_scoped().unwrap();
        assert_eq!(Device::current().unwrap(), d1);
        // device 1 does not see device 0's stream: its own null stream is current
        let c = Stream::current().unwrap();
        assert!(c.is_null());
        assert_eq!(c.device(), &d1);
        let a = Array::from_vec(vec![1.5f64; 10]).unwrap();
        assert_eq!(a.device(), &d1);
        assert_eq!(a.to_vec().unwrap(), vec![1.5; 10]);
        // a stream of device 0 cannot allocate on device 1
        let p1 = MemoryPool::for_device(&d1).unwrap();
        assert!(matches!(
            p1.alloc(16, &s0),
            Err(Error::DeviceMismatch { .. })
        ));
    }
    assert_eq!(Device::current().unwrap(), d0);
    assert_eq!(Stream::current().unwrap(), s0);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn events_measure_time() {
    let _g = serial();
    let d = dev0();
    let s = Stream::new(&d).unwrap();
    let start = Event::record(&s).unwrap();
    // 64 MiB host -> device copies take measurable time.
    let buf = DeviceBuffer::alloc(64 << 20, &s).unwrap();
    let host = vec![0x5au8; 64 << 20];
    for _ in 0..4 {
        buf.write_bytes(0, &host, &s).unwrap();
    }
    let end = Event::record(&s).unwrap();
    end.synchronize().unwrap();
    assert!(end.is_done().unwrap());
    let ms = Event::elapsed_ms(&start, &end).unwrap();
    assert!(ms > 0.0, "{ms}");
    // an event can be re-recorded and waited on from another stream
    let s2 = Stream::new(&d).unwrap();
    end.record_on(&s).unwrap();
    s2.wait_event(&end).unwrap();
    s2.synchronize().unwrap();
    let mut back = vec![0u8; 16];
    buf.read_bytes(1000, &mut back, &s).unwrap();
    assert_eq!(back, vec![0x5a; 16]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn pool_reuses_blocks() {
    let _g = serial();
    let d = dev0();
    let pool = MemoryPool::for_device(&d).unwrap();
    pool.free_all_blocks().unwrap();
    let (used0, total0) = (pool.used_bytes(), pool.total_bytes());
    assert_eq!(total0 - used0, 0);

    // CuPy's example: 100 float32 = 400 bytes -> a 512-byte block
    let a = Array::<f32>::zeros(100).unwrap();
    assert_eq!(pool.used_bytes() - used0, 512);
    assert_eq!(pool.total_bytes() - total0, 512);
    let ptr = a.buffer().ptr();
    drop(a);
    assert_eq!(pool.used_bytes(), used0);
    assert_eq!(pool.total_bytes() - total0, 512);
    assert_eq!(pool.n_free_blocks(), 1);

    // same rounded size, same stream: the same block comes back
    let b = Array::<u8>::zeros(300).unwrap();
    assert_eq!(b.buffer().ptr(), ptr);
    assert_eq!(pool.n_free_blocks(), 0);
    assert_eq!(b.buffer().len_bytes(), 300);
    assert_eq!(b.buffer().capacity_bytes(), 512);
    drop(b);

    // another stream takes it too (ordered after the first stream with an event)
    let s = Stream::new(&d).unwrap();
    let c = {
        let _sg = s.use_scoped();
        Array::<i32>::from_vec(vec![7; 128]).unwrap()
    };
    assert_eq!(c.buffer().ptr(), ptr);
    assert_eq!(c.to_vec().unwrap(), vec![7; 128]);
    drop(c);

    // views keep the buffer alive
    let e = Array::<f64>::arange(1000).unwrap();
    let v = e.slice(0, 10..20).unwrap();
    let used = pool.used_bytes();
    drop(e);
    assert_eq!(pool.used_bytes(), used);
    assert_eq!(
        v.to_vec().unwrap(),
        (10..20).map(|x| x as f64).collect::<Vec<_>>()
    );
    drop(v);

    // zero-size allocations take no memory
    let z = Array::<f32>::zeros([0, 5]).unwrap();
    assert_eq!(z.buffer().ptr(), 0);
    assert_eq!(pool.used_bytes(), used0);

    pool.free_all_blocks().unwrap();
    assert_eq!(pool.used_bytes(), used0);
    assert_eq!(pool.total_bytes(), total0);
    assert_eq!(pool.n_free_blocks(), 0);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn pool_limit_gives_out_of_memory() {
    let _g = serial();
    let d = dev0();
    let pool = MemoryPool::for_device(&d).unwrap();
    pool.free_all_blocks().unwrap();
    let held = pool.total_bytes();
    pool.set_limit(Some(held + (1 << 20)));
    let a = Array::<u8>::zeros(1 << 19).unwrap();
    let e = Array::<u8>::zeros(1 << 20).unwrap_err();
    match &e {
        Error::OutOfMemory {
            requested, limit, ..
        } => {
            assert_eq!(*requested, 1 << 20);
            assert_eq!(*limit, Some(held + (1 << 20)));
        }
        other => panic!("expected OutOfMemory, got {other}"),
    }
    assert!(e.to_string().contains("CUPY_GPU_MEMORY_LIMIT"), "{e}");
    // cached blocks are released to make room under the limit
    drop(a);
    let b = Array::<u8>::zeros((1 << 20) - 4096).unwrap();
    drop(b);
    pool.set_limit(None);
    assert_eq!(pool.limit(), None);

    // more than the device has: a clean OutOfMemory from the driver, not a panic
    let too_big = d.total_memory() + (1 << 30);
    let e = DeviceBuffer::alloc(too_big, &Stream::current().unwrap()).unwrap_err();
    assert!(e.is_out_of_memory(), "{e}");
    pool.free_all_blocks().unwrap();
}

const MIB: usize = 1 << 20;
const QUARTER: usize = 256 << 10;

fn random_bytes(rng: &mut Rng, n: usize) -> Vec<u8> {
    (0..n).map(|_| rng.next() as u8).collect()
}

/// Reads `buf` back on `stream` into a poisoned host vector.
fn read_back(buf: &DeviceBuffer, stream: &Stream) -> Vec<u8> {
    let mut back = vec![0xa5u8; buf.len_bytes()];
    buf.read_bytes(0, &mut back, stream).unwrap();
    back
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn pool_splits_and_merges_chunks() {
    let _g = serial();
    let d = dev0();
    let pool = MemoryPool::for_device(&d).unwrap();
    pool.free_all_blocks().unwrap();
    let (used0, total0) = (pool.used_bytes(), pool.total_bytes());
    assert_eq!((pool.free_bytes(), pool.n_free_blocks()), (0, 0));
    let s = Stream::new(&d).unwrap();
    let mut rng = Rng::new();

    let a = DeviceBuffer::alloc(MIB, &s).unwrap();
    let base = a.ptr();
    assert_eq!(pool.total_bytes(), total0 + MIB);
    drop(a);
    assert_eq!(
        (pool.used_bytes(), pool.free_bytes(), pool.n_free_blocks()),
        (used0, MIB, 1)
    );

    // two quarters split off the front of the cached MiB: no new driver allocation
    let b = DeviceBuffer::alloc(QUARTER, &s).unwrap();
    let c = DeviceBuffer::alloc(QUARTER, &s).unwrap();
    assert_eq!(pool.total_bytes(), total0 + MIB, "one driver allocation");
    assert_eq!((b.ptr(), c.ptr()), (base, base + QUARTER as u64));
    assert_eq!(pool.used_bytes(), used0 + 2 * QUARTER);
    assert_eq!(
        (pool.free_bytes(), pool.n_free_blocks()),
        (MIB - 2 * QUARTER, 1)
    );
    let (hb, hc) = (
        random_bytes(&mut rng, QUARTER),
        random_bytes(&mut rng, QUARTER),
    );
    b.write_bytes(0, &hb, &s).unwrap();
    c.write_bytes(0, &hc, &s).unwrap();
    assert!(read_back(&b, &s) == hb, "the first quarter was overwritten");
    assert!(
        read_back(&c, &s) == hc,
        "the second quarter was overwritten"
    );

    // a partly used allocation is not returned to the driver
    pool.free_all_blocks().unwrap();
    assert_eq!(
        (pool.total_bytes(), pool.n_free_blocks()),
        (total0 + MIB, 1)
    );

    // fragmentation: b's quarter and the free half are not neighbours
    drop(b);
    assert_eq!(
        (pool.free_bytes(), pool.n_free_blocks()),
        (MIB - QUARTER, 2)
    );
    // 640 KiB fits in neither: a second driver allocation, released by free_all_blocks
    let e = DeviceBuffer::alloc(640 << 10, &s).unwrap();
    assert!(!(base..base + MIB as u64).contains(&e.ptr()));
    assert_eq!(pool.total_bytes(), total0 + MIB + (640 << 10));
    drop(e);
    pool.free_all_blocks().unwrap();
    assert_eq!(
        (pool.total_bytes(), pool.n_free_blocks()),
        (total0 + MIB, 2)
    );
    assert!(read_back(&c, &s) == hc);

    // freeing c merges it with both neighbours: the whole MiB is one chunk again
    drop(c);
    assert_eq!(
        (pool.used_bytes(), pool.free_bytes(), pool.n_free_blocks()),
        (used0, MIB, 1)
    );
    let m = DeviceBuffer::alloc(MIB, &s).unwrap();
    assert_eq!(m.ptr(), base);
    assert_eq!(
        (pool.total_bytes(), pool.n_free_blocks()),
        (total0 + MIB, 0)
    );
    let hm = random_bytes(&mut rng, MIB);
    m.write_bytes(0, &hm, &s).unwrap();
    assert!(read_back(&m, &s) == hm);
    drop(m);
    pool.free_all_blocks().unwrap();
    assert_eq!(
        (pool.used_bytes(), pool.total_bytes(), pool.n_free_blocks()),
        (used0, total0, 0)
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn pool_splits_across_streams_and_merges_within_one() {
    let _g = serial();
    let d = dev0();
    let pool = MemoryPool::for_device(&d).unwrap();
    pool.free_all_blocks().unwrap();
    let total0 = pool.total_bytes();
    let (s1, s2) = (Stream::new(&d).unwrap(), Stream::new(&d).unwrap());
    let mut rng = Rng::new();

    // s1 still has copies queued into the MiB when it is freed
    let a = DeviceBuffer::alloc(MIB, &s1).unwrap();
    let base = a.ptr();
    let ha = random_bytes(&mut rng, MIB);
    for _ in 0..4 {
        a.write_bytes(0, &ha, &s1).unwrap();
    }
    drop(a);

    // s2 takes the front quarter (ordered after s1); the rest stays s1's
    let b = DeviceBuffer::alloc(QUARTER, &s2).unwrap();
    assert_eq!(b.ptr(), base);
    assert_eq!(
        (pool.total_bytes(), pool.n_free_blocks()),
        (total0 + MIB, 1)
    );
    let hb = random_bytes(&mut rng, QUARTER);
    b.write_bytes(0, &hb, &s2).unwrap();
    assert!(
        read_back(&b, &s2) == hb,
        "s1's earlier copies landed after s2's"
    );
    let c = DeviceBuffer::alloc(QUARTER, &s1).unwrap();
    assert_eq!(c.ptr(), base + QUARTER as u64);

    // b freed on s2 does not merge with s1's chunks; c freed on s1 merges with s1's rest only
    drop(b);
    assert_eq!(pool.n_free_blocks(), 2);
    drop(c);
    assert_eq!((pool.free_bytes(), pool.n_free_blocks()), (MIB, 2));
    // so a MiB needs a new driver allocation
    let m = DeviceBuffer::alloc(MIB, &s1).unwrap();
    assert_ne!(m.ptr(), base);
    assert_eq!(pool.total_bytes(), total0 + 2 * MIB);
    drop(m);
    // both allocations are entirely free (over two streams): both go back to the driver
    pool.free_all_blocks().unwrap();
    assert_eq!((pool.total_bytes(), pool.n_free_blocks()), (total0, 0));
}

/// Issue 33, item 8: small requests were carved out of large free chunks and pinned them, so a
/// process that had used 2 GB and kept a few small arrays held the 2 GB after `free_all_blocks`.
/// Small (at most 1 MiB) and large requests now use separate driver allocations.
#[test]
#[ignore = "needs a CUDA GPU"]
fn small_arrays_do_not_pin_dropped_large_ones() {
    let _g = serial();
    let d = dev0();
    let pool = MemoryPool::for_device(&d).unwrap();
    pool.free_all_blocks().unwrap();
    let total0 = pool.total_bytes();
    let mut rng = Rng::new();
    // 2 GB in large arrays, written and dropped
    let big: Vec<Array<u8>> = (0..4).map(|_| Array::<u8>::zeros(512 * MIB).unwrap()).collect();
    assert!(pool.total_bytes() >= total0 + 2048 * MIB);
    drop(big);
    // 100 small arrays of random sizes and contents, kept
    let small: Vec<(Vec<f32>, Array<f32>)> = (0..100)
        .map(|_| {
            let n = 1 + (rng.next() % 20_000) as usize;
            let v: Vec<f32> = (0..n).map(|_| rng.range(-1.0, 1.0) as f32).collect();
            let a = Array::from_slice(&v).unwrap();
            (v, a)
        })
        .collect();
    pool.free_all_blocks().unwrap();
    let held = pool.total_bytes() - total0;
    assert!(held < 128 * MIB, "the pool holds {held} bytes for 100 small arrays after free_all_blocks");
    for (v, a) in &small {
        assert!(a.to_vec().unwrap() == *v, "a small array changed");
    }
    drop(small);
    pool.free_all_blocks().unwrap();
    assert_eq!(pool.total_bytes(), total0);
}

/// Runs the named test of this binary in a child process with extra environment variables.
fn run_child(test: &str, vars: &[(&str, &str)]) {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = std::process::Command::new(exe);
    cmd.args([test, "--exact", "--include-ignored", "--nocapture"])
        .env("CUPRUM_TEST_CHILD", "1");
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "child {test} {vars:?} failed:\n{text}"
    );
    assert!(
        text.contains("1 passed"),
        "child {test} did not run:\n{text}"
    );
}

fn is_child() -> bool {
    std::env::var("CUPRUM_TEST_CHILD").is_ok()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn env_memory_limit() {
    if is_child() {
        return;
    }
    run_child("child_limit_bytes", &[("CUPY_GPU_MEMORY_LIMIT", "1048576")]);
    run_child("child_limit_percent", &[("CUPY_GPU_MEMORY_LIMIT", "1%")]);
    run_child("child_limit_invalid", &[("CUPY_GPU_MEMORY_LIMIT", "lots")]);
    run_child(
        "child_per_thread_stream",
        &[("CUPY_CUDA_PER_THREAD_DEFAULT_STREAM", "1")],
    );
}

#[test]
#[ignore = "needs a CUDA GPU (run by env_memory_limit)"]
fn child_limit_bytes() {
    if !is_child() {
        return;
    }
    let pool = MemoryPool::current().unwrap();
    assert_eq!(pool.limit(), Some(1 << 20));
    let a = Array::<u8>::zeros(1 << 19).unwrap();
    let e = Array::<u8>::zeros(1 << 20).unwrap_err();
    assert!(e.is_out_of_memory(), "{e}");
    drop(a);
}

#[test]
#[ignore = "needs a CUDA GPU (run by env_memory_limit)"]
fn child_limit_percent() {
    if !is_child() {
        return;
    }
    let d = dev0();
    let pool = MemoryPool::for_device(&d).unwrap();
    let limit = pool.limit().unwrap();
    assert!(limit.abs_diff(d.total_memory() / 100) <= 1, "{limit}");
    let e = DeviceBuffer::alloc(d.total_memory() / 50, &Stream::current().unwrap()).unwrap_err();
    assert!(e.is_out_of_memory(), "{e}");
}

#[test]
#[ignore = "needs a CUDA GPU (run by env_memory_limit)"]
fn child_limit_invalid() {
    if !is_child() {
        return;
    }
    let e = Array::<f32>::zeros(10).unwrap_err();
    assert!(matches!(e, Error::InvalidEnv { .. }), "{e}");
    assert!(e.to_string().contains("CUPY_GPU_MEMORY_LIMIT"), "{e}");
}

#[test]
#[ignore = "needs a CUDA GPU (run by env_memory_limit)"]
fn child_per_thread_stream() {
    if !is_child() {
        return;
    }
    let s = Stream::current().unwrap();
    assert_eq!(s.kind(), StreamKind::PerThread);
    let a = Array::from_vec(vec![3u16; 1000]).unwrap();
    assert_eq!(a.to_vec().unwrap(), vec![3; 1000]);
    let t = std::thread::spawn(|| {
        let a = Array::from_vec(vec![4u16; 1000]).unwrap();
        a.to_vec().unwrap()
    });
    assert_eq!(t.join().unwrap(), vec![4; 1000]);
}
