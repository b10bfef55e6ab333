//! The CPU device (`Device::cpu()`, docs/cpu.md): arrays in host memory, writes by the host,
//! transfers to and from a GPU, `CUPRUM_DEVICE=cpu`, and the clear error of a kernel launched on
//! it. These run in CI (no GPU); the transfers to a GPU are ignored without one.

mod support;
use support::Rng;

use cuprum_runtime::device::CPU_ORDINAL;
use cuprum_runtime::{Array, Device, Error, MemoryPool, Stream};

fn random(r: &mut Rng, n: usize) -> Vec<f64> {
    (0..n).map(|_| r.range(-1.0, 1.0) * 1e3 + 0.5).collect()
}

fn cpu_array(shape: &[usize], data: &[f64]) -> Array<f64> {
    Array::from_shape_vec_on(shape, data, &Stream::null(&Device::cpu()).unwrap()).unwrap()
}

#[test]
fn arrays_live_on_the_cpu_device() {
    let r = &mut Rng::new();
    let host = random(r, 4 * 5);
    let a = cpu_array(&[4, 5], &host);
    assert!(a.device().is_cpu());
    assert_eq!(a.device().ordinal(), CPU_ORDINAL);
    assert_eq!(a.to_vec().unwrap(), host);
    // Its buffer is host memory, 64-byte aligned.
    assert_eq!(a.device_ptr() % 64, 0);
    // A view on the CPU shares it; copies gather on the host.
    // Columns 4, 2, 0 of the transpose (rows of `a` reversed, every other one).
    let t = a.transpose().slice(0, cuprum_runtime::Slice::new(Some(4), None, -2)).unwrap();
    assert_eq!(t.shape(), &[3, 4]);
    let c = t.copy().unwrap();
    assert!(c.device().is_cpu() && c.is_c_contiguous());
    let h = &host;
    let want: Vec<f64> = [4usize, 2, 0].iter().flat_map(|&j| (0..4).map(move |i| h[i * 5 + j])).collect();
    assert_eq!(t.to_vec().unwrap(), want);
    assert_eq!(c.to_vec().unwrap(), want);
    assert_ne!(c.device_ptr(), a.device_ptr());
}

#[test]
fn the_host_writes_views_in_place() {
    let r = &mut Rng::new();
    let host = random(r, 6 * 7);
    let mut a = cpu_array(&[6, 7], &host);
    // Every third column of the transpose: only its elements change.
    let mut v = a.transpose().slice(0, cuprum_runtime::Slice::new(Some(1), None, 3)).unwrap();
    v.fill(-2.5).unwrap();
    let got = a.to_vec().unwrap();
    for i in 0..6 {
        for j in 0..7 {
            let want = if j % 3 == 1 { -2.5 } else { host[i * 7 + j] };
            assert_eq!(got[i * 7 + j], want, "({i}, {j})");
        }
    }
    // `assign` broadcasts a row into every row, reading it whole before writing (a view of the
    // same buffer).
    let row = a.index_axis(0, 4).unwrap().copy().unwrap();
    let row_view = a.index_axis(0, 4).unwrap();
    a.assign(&row_view).unwrap();
    let want = row.to_vec().unwrap();
    let got = a.to_vec().unwrap();
    for i in 0..6 {
        assert_eq!(&got[i * 7..(i + 1) * 7], want.as_slice(), "row {i}");
    }
    // A broadcast view cannot be written.
    let mut b = row.broadcast_to([3, 7]).unwrap();
    let e = b.fill(1.0).unwrap_err().to_string();
    assert!(e.contains("broadcast view"), "{e}");
    // `full`, `zeros`, `ones` and `arange` on the current device.
    let _cpu = Device::cpu().use_scoped().unwrap();
    assert_eq!(Array::<i32>::full([2, 2], 7).unwrap().to_vec().unwrap(), vec![7; 4]);
    assert_eq!(Array::<f32>::zeros(3).unwrap().to_vec().unwrap(), vec![0.0; 3]);
    assert!(Array::<u8>::ones(2).unwrap().device().is_cpu());
}

#[test]
fn threads_share_an_array_without_racing() {
    let n = 1 << 16;
    let a = cpu_array(&[n], &vec![1.0; n]);
    std::thread::scope(|s| {
        for k in 0..4 {
            let mut w = a.clone();
            s.spawn(move || {
                for _ in 0..20 {
                    w.fill(k as f64).unwrap();
                }
            });
            let r = a.clone();
            s.spawn(move || {
                for _ in 0..20 {
                    let v = r.to_vec().unwrap();
                    // A read sees one fill whole: the writes hold the buffer's lock.
                    assert!(v.iter().all(|&x| x == v[0]), "a torn read");
                }
            });
        }
    });
}

#[test]
fn elementwise_kernels_run_on_the_cpu_device() {
    let r = &mut Rng::new();
    let (xs, ys) = (random(r, 6 * 500), random(r, 500));
    let x = cpu_array(&[6, 500], &xs);
    let y = cpu_array(&[500], &ys);
    // A built-in operator with broadcasting, then a transposed input.
    let z = (&x - &y).unwrap();
    assert!(z.device().is_cpu());
    let want: Vec<f64> = (0..6 * 500).map(|i| xs[i] - ys[i % 500]).collect();
    assert_eq!(z.to_vec().unwrap(), want);
    let t = (&x.transpose() * &x.transpose()).unwrap();
    let want: Vec<f64> = (0..500).flat_map(|j| (0..6).map(move |i| (i, j))).map(|(i, j)| xs[i * 500 + j] * xs[i * 500 + j]).collect();
    assert_eq!(t.to_vec().unwrap(), want);
    // A scalar, a cast, a comparison, a math function (the host's `exp`: within a few ulps of CUDA's).
    let s = (&x * 2.5).unwrap().astype::<f32>().unwrap();
    assert_eq!(s.to_vec().unwrap(), xs.iter().map(|v| (v * 2.5) as f32).collect::<Vec<_>>());
    let small = cpu_array(&[4], &[0.5, -1.0, 2.0, 0.0]);
    let e = small.exp().unwrap().to_vec().unwrap();
    for (g, v) in e.iter().zip([0.5f64, -1.0, 2.0, 0.0]) {
        assert!((g - v.exp()).abs() <= 4.0 * f64::EPSILON * v.exp(), "{g} vs {}", v.exp());
    }
    // A large loop runs on several threads, in place.
    let n = 1 << 20;
    let mut big = cpu_array(&[n], &random(r, n));
    let before = big.to_vec().unwrap();
    let sum = (&big + &big).unwrap();
    big.assign(&sum).unwrap();
    assert_eq!(big.to_vec().unwrap(), before.iter().map(|v| v + v).collect::<Vec<_>>());
}

#[test]
fn reductions_run_on_the_cpu_device() {
    let r = &mut Rng::new();
    let (rows, cols) = (37usize, 3001usize);
    let xs = random(r, rows * cols);
    let x = cpu_array(&[rows, cols], &xs);
    let row = |i: usize| &xs[i * cols..(i + 1) * cols];
    // Full and per-axis sums against f64 host sums (the same element type: only the order of
    // the additions differs).
    let total: f64 = xs.iter().sum();
    let got = x.sum().run().unwrap().to_vec().unwrap()[0];
    assert!((got - total).abs() <= 1e-9 * xs.iter().map(|v| v.abs()).sum::<f64>(), "{got} vs {total}");
    let sums = x.sum().axis(1).run().unwrap().to_vec().unwrap();
    for i in 0..rows {
        let want: f64 = row(i).iter().sum();
        assert!((sums[i] - want).abs() <= 1e-9 * want.abs().max(1.0), "row {i}");
    }
    let cols_sum = x.sum().axis(0).keepdims(true).run().unwrap();
    assert_eq!(cols_sum.shape(), &[1, cols]);
    let cs = cols_sum.to_vec().unwrap();
    for j in (0..cols).step_by(97) {
        let want: f64 = (0..rows).map(|i| xs[i * cols + j]).sum();
        assert!((cs[j] - want).abs() <= 1e-9 * want.abs().max(1.0), "column {j}");
    }
    // argmax (two kernels, `reduce_index()`), max, mean and var on a transposed view.
    let am = x.argmax().axis(1).run().unwrap().to_vec().unwrap();
    for i in 0..rows {
        let (k, _) = row(i).iter().enumerate().fold((0, f64::MIN), |b, (k, &v)| if v > b.1 { (k, v) } else { b });
        assert_eq!(am[i] as usize, k, "argmax of row {i}");
    }
    let t = x.transpose();
    let means = t.mean().axis(1).run().unwrap().to_vec().unwrap();
    let vars = t.var().axis(1).run().unwrap().to_vec().unwrap();
    for j in (0..cols).step_by(101) {
        let col: Vec<f64> = (0..rows).map(|i| xs[i * cols + j]).collect();
        let mean = col.iter().sum::<f64>() / rows as f64;
        let var = col.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / rows as f64;
        assert!((means[j] - mean).abs() <= 1e-9 * mean.abs().max(1.0), "mean {j}");
        assert!((vars[j] - var).abs() <= 1e-9 * var, "var {j}");
    }
    // Integers wrap as on the GPU (a debug build's overflow check does not fire).
    let big = Array::from_shape_vec_on([3usize], &[i64::MAX, 1, 1], &Stream::null(&Device::cpu()).unwrap()).unwrap();
    assert_eq!(big.sum().run().unwrap().to_vec().unwrap(), vec![i64::MIN + 1]);
    // An empty reduction with an identity; a large full one on several threads.
    let empty = cpu_array(&[0, 4], &[]);
    assert_eq!(empty.sum().axis(0).run().unwrap().to_vec().unwrap(), vec![0.0; 4]);
    let n = 1 << 21;
    let ones = cpu_array(&[n], &vec![1.0; n]);
    assert_eq!(ones.sum().run().unwrap().to_vec().unwrap(), vec![n as f64]);
}

#[test]
fn what_does_not_run_on_the_cpu_device_says_so() {
    let e = MemoryPool::for_device(&Device::cpu()).map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("host allocations"), "{e}");
}

#[test]
fn to_device_on_the_same_device_is_a_view() {
    let a = cpu_array(&[2], &[1.0, 2.0]);
    let b = a.to_device(&Device::cpu()).unwrap();
    assert_eq!(b.device_ptr(), a.device_ptr());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn transfers_between_the_cpu_and_a_gpu() {
    let r = &mut Rng::new();
    let host = random(r, 5 * 9);
    let gpu = Device::get(0).unwrap();
    let a = cpu_array(&[5, 9], &host);
    // A strided view goes over whole; the copy on the GPU is C-contiguous.
    let view = a.transpose();
    let g = view.to_device(&gpu).unwrap();
    assert_eq!(g.device(), &gpu);
    assert_eq!(g.shape(), &[9, 5]);
    assert_eq!(g.to_vec().unwrap(), view.to_vec().unwrap());
    // A GPU kernel's result back to the CPU.
    let doubled = (&g + &g).unwrap();
    let back = doubled.to_device(&Device::cpu()).unwrap();
    assert!(back.device().is_cpu());
    let want: Vec<f64> = view.to_vec().unwrap().iter().map(|x| x + x).collect();
    assert_eq!(back.to_vec().unwrap(), want);
    // Arrays of both devices in one launch are an error naming both.
    let e = (&g + &back.reshape([9, 5]).unwrap()).map(|_| ()).unwrap_err();
    assert!(matches!(e, Error::DeviceMismatch { .. }), "{e:?}");
}

/// `CUPRUM_DEVICE` is read once per process: the checks run in a child process (this test binary
/// again, running only `cuprum_device_child` with the variable set).
#[test]
fn cuprum_device_selects_the_default_device() {
    let exe = std::env::current_exe().unwrap();
    for (value, want) in [("cpu", "child: cpu"), ("CPU", "child: cpu"), ("tpu", "child: invalid")] {
        let out = std::process::Command::new(&exe)
            .args(["--exact", "cuprum_device_child", "--nocapture", "--include-ignored"])
            .env("CUPRUM_DEVICE", value)
            .env("CUPRUM_DEVICE_CHILD", "1")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && text.contains(want), "CUPRUM_DEVICE={value}: {text}");
    }
}

/// Run by [`cuprum_device_selects_the_default_device`] in a child process; does nothing alone.
#[test]
#[ignore = "run by cuprum_device_selects_the_default_device in a child process"]
fn cuprum_device_child() {
    if std::env::var_os("CUPRUM_DEVICE_CHILD").is_none() {
        return;
    }
    match Device::current() {
        Ok(d) => {
            assert!(d.is_cpu(), "{d:?}");
            assert_eq!(Device::current_ordinal(), CPU_ORDINAL);
            let a = Array::<f32>::from_vec(vec![1.0, 2.0]).unwrap();
            assert!(a.device().is_cpu());
            assert!(Stream::current().unwrap().device().is_cpu());
            println!("child: cpu");
        }
        Err(e) => {
            let m = e.to_string();
            assert!(m.contains("CUPRUM_DEVICE") && m.contains("cpu or cuda"), "{m}");
            println!("child: invalid");
        }
    }
}
