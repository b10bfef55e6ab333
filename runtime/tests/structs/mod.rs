//! `#[device]`-like structs for the runtime's GPU tests of struct elements (`gpu_array.rs`,
//! `gpu_struct_elements.rs`): `DeviceRepr` and `Element` implemented by hand, as the macro does,
//! and random values (never all zero). Sizes 2, 8, 12 and 16 bytes: the copy kernel serves the
//! power-of-two sizes up to 16 through an integer dtype, the 12-byte one is gathered on the host.
//! `Particle` and `Pair` mirror `kernels/struct_elementwise.cu`.
#![allow(dead_code)]

use cuprum_runtime::{DeviceRepr, ElemType, Element, StructType};

use super::support::Rng;

/// Declares a `#[repr(C)]` struct of plain fields with its `DeviceRepr` and `Element` impls.
macro_rules! device_struct {
    ($name:ident { $($f:ident: $t:ty),* } size $size:literal align $align:literal) => {
        #[derive(Clone, Copy, Debug, PartialEq)]
        #[repr(C)]
        pub struct $name {
            $(pub $f: $t,)*
        }
        // SAFETY: `#[repr(C)]` of fields of one primitive type each (no padding: the test below
        // checks the size is the sum of the fields), no host pointers, every bit pattern valid.
        unsafe impl DeviceRepr for $name {}
        // SAFETY: as above; `ELEM` states the size and alignment (checked against rustc's).
        unsafe impl Element for $name {
            const ELEM: ElemType = ElemType::Struct(StructType { name: stringify!($name), size: $size, align: $align });
        }
        const _: () = assert!(size_of::<$name>() == $size && align_of::<$name>() == $align);
        const _: () = assert!(0 $(+ size_of::<$t>())* == $size, "no padding");
    };
}

device_struct!(Particle { x: f32, y: f32, mass: f32 } size 12 align 4);
device_struct!(Pair { a: f32, b: f32 } size 8 align 4);
device_struct!(Quad { v0: u32, v1: u32, v2: u32, v3: u32 } size 16 align 4);
device_struct!(Bytes2 { lo: u8, hi: u8 } size 2 align 1);

fn f32_in(r: &mut Rng, lo: f64, hi: f64) -> f32 {
    r.range(lo, hi) as f32
}

fn nonzero_u32(r: &mut Rng) -> u32 {
    (r.next() as u32).max(1)
}

impl Particle {
    pub fn random(r: &mut Rng) -> Particle {
        Particle { x: f32_in(r, -100.0, 100.0), y: f32_in(r, -10.0, 10.0), mass: f32_in(r, 0.5, 2.0) }
    }
    /// A value no kernel writes: NaN fields.
    pub const POISON: Particle = Particle { x: f32::NAN, y: f32::NAN, mass: f32::NAN };
}

impl Pair {
    pub fn random(r: &mut Rng) -> Pair {
        Pair { a: f32_in(r, -1e3, 1e3), b: f32_in(r, -1e3, 1e3) }
    }
    pub const POISON: Pair = Pair { a: f32::NAN, b: f32::NAN };
}

impl Quad {
    pub fn random(r: &mut Rng) -> Quad {
        Quad { v0: nonzero_u32(r), v1: nonzero_u32(r), v2: nonzero_u32(r), v3: nonzero_u32(r) }
    }
}

impl Bytes2 {
    pub fn random(r: &mut Rng) -> Bytes2 {
        Bytes2 { lo: (r.next() as u8).max(1), hi: (r.next() as u8).max(1) }
    }
}

/// `n` random values.
pub fn random_structs<T>(r: &mut Rng, n: usize, f: fn(&mut Rng) -> T) -> Vec<T> {
    (0..n).map(|_| f(r)).collect()
}

/// The C-order elements of the transpose of a row-major `rows x cols` matrix.
pub fn transposed<T: Copy>(h: &[T], rows: usize, cols: usize) -> Vec<T> {
    (0..cols).flat_map(|j| (0..rows).map(move |i| h[i * cols + j])).collect()
}
