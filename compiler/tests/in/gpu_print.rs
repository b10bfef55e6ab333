//! Snapshot: `gpu_print!` / `gpu_println!` (CUDA `printf`): every scalar type's conversion,
//! `{:.N}`, `{:x}`/`{:X}`, `{{`/`}}` and `%` escapes, arguments that need statements or calls
//! (evaluated in order), and printing from device functions, elementwise and reduction bodies.
use cuprum::prelude::*;

#[device]
fn show(v: f32, i: u32) -> f32 {
    gpu_println!("show({}) at {}", v, i);
    v * 2.0
}

#[rawkernel]
pub fn print_all(x: &[f32], h: &[f16], out: &mut [f32], n: u32) {
    let i = grid_1d();
    if i >= n {
        return;
    }
    let a: i8 = -3;
    let b: u16 = 40000;
    let c: i64 = -5000000000;
    let d: u64 = 18000000000000000000;
    let flag = x[i as usize] > 0.5;
    gpu_println!("thread {} of {}: x = {} h = {}", i, n, x[i as usize], h[i as usize]);
    gpu_println!("ints {} {} {} {} {}", a, b, c, d, 7);
    gpu_println!("hex {:x} {:X} {:x} {:x}", a, b, c, 255u8);
    gpu_println!("{:.3} {:.0} {} {}", x[i as usize], 2.5f64, flag, 1.5);
    gpu_print!("{{braces}} 100% \"quoted\" \\ tab\t");
    gpu_print!("\n");
    gpu_println!("branch {} then {}", if flag { 1 } else { 2 }, show(x[i as usize], i));
    out[i as usize] = show(x[i as usize], i);
}

#[elementwise]
pub fn print_map(x: f64) -> f64 {
    gpu_println!("element {} is {}", index(), x);
    x + 1.0
}

#[reduction(identity = 0, reduce = |a, b| a + b)]
pub fn print_count(x: i32) -> i32 {
    gpu_println!("counting {}", x);
    1
}
