//! `gpu_print!` / `gpu_println!`: formatted printing from a kernel (docs/kernel-language.md,
//! Printing). On the host (and on the CPU device) they are `print!` / `println!`, so rustc checks
//! the format string against the arguments; the compiler translates them to CUDA `printf`, which
//! accepts a subset: `{}`, `{:.N}` (floats), `{:x}` and `{:X}` (integers), `{{` and `}}`, with
//! arguments that are numbers or `bool`.

/// `print!` in a kernel: CUDA `printf` on the GPU (its output appears at the next
/// synchronisation), `print!` on the host and the CPU device. Format: `{}`, `{:.N}` (floats),
/// `{:x}`/`{:X}` (integers), `{{`/`}}`; arguments: integers, floats, `bool`.
#[macro_export]
macro_rules! gpu_print {
    ($($arg:tt)*) => {
        ::std::print!($($arg)*)
    };
}

/// [`gpu_print!`](crate::gpu_print) with a newline appended.
#[macro_export]
macro_rules! gpu_println {
    ($($arg:tt)*) => {
        ::std::println!($($arg)*)
    };
}
