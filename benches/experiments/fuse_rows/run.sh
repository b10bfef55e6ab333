#!/usr/bin/env bash
# First, here: bash benches/experiments/fuse_rows/gen.sh (emits variants.cu; carry the folder). Then
# on the GPU machine, from the repository root: bash benches/experiments/fuse_rows/run.sh
set -e
d=benches/experiments/fuse_rows
/usr/local/cuda/bin/nvcc -O3 -std=c++17 -arch=sm_90 -I abi/include -o /tmp/fuse_rows $d/main.cu -Xptxas -v 2>&1 | grep -E "registers|error" | head -20
/tmp/fuse_rows
python3 - <<'PY'
import torch, time
x = torch.randn(8192, 8192, device="cuda")
for name, f in [("torch.softmax", lambda: torch.softmax(x, -1)), ("torch layer_norm", lambda: torch.nn.functional.layer_norm(x, (8192,)))]:
    f(); torch.cuda.synchronize()
    s, e = torch.cuda.Event(True), torch.cuda.Event(True)
    ts = []
    for _ in range(7):
        s.record()
        for _ in range(10): f()
        e.record(); e.synchronize(); ts.append(s.elapsed_time(e) / 10)
    print(name, "%.3f ms" % sorted(ts)[3])
PY
