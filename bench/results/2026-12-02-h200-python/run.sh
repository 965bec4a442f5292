#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 20 on the H200: the Python package built for that machine's python3
# (3.12, PyTorch with CUDA), its pytest suite (the kDLCUDA hand-over in both
# directions included), the examples, and python/bench/overhead.py against
# the same loop in C. From the checkout, through the device tool, carrying
# .device:  source .device/on-device.sh && bash bench/results/2026-12-02-h200-python/run.sh
set -uo pipefail
out=${OUT:-/tmp/tandem-python-out}
mkdir -p "$out"
py=$(command -v python3)
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/gpu: /'
  echo "python: $py $($py --version 2>&1)"
  $py -c "import torch, numpy; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'numpy', numpy.__version__)"
} 2>&1 | tee "$out/env.txt"
cmake -S . -B build-py -DCMAKE_BUILD_TYPE=Release -DTANDEM_PYTHON="$py" > "$out/configure.log" 2>&1 \
  || { tail -30 "$out/configure.log"; exit 1; }
grep -i "python" "$out/configure.log"
cmake --build build-py -j16 > "$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head -30; exit 1; }
rc=0
PYTHONPATH=build-py/python PYTHONDONTWRITEBYTECODE=1 $py python/tests/run.py -rs -v -p no:cacheprovider \
  python/tests 2>&1 | tee "$out/pytest.log" | tail -45 || rc=1
for e in saxpy pipeline; do
  PYTHONPATH=build-py/python TANDEM_VALIDATION=1 $py examples/python/$e.py > "$out/example-$e.txt" 2>&1 \
    || { echo "example $e failed"; tail -5 "$out/example-$e.txt"; rc=1; }
done
gcc -O2 -Iinclude python/bench/submit_wait.c -Lbuild-py -ltandem -Wl,-rpath,"$PWD/build-py" \
  -o build-py/submit_wait || rc=1
PYTHONPATH=build-py/python $py python/bench/overhead.py build-py/submit_wait 2>&1 | tee "$out/overhead.txt" || rc=1
exit $rc
