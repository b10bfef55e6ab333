//! Matrix products (issue 36, linear algebra): `matmul` (batched, NumPy's broadcasting of batch
//! dimensions), `dot`, `vdot`, `inner`, `outer` and `tensordot`, as [`Array`](crate::Array)
//! methods (`products.rs`), on both devices (docs/runtime.md, Matrix products).
//!
//! One concept per file, bottom-up:
//! - `shapes`: NumPy's shape rules (the output shape of `matmul`, the axes of `tensordot`), pure
//!   functions of the shapes;
//! - `cublas`: cuBLAS, loaded at run time (libcublas and libcublasLt, checked before cudarc's
//!   first call, which would panic without them), one handle per device;
//! - `gpu`: a batched product on a GPU: each operand as cuBLAS sees it (a transpose flag, a
//!   leading dimension and a batch stride; a copy where its layout has none), one
//!   `cublasGemmEx`/`cublasGemmStridedBatchedEx` call;
//! - `integer`: integer products on a GPU (cuBLAS has none): the built-in kernel of
//!   `kernels/matmul.rs`, one thread per output element, compiled by NVRTC at first use;
//! - `cpu`: the same product on the CPU device: `matrixmultiply`'s strided SGEMM/DGEMM, f32 for the
//!   half types, a plain loop for integers (wrapping) and complex numbers;
//! - `gemm`: the batched product both devices share (checks, empty and `k = 0` results, the
//!   device's path);
//! - `products`: the NumPy-shaped methods on top of it.

mod shapes;
mod cublas;
mod gpu;
mod integer;
mod cpu;
mod gemm;
mod products;
