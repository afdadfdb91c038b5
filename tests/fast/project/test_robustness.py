"""Faults and hygiene: corrupt model files, the chat-template sandbox, dataset strings that look like paths, no network."""
from __future__ import annotations

import ast
import builtins
import io
import json
import os
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from localragas.judges import catalogue
from localragas.core.errors import ModelIntegrityError
from localragas.judges import FakeJudge, get_judge
from localragas.core.offline import OFFLINE_ENV, ensure_offline
from localragas.run.runner import evaluate
from localragas.data.schema import Report, Sample

from cli_helpers import cli

ROOT = Path(__file__).resolve().parents[3]
ROW = {"id": "a", "question": "What colour is the sky?", "contexts": ["The sky is blue on a clear day."],
       "answer": "The sky is blue.", "reference": "The sky is blue."}


def gguf_header(version: int = 3) -> bytes:
    return b"GGUF" + version.to_bytes(4, "little") + (0).to_bytes(8, "little") * 2


# --- model file integrity ------------------------------------------------------------------------------------------


def catalogue_file(models_dir: Path, name: str, head: bytes, size: int | None = None) -> Path:
    m = catalogue.spec(name)
    p = models_dir / m.filename
    with open(p, "wb") as f:
        f.write(head)
        f.truncate(m.size if size is None else size)  # sparse: no disk use
    return p


@pytest.mark.parametrize("head, size, fragment", [
    (b"\0" * 24, None, "is not a GGUF model file (no GGUF header; it starts with b'\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00')"),
    (b"<html>404 Not Found</html>", None, "is not a GGUF model file (no GGUF header; it starts with b'<html>40')"),
    (gguf_header(version=99), None, "has an unknown GGUF version 99 (corrupt header)"),
    (gguf_header(), 1000, "has 1000 bytes, expected 98362432 (truncated or wrong file)"),
])
def test_a_corrupt_or_truncated_catalogue_model_is_refused_before_llama_cpp_loads_it(models_dir, head, size, fragment):
    p = catalogue_file(models_dir, "smollm2-135m", head, size)
    with pytest.raises(ModelIntegrityError) as e:
        get_judge("smollm2-135m")
    assert str(e.value).startswith(str(p)) and fragment in str(e.value)
    assert str(e.value).endswith("; fetch it again with: localragas models pull --force smollm2-135m")


def test_cli_names_the_file_and_the_pull_command(models_dir, tmp_path):
    p = catalogue_file(models_dir, "smollm2-135m", b"\0" * 24)
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps(ROW) + "\n")
    r = cli("eval", str(data), "--judge", "smollm2-135m", "--no-progress", "--no-resume")
    assert r.exit_code == 2
    assert f"Error: {p} is not a GGUF model file" in r.output
    assert "localragas models pull --force smollm2-135m" in r.output


def test_a_header_check_passes_a_well_formed_header(models_dir, tmp_path):
    catalogue.check_gguf(catalogue_file(models_dir, "smollm2-135m", gguf_header()), "smollm2-135m")
    own = tmp_path / "own.gguf"
    own.write_bytes(gguf_header(version=2))
    catalogue.check_gguf(own)
    own.write_bytes(b"GGUF\x03")
    with pytest.raises(ModelIntegrityError, match="no GGUF header.*replace it with a complete GGUF file"):
        catalogue.check_gguf(own)
    with pytest.raises(ModelIntegrityError, match="cannot read the model file"):
        catalogue.check_gguf(tmp_path / "missing.gguf")


def test_a_file_corrupted_after_the_start_is_refused_when_the_model_is_loaded(models_dir, monkeypatch):
    pytest.importorskip("llama_cpp")
    p = catalogue_file(models_dir, "smollm2-135m", gguf_header(), size=4096)
    m = replace(catalogue.spec("smollm2-135m"), size=4096, sha256=catalogue.sha256_of(p))  # pinned to this file
    monkeypatch.setitem(catalogue.CATALOGUE, m.name, m)
    judge = get_judge("smollm2-135m")  # header and size fine: accepted, nothing loaded yet

    def never(*a, **k):
        raise AssertionError("llama.cpp must not be asked to load a corrupt file")

    judge._llama_cpp = type("FakeLlamaCpp", (), {"Llama": staticmethod(never)})
    p.write_bytes(b"\0" * 100)
    with pytest.raises(ModelIntegrityError, match="localragas models pull --force smollm2-135m"):
        judge.llm


# --- chat template hygiene -----------------------------------------------------------------------------------------


def test_llama_cpp_renders_gguf_chat_templates_in_an_immutable_jinja_sandbox():
    """llama-cpp-python (0.3.36) turns the GGUF's tokenizer.chat_template into a Jinja2ChatFormatter, whose
    environment is jinja2's ImmutableSandboxedEnvironment: a hostile template cannot escape or mutate data."""
    llama_cpp = pytest.importorskip("llama_cpp")
    import inspect

    from jinja2.exceptions import SecurityError
    from jinja2.sandbox import ImmutableSandboxedEnvironment
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    assert "Jinja2ChatFormatter(" in inspect.getsource(llama_cpp.Llama.__init__)  # GGUF templates go through it
    fmt = Jinja2ChatFormatter(template="{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}",
                              eos_token="</s>", bos_token="<s>")
    assert isinstance(fmt._environment.environment, ImmutableSandboxedEnvironment)
    assert fmt(messages=[{"role": "user", "content": "hi"}]).prompt == "<|user|>hi"
    escape = Jinja2ChatFormatter(template="{{ ''.__class__.__mro__[1].__subclasses__() }}", eos_token="", bos_token="")
    with pytest.raises(SecurityError):
        escape(messages=[])
    mutate = Jinja2ChatFormatter(template="{{ messages.append({'role': 'system'}) }}", eos_token="", bos_token="")
    with pytest.raises(SecurityError):
        mutate(messages=[])


def test_llama_cpp_parses_special_tokens_in_the_rendered_prompt_which_is_why_content_is_neutralised():
    pytest.importorskip("llama_cpp")
    import inspect

    from llama_cpp import llama_chat_format

    source = inspect.getsource(llama_chat_format.chat_formatter_to_chat_completion_handler)
    assert "special=True" in source, "llama-cpp-python changed: revisit the comment in localragas/judges/llamacpp.py"


# --- strings that look like paths are text, never opened --------------------------------------------------------


def test_paths_and_urls_in_a_dataset_are_judged_as_text_and_never_opened(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("secret.txt").write_text("TOPSECRET")
    looks_like_paths = ["/etc/passwd", "file:///etc/passwd", "secret.txt", "../secret.txt", "~/.ssh/id_rsa",
                        "\\\\server\\share\\x.txt"]
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({**ROW, "contexts": looks_like_paths, "answer": "/etc/shadow",
                                "reference": "file:///etc/passwd"}) + "\n")
    opened: list[str] = []
    real_open, real_os_open = builtins.open, os.open

    def spy_open(file, *a, **k):
        opened.append(str(file))
        return real_open(file, *a, **k)

    def spy_os_open(path, *a, **k):
        opened.append(str(path))
        return real_os_open(path, *a, **k)

    monkeypatch.setattr(builtins, "open", spy_open)
    monkeypatch.setattr(io, "open", spy_open)
    monkeypatch.setattr(os, "open", spy_os_open)
    judge = FakeJudge()
    monkeypatch.setattr("localragas.run.judging_context.get_judge", lambda *a, **k: judge)  # where a run builds its judge
    out = tmp_path / "r.json"
    r = cli("eval", str(data), "--judge", "fake", "--embedder", "fake", "--no-progress",
            "--no-gate", "--out", str(out))
    assert r.exit_code == 0, r.output
    assert str(data) in opened  # the spies work: the dataset itself was opened
    assert not [p for p in opened if any(s in p for s in ("passwd", "shadow", "secret", "id_rsa", "\\share"))], opened
    prompts = "\n".join(c.prompt.user for c in judge.calls)
    for text in looks_like_paths:
        assert text in prompts  # judged as the text it is
    assert "TOPSECRET" not in prompts and "root:" not in prompts
    assert Report.model_validate_json(out.read_text()).samples[0].metrics["context_precision"].scored


# --- no network, no telemetry ----------------------------------------------------------------------------------------


def test_ensure_offline_sets_the_hub_variables_and_keeps_the_users_own(monkeypatch):
    for key in OFFLINE_ENV:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "yes-by-user")
    ensure_offline()
    assert os.environ["HF_HUB_OFFLINE"] == "1" and os.environ["TRANSFORMERS_OFFLINE"] == "1"
    assert os.environ["HF_HUB_DISABLE_TELEMETRY"] == "yes-by-user"


NETWORK_MODULES = {"socket", "http", "urllib", "requests", "httpx", "aiohttp", "urllib3", "ftplib", "smtplib",
                   "distributed"}


def test_only_the_openai_backend_imports_a_network_module():
    """No telemetry, ever: the modules that may open a connection are the backend for a judge server the user names
    and run-rag's caller of the RAG endpoint the user names (--url); `localragas view --serve` listens on 127.0.0.1
    only (report/dashboard_server.py), connecting nowhere; the Dask engine (eval --engine dask) connects to the
    scheduler the user names (--address), or starts a cluster on 127.0.0.1 (local:N, run/dask_local.py); the MLflow
    bridge checks the tracking store the user names (--mlflow) before judging (integrations/mlflow.py)."""
    importers = set()
    for path in sorted((ROOT / "localragas").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            if any(n.split(".")[0] in NETWORK_MODULES for n in names):
                importers.add(path.relative_to(ROOT).as_posix())
    assert importers <= {"localragas/judges/openai_compat.py", "localragas/testset/rag_targets.py",
                         "localragas/report/dashboard_server.py", "localragas/run/dask_engine.py",
                         "localragas/run/dask_worker.py", "localragas/run/dask_local.py",
                         "localragas/integrations/mlflow.py"}, importers


def test_the_same_eval_twice_gives_identical_scores_with_the_fake_judge():
    samples = [Sample(**{**ROW, "id": str(i), "answer": f"The sky is blue. Item {i} is heavy."}) for i in range(5)]
    a, b = (evaluate(samples, judge=FakeJudge(), embedder="fake") for _ in range(2))
    assert [s.metrics for s in a.samples] == [s.metrics for s in b.samples]


# --- reports are written atomically ----------------------------------------------------------------------------------

KILLED_WRITER = textwrap.dedent('''
    import sys
    from localragas.core.atomic_write import write_atomic
    path, n = sys.argv[1], 0
    print("ready", flush=True)
    while True:
        n += 1
        write_atomic(path, (f"version {n} " + "x" * 4_000_000) + " END")
''')


def test_a_report_write_killed_midway_leaves_a_whole_report(tmp_path, monkeypatch):
    from localragas.core.atomic_write import write_atomic

    target = tmp_path / "report.json"
    write_atomic(target, "old report")

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(os, "replace", interrupted)
        with pytest.raises(KeyboardInterrupt):
            write_atomic(target, "new report")
    assert target.read_text() == "old report" and sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]

    import signal
    import time

    writer = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(target)], stdout=subprocess.PIPE, text=True)
    assert writer.stdout.readline().strip() == "ready"
    time.sleep(0.4)
    writer.send_signal(signal.SIGKILL)  # kill -9 while it writes
    writer.wait(timeout=30)
    text = target.read_text()
    assert text == "old report" or (text.startswith("version ") and text.endswith(" END") and len(text) > 4_000_000)
