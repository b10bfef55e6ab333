//! Kernels of the `particles` example: `#[device]` structs (CuPy's custom user structures,
//! without writing the C side) passed by value and stored in arrays.

use cuprum::prelude::*;

/// One particle: 32 bytes, no padding (checked by `#[device]`).
#[device]
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Particle {
    pub pos: [f32; 3],
    pub vel: [f32; 3],
    pub mass: f32,
    pub id: u32,
}

/// The integration step's settings, passed by value.
#[device]
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    pub dt: f32,
    pub gravity: f32,
    pub floor: f32,
    pub bounce: f32,
}

/// One explicit Euler step with a bouncing floor at `y = floor`.
#[device]
pub fn advance(p: Particle, s: Step) -> Particle {
    let mut q = p;
    q.vel[1] = p.vel[1] - s.gravity * s.dt;
    for k in 0..3 {
        q.pos[k] = p.pos[k] + s.dt * q.vel[k];
    }
    if q.pos[1] < s.floor {
        q.pos[1] = s.floor + (s.floor - q.pos[1]) * s.bounce;
        q.vel[1] = -q.vel[1] * s.bounce;
    }
    q
}

/// A grid-stride loop over a slice of structs, the settings by value.
#[rawkernel]
pub fn integrate(particles: &mut [Particle], s: Step, steps: u32) {
    let n = particles.len();
    let mut i = grid_1d() as usize;
    while i < n {
        let mut p = particles[i];
        for _ in 0..steps {
            p = advance(p, s);
        }
        particles[i] = p;
        i += grid_size_1d() as usize;
    }
}

/// Field access on struct elements: each particle's kinetic energy.
#[elementwise]
pub fn kinetic_energy(p: Particle) -> f64 {
    let v = p.vel;
    let v2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    0.5 * p.mass as f64 * v2 as f64
}
