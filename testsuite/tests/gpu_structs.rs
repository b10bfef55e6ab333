//! `#[device]` structs on the GPU (issues 4 and 6): a struct by value and slices of structs in a
//! `#[rawkernel]`, 2-D views of structs with any strides, `#[elementwise]` kernels reading fields
//! of struct elements and returning structs (contiguous, broadcast and transposed operands).
//! Inputs are fresh random values, outputs are poisoned first, and every result is compared with
//! the kernel's own Rust body run on the host (generated units keep Rust's float semantics, so
//! f32 results are equal bit for bit) and, for `kinetic`, with an f64 reference.
//!
//! Each test runs on the CPU device (in CI) and on the GPU (`on_both_devices!`; the GPU's are
//! `#[ignore = "needs a CUDA GPU"]`): run them on a GPU machine with
//! `cargo test -p cuprum-testsuite --release --test gpu_structs -- --include-ignored`.

#[path = "../../runtime/tests/support/mod.rs"]
mod support;
use support::Rng;

mod struct_kernels;

use cuprum::runtime::{Array, ElemType, Element, LaunchConfig, StructType};
use struct_kernels::{self as k, Body, Params, Px, Vec3};

const GPU: &str = "needs a CUDA GPU";

on_both_devices!(
    cuprum::runtime::Device;
    rawkernel_takes_a_struct_by_value_and_a_slice_of_structs,
    rawkernel_reads_a_transposed_view_of_structs,
    elementwise_reads_fields_of_struct_elements,
    elementwise_returns_structs_and_broadcasts_struct_inputs,
    elementwise_over_8_byte_structs_contiguous_and_sliced
);

fn vec3(r: &mut Rng) -> Vec3 {
    Vec3 { v: [r.range(-4.0, 4.0) as f32, r.range(-4.0, 4.0) as f32, r.range(-4.0, 4.0) as f32] }
}

fn body(r: &mut Rng) -> Body {
    Body { pos: vec3(r), vel: vec3(r), mass: r.range(0.5, 3.0) as f32, new: r.next() as u32 }
}

fn px(r: &mut Rng) -> Px {
    let mut c = || (r.next() & 0xffff) as u16;
    Px { r: c(), g: c(), b: c(), a: c() }
}

const POISON_BODY: Body = Body { pos: Vec3 { v: [f32::NAN; 3] }, vel: Vec3 { v: [f32::NAN; 3] }, mass: f32::NAN, new: 0xdead_beef };

/// Bit-for-bit equality (NaN poison must never compare equal by accident, and -0.0 != 0.0 here).
fn same_body(a: &Body, b: &Body) -> bool {
    let bits = |x: &Body| {
        let mut v: Vec<u32> = x.pos.v.iter().chain(&x.vel.v).map(|f| f.to_bits()).collect();
        v.push(x.mass.to_bits());
        v.push(x.new);
        v
    };
    bits(a) == bits(b)
}

#[test]
fn struct_elements_carry_their_layout() {
    // The macro computed these from the fields (and asserted rustc agrees on the size).
    assert_eq!(<Body as Element>::ELEM, ElemType::Struct(StructType { name: "Body", size: 32, align: 4 }));
    assert_eq!(<Px as Element>::ELEM, ElemType::Struct(StructType { name: "Px", size: 8, align: 2 }));
    assert_eq!(std::mem::size_of::<Params>(), 8);
    // The Rust bodies stay callable on the host.
    let b = Body { pos: Vec3 { v: [1.0, 2.0, 3.0] }, vel: Vec3 { v: [2.0, 0.0, 0.0] }, mass: 3.0, new: u32::MAX };
    let a = k::advance(b, Params { dt: 0.5, damping: 0.25 });
    assert_eq!(a.pos.v, [2.0, 2.0, 3.0]);
    assert_eq!(a.vel.v, [0.5, 0.0, 0.0]);
    assert_eq!(a.new, 0);
    assert_eq!(k::kinetic(b), 6.0);
    assert_eq!(k::make_params(0.1, 0.2), Params { dt: 0.1, damping: 0.4 });
}

fn rawkernel_takes_a_struct_by_value_and_a_slice_of_structs() {
    let _ = GPU;
    let mut r = Rng::new();
    let n = 10_007;
    let host: Vec<Body> = (0..n).map(|_| body(&mut r)).collect();
    let p = Params { dt: r.range(0.01, 0.1) as f32, damping: r.range(0.9, 0.99) as f32 };
    let mut bodies = Array::from_vec(host.clone()).unwrap();
    assert_eq!(bodies.to_vec().unwrap().len(), n, "round trip");
    assert!(bodies.to_vec().unwrap().iter().zip(&host).all(|(a, b)| same_body(a, b)), "host -> device -> host");
    k::step::launch(&LaunchConfig::new(n.div_ceil(128) as u32, 128u32), &mut bodies, p).unwrap();
    let got = bodies.to_vec().unwrap();
    let mut bad = 0;
    for (g, h) in got.iter().zip(&host) {
        let mut want = k::advance(*h, p);
        want.mass *= 0.5;
        if !same_body(g, &want) {
            bad += 1;
        }
    }
    assert_eq!(bad, 0, "{bad} of {n} bodies differ from the host's `advance`");
}

fn rawkernel_reads_a_transposed_view_of_structs() {
    let mut r = Rng::new();
    let (rows, cols) = (37usize, 129usize);
    let host: Vec<Px> = (0..rows * cols).map(|_| px(&mut r)).collect();
    // A (cols, rows) array viewed transposed as (rows, cols): strides (1, rows).
    let t: Vec<Px> = (0..cols * rows).map(|k| host[(k % rows) * cols + k / rows]).collect();
    let img = Array::from_shape_vec([cols, rows], t).unwrap().transpose();
    assert_eq!(img.shape(), &[rows, cols]);
    let mut out = Array::from_vec(vec![Px { r: 1, g: 2, b: 3, a: 4 }; rows * cols]).unwrap();
    // grid_2d() is (x, y) and the kernel's `i` (rows) is x.
    let cfg = LaunchConfig::new(((rows as u32).div_ceil(16), (cols as u32).div_ceil(16)), (16u32, 16u32));
    k::rotate_channels::launch(&cfg, &img, &mut out).unwrap();
    let got = out.to_vec().unwrap();
    for (idx, (g, p)) in got.iter().zip(&host).enumerate() {
        assert_eq!(*g, Px { r: p.g, g: p.b, b: p.a, a: p.r }, "element {idx}");
    }
}

fn elementwise_reads_fields_of_struct_elements() {
    let mut r = Rng::new();
    for n in [1usize, 3, 1000, 65_537] {
        let host: Vec<Body> = (0..n).map(|_| body(&mut r)).collect();
        let bodies = Array::from_vec(host.clone()).unwrap();
        let mut out = Array::from_vec(vec![f32::NAN; n]).unwrap();
        k::kinetic::call_into(&bodies, &mut out).unwrap();
        let got = out.to_vec().unwrap();
        let allocated = k::kinetic::call(&bodies).unwrap().to_vec().unwrap();
        for (i, h) in host.iter().enumerate() {
            assert_eq!(got[i].to_bits(), k::kinetic(*h).to_bits(), "n {n}, element {i}: the Rust body");
            assert_eq!(allocated[i].to_bits(), got[i].to_bits(), "n {n}, element {i}: call vs call_into");
            let v = h.vel.v.map(|x| x as f64);
            let exact = 0.5 * h.mass as f64 * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
            assert!((got[i] as f64 - exact).abs() <= 1e-6 * exact.abs().max(1.0), "n {n}, element {i}: {} vs {exact}", got[i]);
        }
    }
}

fn elementwise_returns_structs_and_broadcasts_struct_inputs() {
    let mut r = Rng::new();
    let n = 4099;
    let dts: Vec<f32> = (0..n).map(|_| r.range(0.01, 0.1) as f32).collect();
    let params = k::make_params::call(&Array::from_vec(dts.clone()).unwrap(), 0.45f32).unwrap();
    let got = params.to_vec().unwrap();
    for (g, dt) in got.iter().zip(&dts) {
        assert_eq!(*g, k::make_params(*dt, 0.45), "make_params");
    }

    // One `Params` element broadcast over a (3, m) array of bodies.
    let m = 1001;
    let host: Vec<Body> = (0..3 * m).map(|_| body(&mut r)).collect();
    let bodies = Array::from_shape_vec([3, m], host.clone()).unwrap();
    let p = Params { dt: r.range(0.01, 0.1) as f32, damping: r.range(0.9, 0.99) as f32 };
    let one = Array::from_vec(vec![p]).unwrap();
    let mut out = Array::from_shape_vec([3, m], vec![POISON_BODY; 3 * m]).unwrap();
    k::advance_all::call_into(&bodies, &one, &mut out).unwrap();
    let got = out.to_vec().unwrap();
    let bad = got.iter().zip(&host).filter(|(g, h)| !same_body(g, &k::advance(**h, p))).count();
    assert_eq!(bad, 0, "{bad} bodies differ (broadcast struct input)");

    // A transposed struct input (strided loop over 32-byte elements).
    let bt = bodies.transpose();
    let got = k::advance_all::call(&bt, &one).unwrap();
    assert_eq!(got.shape(), &[m, 3]);
    let got = got.to_vec().unwrap();
    let mut bad = 0;
    for i in 0..m {
        for j in 0..3 {
            if !same_body(&got[i * 3 + j], &k::advance(host[j * m + i], p)) {
                bad += 1;
            }
        }
    }
    assert_eq!(bad, 0, "{bad} bodies differ (transposed struct input)");
}

fn elementwise_over_8_byte_structs_contiguous_and_sliced() {
    let mut r = Rng::new();
    for n in [1usize, 7, 4096, 100_003] {
        let host: Vec<Px> = (0..n).map(|_| px(&mut r)).collect();
        let by = (r.next() & 0xff) as u16 + 1;
        let a = Array::from_vec(host.clone()).unwrap();
        let mut out = Array::from_vec(vec![Px { r: 7, g: 7, b: 7, a: 7 }; n]).unwrap();
        k::brighten::call_into(&a, by, &mut out).unwrap();
        let got = out.to_vec().unwrap();
        for (i, (g, h)) in got.iter().zip(&host).enumerate() {
            assert_eq!(*g, k::brighten(*h, by), "n {n}, element {i}");
        }
        // Every third element, from the second (a strided input, an allocated output).
        let sliced = a.slice(0, cuprum::runtime::Slice::new(Some(1), None, 3)).unwrap();
        let got = k::brighten::call(&sliced, by).unwrap().to_vec().unwrap();
        let want: Vec<Px> = host.iter().skip(1).step_by(3).map(|h| k::brighten(*h, by)).collect();
        assert_eq!(got, want, "n {n}, sliced");
    }
}
