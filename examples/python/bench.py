"""The Python rows of issue 35's targets, on a GPU (each next to a ceiling measured in the same run):

1. host cost per call of a cuprum kernel on 1-element torch tensors, against torch's own `x + y`
   on the same tensors and a Triton kernel of the same work ((x - y)^2);
2. the first call of an extension kernel in a fresh Python process after import (and whether NVRTC
   ran: the extension's `stats()`);
3. (x - y)^2 over 2^28 float32 torch tensors, against the copy ceiling (a device-to-device copy of
   the same bytes), torch's `(x - y) ** 2` and Triton's kernel.

Run: python3 examples/python/bench.py   (with the example wheel and torch installed; Triton optional)
"""
import statistics
import subprocess
import sys
import time

import torch

import cuprum_example as ce

try:
    import triton
    import triton.language as tl

    @triton.jit
    def _sqdiff(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        d = tl.load(x_ptr + offs, mask=m) - tl.load(y_ptr + offs, mask=m)
        tl.store(z_ptr + offs, d * d, mask=m)

    def triton_sqdiff(x, y):
        z = torch.empty_like(x)
        n = x.numel()
        _sqdiff[(triton.cdiv(n, 4096),)](x, y, z, n, BLOCK=4096)
        return z
except Exception as e:  # Triton missing or broken: its rows say so
    print(f"# triton unavailable: {e}")
    triton_sqdiff = None


def per_call_us(fs, n=4000, rounds=15):
    """Median over rounds of the wall time per call of each function of `fs` in a loop of n calls
    (then a sync). The functions take turns within each round, so that a drift of the host's speed
    (a shared machine) moves them together rather than one of them."""
    for f in fs:
        for _ in range(1000):
            f()
    torch.cuda.synchronize()
    times = [[] for _ in fs]
    for _ in range(rounds):
        for f, t in zip(fs, times):
            t0 = time.perf_counter()
            for _ in range(n):
                f()
            torch.cuda.synchronize()
            t.append((time.perf_counter() - t0) / n * 1e6)
    return [statistics.median(t) for t in times]


def gpu_ms(f, reps=20):
    """Median GPU time of `f` in ms (CUDA events around each call)."""
    for _ in range(3):
        f()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        f()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b))
    return statistics.median(ts)


def row(name, value, unit, ceiling, ratio, target, note=""):
    ok = "ok" if target is None or target(ratio) else "MISS"
    print(f"  {name:<58} {value:>9.2f} {unit:<5} {ceiling:>9.2f} {ratio:>7.3f}  {ok}  {note}")


def host_cost():
    x = torch.rand(1, device="cuda") + 0.5
    y = torch.rand(1, device="cuda") + 0.5
    want = (x - y) ** 2
    got = torch.from_dlpack(ce.squared_diff(x, y))
    assert torch.allclose(got, want), (got, want)
    fs = [lambda: x + y, lambda: ce.squared_diff(x, y), lambda: torch.from_dlpack(ce.squared_diff(x, y))]
    if triton_sqdiff is not None:
        assert torch.allclose(triton_sqdiff(x, y), want)
        fs.append(lambda: triton_sqdiff(x, y))
    t = per_call_us(fs)
    t_torch, t_ce, t_ce_torch = t[:3]
    print("host cost per call, 1-element float32 torch tensors (us; ceiling: torch's x + y; the four take turns)")
    row("cuprum squared_diff(x, y) -> cuprum.Tensor", t_ce, "us", t_torch, t_ce / t_torch, lambda r: r <= 1.2)
    row("  ... then torch.from_dlpack(result)", t_ce_torch, "us", t_torch, t_ce_torch / t_torch, None)
    if triton_sqdiff is not None:
        t_tri = t[3]
        row("  against Triton's kernel of the same work", t_ce, "us", t_tri, t_ce / t_tri, lambda r: r <= 1.0, f"(triton {t_tri:.2f} us)")


FIRST_CALL = r"""
import time, torch
x = torch.rand(1 << 20, device="cuda"); y = torch.rand(1 << 20, device="cuda"); torch.cuda.synchronize()
t0 = time.perf_counter()
import cuprum_example as ce
t1 = time.perf_counter()
z = ce.squared_diff(x, y); torch.cuda.synchronize()
t2 = time.perf_counter()
z = ce.squared_diff(x, y); torch.cuda.synchronize()
t3 = time.perf_counter()
s = ce.stats()
assert torch.allclose(torch.from_dlpack(z), (x - y) ** 2)
print(f"{(t1-t0)*1e3} {(t2-t1)*1e3} {(t3-t2)*1e3} {s['nvrtc']} {s['aot']} {s['module_loads']} {s['module_load_s']*1e3}")
"""


def first_call():
    runs = []
    for _ in range(5):
        out = subprocess.run([sys.executable, "-c", FIRST_CALL], capture_output=True, text=True, check=True)
        runs.append([float(v) for v in out.stdout.split()])
    med = lambda k: statistics.median(r[k] for r in runs)
    print("first call in a fresh process (5 processes, medians; ceiling: the second call)")
    row("import cuprum_example", med(0), "ms", med(2), med(0) / med(2), None)
    row("first squared_diff on 2^20 f32 (synchronized)", med(1), "ms", med(2), med(1) / med(2), None,
        f"target < 1 ms: {'ok' if med(1) < 1.0 else 'MISS'}; NVRTC compiles {int(max(r[3] for r in runs))}, "
        f"fat-binary lookups {int(med(4))}, module loads {int(med(5))} ({med(6):.3f} ms)")


def bandwidth():
    n = 1 << 28
    x = torch.rand(n, device="cuda") - 0.5
    y = torch.rand(n, device="cuda") - 0.5
    z = torch.empty_like(x)
    t_copy = gpu_ms(lambda: z.copy_(x))
    copy_gbs = 2 * 4 * n / t_copy / 1e6
    got = torch.from_dlpack(ce.squared_diff(x, y))
    assert torch.allclose(got, (x - y) ** 2)
    assert got.data_ptr() != x.data_ptr()
    print(f"(x - y)^2 over 2^28 float32 torch tensors (GB/s counting 12 bytes per element; ceiling: copy {copy_gbs:.0f} GB/s)")
    for name, f, target in [
        ("cuprum squared_diff", lambda: ce.squared_diff(x, y), lambda r: r >= 0.95),
        ("torch (x - y) ** 2", lambda: (x - y) ** 2, None),
    ] + ([("triton kernel", lambda: triton_sqdiff(x, y), None)] if triton_sqdiff else []):
        t = gpu_ms(f)
        gbs = 12 * n / t / 1e6
        row(name, gbs, "GB/s", copy_gbs, gbs / copy_gbs, target, f"({t:.3f} ms)")


if __name__ == "__main__":
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}" + (f", triton {triton.__version__}" if triton_sqdiff else ""))
    host_cost()
    first_call()
    bandwidth()
