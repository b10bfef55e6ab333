// `#[device]` structs: by value, as slice elements, as elementwise elements, nested, with array
// fields, a reserved field name, and a literal written out of declaration order.
use cuprum::prelude::*;

#[device]
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Vec3 {
    pub v: [f32; 3],
}

#[device]
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Body {
    pub pos: Vec3,
    pub vel: Vec3,
    pub mass: f32,
    pub new: u32,
}

#[device]
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Params {
    pub dt: f32,
    pub damping: f32,
}

#[device]
fn advance(b: Body, p: Params) -> Body {
    let mut out = b;
    for k in 0..3 {
        out.pos.v[k] = b.pos.v[k] + p.dt * b.vel.v[k];
        out.vel.v[k] = b.vel.v[k] * p.damping;
    }
    out.new = b.new + 1;
    out
}

#[rawkernel]
pub fn step(bodies: &mut [Body], p: Params) {
    let i = grid_1d() as usize;
    if i < bodies.len() {
        bodies[i] = advance(bodies[i], p);
        bodies[i].mass *= 1.0;
    }
}

#[elementwise]
pub fn kinetic(b: Body) -> f32 {
    let v = b.vel.v;
    0.5 * b.mass * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
}

#[elementwise]
pub fn make_params(dt: f32, damping: f32) -> Params {
    Params { damping: damping * 2.0, dt }
}
