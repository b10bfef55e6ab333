# The #[rawkernel] f32 copy as our compiler emits it, three ways, launched from CuPy against the
# driver copy. The GPU machine has no Rust: emit the unit here first,
#   cargo run -p cuprum-cli -- emit benches/experiments/copy_f32_rust/kernels.rs > benches/experiments/copy_f32_rust/kernels.cu
# then run this from the repository root there (it needs abi/include/ for the headers).
import cupy as cp, numpy as np, os
from timing import compare
n = 1 << 28
x = cp.arange(n, dtype=cp.float32); y = cp.empty_like(x)
src = open('benches/experiments/copy_f32_rust/kernels.cu').read()
mod = cp.RawModule(code=src, options=('-std=c++17', '-fmad=false', '-I' + os.path.abspath('abi/include')))
sl = np.dtype([('p', '<u8'), ('l', '<u8')])
def S(a): return np.array((a.data.ptr, a.size), dtype=sl)[()]
V = []
for k in ('a_current', 'b_fast_path', 'c_lets'):
    f = mod.get_function(f'cuprum_rawkernel_{k}__f32')
    for blk in (128, 256):
        V.append((f'{k} x{blk}', (lambda f=f, blk=blk: f((n // (4 * blk),), (blk,), (S(x), S(y), np.uint32(n))))))
for name, f in V:
    y.fill(0); f(); cp.cuda.Device().synchronize(); assert bool((y == x).all()), name
compare(V, x, y)
