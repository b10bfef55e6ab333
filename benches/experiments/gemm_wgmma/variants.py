# Writes variants of the generated kernel (gemm_wgmma.cu, see run_variants.sh) for run_variants.sh:
# `stores2`: the four scalar stores of a lane as two 8-byte stores; `nostores`: no epilogue.
import sys, re
src = open(sys.argv[1]).read()
scalar = re.compile(r"c\[i0\] = acc\[x\];\s*(#line[^\n]*\n\s*)?c\[i0 \+ 1ull\] = acc\[x \+ 1ull\];\s*(#line[^\n]*\n\s*)?c\[i1\] = acc\[x \+ 2ull\];\s*(#line[^\n]*\n\s*)?c\[i1 \+ 1ull\] = acc\[x \+ 3ull\];")
v2 = "*reinterpret_cast<float2*>(&c[i0]) = make_float2(acc[x], acc[x + 1ull]); *reinterpret_cast<float2*>(&c[i1]) = make_float2(acc[x + 2ull], acc[x + 3ull]);"
s2 = scalar.sub(v2, src)
raw = s2.replace("cuprum::wgmma<256>(acc, s.ptr, s.len, ab + (kk * 16u), s.ptr, s.len, bb_1 + (kk * 1024u), &cuprum_later);",
                 "cuprum::wgmma_m64n256k16_raw<bf16>(acc, cuprum::wgmma_desc(cuprum::shared_address(s.ptr + ab + kk * 16u), 16u, 1024u), cuprum::wgmma_desc(cuprum::shared_address(s.ptr + bb_1 + kk * 1024u), 8192u, 1024u));")
inl = s2.replace("__device__ cuprum::Tuple2<u32, u32> tile_of", "__device__ __forceinline__ cuprum::Tuple2<u32, u32> tile_of")
rawonly = src.replace("cuprum::wgmma<256>(acc, s.ptr, s.len, ab + (kk * 16u), s.ptr, s.len, bb_1 + (kk * 1024u), &cuprum_later);",
                 "cuprum::wgmma_m64n256k16_raw<bf16>(acc, cuprum::wgmma_desc(cuprum::shared_address(s.ptr + ab + kk * 16u), 16u, 1024u), cuprum::wgmma_desc(cuprum::shared_address(s.ptr + bb_1 + kk * 1024u), 8192u, 1024u));")
constlen = src.replace("s.ptr, s.len, ab", "s.ptr, 98336ull, ab").replace("s.ptr, s.len, bb_1", "s.ptr, 98336ull, bb_1")
constall = src.replace("bars.len", "24584ull").replace("s.len", "98336ull")
tmaconst = src.replace("tma_load_2d(s.ptr, s.len", "tma_load_2d(s.ptr, 98336ull")
barconst = src.replace("bars.len", "24584ull")
out = {"tmaconst": tmaconst, "barconst": barconst, "constall": constall, "rawonly": rawonly, "constlen": constlen, "stores2": s2, "nostores": scalar.sub("", src), "raw": raw, "inline": inl}
assert out["stores2"] != src
open(sys.argv[2], "w").write(out[sys.argv[3]])
