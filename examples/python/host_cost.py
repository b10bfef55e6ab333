"""Where a call's host time goes (a diagnostic for bench.py's first row): each step of a cuprum
call from torch, timed alone in a loop of 1-element tensors."""
import time, statistics, torch
import cuprum_example as ce

def us(f, n=5000):
    for _ in range(500): f()
    torch.cuda.synchronize()
    t = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n): f()
        torch.cuda.synchronize()
        t.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(t)

x = torch.rand(1, device="cuda"); y = torch.rand(1, device="cuda")
cx = ce.view(x)
for name, f in [
    ("x + y (torch)", lambda: x + y),
    ("x.__dlpack__()", lambda: x.__dlpack__()),
    ("x.__dlpack__(stream=1)", lambda: x.__dlpack__(stream=1)),
    ("x.__dlpack__(stream=1, max_version=(1, 0))", lambda: x.__dlpack__(stream=1, max_version=(1, 0))),
    ("torch.cuda.current_stream(0)", lambda: torch.cuda.current_stream(0)),
    ("torch.cuda.current_stream(0).cuda_stream", lambda: torch.cuda.current_stream(0).cuda_stream),
    ("x.__cuda_array_interface__", lambda: x.__cuda_array_interface__),
    ("ce.view(x)  (import only)", lambda: ce.view(x)),
    ("ce.view(cuprum Tensor)", lambda: ce.view(cx)),
    ("ce.squared_diff(x, y)", lambda: ce.squared_diff(x, y)),
    ("ce.squared_diff(cx, cx)", lambda: ce.squared_diff(cx, cx)),
    ("torch.from_dlpack(cx)", lambda: torch.from_dlpack(cx)),
]:
    print(f"{name:<48} {us(f):8.2f} us")

FIRST = r"""
import time, torch
x = torch.rand(1 << 20, device="cuda"); y = torch.rand(1 << 20, device="cuda"); torch.cuda.synchronize()
import cuprum_example as ce
c = []
t = time.perf_counter(); x.__dlpack__(stream=1); c.append(time.perf_counter() - t)
t = time.perf_counter(); v = ce.view(x); c.append(time.perf_counter() - t)
t = time.perf_counter(); z = ce.squared_diff(x, y); torch.cuda.synchronize(); c.append(time.perf_counter() - t)
t = time.perf_counter(); z = ce.squared_diff(x, y); torch.cuda.synchronize(); c.append(time.perf_counter() - t)
s = ce.stats()
print(" ".join(f"{v*1e3:.3f}" for v in c), s["module_load_s"] * 1e3)
"""
import subprocess, sys
print("first calls in fresh processes (ms): torch __dlpack__, first ce.view (device open, import), first squared_diff, second, module load")
for _ in range(3):
    print(subprocess.run([sys.executable, "-c", FIRST], capture_output=True, text=True).stdout.strip())
