//! Tests of `Array<T>` on each device: every dtype host -> device -> host, views against host
//! references, ndarray interop, creation functions, struct elements. Each runs on the CPU device
//! (in CI) and on CUDA device 0 (ignored without a GPU; run on a GPU machine with
//! `cargo test -p cuprum-runtime --test gpu_array -- --include-ignored`).

mod support;
use support::Rng;
mod structs;

use cuprum_runtime::{Array, Error, Slice};

on_both_devices!(
    cuprum_runtime::Device;
    every_dtype_round_trips,
    views_match_host_reference,
    ndarray_interop,
    creation_functions,
    struct_arrays_round_trip,
    struct_views_and_copies_gather,
    copies_through_the_host,
);
use half::{bf16, f16};
use num_complex::Complex;

trait Random: Sized {
    fn random(r: &mut Rng) -> Self;
}

macro_rules! random_int {
    ($($t:ty),*) => {$(
        impl Random for $t {
            fn random(r: &mut Rng) -> Self {
                // Full-range bits, never 0.
                let v = r.next() as $t;
                if v == 0 { 1 } else { v }
            }
        }
    )*};
}
random_int!(i8, i16, i32, i64, u8, u16, u32, u64);

impl Random for bool {
    fn random(r: &mut Rng) -> Self {
        r.next() & 1 == 1
    }
}
impl Random for f32 {
    fn random(r: &mut Rng) -> Self {
        (r.range(-1.0, 1.0) * 1000.0) as f32
    }
}
impl Random for f64 {
    fn random(r: &mut Rng) -> Self {
        r.range(-1.0, 1.0) * 1e6
    }
}
impl Random for f16 {
    fn random(r: &mut Rng) -> Self {
        f16::from_f64(r.range(-1.0, 1.0) * 100.0)
    }
}
impl Random for bf16 {
    fn random(r: &mut Rng) -> Self {
        bf16::from_f64(r.range(-1.0, 1.0) * 100.0)
    }
}
impl Random for Complex<f32> {
    fn random(r: &mut Rng) -> Self {
        Complex::new(f32::random(r), f32::random(r))
    }
}
impl Random for Complex<f64> {
    fn random(r: &mut Rng) -> Self {
        Complex::new(f64::random(r), f64::random(r))
    }
}

fn random_vec<T: Random>(r: &mut Rng, n: usize) -> Vec<T> {
    (0..n).map(|_| T::random(r)).collect()
}

fn roundtrip<T: cuprum_runtime::Scalar + Random>(r: &mut Rng) {
    for n in [1usize, 3, 64, 1000, 4097, 100_003] {
        let host: Vec<T> = random_vec(r, n);
        let a = Array::from_slice(&host).unwrap();
        assert_eq!(a.len(), n);
        assert_eq!(a.shape(), &[n]);
        assert_eq!(a.dtype(), T::DTYPE);
        assert_eq!(a.to_vec().unwrap(), host, "{:?} n={n}", T::DTYPE);
    }
    // 2-D, from_shape_vec, then a transposed view
    let host: Vec<T> = random_vec(r, 6 * 7);
    let a = Array::from_shape_vec([6, 7], host.clone()).unwrap();
    assert_eq!(a.to_vec().unwrap(), host);
    let t = a.transpose().to_vec().unwrap();
    for i in 0..6 {
        for j in 0..7 {
            assert_eq!(t[j * 6 + i], host[i * 7 + j]);
        }
    }
    // empty and 0-d
    let e = Array::<T>::from_vec(Vec::new()).unwrap();
    assert!(e.is_empty() && e.to_vec().unwrap().is_empty());
    let z = Array::<T>::from_shape_vec([3, 0, 2], Vec::new()).unwrap();
    assert!(z.to_vec().unwrap().is_empty());
    let x = T::random(r);
    let s = Array::<T>::from_shape_vec([0usize; 0], vec![x]).unwrap();
    assert_eq!(s.ndim(), 0);
    assert_eq!(s.to_vec().unwrap(), vec![x]);
}

fn every_dtype_round_trips() {
    let r = &mut Rng::new();
    roundtrip::<bool>(r);
    roundtrip::<i8>(r);
    roundtrip::<i16>(r);
    roundtrip::<i32>(r);
    roundtrip::<i64>(r);
    roundtrip::<u8>(r);
    roundtrip::<u16>(r);
    roundtrip::<u32>(r);
    roundtrip::<u64>(r);
    roundtrip::<f16>(r);
    roundtrip::<bf16>(r);
    roundtrip::<f32>(r);
    roundtrip::<f64>(r);
    roundtrip::<Complex<f32>>(r);
    roundtrip::<Complex<f64>>(r);
}

/// Python's `range(n)[start:stop:step]`, written out independently of the library.
fn py_range(n: usize, start: Option<isize>, stop: Option<isize>, step: isize) -> Vec<usize> {
    let n = n as isize;
    let adj = |v: isize| if v < 0 { v + n } else { v };
    let mut out = Vec::new();
    if step > 0 {
        let (mut i, b) = (
            start.map(adj).unwrap_or(0).clamp(0, n),
            stop.map(adj).unwrap_or(n).clamp(0, n),
        );
        while i < b {
            out.push(i as usize);
            i += step;
        }
    } else {
        let (mut i, b) = (
            start.map(adj).unwrap_or(n - 1).clamp(-1, n - 1),
            stop.map(adj).unwrap_or(-1).clamp(-1, n - 1),
        );
        while i > b {
            out.push(i as usize);
            i += step;
        }
    }
    out
}

/// Elements of a C-order 3-D host array at the index lists `ii x jj x kk`.
fn pick3<T: Copy>(h: &[T], shape: [usize; 3], ii: &[usize], jj: &[usize], kk: &[usize]) -> Vec<T> {
    let mut v = Vec::new();
    for &i in ii {
        for &j in jj {
            for &k in kk {
                v.push(h[(i * shape[1] + j) * shape[2] + k]);
            }
        }
    }
    v
}

/// `to_device_through_host` (the staged copy `to_device` falls back to between GPUs without peer
/// access) to the array's own device: a new C-contiguous array with the view's elements; a device
/// has no peer access to itself or to the CPU device (multi-GPU copies: testsuite/tests/gpu_multi.rs).
fn copies_through_the_host() {
    let d = cuprum_runtime::Device::current().unwrap();
    let r = &mut Rng::new();
    let data: Vec<f32> = random_vec(r, 7 * 11);
    let a = Array::from_shape_vec([7, 11], data.clone()).unwrap();
    let view = a.transpose();
    let c = view.to_device_through_host(&d).unwrap();
    assert_eq!((c.device(), c.shape()), (&d, &[11, 7][..]));
    assert!(c.is_c_contiguous() && c.device_ptr() != a.device_ptr());
    let want: Vec<f32> = (0..77).map(|k| data[(k % 7) * 11 + k / 7]).collect();
    assert_eq!(c.to_vec().unwrap(), want);
    assert!(!d.can_access_peer(&d).unwrap());
    assert!(!cuprum_runtime::Device::cpu().can_access_peer(&d).unwrap());
    let empty = Array::<f32>::zeros([0, 3]).unwrap().to_device_through_host(&d).unwrap();
    assert_eq!(empty.shape(), &[0, 3]);
}

fn views_match_host_reference() {
    let r = &mut Rng::new();
    let sh = [5usize, 6, 7];
    let h: Vec<f32> = random_vec(r, 5 * 6 * 7);
    let a = Array::from_shape_vec(sh, h.clone()).unwrap();
    let all = |n: usize| (0..n).collect::<Vec<_>>();

    // transpose and permute
    let t = a.transpose();
    assert_eq!(t.shape(), &[7, 6, 5]);
    assert!(!t.is_c_contiguous() && t.is_f_contiguous());
    let tv = t.to_vec().unwrap();
    for i in 0..5 {
        for j in 0..6 {
            for k in 0..7 {
                assert_eq!(tv[(k * 6 + j) * 5 + i], h[(i * 6 + j) * 7 + k]);
            }
        }
    }
    let p = a.permute(&[1, 2, 0]).unwrap().to_vec().unwrap();
    for i in 0..5 {
        for j in 0..6 {
            for k in 0..7 {
                assert_eq!(p[(j * 7 + k) * 5 + i], h[(i * 6 + j) * 7 + k]);
            }
        }
    }

    // slices with negative steps on every axis, in several combinations
    type Case = [(Option<isize>, Option<isize>, isize); 3];
    let cases: [Case; 5] = [
        [(None, None, -1), (Some(1), None, 1), (None, None, -2)],
        [
            (Some(4), Some(0), -2),
            (Some(-2), Some(-6), -1),
            (Some(1), Some(6), 3),
        ],
        [
            (Some(-1), None, -3),
            (None, None, 2),
            (Some(6), Some(2), -1),
        ],
        [(Some(2), Some(2), 1), (None, None, 1), (None, None, 1)],
        [
            (Some(10), Some(-10), -1),
            (Some(-100), Some(100), 4),
            (None, Some(-8), -1),
        ],
    ];
    for c in cases {
        let sl: Vec<Slice> = c.iter().map(|&(a, b, s)| Slice::new(a, b, s)).collect();
        let v = a.slices(&sl).unwrap();
        let idx: Vec<Vec<usize>> = (0..3)
            .map(|ax| py_range(sh[ax], c[ax].0, c[ax].1, c[ax].2))
            .collect();
        assert_eq!(v.shape(), &[idx[0].len(), idx[1].len(), idx[2].len()]);
        assert_eq!(
            v.to_vec().unwrap(),
            pick3(&h, sh, &idx[0], &idx[1], &idx[2]),
            "{sl:?}"
        );
        // a copy of the view is C-contiguous with the same elements
        let c2 = v.copy().unwrap();
        assert!(c2.is_c_contiguous());
        assert_eq!(c2.to_vec().unwrap(), v.to_vec().unwrap());
        // ravel of a view
        assert_eq!(v.ravel().unwrap().to_vec().unwrap(), v.to_vec().unwrap());
    }

    // single-axis slice through the Range conversions
    let s = a.slice(2, -3..).unwrap().to_vec().unwrap();
    assert_eq!(s, pick3(&h, sh, &all(5), &all(6), &[4, 5, 6]));

    // index_axis, squeeze, expand_dims
    let m = a.index_axis(1, -2).unwrap();
    assert_eq!(m.shape(), &[5, 7]);
    assert_eq!(m.to_vec().unwrap(), pick3(&h, sh, &all(5), &[4], &all(7)));
    let e = m.expand_dims(1).unwrap();
    assert_eq!(e.shape(), &[5, 1, 7]);
    assert_eq!(e.squeeze().to_vec().unwrap(), m.to_vec().unwrap());

    // broadcast: a row of a (stride 1) and a reversed column (negative stride) to 2-D
    let row = a.index_axis(0, 2).unwrap().index_axis(0, 3).unwrap(); // shape [7]
    let b = row.broadcast_to([4, 7]).unwrap();
    assert_eq!(b.strides()[0], 0);
    let bv = b.to_vec().unwrap();
    let rv = pick3(&h, sh, &[2], &[3], &all(7));
    for i in 0..4 {
        assert_eq!(&bv[i * 7..(i + 1) * 7], &rv[..]);
    }
    let col = a
        .index_axis(2, 0)
        .unwrap()
        .index_axis(0, 1)
        .unwrap()
        .slice(0, Slice::rev())
        .unwrap()
        .expand_dims(1)
        .unwrap(); // [6, 1], reversed
    let cb = col.broadcast_to([2, 6, 3]).unwrap().to_vec().unwrap();
    let cref = pick3(&h, sh, &[1], &[5, 4, 3, 2, 1, 0], &[0]);
    for rep in 0..2 {
        for j in 0..6 {
            for k in 0..3 {
                assert_eq!(cb[(rep * 6 + j) * 3 + k], cref[j]);
            }
        }
    }
    assert!(matches!(
        a.broadcast_to([5, 6, 8]),
        Err(Error::Broadcast { .. })
    ));

    // reshape: a view when possible, an error that says to copy otherwise
    let r2 = a.reshape([30, 7]).unwrap();
    assert_eq!(r2.to_vec().unwrap(), h);
    let r3 = a.reshape_infer(&[-1, 42]).unwrap();
    assert_eq!(r3.shape(), &[5, 42]);
    assert!(matches!(t.reshape([210]), Err(Error::NeedsCopy { .. })));
    assert_eq!(
        t.copy().unwrap().reshape([210]).unwrap().to_vec().unwrap(),
        tv
    );
    assert_eq!(t.ravel().unwrap().to_vec().unwrap(), tv);

    // views share the buffer
    assert!(std::sync::Arc::ptr_eq(a.buffer(), t.buffer()));
    let v = a.slice(0, 1..).unwrap();
    assert_eq!(v.device_ptr(), a.device_ptr() + (42 * 4) as u64);
}

fn ndarray_interop() {
    use ndarray::{ArrayD, IxDyn, s};
    let r = &mut Rng::new();
    let h: Vec<f64> = random_vec(r, 4 * 5 * 6);
    let nd = ArrayD::from_shape_vec(IxDyn(&[4, 5, 6]), h.clone()).unwrap();

    // standard layout
    let a = Array::from_ndarray(&nd).unwrap();
    assert_eq!(a.shape(), &[4, 5, 6]);
    assert_eq!(a.to_ndarray().unwrap(), nd);

    // a non-standard ndarray view (transposed and stepped) uploads in logical order
    let view = nd.slice(s![.., 1..4, ..;2]).reversed_axes();
    let b = Array::from_ndarray(&view).unwrap();
    assert_eq!(b.shape(), view.shape());
    assert_eq!(b.to_ndarray().unwrap(), view.to_owned().into_dyn());

    // device views come back with their logical shape
    let t = a.transpose().to_ndarray().unwrap();
    assert_eq!(t, nd.t().to_owned());

    // fixed-dimension ndarray types work too
    let m = ndarray::Array2::<i32>::from_shape_fn((3, 4), |(i, j)| (i * 10 + j) as i32 + 1);
    let c = Array::from_ndarray(&m).unwrap();
    assert_eq!(c.to_vec().unwrap(), m.iter().copied().collect::<Vec<_>>());
}

fn creation_functions() {
    assert_eq!(
        Array::<f32>::zeros([2, 3]).unwrap().to_vec().unwrap(),
        vec![0.0; 6]
    );
    assert_eq!(Array::<i16>::ones(4).unwrap().to_vec().unwrap(), vec![1; 4]);
    assert_eq!(
        Array::<u8>::full([3], 7).unwrap().to_vec().unwrap(),
        vec![7; 3]
    );
    assert_eq!(
        Array::<bool>::full([2], true).unwrap().to_vec().unwrap(),
        vec![true; 2]
    );
    assert_eq!(
        Array::<f16>::arange(4).unwrap().to_vec().unwrap(),
        [0.0, 1.0, 2.0, 3.0].map(f16::from_f32).to_vec()
    );
    assert_eq!(
        Array::<i32>::arange_step(10, 0, -3)
            .unwrap()
            .to_vec()
            .unwrap(),
        vec![10, 7, 4, 1]
    );
    assert_eq!(
        Array::<f64>::arange_step(0.0, 1.0, 0.25)
            .unwrap()
            .to_vec()
            .unwrap(),
        vec![0.0, 0.25, 0.5, 0.75]
    );
    assert!(Array::<f64>::arange_step(0.0, 1.0, 0.0).is_err());
    assert_eq!(
        Array::<f64>::linspace(1.0, 2.0, 5)
            .unwrap()
            .to_vec()
            .unwrap(),
        vec![1.0, 1.25, 1.5, 1.75, 2.0]
    );
    assert_eq!(
        Array::<Complex<f32>>::zeros([2]).unwrap().to_vec().unwrap(),
        vec![Complex::new(0.0, 0.0); 2]
    );
    let mut e = Array::<i64>::empty([2, 2]).unwrap();
    e.copy_from_slice(&[5, 6, 7, 8]).unwrap();
    assert_eq!(e.to_vec().unwrap(), vec![5, 6, 7, 8]);
    assert!(e.copy_from_slice(&[1]).is_err());
    assert!(Array::<f32>::from_shape_vec([2, 2], vec![1.0; 3]).is_err());

    // from_parts validates the layout against the buffer
    let a = Array::<f32>::arange(10).unwrap();
    let buf = a.buffer().clone();
    let v = Array::<f32>::from_parts(buf.clone(), vec![5], vec![-2], 9).unwrap();
    assert_eq!(v.to_vec().unwrap(), vec![9.0, 7.0, 5.0, 3.0, 1.0]);
    assert!(Array::<f32>::from_parts(buf.clone(), vec![6], vec![-2], 9).is_err());
    assert!(Array::<f32>::from_parts(buf, vec![2], vec![1], 9).is_err());
}

// ---- arrays of `#[device]` structs (this binary links no built-in kernel: copies and
// non-contiguous reads gather on the host) ------------------------------------------------------

use structs::{Bytes2, Pair, Particle, Quad, random_structs, transposed};

fn struct_arrays_round_trip() {
    let mut r = Rng::new();
    for n in [1usize, 3, 1000, 100_003] {
        let host = random_structs(&mut r, n, Particle::random);
        let a = Array::from_vec(host.clone()).unwrap();
        assert_eq!((a.shape(), a.len(), a.nbytes()), (&[n][..], n, 12 * n));
        assert_eq!(a.elem_type(), <Particle as cuprum_runtime::Element>::ELEM);
        assert_eq!(a.to_vec().unwrap(), host, "n={n}");
        let q = random_structs(&mut r, n, Quad::random);
        assert_eq!(Array::from_slice(&q).unwrap().to_vec().unwrap(), q);
        let b = random_structs(&mut r, n, Bytes2::random);
        assert_eq!(Array::from_slice(&b).unwrap().to_vec().unwrap(), b);
    }
    let host = random_structs(&mut r, 6, Pair::random);
    let a = Array::from_shape_vec([2, 3], host.clone()).unwrap();
    assert_eq!(a.to_vec().unwrap(), host);
    assert!(format!("{a:?}").starts_with("Array<Pair>(shape [2, 3]"), "{a:?}");
    // zeros is a memset: every field zero.
    let z = Array::<Particle>::zeros([4, 5]).unwrap();
    assert_eq!(z.to_vec().unwrap(), vec![Particle { x: 0.0, y: 0.0, mass: 0.0 }; 20]);
    // copy_from_slice overwrites.
    let mut e = Array::<Pair>::empty([6]).unwrap();
    e.copy_from_slice(&host).unwrap();
    assert_eq!(e.to_vec().unwrap(), host);
}

fn struct_views_and_copies_gather() {
    let mut r = Rng::new();
    let (rows, cols) = (37usize, 53usize);
    let host = random_structs(&mut r, rows * cols, Particle::random);
    let a = Array::from_shape_vec([rows, cols], host.clone()).unwrap();
    let t = a.transpose();
    assert_eq!((t.shape(), t.strides()), (&[cols, rows][..], &[1isize, cols as isize][..]));
    let want = transposed(&host, rows, cols);
    assert_eq!(t.to_vec().unwrap(), want);
    let c = t.copy().unwrap();
    assert!(c.is_c_contiguous());
    assert_eq!(c.to_vec().unwrap(), want);
    assert_eq!(t.ravel().unwrap().to_vec().unwrap(), want);
    // A reversed, stepped slice, a broadcast and a reshape of a view.
    let s = a.slice(1, Slice::new(None, None, -3)).unwrap();
    let want_s: Vec<Particle> = (0..rows).flat_map(|i| (0..cols).rev().step_by(3).map(move |j| (i, j))).map(|(i, j)| host[i * cols + j]).collect();
    assert_eq!(s.to_vec().unwrap(), want_s);
    let row = a.index_axis(0, 5).unwrap();
    let b = row.broadcast_to([3, cols]).unwrap();
    let want_b: Vec<Particle> = (0..3).flat_map(|_| host[5 * cols..6 * cols].iter().copied()).collect();
    assert_eq!(b.to_vec().unwrap(), want_b);
    assert_eq!(a.reshape([cols, rows]).unwrap().to_vec().unwrap(), host);
    assert!(matches!(t.reshape([rows * cols]), Err(Error::NeedsCopy { .. })));
}

/// A raw kernel takes struct arrays by pointer and a struct by value, and writes fields.
#[test]
#[ignore = "needs a CUDA GPU"]
fn raw_kernels_take_struct_arrays_and_struct_values() {
    use cuprum_runtime::{DeviceRepr, LaunchConfig, RawKernel};
    /// Passed by value: `struct Step { float dt; float g; unsigned int n; }`.
    #[derive(Clone, Copy)]
    #[repr(C)]
    struct Step {
        dt: f32,
        g: f32,
        n: u32,
    }
    // SAFETY: `#[repr(C)]` of two f32 and a u32: the C struct `Step` below (12 bytes, align 4).
    unsafe impl DeviceRepr for Step {}
    const SRC: &str = r#"
struct Particle { float x, y, mass; };
struct Step { float dt; float g; unsigned int n; };
extern "C" __global__ void step(const Particle* src, Particle* dst, Step s) {
    unsigned int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= s.n) return;
    Particle p = src[i];
    p.y = p.y + s.g * s.dt;
    p.x = p.x + p.y * s.dt;
    dst[i].x = p.x;
    dst[i].y = p.y;
    dst[i].mass = (float)i + p.mass;
}
"#;
    let mut r = Rng::new();
    let n = 4099usize;
    let host = random_structs(&mut r, n, Particle::random);
    let src = Array::from_vec(host.clone()).unwrap();
    let mut dst = Array::from_vec(vec![Particle::POISON; n]).unwrap();
    let s = Step { dt: r.range(0.01, 0.1) as f32, g: r.range(-10.0, -1.0) as f32, n: n as u32 };
    let k = RawKernel::new(SRC, "step");
    // SAFETY: step(const Particle*, Particle*, Step) with the Rust mirrors of those types; it
    // reads and writes elements below `s.n`, the length of both arrays.
    unsafe { k.launch(&LaunchConfig::for_elements(n, 128), (&src, &mut dst, s)) }.unwrap();
    let got = dst.to_vec().unwrap();
    for (i, (g, p)) in got.iter().zip(&host).enumerate() {
        let (dt, gr) = (s.dt as f64, s.g as f64);
        let y = p.y as f64 + gr * dt;
        let x = p.x as f64 + y * dt;
        let close = |a: f32, b: f64| (a as f64 - b).abs() <= 1e-5 * b.abs().max(1.0);
        assert!(close(g.y, y) && close(g.x, x) && g.mass == i as f32 + p.mass, "element {i}: {g:?}, want x {x} y {y}");
    }
    // The source array is untouched.
    assert_eq!(src.to_vec().unwrap(), host);
}
