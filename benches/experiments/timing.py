# What the copy experiments share: CUDA-event timing, and each variant's median time against the
# driver's device-to-device copy of the same bytes, the two timed alternately.
import cupy as cp, numpy as np

def event_times(f, reps=5):
    ts = []
    for _ in range(reps):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record(); f(); b.record(); b.synchronize()
        ts.append(cp.cuda.get_elapsed_time(a, b))
    return ts

def compare(variants, x, y, rounds=3, reps=5):
    """variants: [(name, launch)]; x, y: the arrays every variant copies x -> y. Prints ratios."""
    nbytes = x.nbytes
    memcpy = lambda: cp.cuda.runtime.memcpyAsync(y.data.ptr, x.data.ptr, nbytes, cp.cuda.runtime.memcpyDeviceToDevice, 0)
    for _, f in variants: f()
    memcpy(); cp.cuda.Device().synchronize()
    res = {k: [] for k, _ in variants}; ceil = []
    for _ in range(rounds):
        for k, f in variants:
            ceil += event_times(memcpy, reps); res[k] += event_times(f, reps)
    cm = np.median(ceil)
    print(f"driver copy: median {cm:.4f} ms = {2 * nbytes / cm / 1e6:.1f} GB/s")
    for k, t in res.items():
        m = np.median(t)
        print(f"{k:18s} {m:.4f} ms {2 * nbytes / m / 1e6:8.1f} GB/s ratio {cm / m:.4f}")
