//! Kernels that print with `gpu_print!`/`gpu_println!` (`gpu_print.rs` checks their output on the
//! CPU device and the GPU). Every line starts with a tag the test looks for; the values are chosen
//! so that C's `%g` and Rust's `{}` write the same text.

#![allow(dead_code)]

use cuprum::prelude::*;

/// One line per thread below `n`, with every conversion (`gpu_print!` with its own newline), then
/// one from a device function (`gpu_println!`).
#[rawkernel]
pub fn print_values(x: &[f32], n: u32) {
    let i = grid_1d();
    if i < n {
        let v = x[i as usize];
        // One call per line: on a GPU each call is one printf, and the calls of different threads
        // interleave (a line printed in two calls may be split).
        gpu_print!(
            "raw {} of {}: x = {} half {:.2} neg {} hex {:x} {:X} {:x} big {} flag {} {{ok}} 100%\n",
            i,
            n,
            v,
            v * 0.5,
            -(i as i32) - 1,
            i + 250,
            255u8,
            -1i16,
            u64::MAX - i as u64,
            v > 1.0
        );
        shown(v, i);
    }
}

#[device]
fn shown(v: f32, i: u32) {
    gpu_println!("dev {} {}", i, v + 1.0);
}

#[elementwise]
pub fn print_elements(x: i32) -> i32 {
    gpu_println!("ew {} {}", index(), x);
    x * 2
}

#[reduction(identity = 0, reduce = |a, b| a + b)]
pub fn print_reduce(x: i64) -> i64 {
    gpu_println!("red {}", x);
    x
}

/// A print after a barrier (on the CPU device, in the region after `sync_threads()`), reading
/// shared memory and the thread's index.
#[rawkernel]
pub fn print_after_barrier(out: &mut [u32]) {
    let s = shared_array::<u32, 4>();
    let t = thread_idx().x;
    s[t as usize] = t * 10;
    sync_threads();
    gpu_println!("bar {} sees {}", thread_idx().x, s[((t + 1) % 4) as usize]);
    out[t as usize] = s[t as usize];
}
