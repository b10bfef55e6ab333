use cuprum::prelude::*;

#[rawkernel]
pub fn bad_prints<T: Float>(x: &[f32], y: &mut [f32], g: T, n: u32) {
    let i = grid_1d();
    gpu_println!("named {i}");
    gpu_println!("positional {0}", i);
    gpu_println!("width {:8}", i);
    gpu_println!("debug {:?}", i);
    gpu_println!("unmatched } brace", i);
    gpu_println!("slice {}", x);
    gpu_println!("too few {} {}", i);
    gpu_println!("too many {}", i, n);
    gpu_println!("hex of a float {:x}", x[0]);
    gpu_println!("precision of an int {:.2}", n);
    gpu_println!("generic {}", g);
    gpu_println!(i);
    println!("thread {}", i);
    y[0] = x[0];
}
