"""cuBLASLt's FP8 GEMM through torch._scaled_mm at 8192^3: the ceiling of cuprum-bench's FP8 row
(benches/src/gemm_fp8.rs), which cuprum's cuBLAS binding cannot call itself.

The same problem as the row: C (bf16) = scale_a * scale_b * A @ B, A (M x K) e4m3 row-major, B
given as B^T (N x K) e4m3 row-major (torch._scaled_mm takes B column-major: `bt.t()`), per-tensor
f32 scales. Timed with CUDA events, median of 10 after 3 warm-up calls. Prints the figure and the
line to export before running cuprum-bench in the same session:

    python3 benches/fp8_torch.py            # prints CUPRUM_BENCH_SCALED_MM_TFLOPS=...
    export CUPRUM_BENCH_SCALED_MM_TFLOPS=...
    cargo run --release -p cuprum-bench

Needs torch with CUDA and an FP8-capable GPU (compute capability 8.9 or 9.0).
"""

import argparse
import statistics
import sys


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("m", type=int, nargs="?", default=8192)
    parser.add_argument("n", type=int, nargs="?", default=8192)
    parser.add_argument("k", type=int, nargs="?", default=8192)
    args = parser.parse_args()
    import torch

    if not torch.cuda.is_available():
        print("no CUDA GPU: torch._scaled_mm needs one", file=sys.stderr)
        return 1
    m, n, k = args.m, args.n, args.k
    gen = torch.Generator(device="cuda").manual_seed(0)
    a = ((torch.rand(m, k, device="cuda", generator=gen) * 2 - 1) * 448).to(torch.float8_e4m3fn)
    bt = ((torch.rand(n, k, device="cuda", generator=gen) * 2 - 1) * 448).to(torch.float8_e4m3fn)
    scale_a = torch.tensor(1.0 / 448, device="cuda")
    scale_b = torch.tensor(1.0 / 448, device="cuda")

    def run():
        return torch._scaled_mm(a, bt.t(), scale_a=scale_a, scale_b=scale_b, out_dtype=torch.bfloat16)

    # Correctness of the call itself (a sampled row against an f64 product).
    c = run()
    ref = (a[:4].double() @ bt.double().t()) * (1.0 / 448) ** 2
    err = ((c[:4].double() - ref).abs() / (a[:4].double().abs() @ bt.double().abs().t() * (1.0 / 448) ** 2 + 1e-30)).max().item()
    times = []
    for i in range(13):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        end.synchronize()
        if i >= 3:
            times.append(start.elapsed_time(end))
    ms = statistics.median(times)
    tflops = 2.0 * m * n * k / (ms * 1e-3) / 1e12
    print(f"torch._scaled_mm e4m3 {m}x{n}x{k} (bf16 out, per-tensor scales): {ms:.3f} ms, {tflops:.1f} TFLOP/s; "
          f"worst error of 4 rows {err:.1e} of the sum of |terms|; torch {torch.__version__}")
    print(f"CUPRUM_BENCH_SCALED_MM_TFLOPS={tflops:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
