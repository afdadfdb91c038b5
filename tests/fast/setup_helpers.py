"""scripts/setup.sh run as written in a copy of the checkout whose .venv/bin/python and .venv/bin/localragas are
stand-ins (project/test_setup_wheel_cache.py says how they behave; project/test_setup_torch.py uses them for
PyTorch's build)."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AVX2 = "fpu sse sse2 ssse3 sse4_1 sse4_2 avx avx2 fma f16c bmi1 bmi2"
AVX512 = AVX2 + " avx512f avx512cd avx512vl avx512dq avx512bw avx512vbmi avx512_vnni avx512_bf16"
OLD_CPU = "fpu sse sse2 ssse3"  # no SSE4.2, no AVX
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"  # the test judge's
QWEN_GGUF = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"  # the default judge's

FAKE_PYTHON = r"""#!/usr/bin/env bash
state=$FAKE_STATE
if [ "$1" = -m ] && [ "$2" = pip ]; then
  case "$3" in
    wheel)
      while [ $# -gt 0 ]; do [ "$1" = -w ] && dir=$2; shift; done
      echo "build CMAKE_ARGS=$CMAKE_ARGS" >>"$state/log"
      wheel="$dir/llama_cpp_python-0.3.36-cp311-cp311-linux_x86_64.whl"
      printf '%s\n%s\n' "${FAKE_BUILD:-good}" "$CMAKE_ARGS" >"$wheel" ;;
    install)
      if [[ " $* " == *" torch=="* ]]; then  # PyPI's torch is the CUDA build; the CPU index adds 2.13.0+cpu
        echo "torch $*" >>"$state/log"
        # as pip: an installed torch of that version (2.13.0+cpu too) is kept, unless --force-reinstall
        [[ " $* " == *" --force-reinstall "* ]] || [ ! -f "$state/torch" ] || exit 0
        if [[ " $* " == *" --extra-index-url "* ]]; then echo "2.13.0+cpu None"; else echo "2.13.0 12.8"; fi >"$state/torch"
        exit 0
      fi
      case " $* " in
        *.whl\ *) ;;
        *) echo "pip ${*:3}" >>"$state/log"; exit 0 ;;  # a package by name: recorded (test_setup_extras.py)
      esac
      # as pip: the same version already installed is kept, unless --force-reinstall
      [[ " $* " == *" --force-reinstall "* ]] || [ ! -f "$state/installed" ] || exit 0
      for a in "$@"; do
        case "$a" in *.whl) echo "install $a" >>"$state/log"; cp "$a" "$state/installed" ;; esac
      done ;;
  esac
  exit 0
fi
if [ "$1" = -c ] && [[ "$2" == *llama_print_system_info* ]]; then  # the smoke test; $3: a GGUF
  how=$(head -n 1 "$state/installed" 2>/dev/null)
  if [ "$how" = crash ] || { [ "$how" = crash-on-token ] && [ -n "$3" ]; }; then
    ulimit -c 0
    kill -ILL $$
  fi
  echo "smoke ${3:-import}" >>"$state/log"
  exit 0
fi
if [ "$1" = -c ] && [[ "$2" == *torch.__version__* ]]; then  # which torch build is installed
  cat "$state/torch"
  exit 0
fi
if [ "$1" = -c ] && [[ "$2" == *direct_url.json* ]]; then  # the hash of the wheel installed from
  [ -f "$state/installed" ] && echo "sha256=$(sha256sum "$state/installed" | cut -d' ' -f1)"
  exit 0
fi
echo "unexpected python $*" >>"$state/log"
exit 1
"""

FAKE_LOCALRAGAS = r"""#!/usr/bin/env bash
models=$(cd "$(dirname "$0")/../.." && pwd)/models
file() { case "$1" in smollm2-135m) echo SmolLM2-135M-Instruct.Q4_1.gguf ;; qwen2.5-1.5b) echo QWEN_GGUF ;; esac; }
case "$1 $2" in
  "models pull") shift 2; echo "pull $*" >>"$FAKE_STATE/log"; mkdir -p "$models"
                 for name in "$@"; do : >"$models/$(file "$name")"; done ;;
  "models path") if [ "$3" = --dir ]; then echo "$models"; else echo "$models/$(file "$3")"; fi ;;
esac
""".replace("QWEN_GGUF", QWEN_GGUF)


class Checkout:
    """A copy of scripts/setup.sh with stand-ins for the venv's python and localragas."""

    def __init__(self, tmp: Path):
        self.root = tmp / "repo"
        self.state = tmp / "state"
        self.cache = tmp / "wheels"
        (self.root / "scripts").mkdir(parents=True)
        (self.root / ".venv" / "bin").mkdir(parents=True)
        self.state.mkdir()
        shutil.copy(ROOT / "scripts" / "setup.sh", self.root / "scripts" / "setup.sh")
        for name, text in (("python", FAKE_PYTHON), ("localragas", FAKE_LOCALRAGAS)):
            path = self.root / ".venv" / "bin" / name
            path.write_text(text)
            path.chmod(0o755)

    def setup(self, cpu: str = AVX2, build: str = "good", **env_vars: str) -> subprocess.CompletedProcess:
        (self.state / "log").write_text("")
        env = {**os.environ, "FAKE_STATE": str(self.state), "FAKE_BUILD": build, "LOCALRAGAS_CPU_FLAGS": cpu,
               "LOCALRAGAS_WHEEL_CACHE": str(self.cache), "SETUP_SKIP_EVAL": "1", **env_vars}
        return subprocess.run(["bash", str(self.root / "scripts" / "setup.sh")], env=env, capture_output=True,
                              text=True, timeout=60)

    def log(self) -> list[str]:
        return (self.state / "log").read_text().splitlines()

    def builds(self) -> list[str]:
        return [line for line in self.log() if line.startswith("build ")]

    def wheels(self) -> list[Path]:
        return sorted(self.cache.glob("*/llama_cpp_python-0.3.36-*.whl"))
