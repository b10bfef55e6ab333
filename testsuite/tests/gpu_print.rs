//! `gpu_print!`/`gpu_println!` end to end (`print_kernels.rs`), on the CPU device (in CI) and on
//! the GPU (`on_both_devices!`): each test re-runs this binary as a child process
//! (`child_entry`, told what to launch by `CUPRUM_PRINT_CHILD`) and checks the lines the kernels
//! printed on its stdout (on the GPU, `printf`'s buffer is written out at the synchronisation that
//! ends the child's launch). Lines from different threads may come in any order: the lines are
//! compared as sorted lists.

#[path = "../../runtime/tests/support/mod.rs"]
mod support;

mod print_kernels;

use std::io::Write;
use std::process::Command;

use cuprum::runtime::{Array, Device, LaunchConfig};
use print_kernels as k;

on_both_devices!(
    cuprum::runtime::Device;
    raw_kernel_and_device_function_print_every_thread,
    elementwise_body_prints_each_element,
    reduction_map_prints_each_element,
    print_after_a_barrier_sees_shared_memory
);

const CHILD: &str = "CUPRUM_PRINT_CHILD";

const X: [f32; 4] = [0.5, 1.5, 2.5, 3.0];

/// The child: runs the launch `CUPRUM_PRINT_CHILD` names (`what@ordinal`), then synchronises.
#[test]
fn child_entry() {
    let Ok(job) = std::env::var(CHILD) else { return };
    // End the harness's `test child_entry ... ` line, so that the first printed line is whole.
    println!();
    std::io::stdout().flush().unwrap();
    let (what, ordinal) = job.split_once('@').unwrap();
    let device = Device::get(ordinal.parse().unwrap()).unwrap();
    let _current = device.use_scoped().unwrap();
    match what {
        "raw" => {
            let x = Array::from_slice(&X).unwrap();
            // Two blocks of 4 threads: 4 threads past `n` print nothing.
            k::print_values::launch(&LaunchConfig::new(2u32, 4u32), &x, X.len() as u32).unwrap();
        }
        "elementwise" => {
            let x = Array::from_slice(&[7i32, -8, 9]).unwrap();
            let y = k::print_elements::call(&x).unwrap();
            assert_eq!(y.to_vec().unwrap(), vec![14, -16, 18]);
        }
        "reduction" => {
            let x = Array::from_slice(&[3i64, -4, 5, 6]).unwrap();
            let s = k::print_reduce::call(&x).run().unwrap();
            assert_eq!(s.to_vec().unwrap(), vec![10]);
        }
        "barrier" => {
            let mut out = Array::from_slice(&[u32::MAX; 4]).unwrap();
            k::print_after_barrier::launch(&LaunchConfig::new(1u32, 4u32), &mut out).unwrap();
            assert_eq!(out.to_vec().unwrap(), vec![0, 10, 20, 30]);
        }
        other => panic!("unknown child job {other}"),
    }
    device.synchronize().unwrap();
    std::io::stdout().flush().unwrap();
}

/// Runs `child_entry` with `what` on the current device; returns the sorted lines of its stdout
/// that start with `tag`.
fn printed(what: &str, tag: &str) -> Vec<String> {
    let ordinal = Device::current().unwrap().ordinal();
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_entry", "--nocapture", "--test-threads=1"])
        .env(CHILD, format!("{what}@{ordinal}"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "child `{what}` failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let mut lines: Vec<String> = stdout.lines().filter(|l| l.starts_with(tag)).map(str::to_string).collect();
    lines.sort();
    lines
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

fn raw_kernel_and_device_function_print_every_thread() {
    let got = printed("raw", "raw ");
    let want = sorted(
        (0..X.len() as u32)
            .map(|i| {
                let v = X[i as usize];
                format!(
                    "raw {i} of 4: x = {v} half {:.2} neg {} hex {:x} {:X} {:x} big {} flag {} {{ok}} 100%",
                    v * 0.5,
                    -(i as i32) - 1,
                    i + 250,
                    255u8,
                    -1i16,
                    u64::MAX - i as u64,
                    v > 1.0
                )
            })
            .collect(),
    );
    assert_eq!(got, want);
    assert_eq!(want[0], "raw 0 of 4: x = 0.5 half 0.25 neg -1 hex fa FF ffff big 18446744073709551615 flag false {ok} 100%");
    let got = printed("raw", "dev ");
    let want = sorted((0..X.len()).map(|i| format!("dev {i} {}", X[i] + 1.0)).collect());
    assert_eq!(got, want);
    assert_eq!(want[3], "dev 3 4");
}

fn elementwise_body_prints_each_element() {
    assert_eq!(printed("elementwise", "ew "), ["ew 0 7", "ew 1 -8", "ew 2 9"]);
}

fn reduction_map_prints_each_element() {
    assert_eq!(printed("reduction", "red "), ["red -4", "red 3", "red 5", "red 6"]);
}

fn print_after_a_barrier_sees_shared_memory() {
    assert_eq!(printed("barrier", "bar "), ["bar 0 sees 10", "bar 1 sees 20", "bar 2 sees 30", "bar 3 sees 0"]);
}
