"""What research.benchmarks.vs_ragas and .ragas_agreement share to run ragas 0.4.3 beside localragas: the bench venv
(.localragas/bench-venv: ragas, LangChain, torch CPU and the project's llama-cpp-python wheel with its server extras;
ragas never enters the project venv), llama-cpp-python's OpenAI-compatible server on a free loopback port, the ragas
child process (ragas_child.py, run by path in the bench venv) that scores one job at a time and asks for a server
restart after a failed one, the judge a --judge names, and the SIGTERM handler that leaves through the finally
blocks stopping them. Only the standard library at import time.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STATE_DIR = ROOT / ".localragas"  # git-ignored
BENCH_VENV = STATE_DIR / "bench-venv"
CHILD_SCRIPT = Path(__file__).resolve().parent / "ragas_child.py"

RAGAS_VERSION = "0.4.3"
TORCH_REQUIREMENT = "torch==2.13.0"  # the CPU build; an unpinned torch pulls a multi-GB CUDA build
RAGAS_REQUIREMENTS = (
    f"ragas=={RAGAS_VERSION}",
    "langchain-community==0.4.1",  # 0.4.2 breaks `import ragas`
    "langchain-openai",
    "langchain-huggingface",
    "sentence-transformers",  # what langchain-huggingface's HuggingFaceEmbeddings loads the model with
)


def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------------------------- bench venv


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def project_llama_version() -> str:
    from importlib.metadata import version  # noqa: PLC0415

    return version("llama-cpp-python")


def find_llama_wheel() -> Path:
    """The llama-cpp-python wheel the project venv was installed from, else one from the wheel cache."""
    from importlib.metadata import distribution  # noqa: PLC0415

    direct = distribution("llama-cpp-python").read_text("direct_url.json")
    if direct:
        url = json.loads(direct).get("url", "")
        if url.startswith("file://") and url.endswith(".whl") and Path(url[7:]).is_file():
            return Path(url[7:])
    version = project_llama_version()
    caches = [Path(p) for p in (os.environ.get("LOCALRAGAS_WHEEL_CACHE"),) if p]
    caches.append(Path.home() / ".cache" / "localragas" / "wheels")
    cpu = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").is_file() else ""
    preference = ["avx512", "avx2", "generic"] if "avx512f" in cpu else ["avx2", "generic", "avx512"]
    for cache in caches:
        for variant in preference:
            wheels = sorted(cache.glob(f"llama-cpp-python-{version}-{variant}/llama_cpp_python-{version}-*.whl"))
            if wheels:
                return wheels[0]
    raise SystemExit(
        f"no llama-cpp-python {version} wheel found in {', '.join(map(str, caches))}; run `bash scripts/setup.sh` first"
    )


PROBE = """
import json, importlib.metadata as md
import ragas, langchain_openai, langchain_huggingface, sentence_transformers, llama_cpp, llama_cpp.server.app, torch
names = ("ragas", "langchain-core", "langchain-community", "langchain-openai", "langchain-huggingface",
         "sentence-transformers", "openai", "torch", "llama-cpp-python")
print(json.dumps({n: md.version(n) for n in names}))
"""


def child_env() -> dict[str, str]:
    """Environment of everything run in the bench venv: no telemetry, no model hub."""
    return {**os.environ, "RAGAS_DO_NOT_TRACK": "true", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false", "PYTHONUNBUFFERED": "1"}


def probe_bench_venv(venv: Path) -> dict[str, str] | None:
    """Package versions of a working bench venv, or None when it is missing, broken or has other versions."""
    if not venv_python(venv).is_file():
        return None
    done = subprocess.run([str(venv_python(venv)), "-c", PROBE], capture_output=True, text=True, env=child_env())
    if done.returncode != 0:
        return None
    versions = json.loads(done.stdout.strip().splitlines()[-1])
    if versions["ragas"] != RAGAS_VERSION or versions["llama-cpp-python"] != project_llama_version():
        return None
    return versions


def pip_install(venv: Path, requirements: list[str]) -> None:
    cmd = [str(venv_python(venv)), "-m", "pip", "install", "-q", *requirements]
    log("$ " + " ".join(cmd))
    subprocess.run(cmd, check=True)


def ensure_bench_venv(venv: Path = BENCH_VENV) -> tuple[dict[str, str], float]:
    """(package versions, seconds spent building; 0 when reused). Creates or repairs the bench venv."""
    versions = probe_bench_venv(venv)
    if versions:
        log(f"reusing {venv} (ragas {versions['ragas']})")
        return versions, 0.0
    started = time.perf_counter()
    log(f"building {venv}: ragas {RAGAS_VERSION} and its LangChain stack, torch (CPU), llama-cpp-python server")
    if not venv_python(venv).is_file():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip_install(venv, [TORCH_REQUIREMENT])  # first, so that nothing below pulls a CUDA build
    pip_install(venv, [f"{find_llama_wheel()}[server]", TORCH_REQUIREMENT, *RAGAS_REQUIREMENTS])
    versions = probe_bench_venv(venv)
    if not versions:
        raise SystemExit(f"{venv} was built but does not import ragas {RAGAS_VERSION} and llama_cpp.server; "
                         "see the pip output above")
    seconds = time.perf_counter() - started
    log(f"bench venv ready in {seconds:.0f} s")
    return versions, seconds


# ------------------------------------------------------------------------------------------------- llama.cpp server


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer:
    """llama-cpp-python's OpenAI-compatible server on a loopback port, run from the bench venv."""

    def __init__(self, python: Path, model: Path, alias: str, n_ctx: int, threads: int, log_path: Path):
        self.python, self.model, self.alias = python, model, alias
        self.n_ctx, self.threads, self.log_path = n_ctx, threads, log_path
        self.proc: subprocess.Popen | None = None
        self.port = 0
        self.restarts = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        # --chat_format is left out on purpose: the server then uses the chat template inside the GGUF, as the
        # in-process localragas judge does.
        return [str(self.python), "-m", "llama_cpp.server", "--model", str(self.model), "--model_alias", self.alias,
                "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(self.n_ctx),
                "--n_threads", str(self.threads)]

    def start(self, timeout: float = 300) -> None:
        self.port = free_port()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "a") as out:
            out.write(f"\n=== {datetime.now().isoformat(timespec='seconds')} {' '.join(self.command())}\n")
            out.flush()
            # Own session: Ctrl-C reaches this script, which then stops the server itself.
            self.proc = subprocess.Popen(self.command(), stdout=out, stderr=subprocess.STDOUT, env=child_env(),
                                         start_new_session=True)
        self._wait_ready(timeout)
        log(f"llama.cpp server up at {self.url} (pid {self.proc.pid}, log {self.log_path})")

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                tail = self.log_path.read_text(errors="replace")[-2000:]
                raise SystemExit(f"the llama.cpp server exited with code {self.proc.returncode}:\n{tail}")
            try:
                with urllib.request.urlopen(f"{self.url}/v1/models", timeout=5) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.5)
        self.stop()
        raise SystemExit(f"the llama.cpp server did not answer /v1/models within {timeout:.0f} s; see {self.log_path}")

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = None
            return
        # uvicorn shuts down on SIGINT but first waits for the request in flight, which may be a runaway
        # generation: a short grace, then kill (the server keeps no state).
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        log(f"llama.cpp server stopped (pid {self.proc.pid})")
        self.proc = None

    def restart(self) -> None:
        """Kill any generation a timed-out client left running, so that it cannot slow the next measurement."""
        self.stop()
        self.start()
        self.restarts += 1

    def __enter__(self) -> "LlamaServer":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


# ------------------------------------------------------------------------------------------------- ragas child


def drive_child(python: Path, server: LlamaServer, job_file: Path, out_file: Path) -> None:
    """Run the ragas child; it writes RESTART on stdout after a failed job and waits for READY on stdin."""
    cmd = [str(python), str(CHILD_SCRIPT), "--jobs", str(job_file), "--out", str(out_file), "--server", server.url]
    child = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=child_env())
    try:
        for line in child.stdout:
            request = line.strip()
            if request == "RESTART":
                server.restart()
                child.stdin.write(f"READY {server.url}\n")
                child.stdin.flush()
        if child.wait() != 0:
            raise SystemExit(f"the ragas child failed with exit code {child.returncode} (its output is above)")
    finally:
        if child.poll() is None:
            child.terminate()
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()


# ------------------------------------------------------------------------------------------------- judge, signals


def resolve_judge(spec: str) -> tuple[Path, str]:
    """(GGUF path, label) of a catalogue name or a .gguf path."""
    from localragas.judges import catalogue  # noqa: PLC0415

    if spec in catalogue.CATALOGUE:
        return catalogue.path(spec), spec
    path = Path(spec).expanduser()
    if not path.is_file():
        raise SystemExit(f"--judge {spec}: neither a catalogue judge nor a GGUF file")
    return path, path.stem


def on_sigterm(*_: object) -> None:
    """Leave through the finally blocks, which stop the server and the ragas child."""
    log("terminated (SIGTERM); stopping the llama.cpp server and the ragas child")
    sys.exit(143)
