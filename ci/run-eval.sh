#!/usr/bin/env bash
# The RAG quality gate in CI: the one script behind the GitHub Action (action.yml) and the GitLab CI template
# (ci/gitlab/localragas.gitlab-ci.yml). Its inputs are environment variables, as the action passes them:
#   INPUT_DATA        the dataset (file or folder); empty: the settings file's `data` key
#   INPUT_JUDGE       judge: a catalogue name (default qwen2.5-1.5b, pulled and verified), a .gguf path, fake, …
#   INPUT_EMBEDDER    embedder for answer relevancy (default: localragas's, minilm-l6)
#   INPUT_METRICS     metrics, comma-, space- or newline-separated (default: localragas's)
#   INPUT_THRESHOLDS  gate thresholds METRIC=VALUE, comma-, space- or newline-separated
#   INPUT_CONFIG      a localragas.toml settings file
#   INPUT_ARGS        more `localragas eval` flags, split on spaces (no quoting)
#   INPUT_OUTPUT_DIR  where the reports go: report.json, report.html, summary.md, junit.xml (default localragas-reports)
#   INPUT_MODELS_DIR  the models folder, cached between runs (default .localragas/models)
#   INPUT_CACHE_DIR   the judge-reply cache, cached between runs (default .localragas/cache)
#   INPUT_EXTRAS      install: localragas's extras (default llamacpp,embed; set and empty: none)
#   TORCH_INDEX_URL   install: where the CPU build of PyTorch comes from (an air-gapped site: its mirror)
# Commands:
#   run-eval.sh install [SRC]  install localragas from SRC (default: this script's checkout), CPU PyTorch first
#   run-eval.sh keys           print the cache keys' parts, model=… and data=… (GitHub: >> $GITHUB_OUTPUT)
#   run-eval.sh [eval]         check the inputs, pull the judge, run `localragas eval` writing every report,
#                              append summary.md to $GITHUB_STEP_SUMMARY (when set), write exit-code, gate and
#                              report-dir to $GITHUB_OUTPUT (when set), and exit with localragas's exit code:
#                              0 gate passed, 1 gate failed, 2 bad input (a bad input here too), 4 could not
#                              evaluate, 5 the judge failed its check (docs/ci.md#exit-codes-and-the-fail-closed-gate)
set -euo pipefail

EXIT_BAD_INPUT=2
PYTHON=${PYTHON:-python}
JUDGE=${INPUT_JUDGE:-qwen2.5-1.5b}
OUTPUT_DIR=${INPUT_OUTPUT_DIR:-localragas-reports}
MODELS_DIR=${INPUT_MODELS_DIR:-.localragas/models}
CACHE_DIR=${INPUT_CACHE_DIR:-.localragas/cache}
EXTRAS=${INPUT_EXTRAS-llamacpp,embed}  # set and empty: no extra (the fake judge needs none)
TORCH_CPU="torch==2.13.0"  # installed first: else pip pulls the multi-GB CUDA build for sentence-transformers
# llama-cpp-python compiled for any x86-64 runner with AVX2 (never -march=native: such a wheel, kept in pip's cache
# between runs, may crash with "Illegal instruction" on another runner; AMX off: it crashes on VMs that advertise it)
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"

fail_input() {  # $1: the input's name, $2: what is wrong with it
  echo "::error title=localragas input '$1'::$2"
  echo "localragas: input '$1': $2" >&2
  exit "$EXIT_BAD_INPUT"
}

# "a, b\nc d" -> "a b c d"
words() { printf '%s' "$1" | tr ',\n\t' '   '; }

# The dataset: INPUT_DATA, else the settings file's `data` key (INPUT_CONFIG, else ./localragas.toml or
# [tool.localragas] in ./pyproject.toml; relative to the file's folder); empty when neither gives one.
data_path() {
  if [ -n "${INPUT_DATA:-}" ]; then printf '%s\n' "$INPUT_DATA"; return; fi
  "$PYTHON" -c 'import sys; from localragas.run.config import load_eval
data = load_eval(sys.argv[1] or None)[1].data
print(data if data is not None else "")' "${INPUT_CONFIG:-}"
}

check_inputs() {
  if [ -n "${INPUT_CONFIG:-}" ] && [ ! -f "$INPUT_CONFIG" ]; then
    fail_input config "no such settings file: $INPUT_CONFIG"
  fi
  DATA=$(data_path) || fail_input config "the settings file could not be read (the error above says why)"
  [ -n "$DATA" ] || fail_input data "no dataset given: set it to your dataset file or folder (e.g. data.jsonl), or \
give one as \`data = \"…\"\` in the settings file"
  [ -e "$DATA" ] || fail_input data "no such file or folder: $DATA (working directory $PWD)"
  local t
  for t in $(words "${INPUT_THRESHOLDS:-}"); do
    [[ "$t" =~ ^[A-Za-z_][A-Za-z0-9_.()=,-]*=[0-9]*\.?[0-9]+$ ]] ||
      fail_input thresholds "'$t' is not METRIC=NUMBER (e.g. faithfulness=0.8)"
  done
  case "$JUDGE" in *[[:space:]]*) fail_input judge "'$JUDGE' holds a space: one judge name or path" ;; esac
}

# A judge named from localragas's catalogue (not a path, backend spec or fake): its file is pulled and verified.
catalogue_sha256() { "$PYTHON" -c 'import sys; from localragas.judges import catalogue
print(catalogue.CATALOGUE[sys.argv[1]].sha256 if sys.argv[1] in catalogue.CATALOGUE else "")' "$1"; }

install() {
  local src=${1:-$(cd "$(dirname "$0")/.." && pwd)}
  "$PYTHON" -m pip install --upgrade pip
  case ",$EXTRAS," in
    *,embed,*)
      "$PYTHON" -m pip install "$TORCH_CPU" --index-url "${TORCH_INDEX_URL:-https://download.pytorch.org/whl/cpu}" ;;
  esac
  CMAKE_ARGS=${CMAKE_ARGS:-$LLAMA_CMAKE_ARGS} "$PYTHON" -m pip install "$src${EXTRAS:+[$EXTRAS]}"
}

keys() {
  local model data
  model=$(catalogue_sha256 "$JUDGE")
  if [ -z "$model" ]; then  # a path or a backend spec: its name
    model=$("$PYTHON" -c 'import hashlib, sys; print(hashlib.sha256(sys.argv[1].encode()).hexdigest())' "$JUDGE")
  fi
  data=""
  local path
  path=$(data_path 2>/dev/null) || path=""
  if [ -n "$path" ] && [ -e "$path" ]; then
    data=$("$PYTHON" -c 'import sys; from pathlib import Path; from localragas.judges.catalogue import dataset_sha256
print(dataset_sha256(Path(sys.argv[1])))' "$path")
  fi
  echo "model=${model:0:16}"
  echo "data=${data:0:16}"
}

gate_of() {  # an exit code -> the gate's verdict
  case "$1" in
    0) echo passed ;; 1) echo failed ;; 4) echo could-not-evaluate ;; 5) echo judge-check-failed ;; *) echo error ;;
  esac
}

evaluate() {
  check_inputs
  mkdir -p "$OUTPUT_DIR" "$MODELS_DIR"
  LOCALRAGAS_MODELS_DIR=$(cd "$MODELS_DIR" && pwd)
  export LOCALRAGAS_MODELS_DIR
  if [ -n "$(catalogue_sha256 "$JUDGE")" ]; then
    localragas models pull "$JUDGE"  # verified; no download when the cache restored it
  fi
  local args=(eval "$DATA" --judge "$JUDGE" --cache-dir "$CACHE_DIR" --no-progress
              --out "$OUTPUT_DIR/report.json" --html "$OUTPUT_DIR/report.html"
              --md "$OUTPUT_DIR/summary.md" --junit "$OUTPUT_DIR/junit.xml")
  [ -z "${INPUT_EMBEDDER:-}" ] || args+=(--embedder "$INPUT_EMBEDDER")
  [ -z "${INPUT_CONFIG:-}" ] || args+=(--config "$INPUT_CONFIG")
  local m t extra
  for m in $(words "${INPUT_METRICS:-}"); do args+=(--metrics "$m"); done
  for t in $(words "${INPUT_THRESHOLDS:-}"); do args+=(--threshold "$t"); done
  read -ra extra <<<"${INPUT_ARGS:-}"
  mkdir -p "$CACHE_DIR"
  local code=0
  localragas "${args[@]}" ${extra[@]+"${extra[@]}"} || code=$?
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    if [ -f "$OUTPUT_DIR/summary.md" ]; then
      cat "$OUTPUT_DIR/summary.md" >>"$GITHUB_STEP_SUMMARY"
    else
      printf '**localragas eval exited %s** (%s): no report was written; the log says why.\n' \
        "$code" "$(gate_of "$code")" >>"$GITHUB_STEP_SUMMARY"
    fi
  fi
  if [ -n "${GITHUB_OUTPUT:-}" ]; then
    printf 'exit-code=%s\ngate=%s\nreport-dir=%s\n' "$code" "$(gate_of "$code")" "$OUTPUT_DIR" >>"$GITHUB_OUTPUT"
  fi
  return "$code"
}

case "${1:-eval}" in
  install) install "${2:-}" ;;
  keys) keys ;;
  eval) evaluate ;;
  *) echo "usage: $0 [install [SRC] | keys | eval]" >&2; exit "$EXIT_BAD_INPUT" ;;
esac
