# The #[rawkernel] f32 copy as our compiler emits it (`cuprum emit copy_f32_rust/kernels.rs > copy_f32_rust/kernels.cu`),
# three ways, launched from CuPy against the driver copy. Run from the repository root.
import cupy as cp, numpy as np, os
n = 1 << 28
x = cp.arange(n, dtype=cp.float32); y = cp.empty_like(x)
src = open('benches/experiments/copy_f32_rust/kernels.cu').read()
mod = cp.RawModule(code=src, options=('-std=c++17', '-fmad=false', '-I' + os.path.abspath('include')))
sl = np.dtype([('p', '<u8'), ('l', '<u8')])
def S(a): return np.array((a.data.ptr, a.size), dtype=sl)[()]
def ev(f, reps=5):
    ts = []
    for _ in range(reps):
        a, b = cp.cuda.Event(), cp.cuda.Event(); a.record(); f(); b.record(); b.synchronize(); ts.append(cp.cuda.get_elapsed_time(a, b))
    return ts
def memcpy(): cp.cuda.runtime.memcpyAsync(y.data.ptr, x.data.ptr, n * 4, cp.cuda.runtime.memcpyDeviceToDevice, 0)
V = []
for k in ('a_current', 'b_fast_path', 'c_lets'):
    f = mod.get_function(f'cuprum_rawkernel_{k}__f32')
    for blk in (128, 256):
        V.append((f'{k} x{blk}', (lambda f=f, blk=blk: f((n // (4 * blk),), (blk,), (S(x), S(y), np.uint32(n))))))
for name, f in V:
    y.fill(0); f(); cp.cuda.Device().synchronize(); assert bool((y == x).all()), name
res = {k: [] for k, _ in V}; ceil = []
for r in range(3):
    for k, f in V: ceil += ev(memcpy); res[k] += ev(f)
cm = np.median(ceil)
for k, t in res.items(): print(f"{k:18s} ratio {cm/np.median(t):.4f}")
