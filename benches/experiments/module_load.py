"""How long a fresh process takes to load a fat binary and get one kernel from it, by size and
nvcc's -compress-mode (issue: lean built-ins; docs/building.md, "Size").

Each measurement is a new process (the driver keeps loaded modules per context): cuInit, the
primary context made current (not timed), then cuModuleLoadData + cuModuleGetFunction (timed,
with CUDA_MODULE_LOADING as the environment says; LAZY is the driver's default).

    python3 module_load.py DIR            # every DIR/*.fatbin, 7 processes each
Each fat binary needs a sidecar DIR/NAME.kernel holding the name of one kernel in it.
"""
import ctypes
import os
import statistics
import subprocess
import sys
import time


def child(path, kernel):
    cuda = ctypes.CDLL("libcuda.so.1")
    assert cuda.cuInit(0) == 0
    dev = ctypes.c_int()
    assert cuda.cuDeviceGet(ctypes.byref(dev), 0) == 0
    ctx = ctypes.c_void_p()
    assert cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
    assert cuda.cuCtxSetCurrent(ctx) == 0
    image = open(path, "rb").read()
    buf = ctypes.create_string_buffer(image, len(image))
    mod = ctypes.c_void_p()
    fn = ctypes.c_void_p()
    t0 = time.perf_counter()
    r = cuda.cuModuleLoadData(ctypes.byref(mod), buf)
    t1 = time.perf_counter()
    assert r == 0, f"cuModuleLoadData: {r}"
    r = cuda.cuModuleGetFunction(ctypes.byref(fn), mod, kernel.encode())
    t2 = time.perf_counter()
    assert r == 0, f"cuModuleGetFunction({kernel}): {r}"
    print(f"{(t1 - t0) * 1e3:.4f} {(t2 - t1) * 1e3:.4f}")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
        return
    d = sys.argv[1]
    print(f"{'fat binary':32} {'bytes':>9}  {'load ms':>8} {'get ms':>8} {'total ms':>9}   (median of 7 new processes)")
    for name in sorted(os.listdir(d)):
        if not name.endswith(".fatbin"):
            continue
        path = os.path.join(d, name)
        kernel = open(path[: -len(".fatbin")] + ".kernel").read().strip()
        loads, gets = [], []
        for _ in range(7):
            out = subprocess.run([sys.executable, __file__, "--child", path, kernel], capture_output=True, text=True)
            if out.returncode != 0:
                print(f"{name}: child failed: {out.stderr.strip()[-300:]}")
                break
            a, b = map(float, out.stdout.split())
            loads.append(a)
            gets.append(b)
        if loads:
            lm, gm = statistics.median(loads), statistics.median(gets)
            print(f"{name:32} {os.path.getsize(path):9d}  {lm:8.3f} {gm:8.3f} {lm + gm:9.3f}")


if __name__ == "__main__":
    main()
