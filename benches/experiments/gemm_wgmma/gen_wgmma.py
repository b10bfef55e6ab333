# Writes the wgmma helpers of cuprum/hopper.h (pasted between its `generated` markers) for m64nNk16 (N = 64, 128, 256), f16/bf16 inputs,
# f32 accumulators in a cuprum::Array<float, N / 2>: A K-major from shared memory and B from shared
# memory through 128-byte-swizzle descriptors (`_raw<T, TB>`: TB = 1 reads B N-major, 0 K-major),
# and the RS forms (`_rs_raw<T>`: A from four registers of each thread, B N-major).
import sys
out = []
for n in (64, 128, 256):
    r = n // 2
    regs = ",".join(f"%{i}" for i in range(r))
    cons = ", ".join(f'"+f"(d.v[{i}])' for i in range(r))
    body = []
    for t in ("bf16", "f16"):
        body.append(f"""        asm volatile("{{ .reg .pred p; setp.ne.b32 p, %{r+2}, 0; wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{t}.{t} {{{regs}}}, %{r}, %{r+1}, p, 1, 1, 0, %{r+3}; }}"
            : {cons}
            : "l"(da), "l"(db), "r"(1), "n"(TB));""")
    out.append(f"""template <typename T, int TB = 1>
__device__ __forceinline__ void wgmma_m64n{n}k16_raw(Array<float, {r}>& d, u64 da, u64 db) {{
#if CUPRUM_SM90A
    if constexpr (same_type<T, bfloat16>::value) {{
{body[0]}
    }} else {{
{body[1]}
    }}
#else
    __trap();
#endif
}}
""")
for n in (64, 128, 256):
    r = n // 2
    regs = ",".join(f"%{i}" for i in range(r))
    cons = ", ".join(f'"+f"(d.v[{i}])' for i in range(r))
    body = []
    for t in ("bf16", "f16"):
        body.append(f"""        asm volatile("{{ .reg .pred p; setp.ne.b32 p, %{r+5}, 0; wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{t}.{t} {{{regs}}}, {{%{r},%{r+1},%{r+2},%{r+3}}}, %{r+4}, p, 1, 1, 1; }}"
            : {cons}
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(db), "r"(1));""")
    out.append(f"""template <typename T>
__device__ __forceinline__ void wgmma_m64n{n}k16_rs_raw(Array<float, {r}>& d, u32 a0, u32 a1, u32 a2, u32 a3, u64 db) {{
#if CUPRUM_SM90A
    if constexpr (same_type<T, bfloat16>::value) {{
{body[0]}
    }} else {{
{body[1]}
    }}
#else
    __trap();
#endif
}}
""")
if "--fp8" not in sys.argv:
    sys.stdout.write("\n".join(out))

# `--fp8`: the FP8 helpers (m64nNk32, e4m3 or e5m2 inputs, f32 accumulators), pasted between the
# second pair of markers. Both operands K-major (FP8 wgmma has no transpose), so the instruction
# takes no transpose immediates.
if "--fp8" in sys.argv:
    out = []
    for n in (64, 128, 256):
        r = n // 2
        regs = ",".join(f"%{i}" for i in range(r))
        cons = ", ".join(f'"+f"(d.v[{i}])' for i in range(r))
        out.append(f"""template <typename T>
__device__ __forceinline__ void wgmma_m64n{n}k32_raw(Array<float, {r}>& d, u64 da, u64 db) {{
#if CUPRUM_SM90A
    if constexpr (same_type<T, fp8_e4m3>::value) {{
        asm volatile("{{ .reg .pred p; setp.ne.b32 p, %{r+2}, 0; wgmma.mma_async.sync.aligned.m64n{n}k32.f32.e4m3.e4m3 {{{regs}}}, %{r}, %{r+1}, p, 1, 1; }}"
            : {cons}
            : "l"(da), "l"(db), "r"(1));
    }} else {{
        asm volatile("{{ .reg .pred p; setp.ne.b32 p, %{r+2}, 0; wgmma.mma_async.sync.aligned.m64n{n}k32.f32.e5m2.e5m2 {{{regs}}}, %{r}, %{r+1}, p, 1, 1; }}"
            : {cons}
            : "l"(da), "l"(db), "r"(1));
    }}
#else
    __trap();
#endif
}}
""")
    sys.stdout.write("\n".join(out))
