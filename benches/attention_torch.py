#!/usr/bin/env python3
"""torch's side of cuprum-bench's attention rows (benches/src/attention.rs): scaled-dot-product
attention forward, bf16, on the same shapes (B4 H32 S4096 D128 and B16 H16 S2048 D64, causal and
not), through the cuDNN backend and the FlashAttention(-2) backend, in TFLOP/s with the same flop
count (4 B H S^2 D, half of it when causal) and the same timing (CUDA events, median of 10 after 3
warm-up calls).

    python3 benches/attention_torch.py [--json]

Run it on the same GPU in the same session as `cuprum-bench --only attention`: the Rust rows'
ratio (issue 37's goal: >= 0.90 of cuDNN) is taken against this script's cuDNN figures. A backend
that cannot run a shape (an old torch, another GPU) prints its error instead of a figure.
"""

import argparse
import json
import statistics

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
import torch.nn.functional as F

SHAPES = [(4, 32, 4096, 128), (16, 16, 2048, 64)]
BACKENDS = [("cuDNN", SDPBackend.CUDNN_ATTENTION), ("FlashAttention-2", SDPBackend.FLASH_ATTENTION)]


def tflops(shape, causal, ms):
    b, h, s, d = shape
    flops = 4.0 * b * h * s * s * d / (2.0 if causal else 1.0)
    return flops / (ms * 1e-3) / 1e12


def time_ms(fn):
    times = []
    for i in range(13):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        if i >= 3:
            times.append(start.elapsed_time(end))
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("attention_torch.py: no CUDA GPU visible to torch")
    torch.manual_seed(0)
    rows = []
    for shape in SHAPES:
        b, h, s, d = shape
        # [B, H, S, D] contiguous, as cuprum's kernel takes them; Q wider, as the Rust rows' inputs.
        q = (torch.rand(shape, device="cuda") * 12 - 6).to(torch.bfloat16)
        k = (torch.rand(shape, device="cuda") * 2 - 1).to(torch.bfloat16)
        v = (torch.rand(shape, device="cuda") * 2 - 1).to(torch.bfloat16)
        for causal in (False, True):
            name = f"attention fwd bf16 B{b} H{h} S{s} D{d}" + (" causal" if causal else "")
            for backend_name, backend in BACKENDS:
                try:
                    with sdpa_kernel(backend):
                        ms = time_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
                    rows.append({"name": name, "backend": backend_name, "ms": ms, "tflops": tflops(shape, causal, ms)})
                except RuntimeError as e:
                    rows.append({"name": name, "backend": backend_name, "error": str(e).splitlines()[0]})
    if args.json:
        print(json.dumps({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows}, indent=1))
        return
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}")
    for r in rows:
        if "error" in r:
            print(f"{r['name']:<46} {r['backend']:<17} error: {r['error']}")
        else:
            print(f"{r['name']:<46} {r['backend']:<17} {r['tflops']:8.1f} TFLOP/s ({r['ms']:.3f} ms)")


if __name__ == "__main__":
    main()
