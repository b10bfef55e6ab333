//! Kernels over `#[device]` structs, for `gpu_structs.rs`: a struct passed by value, slices and
//! 2-D views of structs, elementwise kernels reading fields of struct elements and returning
//! structs, nested structs with array fields, a field whose name is a C++ keyword, and a literal
//! written out of declaration order. Precompiled by `testsuite/build.rs`.

use cuprum::prelude::*;

#[device]
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Vec3 {
    pub v: [f32; 3],
}

#[device]
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Body {
    pub pos: Vec3,
    pub vel: Vec3,
    pub mass: f32,
    /// A C++ keyword as a field name.
    pub new: u32,
}

#[device]
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    pub dt: f32,
    pub damping: f32,
}

/// 8 bytes, 4-byte aligned: elementwise loads two of them per 16-byte vector when contiguous.
#[device]
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Px {
    pub r: u16,
    pub g: u16,
    pub b: u16,
    pub a: u16,
}

#[device]
pub fn advance(b: Body, p: Params) -> Body {
    let mut out = b;
    for k in 0..3 {
        out.pos.v[k] = b.pos.v[k] + p.dt * b.vel.v[k];
        out.vel.v[k] = b.vel.v[k] * p.damping;
    }
    out.new = b.new.wrapping_add(1);
    out
}

/// A struct by value and a slice of structs, written in place.
#[rawkernel]
pub fn step(bodies: &mut [Body], p: Params) {
    let i = grid_1d() as usize;
    if i < bodies.len() {
        bodies[i] = advance(bodies[i], p);
        bodies[i].mass *= 0.5;
    }
}

/// A 2-D view of structs (any strides) into a contiguous slice: `out[i * cols + j] = img[i, j]`
/// with the channels rotated.
#[rawkernel]
pub fn rotate_channels(img: View<Px, 2>, out: &mut [Px]) {
    let (i, j) = grid_2d();
    let (i, j) = (i as usize, j as usize);
    let rows = img.shape()[0];
    let cols = img.shape()[1];
    if i < rows && j < cols {
        let p = img[[i, j]];
        out[i * cols + j] = Px { r: p.g, g: p.b, b: p.a, a: p.r };
    }
}

/// Field access on struct elements.
#[elementwise]
pub fn kinetic(b: Body) -> f32 {
    let v = b.vel.v;
    0.5 * b.mass * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
}

/// Struct outputs from scalar inputs; the literal is written out of declaration order.
#[elementwise]
pub fn make_params(dt: f32, damping: f32) -> Params {
    Params { damping: damping * 2.0, dt }
}

/// A struct input (broadcast from one element) and a struct output.
#[elementwise]
pub fn advance_all(b: Body, p: Params) -> Body {
    advance(b, p)
}

/// 8-byte struct elements, in and out (vector accesses when contiguous).
#[elementwise]
pub fn brighten(p: Px, by: u16) -> Px {
    Px { r: p.r.wrapping_add(by), g: p.g.wrapping_add(by), b: p.b.wrapping_add(by), a: p.a }
}
