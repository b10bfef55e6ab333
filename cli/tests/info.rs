//! `cuprum info` states what the code does (issue 34, item 8): the CPU device line says that it
//! runs kernels (it said "kernels run on CUDA devices only in this version", false since
//! milestone 2) and the same run shows a built-in kernel running there; the output is a short
//! summary (it listed the command's own 300-odd built-in instances), and a missing driver or
//! libnvrtc is said once, not "not available: ... is not available".

use std::process::Command;

use cuprum_runtime::{Array, Device};

fn info() -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_cuprum")).arg("info").env("CUPRUM_DEVICE", "cpu").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_cpu_device_line_says_it_runs_kernels_and_it_does() {
    let text = info();
    let line = text.lines().find(|l| l.starts_with("CPU device: ")).expect("a CPU device line");
    assert!(line.contains("every kernel written in Rust") && !line.contains("only in this version"), "{line}");
    // The statement checked against the code: a built-in elementwise kernel and a reduction run
    // on the CPU device.
    let _cpu = Device::cpu().use_scoped().unwrap();
    let x = Array::<f32>::arange(10).unwrap();
    let y = (&x * 2.0f32).unwrap();
    assert_eq!(y.to_vec().unwrap(), (0..10).map(|v| 2.0 * v as f32).collect::<Vec<_>>());
    assert_eq!(x.sum().run().unwrap().item().unwrap(), 45.0);
}

#[test]
fn the_report_is_a_summary_that_says_each_thing_once() {
    let text = info();
    assert!(text.lines().count() < 40, "cuprum info printed {} lines:\n{text}", text.lines().count());
    assert!(!text.contains("not available: the CUDA driver is not available"), "{text}");
    assert!(!text.contains("not available: NVRTC (libnvrtc) is not available"), "{text}");
    let kernels = text.lines().find(|l| l.starts_with("kernels: ")).expect("a kernels line");
    assert!(kernels.contains("cuprum audit PROGRAM"), "{kernels}");
}
