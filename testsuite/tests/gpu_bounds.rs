//! Index checks on the GPU (docs/semantics.md, row 18; issue 15 item 1): for each kernel kind and
//! each kind of index, an out-of-range read gives 0 and an out-of-range write (or atomic) is
//! skipped, touching no memory; the first violation surfaces as `Error::IndexOutOfBounds` with
//! its kernel, index, length, block and thread at the next synchronising call; and the next launch
//! on the same stream works. The kernels are in `bounds_kernels.rs`: one thread, `bad`, misuses
//! one index.
//!
//! Every test runs on the CPU device (in CI) and on the GPU (`on_both_devices!`): the checks of
//! slices, views, shared memory, atomics and local arrays, an elementwise or reduction `Raw<T>`,
//! and the name of the `#[device]` function holding the access. `cargo test -p cuprum-testsuite
//! --test gpu_bounds -- --include-ignored` runs the GPU's (needs a CUDA GPU).

#[path = "../../runtime/tests/support/mod.rs"]
mod support;

mod bounds_kernels;

use std::sync::{Mutex, MutexGuard};

use bounds_kernels as k;
use bounds_kernels::NONE;
use cuprum::runtime::{Array, Device, Error, Event, LaunchConfig, Stream};

/// The record of violations is one per device: the tests of this file take turns, so that one
/// test's violation is not reported by another's synchronisation.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// Every rawkernel here runs 1000 threads (or elements) in blocks of 128; thread 777 is block 6,
/// thread 9.
const N: usize = 1000;
const BLOCK: u32 = 128;
const BAD: u32 = 777;
const BAD_BLOCK: [u32; 3] = [6, 0, 0];
const BAD_THREAD: [u32; 3] = [9, 0, 0];
/// What surrounds the arguments in their buffers: never read, never overwritten.
const SENTINEL: f32 = -12345.0;
const POISON: f32 = -777.0;

on_both_devices!(
    cuprum::runtime::Device;
    slice_read_gives_zero_and_reports,
    slice_write_is_skipped_and_reports,
    load4_and_store4_past_the_end,
    view_multi_index_is_checked_axis_by_axis,
    view_flat_index_and_negative_indices,
    shared_array_read_and_write_keep_the_barriers,
    dynamic_shared_read_and_write,
    atomics_out_of_range_are_skipped,
    mut_ref_to_an_element_out_of_range_reaches_no_memory,
    unchecked_forms_in_range,
    reported_once_by_the_first_synchronising_call,
    local_array_read_and_write,
    a_device_function_reports_its_own_name,
    elementwise_raw_index,
    reduction_map_raw_index,
    a_first_argmax_leaves_an_earlier_violation_reported
);

fn cfg() -> LaunchConfig<'static> {
    LaunchConfig::new((N as u32).div_ceil(BLOCK), BLOCK)
}

fn input() -> Vec<f32> {
    (0..N).map(|i| i as f32 * 0.5 + 1.0).collect()
}

/// `v` inside a buffer that has a sentinel after it: the argument is the first `v.len()`.
fn fenced(v: &[f32]) -> (Array<f32>, Array<f32>) {
    let mut all = v.to_vec();
    all.push(SENTINEL);
    let buf = Array::from_vec(all).unwrap();
    let arg = buf.slice(0, 0..v.len() as isize).unwrap();
    (buf, arg)
}

/// A poisoned output of `n` elements followed by a sentinel (the buffer and the argument).
fn fenced_out(n: usize) -> (Array<f32>, Array<f32>) {
    fenced(&vec![POISON; n])
}

#[track_caller]
fn assert_oob(e: Error, kernel: &str, index: i128, len: u64, block: [u32; 3], thread: [u32; 3]) {
    match e {
        Error::IndexOutOfBounds { kernel: k, index: i, len: l, block: b, thread: t } => {
            assert_eq!((k.as_str(), i, l, b, t), (kernel, index, len, block, thread), "the reported violation");
        }
        other => panic!("expected Error::IndexOutOfBounds, got: {other}"),
    }
}

/// Like `assert_oob` where the launch shape is the runtime's (elementwise and reduction kernels):
/// a 1-D grid of 1-D blocks.
#[track_caller]
fn assert_oob_1d(e: Error, kernel: &str, index: i128, len: u64) {
    match e {
        Error::IndexOutOfBounds { kernel: k, index: i, len: l, block, thread } => {
            assert_eq!((k.as_str(), i, l), (kernel, index, len), "the reported violation");
            assert_eq!((block[1], block[2], thread[1], thread[2]), (0, 0, 0, 0), "a 1-D launch: {block:?} {thread:?}");
            assert!(thread[0] < 1024, "{thread:?}");
        }
        other => panic!("expected Error::IndexOutOfBounds, got: {other}"),
    }
}

/// The element-by-element expectation of a copy whose element `BAD` became `bad_value`.
fn with_bad(v: &[f32], bad_value: f32) -> Vec<f32> {
    let mut w = v.to_vec();
    w[BAD as usize] = bad_value;
    w
}

// ---- #[rawkernel]: slices ----------------------------------------------------------------------

fn slice_read_gives_zero_and_reports() {
    let _serial = serial();
    let xs = input();
    let (_xbuf, x) = fenced(&xs);
    let (ybuf, mut y) = fenced_out(N);
    // Thread 777 reads x[1000]: the sentinel right after `x` in its buffer must not be seen.
    k::slices::launch(&cfg(), &x, &mut y, BAD, N as u32, false).unwrap();
    assert_oob(y.to_vec().unwrap_err(), "slices", N as i128, N as u64, BAD_BLOCK, BAD_THREAD);
    // The record is cleared: the data reads without an error now.
    let mut want = with_bad(&xs, 0.0);
    want.push(SENTINEL);
    assert_eq!(ybuf.to_vec().unwrap(), want);
    // The next launch on the same stream works.
    let (ybuf, mut y) = fenced_out(N);
    k::slices::launch(&cfg(), &x, &mut y, NONE, 0, false).unwrap();
    assert_eq!(y.to_vec().unwrap(), xs);
    assert_eq!(ybuf.to_vec().unwrap()[N], SENTINEL);
}

fn slice_write_is_skipped_and_reports() {
    let _serial = serial();
    let xs = input();
    let (_xbuf, x) = fenced(&xs);
    let (ybuf, mut y) = fenced_out(N);
    // Thread 777 writes y[1000], which is the sentinel of y's buffer: it must stay.
    k::slices::launch(&cfg(), &x, &mut y, BAD, N as u32, true).unwrap();
    assert_oob(ybuf.to_vec().unwrap_err(), "slices", N as i128, N as u64, BAD_BLOCK, BAD_THREAD);
    let mut want = with_bad(&xs, POISON);
    want.push(SENTINEL);
    assert_eq!(ybuf.to_vec().unwrap(), want);
    // A write far away is skipped too.
    let (ybuf, mut y) = fenced_out(N);
    k::slices::launch(&cfg(), &x, &mut y, BAD, u32::MAX - 1, true).unwrap();
    assert_oob(y.to_vec().unwrap_err(), "slices", (u32::MAX - 1) as i128, N as u64, BAD_BLOCK, BAD_THREAD);
    let mut want = with_bad(&xs, POISON);
    want.push(SENTINEL);
    assert_eq!(ybuf.to_vec().unwrap(), want);
    // The next launch on the same stream works.
    let (_ybuf, mut y) = fenced_out(N);
    k::slices::launch(&cfg(), &x, &mut y, NONE, 0, true).unwrap();
    assert_eq!(y.to_vec().unwrap(), xs);
}

/// `load4`/`store4` (four elements from `i`): the first index outside is reported, a load gives
/// zeros, a store writes nothing.
fn load4_and_store4_past_the_end() {
    let _serial = serial();
    let xs = input();
    let (_xbuf, x) = fenced(&xs);
    // Thread 777 loads x[998..1002] and stores what it got at y[996..1000].
    let (ybuf, mut y) = fenced_out(N);
    k::quads::launch(&cfg(), &x, &mut y, BAD, 998, false).unwrap();
    assert_oob(y.to_vec().unwrap_err(), "quads", N as i128, N as u64, BAD_BLOCK, BAD_THREAD);
    let mut want = xs[..996].to_vec();
    want.extend([0.0; 4]);
    want.push(SENTINEL);
    assert_eq!(ybuf.to_vec().unwrap(), want);
    // Thread 777 stores at y[998..1002] (the sentinel among them) and far away: nothing written.
    for at in [998, u32::MAX - 1] {
        let (ybuf, mut y) = fenced_out(N);
        k::quads::launch(&cfg(), &x, &mut y, BAD, at, true).unwrap();
        let first = if at == 998 { N as i128 } else { at as i128 };
        assert_oob(y.to_vec().unwrap_err(), "quads", first, N as u64, BAD_BLOCK, BAD_THREAD);
        let mut want = xs[..996].to_vec();
        want.extend([POISON; 4]);
        want.push(SENTINEL);
        assert_eq!(ybuf.to_vec().unwrap(), want);
    }
    // The next launch works.
    let (_ybuf, mut y) = fenced_out(N);
    k::quads::launch(&cfg(), &x, &mut y, NONE, 0, false).unwrap();
    assert_eq!(y.to_vec().unwrap()[..996], xs[..996]);
}

// ---- #[rawkernel]: views -----------------------------------------------------------------------

/// 20 x 50, one thread per element in 16 x 8 blocks; the bad element (13, 37) is thread
/// (5, 5) of block (2, 1), flat index 687.
const ROWS: usize = 20;
const COLS: usize = 50;
const BAD_RC: (u32, u32) = (13, 37);

fn cfg_2d() -> LaunchConfig<'static> {
    LaunchConfig::new(((COLS as u32).div_ceil(16), (ROWS as u32).div_ceil(8)), (16, 8))
}

fn view_multi_index_is_checked_axis_by_axis() {
    let _serial = serial();
    let xs: Vec<f32> = (0..ROWS * COLS).map(|i| i as f32).collect();
    let a = Array::from_shape_vec([ROWS, COLS], xs.clone()).unwrap();
    let bad = BAD_RC.0 * COLS as u32 + BAD_RC.1;
    let bad_at = [2u32, 1, 0];
    let bad_thread = [5u32, 5, 0];
    // Read a[[20, 3]]: row 20 is out of range (its flat offset, 1003, is not in the array).
    let mut b = Array::from_shape_vec([ROWS, COLS], vec![POISON; ROWS * COLS]).unwrap();
    k::views_2d::launch(&cfg_2d(), &a, &mut b, bad, ROWS as u32, 3, false).unwrap();
    assert_oob(b.to_vec().unwrap_err(), "views_2d", ROWS as i128, ROWS as u64, bad_at, bad_thread);
    let mut want = xs.clone();
    want[bad as usize] = 0.0;
    assert_eq!(b.to_vec().unwrap(), want);
    // Write b[[3, 50]]: column 50 is out of range although its flat offset (200, element
    // [4, 0]) is inside the array: element [4, 0] keeps its own value.
    let mut b = Array::from_shape_vec([ROWS, COLS], vec![POISON; ROWS * COLS]).unwrap();
    k::views_2d::launch(&cfg_2d(), &a, &mut b, bad, 3, COLS as u32, true).unwrap();
    assert_oob(b.to_vec().unwrap_err(), "views_2d", COLS as i128, COLS as u64, bad_at, bad_thread);
    let mut want = xs.clone();
    want[bad as usize] = POISON;
    assert_eq!(b.to_vec().unwrap(), want);
    // The next launch on the same stream works.
    let mut b = Array::from_shape_vec([ROWS, COLS], vec![POISON; ROWS * COLS]).unwrap();
    k::views_2d::launch(&cfg_2d(), &a, &mut b, NONE, 0, 0, false).unwrap();
    assert_eq!(b.to_vec().unwrap(), xs);
}

fn view_flat_index_and_negative_indices() {
    let _serial = serial();
    let xs: Vec<f32> = (0..ROWS * COLS).map(|i| i as f32 + 0.25).collect();
    let a = Array::from_shape_vec([ROWS, COLS], xs.clone()).unwrap();
    let cfg = LaunchConfig::new(((ROWS * COLS) as u32).div_ceil(BLOCK), BLOCK);
    // Read a[-3] (an `i32` flat index): reported as negative.
    let mut b = Array::from_shape_vec([ROWS, COLS], vec![POISON; ROWS * COLS]).unwrap();
    k::views_flat::launch(&cfg, &a, &mut b, BAD, -3, false).unwrap();
    assert_oob(b.to_vec().unwrap_err(), "views_flat", -3, (ROWS * COLS) as u64, BAD_BLOCK, BAD_THREAD);
    assert_eq!(b.to_vec().unwrap(), with_bad(&xs, 0.0));
    // Write b[1000].
    let mut b = Array::from_shape_vec([ROWS, COLS], vec![POISON; ROWS * COLS]).unwrap();
    k::views_flat::launch(&cfg, &a, &mut b, BAD, (ROWS * COLS) as i32, true).unwrap();
    assert_oob(b.to_vec().unwrap_err(), "views_flat", (ROWS * COLS) as i128, (ROWS * COLS) as u64, BAD_BLOCK, BAD_THREAD);
    assert_eq!(b.to_vec().unwrap(), with_bad(&xs, POISON));
    // The next launch on the same stream works.
    let mut b = Array::from_shape_vec([ROWS, COLS], vec![POISON; ROWS * COLS]).unwrap();
    k::views_flat::launch(&cfg, &a, &mut b, NONE, 0, false).unwrap();
    assert_eq!(b.to_vec().unwrap(), xs);
}

// ---- #[rawkernel]: local and shared arrays -----------------------------------------------------

/// Runs a kernel of signature `(x, y, bad, at, write)` twice (a bad read of `[at_read]`, then a
/// bad write of `[at_write]`) and once clean, checking each result and report.
fn read_write_case(
    name: &str,
    len: u64,
    at_read: u32,
    at_write: u32,
    skipped_write_leaves: f32,
    launch: &dyn Fn(&Array<f32>, &mut Array<f32>, u32, u32, bool),
) {
    let xs = input();
    let x = Array::from_vec(xs.clone()).unwrap();
    let mut y = Array::from_vec(vec![POISON; N]).unwrap();
    launch(&x, &mut y, BAD, at_read, false);
    assert_oob(y.to_vec().unwrap_err(), name, at_read as i128, len, BAD_BLOCK, BAD_THREAD);
    assert_eq!(y.to_vec().unwrap(), with_bad(&xs, 0.0), "{name}: a skipped read gives 0");
    let mut y = Array::from_vec(vec![POISON; N]).unwrap();
    launch(&x, &mut y, BAD, at_write, true);
    assert_oob(y.to_vec().unwrap_err(), name, at_write as i128, len, BAD_BLOCK, BAD_THREAD);
    assert_eq!(y.to_vec().unwrap(), with_bad(&xs, skipped_write_leaves), "{name}: a skipped write");
    let mut y = Array::from_vec(vec![POISON; N]).unwrap();
    launch(&x, &mut y, NONE, 0, false);
    assert_eq!(y.to_vec().unwrap(), xs, "{name}: the next launch");
}

fn local_array_read_and_write() {
    let _serial = serial();
    read_write_case("local_array", 8, 8, 9, -1.0, &|x, y, bad, at, write| {
        k::local_array::launch(&cfg(), x, y, bad, at, write).unwrap();
    });
}

fn shared_array_read_and_write_keep_the_barriers() {
    let _serial = serial();
    // The bad thread skips its access and still reaches both barriers (no deadlock).
    read_write_case("shared_static", 128, 128, 130, -1.0, &|x, y, bad, at, write| {
        k::shared_static::launch(&cfg(), x, y, bad, at, write).unwrap();
    });
}

fn dynamic_shared_read_and_write() {
    let _serial = serial();
    // 128 f32 of dynamic shared memory: its length is 128.
    read_write_case("shared_dynamic", 128, 200, 128, -1.0, &|x, y, bad, at, write| {
        k::shared_dynamic::launch(&cfg().shared_mem(128 * 4), x, y, bad, at, write).unwrap();
    });
}

// ---- #[rawkernel]: atomics, `&mut a[i]`, device functions, unchecked forms ---------------------

fn atomics_out_of_range_are_skipped() {
    let _serial = serial();
    let m = 10usize;
    let (cbuf, mut counts) = {
        let buf = Array::from_vec(vec![0u32; m + 1]).unwrap();
        let arg = buf.slice(0, 0..m as isize).unwrap();
        (buf, arg)
    };
    let mut old = Array::from_vec(vec![u32::MAX; N]).unwrap();
    let mut total = Array::from_vec(vec![0u32]).unwrap();
    k::atomics::launch(&cfg(), &mut counts, &mut old, &mut total, BAD, m as u32).unwrap();
    // The first violation is the slice atomic (the same thread's shared one comes after it).
    assert_oob(old.to_vec().unwrap_err(), "atomics", m as i128, m as u64, BAD_BLOCK, BAD_THREAD);
    let got = cbuf.to_vec().unwrap();
    let mut want = vec![0u32; m + 1];
    for i in (0..N).filter(|&i| i != BAD as usize) {
        want[i % m] += 1;
    }
    assert_eq!(got, want, "the bad atomic touched nothing (not even the element after `counts`)");
    let old = old.to_vec().unwrap();
    assert_eq!(old[BAD as usize], 0, "a skipped atomic returns 0");
    for r in 0..m {
        let mut seen: Vec<u32> = (0..N).filter(|&i| i != BAD as usize && i % m == r).map(|i| old[i]).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..want[r]).collect::<Vec<_>>(), "old values of counts[{r}]");
    }
    assert_eq!(total.to_vec().unwrap(), [N as u32 - 1], "the shared counter lost only the skipped atomic");
    // The next launch on the same stream works.
    let mut counts = Array::from_vec(vec![0u32; m]).unwrap();
    let mut total = Array::from_vec(vec![0u32]).unwrap();
    k::atomics::launch(&cfg(), &mut counts, &mut old_again(), &mut total, NONE, 0).unwrap();
    assert_eq!(counts.to_vec().unwrap().iter().sum::<u32>(), N as u32);
    assert_eq!(total.to_vec().unwrap(), [N as u32]);
}

fn old_again() -> Array<u32> {
    Array::from_vec(vec![0u32; N]).unwrap()
}

fn mut_ref_to_an_element_out_of_range_reaches_no_memory() {
    let _serial = serial();
    let xs = input();
    let (ybuf, mut y) = fenced(&xs);
    k::mut_ref::launch(&cfg(), &mut y, BAD, N as u32).unwrap();
    assert_oob(y.to_vec().unwrap_err(), "mut_ref", N as i128, N as u64, BAD_BLOCK, BAD_THREAD);
    let mut want: Vec<f32> = xs.iter().map(|v| v + 1.0).collect();
    want[BAD as usize] = xs[BAD as usize];
    want.push(SENTINEL);
    assert_eq!(ybuf.to_vec().unwrap(), want);
    let mut y = Array::from_vec(xs.clone()).unwrap();
    k::mut_ref::launch(&cfg(), &mut y, NONE, 0).unwrap();
    assert_eq!(y.to_vec().unwrap(), xs.iter().map(|v| v + 1.0).collect::<Vec<_>>());
}

fn a_device_function_reports_its_own_name() {
    let _serial = serial();
    let xs = input();
    let x = Array::from_vec(xs.clone()).unwrap();
    let mut y = Array::from_vec(vec![POISON; N]).unwrap();
    k::via_device::launch(&cfg(), &x, &mut y, BAD, 5000).unwrap();
    assert_oob(y.to_vec().unwrap_err(), "fetch", 5000, N as u64, BAD_BLOCK, BAD_THREAD);
    assert_eq!(y.to_vec().unwrap(), with_bad(&xs, 0.0));
    k::via_device::launch(&cfg(), &x, &mut y, NONE, 0).unwrap();
    assert_eq!(y.to_vec().unwrap(), xs);
}

fn unchecked_forms_in_range() {
    let _serial = serial();
    let xs = input();
    let x = Array::from_vec(xs.clone()).unwrap();
    let mut y = Array::from_vec(vec![POISON; N]).unwrap();
    k::get_unchecked_copy::launch(&cfg(), &x, &mut y).unwrap();
    assert_eq!(y.to_vec().unwrap(), xs.iter().map(|v| v * 2.0).collect::<Vec<_>>());
    // SAFETY: `unchecked_copy` indexes `x` and `y` below `n`, which is their length.
    unsafe { k::unchecked_copy::launch(&cfg(), &x, &mut y, N as u32) }.unwrap();
    assert_eq!(y.to_vec().unwrap(), xs.iter().map(|v| v * 3.0).collect::<Vec<_>>());
}

// ---- #[elementwise] and #[reduction]: raw arguments --------------------------------------------

fn elementwise_raw_index() {
    let _serial = serial();
    let xs: Vec<f32> = (0..100).map(|i| i as f32 + 0.5).collect();
    let x = Array::from_vec(xs.clone()).unwrap();
    let js: Vec<i64> = (0..N as i64).map(|i| i % 100).collect();
    for bad_j in [100i64, -3] {
        let mut j = js.clone();
        j[BAD as usize] = bad_j;
        let out = k::gather::call(&x, &Array::from_vec(j).unwrap()).unwrap();
        assert_oob_1d(out.to_vec().unwrap_err(), "gather", bad_j as i128, 100);
        let want: Vec<f32> = (0..N).map(|i| if i == BAD as usize { 0.0 } else { xs[i % 100] }).collect();
        assert_eq!(out.to_vec().unwrap(), want);
    }
    let out = k::gather::call(&x, &Array::from_vec(js).unwrap()).unwrap();
    assert_eq!(out.to_vec().unwrap(), (0..N).map(|i| xs[i % 100]).collect::<Vec<_>>());
}

fn reduction_map_raw_index() {
    let _serial = serial();
    let xs: Vec<f32> = (0..100).map(|i| i as f32 + 0.5).collect();
    let x = Array::from_vec(xs.clone()).unwrap();
    let js: Vec<i64> = (0..N as i64).map(|i| (i * 7) % 100).collect();
    let mut j = js.clone();
    j[BAD as usize] = 250;
    let sum = k::gather_sum::call(&Array::from_vec(j).unwrap(), &x).run().unwrap();
    assert_oob_1d(sum.to_vec().unwrap_err(), "gather_sum", 250, 100);
    let want: f64 = (0..N).filter(|&i| i != BAD as usize).map(|i| xs[js[i] as usize] as f64).sum();
    assert_eq!(sum.to_vec().unwrap(), [want]);
    let sum = k::gather_sum::call(&Array::from_vec(js.clone()).unwrap(), &x).run().unwrap();
    let want: f64 = js.iter().map(|&j| xs[j as usize] as f64).sum();
    assert_eq!(sum.to_vec().unwrap(), [want]);
}

// ---- where and how often the error surfaces ----------------------------------------------------

fn reported_once_by_the_first_synchronising_call() {
    let _serial = serial();
    let dev = Device::current().unwrap();
    let stream = Stream::new(&dev).unwrap();
    let xs = input();
    let x = Array::from_vec(xs.clone()).unwrap();
    let mut y = Array::from_vec(vec![POISON; N]).unwrap();
    let on = cfg().stream(&stream);
    // Two bad launches: only the first violation is kept.
    k::slices::launch(&on, &x, &mut y, BAD, 4000, false).unwrap();
    k::slices::launch(&on, &x, &mut y, 3, 5000, false).unwrap();
    assert_oob(stream.synchronize().unwrap_err(), "slices", 4000, N as u64, BAD_BLOCK, BAD_THREAD);
    stream.synchronize().unwrap();
    dev.synchronize().unwrap();
    // An event's synchronize reports too, and so does the device's.
    k::slices::launch(&on, &x, &mut y, BAD, 6000, true).unwrap();
    let e = Event::record(&stream).unwrap();
    assert_oob(e.synchronize().unwrap_err(), "slices", 6000, N as u64, BAD_BLOCK, BAD_THREAD);
    k::slices::launch(&on, &x, &mut y, BAD, 7000, true).unwrap();
    assert_oob(dev.synchronize().unwrap_err(), "slices", 7000, N as u64, BAD_BLOCK, BAD_THREAD);
    // The stream and the device stay usable.
    k::slices::launch(&on, &x, &mut y, NONE, 0, false).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(y.to_vec().unwrap(), xs);
    let e = Error::IndexOutOfBounds { kernel: "k".into(), index: 5, len: 4, block: [1, 2, 3], thread: [4, 5, 6] };
    let m = e.to_string();
    assert!(m.contains("the len is 4 but the index is 5") && m.contains("block (1, 2, 3), thread (4, 5, 6)"), "{m}");
}

/// The first float `argmin`/`argmax` on a device makes a constant (the direction) and waits for
/// it: the wait must leave an earlier kernel's violation for the caller's next synchronising call
/// (no other test of this file runs an argmax, so this one is the device's first).
fn a_first_argmax_leaves_an_earlier_violation_reported() {
    let _serial = serial();
    let xs = input();
    let x = Array::from_vec(xs.clone()).unwrap();
    let mut y = Array::from_vec(vec![POISON; N]).unwrap();
    k::slices::launch(&cfg(), &x, &mut y, BAD, 4000, false).unwrap();
    let best = x.argmax().run().unwrap();
    assert_oob(y.to_vec().unwrap_err(), "slices", 4000, N as u64, BAD_BLOCK, BAD_THREAD);
    let want = xs.iter().enumerate().fold((0, f32::MIN), |(bi, bv), (i, &v)| if v > bv { (i, v) } else { (bi, bv) }).0;
    assert_eq!(best.to_vec().unwrap(), [want as i64]);
}
