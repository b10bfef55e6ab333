use cuprum::prelude::*;

#[device]
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct P {
    pub x: f32,
    pub m: f32,
}

#[elementwise]
pub fn bad_field(p: P) -> f32 {
    p.y
}

#[elementwise]
pub fn bad_literal(a: f32) -> P {
    P { x: a, z: 1.0 }
}

#[elementwise]
pub fn struct_arith(p: P, q: P) -> P {
    p + q
}

#[reduction(identity = 0.0, reduce = |a, b| a + b)]
pub fn total_mass(p: P) -> f32 {
    p.m
}

#[rawkernel]
pub fn uses_unknown(q: Q) {}
