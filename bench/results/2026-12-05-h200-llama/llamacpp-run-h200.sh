#!/usr/bin/env bash
# llama.cpp anchor for tandem's decoder example on one H200: the SmolLM-135M shape (llama arch,
# random weights, F16 and BF16 GGUFs), batch-1 decode with llama-bench
# (-p 0 -n 128 -r 5 -ngl 99 -fa 0,1) on llama.cpp's CUDA backend and, optionally, on its Vulkan
# backend on the same GPU.
#   Copy it and make_gguf.py into .llama/ (../shared does not travel), then on the GPU machine,
#   from the checkout root:  bash .llama/run-h200.sh   carry [".llama", ".device"]
# .llama/src: pruned llama.cpp (commit in .llama/src/LLAMA_COMMIT, notes in .llama/src/PRUNED.md);
# .llama/make_gguf.py writes the two models (numpy only).
# Results under $OUT (default /tmp/out): llamacpp.log (everything), {cuda,vk}-{f16,bf16}.json
# (llama-bench -o json), summary.md, {cuda,vk}-build.tail (last lines of each configure/build).
# Env: LC_CUDA=1|0 (default 1)  LC_VULKAN=1|0 (default 1)
#      LC_PARALLEL=1|0 (default 1: the CUDA and Vulkan builds run at the same time; the Vulkan
#        one is ~1/8 of the CUDA one's CPU work but has a ~2.5 min serial path (shader generator,
#        then ggml-vulkan.cpp), which then hides under the CUDA build. 0: one after the other,
#        so that each build time stands alone)
#      LC_BUDGET=seconds for the whole script (default 530; every step's timeout is cut to fit)
#      LC_BENCH=0 (build only, no benchmarks)
#      LC_BUILD_CAP (440 s per build)  LC_JOBS (16)  LC_REPS (5)  LC_NGEN (128)
#      LC_CUDA_BUILD / LC_VK_BUILD (build dirs)
# Builds live in /tmp/lc-cuda and /tmp/lc-vk and are incremental: a second call on a still-warm
# machine reuses them (e.g. LC_CUDA=0 after a Vulkan build that ran out of budget).
set -uo pipefail
out=${OUT:-/tmp/out}; mkdir -p "$out"; root=$PWD
exec > >(tee "$out/llamacpp.log") 2>&1
T0=$(date +%s)
BUDGET=${LC_BUDGET:-530}; JOBS=${LC_JOBS:-16}; REPS=${LC_REPS:-5}; NGEN=${LC_NGEN:-128}
DO_CUDA=${LC_CUDA:-1}; DO_VK=${LC_VULKAN:-1}; PAR=${LC_PARALLEL:-1}
el(){ echo $(( $(date +%s) - T0 )); }
step(){ echo; echo "=== $* (t+$(el)s)"; }
# tmo CAP RESERVE: a timeout of at most CAP seconds that still leaves RESERVE seconds of the budget
tmo(){ local a=$1 b=$(( BUDGET - $(el) - $2 )); [ "$b" -lt "$a" ] && a=$b; [ "$a" -lt 1 ] && a=1; echo "$a"; }
SRC=$root/.llama/src
{ [ -f "$SRC/CMakeLists.txt" ] && [ -f "$root/.llama/make_gguf.py" ]; } || { echo "no .llama/src: carry .llama"; exit 2; }
COMMIT=$(cat "$SRC/LLAMA_COMMIT" 2>/dev/null || echo unknown); BUILDNO=10470
M=/tmp/lc-models; LOGS=/tmp/lc-logs; mkdir -p "$M" "$LOGS"
CB=${LC_CUDA_BUILD:-/tmp/lc-cuda}; VB=${LC_VK_BUILD:-/tmp/lc-vk}
command -v nvcc >/dev/null 2>&1 || export PATH=/usr/local/cuda/bin:$PATH
GEN=(); command -v ninja >/dev/null 2>&1 && GEN=(-G Ninja)
# The source sits inside another git checkout, so CMake's own git probe would name the wrong commit.
COMMON=(-DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
        -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF
        -DLLAMA_BUILD_COMMIT="${COMMIT:0:8}" -DLLAMA_BUILD_NUMBER=$BUILDNO)
CUDA_OPTS=(-DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DGGML_CUDA_FA_ALL_QUANTS=OFF -DGGML_CUDA_NCCL=OFF)
VK_OPTS=(-DGGML_VULKAN=ON)
BENCH_RESERVE=90   # seconds kept for the benchmarks after the builds
CAP=${LC_BUILD_CAP:-440}   # most seconds for one configure+build

step "info"
timeout 30 nvidia-smi --query-gpu=name,driver_version --format=csv
echo "llama.cpp commit $COMMIT (b$BUILDNO, upstream master of 2026-08-17), pruned copy in .llama/src"
echo "nvcc: $(timeout 30 nvcc --version 2>/dev/null | tail -n 1)"
echo "$(cmake --version | head -n 1); $(gcc --version | head -n 1)"
timeout 60 python3 -c 'import sys, numpy; print("python", sys.version.split()[0], "numpy", numpy.__version__)'
echo "cores: $(nproc); generator: ${GEN[*]:-Unix Makefiles}; budget ${BUDGET}s; cuda=$DO_CUDA vulkan=$DO_VK parallel=$PAR"

step "models (F16 + BF16 GGUF, seed 1234) -> $M"
if [ -s "$M/model-f16.gguf" ] && [ -s "$M/model-bf16.gguf" ] && [ "$M/model-bf16.gguf" -nt .llama/make_gguf.py ]; then
  echo "reusing $M/model-{f16,bf16}.gguf"
else
  timeout "$(tmo 120 300)" python3 .llama/make_gguf.py --type both --outdir "$M" || { echo "GGUF generation failed"; exit 1; }
fi
ls -l "$M"

# vkenv: make .device's Vulkan loader, headers and glslc visible (idempotent); then is glslc there?
vkenv(){
  if [ "${TANDEM_SKIP_DEPS:-0}" != 1 ] && [ -f .device/on-device.sh ]; then source .device/on-device.sh; fi
  command -v glslc >/dev/null 2>&1
}

# build NAME DIR TIMEOUT [cmake args]: configure + build llama-bench; prints the wall time
build(){
  local name=$1 dir=$2 t=$3; shift 3
  local s c rc; s=$(date +%s)
  if [ -f "$dir/CMakeCache.txt" ] && ! grep -q "CMAKE_GENERATOR:INTERNAL=${GEN[1]:-Unix Makefiles}\$" "$dir/CMakeCache.txt"; then
    rm -rf "$dir"; fi
  timeout "$t" cmake -S "$SRC" -B "$dir" "${GEN[@]}" "${COMMON[@]}" "$@" > "$LOGS/$name-configure.log" 2>&1
  rc=$?; c=$(( $(date +%s) - s ))
  if [ $rc -eq 0 ]; then
    local t2=$(( t - c )); [ $t2 -lt 1 ] && t2=1
    timeout "$t2" cmake --build "$dir" --target llama-bench -j "$JOBS" > "$LOGS/$name-build.log" 2>&1; rc=$?
  fi
  echo "BUILD $name: rc=$rc (124 = timed out after ${t}s), configure ${c}s, configure+build $(( $(date +%s) - s ))s"
  grep -E 'Using CMAKE_CUDA_ARCH|supported by glslc|Found Vulkan|CUDA Toolkit found|Including .* backend' "$LOGS/$name-configure.log"
  tail -n 80 "$LOGS/$name-configure.log" "$LOGS/$name-build.log" 2>/dev/null > "$out/$name-build.tail"
  [ $rc -eq 0 ] || tail -n 25 "$LOGS/$name-configure.log" "$LOGS/$name-build.log" 2>/dev/null
  return $rc
}
build_cuda(){ build cuda "$CB" "$1" "${CUDA_OPTS[@]}"; }
build_vk(){
  if ! vkenv; then echo "SKIP Vulkan: no glslc on PATH (.device needs the Debian 12 packages glslc and libshaderc1)"; return 3; fi
  local pre=${CMAKE_PREFIX_PATH:-/usr}
  echo "glslc: $(command -v glslc), $(glslc --version 2>&1 | head -n 1); Vulkan headers:" \
       "$(grep -h 'define VK_HEADER_VERSION ' "${pre%%:*}/include/vulkan/vulkan_core.h" 2>/dev/null)"
  build vk "$VB" "$1" "${VK_OPTS[@]}"
}

# bench TAG BIN MODEL: decode benchmark, JSON to $OUT/TAG.json, markdown into the log; then a
# 1-rep verbose run showing that the whole graph sits on the GPU (offload / graph splits lines).
bench(){
  local tag=$1 bin=$2 model=$3
  echo "--- $tag: $(basename "$model")"
  timeout "$(tmo 150 0)" "$bin" -m "$model" -p 0 -n "$NGEN" -r "$REPS" -ngl 99 -fa 0,1 -o json -oe md > "$out/$tag.json"
  echo "rc=$?"
  timeout "$(tmo 60 0)" "$bin" -m "$model" -p 0 -n 8 -r 1 -ngl 99 -fa 1 -v -o csv 2>&1 \
    | grep -E 'Device 0:|ggml_vulkan: 0 =|offloaded|graph splits|model buffer size|KV buffer size|compute buffer size' | sort -u | head -n 14
}

cuda_ok=1; vk_ok=1; [ "$DO_CUDA" = 1 ] || cuda_ok=0; [ "$DO_VK" = 1 ] || vk_ok=0
if [ "$PAR" = 1 ] && [ $cuda_ok = 1 ] && [ $vk_ok = 1 ]; then
  step "CUDA build ($CB) and Vulkan build ($VB) side by side, -j$JOBS each"
  T=$(tmo $CAP $BENCH_RESERVE)
  ( build_cuda "$T" ) > "$LOGS/cuda.out" 2>&1 & pc=$!
  ( build_vk "$T" ) > "$LOGS/vk.out" 2>&1 & pv=$!
  wait $pc || cuda_ok=0; cat "$LOGS/cuda.out"
  wait $pv || vk_ok=0; cat "$LOGS/vk.out"
  echo "both builds done at t+$(el)s"
else
  if [ $cuda_ok = 1 ]; then
    step "CUDA build -> $CB (sm_90, GGML_NATIVE, no all-quants FA)"
    build_cuda "$(tmo $CAP $BENCH_RESERVE)" || cuda_ok=0
  fi
  if [ $vk_ok = 1 ]; then
    step "Vulkan build -> $VB"
    ( build_vk "$(tmo $CAP $(( BENCH_RESERVE / 2 )))" ) || vk_ok=0   # subshell: keeps .device's env out of the CUDA bench
  fi
fi

# tandem-anchor addition: LC_BENCH=0 builds only (examples/llama's bench/llama/run-h200.sh builds in
# the background while it times tandem, then calls this script again for the benchmarks alone)
if [ "${LC_BENCH:-1}" = 0 ]; then step "build only (LC_BENCH=0): cuda_ok=$cuda_ok vk_ok=$vk_ok"; exit 0; fi
if [ $cuda_ok = 1 ]; then
  step "CUDA decode bench"
  bench cuda-f16  "$CB"/bin/llama-bench "$M/model-f16.gguf"
  bench cuda-bf16 "$CB"/bin/llama-bench "$M/model-bf16.gguf"
fi
if [ $vk_ok = 1 ]; then
  step "Vulkan decode bench"
  vkenv
  timeout "$(tmo 60 60)" "$VB"/bin/llama-bench --list-devices 2>&1 | tail -n 4
  bench vk-f16  "$VB"/bin/llama-bench "$M/model-f16.gguf"
  bench vk-bf16 "$VB"/bin/llama-bench "$M/model-bf16.gguf"
elif [ "$DO_VK" = 1 ]; then
  echo; echo "Vulkan half not run: see above; if its build timed out, call again with LC_CUDA=0 on the warm machine"
fi
if [ "$DO_CUDA" = 1 ] && [ $cuda_ok = 0 ]; then
  echo; echo "CUDA half not run: see above; if its build timed out (rc=124), call again on the warm machine (it resumes)"
fi

step "summary (tg$NGEN, t/s mean +- sd over $REPS reps; ms/token = 1000 / mean)"
timeout 60 python3 - "$out" <<'EOF' | tee "$out/summary.md"
import json, os, sys
d = sys.argv[1]
rows, first = [], None
for tag in ["cuda-f16", "cuda-bf16", "vk-f16", "vk-bf16"]:
    p = os.path.join(d, tag + ".json")
    if not os.path.exists(p):
        continue
    try:
        runs = json.load(open(p))
    except Exception as e:
        rows.append(f"| {tag} | (no result: {type(e).__name__}) | | | | |")
        continue
    for r in runs:
        first = first or r
        ts = r["avg_ts"]
        rows.append(f"| {tag} | {r.get('backends', '')} | {r.get('flash_attn')} | {r.get('model_type', '')} "
                    f"| {ts:.1f} +- {r['stddev_ts']:.1f} | {1000.0 / ts:.3f} |")
if rows:
    if first:
        print(f"llama.cpp {first.get('build_commit')} (b{first.get('build_number')}), gpu: {first.get('gpu_info')}, "
              f"n_gen {first.get('n_gen')}, reps {len(first.get('samples_ts', []))}\n")
    print("| run | backend | fa | model | t/s | ms/token |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))
else:
    print("no results")
EOF
step "done"
