#!/usr/bin/env python3
"""CuPy's side of cuprum-bench: the same workloads through CuPy on the same GPU, printed in the
same table shape (each figure beside a ceiling measured in this run).

    python3 benches/compare_cupy.py [--json] [--quick] [--cuprum PATH/TO/cuprum-bench]

With --cuprum, cuprum-bench runs first (same flags) and both tables come from one command.
Ceilings here: device-to-device copy (cudaMemcpyAsync, CUDA events, median), a bare
cuLaunchKernel called through ctypes on the RawKernel's CUfunction with prebuilt arguments (the
closest Python gets to a bare launch), a bare NVRTC compile through CuPy's NVRTC bindings, and
loading a cubin in a fresh process. The kernel sources are the ones in benches/src/main.rs; keep
them in sync.
"""

import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

EMPTY = r'''
extern "C" __global__ void empty_kernel(const float* x1, const float* x2, float* y, unsigned int n) {}
'''

ADD = r'''
extern "C" __global__ void my_add(const float* x1, const float* x2, float* y, unsigned int n) {
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    if (tid < n) y[tid] = x1[tid] + x2[tid];
}
'''

COPY = r'''
extern "C" __global__ void copy_f32x4(const float4* __restrict__ x, float4* __restrict__ y,
                                      unsigned long long n4) {
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 7 * stride < n4; i += 8 * stride) {
        float4 v[8];
        #pragma unroll
        for (int k = 0; k < 8; k++) v[k] = x[i + k * stride];
        #pragma unroll
        for (int k = 0; k < 8; k++) y[i + k * stride] = v[k];
    }
    for (; i < n4; i += stride) y[i] = x[i];
}
'''


def fmt_value(v, unit):
    digits = 0 if v >= 100 else (1 if v >= 10 else 2)
    return f"{v:.{digits}f} {unit}"


def passes(row):
    t = row.get("target_op")
    if t is None:
        return None
    ratio = row["value"] / row["ceiling"]
    if t == ">=":
        return ratio >= row["target"]
    if t == "<=":
        return ratio <= row["target"]
    if t == "<":
        return row["value"] < row["target"]
    return None


def table(header, ceilings, rows):
    out = [f"compare_cupy: {header}", "", "ceilings (measured in this run)"]
    for c in ceilings:
        out.append(f"  {c['name']:<56} {fmt_value(c['value'], c['unit']):>12}")
    out.append("")
    out.append(f"  {'row':<56} {'value':>12} {'ceiling':>12} {'ratio':>7}  {'target':<8} ceiling used / notes")
    for r in rows:
        if r.get("target_op") is None:
            target = "-"
        elif r["target_op"] == "<":
            target = f"< {r['target']} {r['unit']}"
        else:
            target = f"{r['target_op']} {r['target']}"
        verdict = {True: "ok", False: "MISSED", None: ""}[passes(r)]
        out.append(
            f"  {r['name']:<56} {fmt_value(r['value'], r['unit']):>12} "
            f"{fmt_value(r['ceiling'], r['unit']):>12} {r['value'] / r['ceiling']:>7.3f}  "
            f"{target:<8} {verdict} {r['ceiling_name']} ({r['note']})"
        )
    return "\n".join(out) + "\n"


def child_warm(src_path, cubin_path):
    """A fresh process: start-up first, then the timed first call, then the cubin load."""
    t = time.perf_counter()
    import cupy as cp
    import numpy as np
    x = cp.zeros(4096, dtype=cp.float32)
    y = cp.zeros(4096, dtype=cp.float32)
    z = cp.zeros(4096, dtype=cp.float32)
    cp.cuda.Stream.null.synchronize()
    startup_ms = (time.perf_counter() - t) * 1e3
    src = open(src_path).read()
    t = time.perf_counter()
    k = cp.RawKernel(src, "my_add")
    k((16,), (256,), (x, y, z, np.uint32(4096)))
    first_ms = (time.perf_counter() - t) * 1e3
    cp.cuda.Stream.null.synchronize()
    t = time.perf_counter()
    m = cp.RawModule(path=cubin_path)
    m.get_function("my_add")
    load_ms = (time.perf_counter() - t) * 1e3
    print(f"WARM {first_ms} {load_ms} {startup_ms}")


def bare_compile(nvrtc, src, arch):
    prog = nvrtc.createProgram(src, "bare.cu", [], [])
    try:
        nvrtc.compileProgram(prog, [f"--gpu-architecture={arch}"])
        if hasattr(nvrtc, "getCUBIN"):
            return nvrtc.getCUBIN(prog)
        return nvrtc.getPTX(prog)
    finally:
        nvrtc.destroyProgram(prog)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--cuprum", metavar="PATH", help="run this cuprum-bench first")
    ap.add_argument("--child-warm", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child_warm:
        child_warm(*a.child_warm)
        return 0

    if a.cuprum:
        cmd = [a.cuprum] + (["--json"] if a.json else []) + (["--quick"] if a.quick else [])
        r = subprocess.run(cmd)
        if r.returncode != 0:
            print(f"compare_cupy: {a.cuprum} failed ({r.returncode})", file=sys.stderr)
        print()

    cache_dir = tempfile.mkdtemp(prefix="cupy-bench-cache-")
    os.environ["CUPY_CACHE_DIR"] = cache_dir
    try:
        import cupy as cp
        import numpy as np
        from cupy_backends.cuda.libs import nvrtc
    except Exception as e:  # noqa: BLE001
        print(f"compare_cupy needs CuPy and a GPU: {e}", file=sys.stderr)
        return 1

    quick = a.quick
    launches = 2000 if quick else 20000
    rounds = 3 if quick else 5
    dev = cp.cuda.Device(0)
    props = cp.cuda.runtime.getDeviceProperties(0)
    arch = f"sm_{dev.compute_capability}"
    sms = props["multiProcessorCount"]
    stream = cp.cuda.Stream.null

    # ---- ceilings ----
    n = (1 << 26) if quick else (1 << 28)
    x = cp.zeros(n, dtype=cp.float32)
    y = cp.zeros(n, dtype=cp.float32)
    nbytes = n * 4
    copy = cp.RawKernel(COPY, "copy_f32x4")

    def timed(f):
        s, e = cp.cuda.Event(), cp.cuda.Event()
        s.record(stream)
        f()
        e.record(stream)
        e.synchronize()
        return cp.cuda.get_elapsed_time(s, e)

    # The copy ceiling and the copy kernel, alternately (same clocks, same L2 state).
    tm, tk = [], []
    for i in range(6 if quick else 22):
        a_ = timed(lambda: cp.cuda.runtime.memcpyAsync(y.data.ptr, x.data.ptr, nbytes,
                                                       cp.cuda.runtime.memcpyDeviceToDevice, stream.ptr))
        b_ = timed(lambda: copy((sms * 2,), (256,), (x, y, np.uint64(n // 4))))
        if i > 1:
            tm.append(a_)
            tk.append(b_)
    copy_ceiling = 2 * nbytes / (statistics.median(tm) * 1e-3) / 1e9
    copy_gbs = 2 * nbytes / (statistics.median(tk) * 1e-3) / 1e9

    nsmall = 1024
    pa = cp.zeros(nsmall, dtype=cp.float32)
    pb = cp.zeros(nsmall, dtype=cp.float32)
    pc = cp.zeros(nsmall, dtype=cp.float32)
    empty = cp.RawKernel(EMPTY, "empty_kernel")
    empty((1,), (32,), (pa, pb, pc, np.uint32(nsmall)))
    stream.synchronize()

    # Bare cuLaunchKernel through ctypes, arguments prebuilt.
    libcuda = ctypes.CDLL("libcuda.so.1")
    launch = libcuda.cuLaunchKernel
    launch.restype = ctypes.c_int
    launch.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    vals = [ctypes.c_uint64(pa.data.ptr), ctypes.c_uint64(pb.data.ptr), ctypes.c_uint64(pc.data.ptr), ctypes.c_uint32(nsmall)]
    params = (ctypes.c_void_p * 4)(*[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in vals])
    fptr = empty.kernel.ptr

    def bare_n(count):
        t = time.perf_counter()
        for _ in range(count):
            rc = launch(fptr, 1, 1, 1, 32, 1, 1, 0, None, params, None)
            if rc != 0:
                raise RuntimeError(f"cuLaunchKernel failed: {rc}")
        stream.synchronize()
        return (time.perf_counter() - t) * 1e6 / count

    bare_n(launches // 10)
    bare_launch_us = statistics.median(bare_n(launches) for _ in range(rounds))

    bare_compile(nvrtc, 'extern "C" __global__ void warm_up() {}', arch)
    ct = []
    for _ in range(rounds):
        t = time.perf_counter()
        bare_compile(nvrtc, ADD, arch)
        ct.append((time.perf_counter() - t) * 1e3)
    bare_compile_ms = statistics.median(ct)

    rows = []

    def raw_n(count):
        t = time.perf_counter()
        for _ in range(count):
            empty((1,), (32,), (pa, pb, pc, np.uint32(nsmall)))
        stream.synchronize()
        return (time.perf_counter() - t) * 1e6 / count

    raw_n(launches // 10)
    rows.append(dict(name="RawKernel launch, host cost per call", value=statistics.median(raw_n(launches) for _ in range(rounds)),
                     unit="us", ceiling_name="bare cuLaunchKernel (ctypes)", ceiling=bare_launch_us,
                     target_op="<=", target=1.15, note=f"{launches} calls, one synchronize"))

    tag = time.time_ns()
    def add_src(i):
        return f"{ADD}// compare_cupy {tag} {i}\n"
    na = 4096
    xa, xb, xc = (cp.zeros(na, dtype=cp.float32) for _ in range(3))
    cold = []
    for i in range(rounds):
        t = time.perf_counter()
        k = cp.RawKernel(add_src(i), "my_add")
        k((16,), (256,), (xa, xb, xc, np.uint32(na)))
        cold.append((time.perf_counter() - t) * 1e3)
    stream.synchronize()
    rows.append(dict(name="RawKernel first call, empty cache", value=statistics.median(cold), unit="ms",
                     ceiling_name="bare NVRTC compile", ceiling=bare_compile_ms, target_op="<=", target=1.2,
                     note=f"{rounds} calls"))

    src_path = os.path.join(cache_dir, "warm-source.cu")
    with open(src_path, "w") as f:
        f.write(add_src(0))
    cubin_path = os.path.join(cache_dir, "ceiling.cubin")
    with open(cubin_path, "wb") as f:
        f.write(bare_compile(nvrtc, ADD, arch))
    warm = []
    for _ in range(rounds):
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--child-warm", src_path, cubin_path],
                           capture_output=True, text=True, env=dict(os.environ, CUPY_CACHE_DIR=cache_dir))
        line = next((l[5:] for l in r.stdout.splitlines() if l.startswith("WARM ")), None)
        if line is None:
            print(f"compare_cupy: warm child failed:\n{r.stdout}\n{r.stderr}", file=sys.stderr)
            return 1
        warm.append([float(v) for v in line.split()])
    first_ms = statistics.median(w[0] for w in warm)
    load_ms = statistics.median(w[1] for w in warm)
    startup_ms = statistics.median(w[2] for w in warm)
    rows.append(dict(name="RawKernel first call, warm disk cache (new process)", value=first_ms, unit="ms",
                     ceiling_name="load a cubin (new process)", ceiling=load_ms, target_op="<", target=1.0,
                     note=f"process start-up before it (import cupy, device): {startup_ms:.1f} ms"))

    mem = []
    for _ in range(rounds):
        t = time.perf_counter()
        k = cp.RawKernel(add_src(0), "my_add")
        k((16,), (256,), (xa, xb, xc, np.uint32(na)))
        mem.append((time.perf_counter() - t) * 1e6)
    stream.synchronize()
    rows.append(dict(name="RawKernel first call, same source loaded in this process", value=statistics.median(mem),
                     unit="us", ceiling_name="bare cuLaunchKernel (ctypes)", ceiling=bare_launch_us,
                     target_op=None, target=None, note="new RawKernel object"))

    rows.append(dict(name="grid-stride copy RawKernel (float4, 2^28 f32)",
                     value=copy_gbs, unit="GB/s",
                     ceiling_name="device-to-device copy", ceiling=copy_ceiling, target_op=">=", target=0.95,
                     note=f"grid {sms * 2} x 256, timed alternately with the copy"))

    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    header = (f"{name} (sm_{dev.compute_capability}, {sms} SMs), CuPy {cp.__version__}, "
              f"CUDA runtime {cp.cuda.runtime.runtimeGetVersion()}, NVRTC {'.'.join(map(str, nvrtc.getVersion()))}")
    ceilings = [
        dict(name="device-to-device copy", value=copy_ceiling, unit="GB/s"),
        dict(name="bare cuLaunchKernel (ctypes)", value=bare_launch_us, unit="us"),
        dict(name="bare NVRTC compile", value=bare_compile_ms, unit="ms"),
        dict(name="load a cubin (new process)", value=load_ms, unit="ms"),
    ]
    if a.json:
        for r in rows:
            r["ratio"] = r["value"] / r["ceiling"]
            r["pass"] = passes(r)
        print(json.dumps(dict(tool="compare_cupy", setup=header, ceilings=ceilings, rows=rows), indent=2))
    else:
        print(table(header, ceilings, rows), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
