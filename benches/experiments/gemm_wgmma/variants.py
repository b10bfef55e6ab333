# Writes variants of the generated kernel (compiler/tests/out/gemm_wgmma.cu) for run_generated.sh:
# `stores2`: the four scalar stores of a lane as two 8-byte stores; `nostores`: no epilogue.
import sys, re
src = open(sys.argv[1]).read()
scalar = re.compile(r"c\[i0\] = acc\[x\];\s*(#line[^\n]*\n\s*)?c\[i0 \+ 1ull\] = acc\[x \+ 1ull\];\s*(#line[^\n]*\n\s*)?c\[i1\] = acc\[x \+ 2ull\];\s*(#line[^\n]*\n\s*)?c\[i1 \+ 1ull\] = acc\[x \+ 3ull\];")
v2 = "*reinterpret_cast<float2*>(&c[i0]) = make_float2(acc[x], acc[x + 1ull]); *reinterpret_cast<float2*>(&c[i1]) = make_float2(acc[x + 2ull], acc[x + 3ull]);"
out = {"stores2": scalar.sub(v2, src), "nostores": scalar.sub("", src)}
assert out["stores2"] != src
open(sys.argv[2], "w").write(out[sys.argv[3]])
