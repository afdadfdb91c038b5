"""The openai backend against a real OpenAI-compatible server: llama-cpp-python's (`python -m llama_cpp.server`)
serving the SmolLM2 test judge on a free loopback port, started here and stopped afterwards.

llama-cpp-python's server takes the schema as `response_format: {"type": "json_object", "schema": ...}` or as a
GBNF `grammar` (it refuses `"type": "json_schema"`, with HTTP 500), and serves one request at a time (one model
behind a lock: no parallel slots), so `--concurrency 4` overlaps only the HTTP and JSON work here.

2 of the example samples (one with a reference, one without: every prompt family of the four metrics) with all four
metrics, at --concurrency 1 and 4 (about 12 judge calls each; with 4 samples, about 25 calls, it took 120–180 s on 2
cores); the killed server's test runs 4 samples, the others about 10 s each.

The runs skip the judge check (judge_check=False, --no-judge-check): SmolLM2 is the test judge, exempt when it runs
in-process (its file's sha256 names its catalogue entry), but behind a server it is only a model name, and it cannot
tell the check's items apart. These tests are about the transport.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from localragas import evaluate, load_samples
from localragas.judges import catalogue
from localragas.judges.embeddings import HashingEmbedder
from localragas.judges import get_judge
from localragas.core.errors import LocalragasError
from localragas.judges.openai_compat import OpenAIJudge
from localragas.judges.yes_no import YES_NO, p_yes, word_of
from localragas.prompts import verify_statement

from research.benchmarks.ragas_harness import free_port  # the benchmarks' server harness picks ports the same way

from cli_helpers import cli
from real_helpers import EXAMPLES


MODEL = "smollm2-135m"
METRICS = ["faithfulness", "answer_relevancy", "context_precision", "context_recall"]
N_SAMPLES = 4  # the first four examples: three with a reference, one without


def _model_path() -> Path:
    try:
        return catalogue.path(MODEL)
    except LocalragasError as e:
        pytest.fail(f"real-tier model missing: {e}")


class Server:
    """`python -m llama_cpp.server` on 127.0.0.1:<free port>, its output in a log file."""

    def __init__(self, log_path: Path):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.log_path = log_path
        cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(_model_path()), "--model_alias", MODEL,
               "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", "4096",
               "--n_threads", str(os.cpu_count() or 1), "--n_threads_batch", str(os.cpu_count() or 1)]
        self._log = open(log_path, "wb")
        self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)
        self._wait_ready(60.0)

    def _wait_ready(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.stop()
                pytest.fail(f"llama_cpp.server exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/models", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.3)
        self.stop()
        pytest.fail(f"llama_cpp.server not ready within {seconds:g} s:\n{self.log_tail()}")

    def log_tail(self) -> str:
        return self.log_path.read_text(errors="replace")[-3000:]

    def kill(self) -> None:
        """As a crash: SIGKILL, no clean shutdown."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
        self._log.close()


@pytest.fixture(scope="module")
def smol_server(tmp_path_factory):
    try:
        import llama_cpp.server.app  # noqa: F401
    except ImportError as e:
        pytest.fail(f"the server extras are missing (SETUP_EXTRAS=test bash scripts/setup.sh installs them): {e}")
    server = Server(tmp_path_factory.mktemp("server") / "server.log")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def samples():
    return load_samples(EXAMPLES)[0][:N_SAMPLES]


def _scores(report) -> list:
    return [(s.id, {k: (m.value, m.unscored, m.evidence) for k, m in s.metrics.items()}) for s in report.samples]


def test_schema_valid_replies_and_concurrency_4_identical_to_1(smol_server, samples, tmp_path):
    samples = [samples[0], samples[3]]  # with a reference and without: every prompt family, half the calls of all 4
    assert samples[0].reference and not samples[1].reference
    options = {"base_url": smol_server.url, "structured": "json_object", "timeout": 60}
    judge = get_judge(f"openai:{MODEL}", options)
    one = evaluate(samples, metrics=METRICS, judge=judge, embedder=HashingEmbedder(), judge_check=False)
    stats = one.meta["judge_stats"]
    assert stats["calls"] >= 3 * len(samples)
    assert stats["failed_calls"] == 0 and stats["parse_failures"] == 0, stats["errors"]
    assert stats["prompt_tokens"] > 0 and stats["completion_tokens"] > 0
    for s in one.samples:
        for name, m in s.metrics.items():
            assert m.value is not None or m.unscored in {"no_claims", "no_reference"}, (s.id, name, m.unscored)

    # the same run through the command line with 4 requests in flight
    data = tmp_path / "data.jsonl"
    data.write_text("".join(s.model_dump_json() + "\n" for s in samples))
    out = tmp_path / "four.json"
    args = ["eval", str(data), "--judge", f"openai:{MODEL}", "-e", "fake", "--concurrency", "4", "--no-cache",
            "--no-resume", "--no-progress", "--no-gate", "--no-judge-check", "--out", str(out)]
    for k, v in options.items():
        args += ["--judge-option", f"{k}={v}"]
    result = cli(*args)
    assert result.exit_code == 0, result.output
    from localragas.report import read_json

    four = read_json(out)
    assert four.meta["concurrency"] == 4
    assert four.meta["judge_stats"]["failed_calls"] == 0
    assert _scores(four) == _scores(one)


def test_grammar_mode_gives_the_same_replies_as_the_schema(smol_server, samples):
    """The GBNF built here and the server's own grammar from the schema constrain decoding alike."""
    claims = {"faithfulness": {"statements": "claims"}}  # a JSON reply to constrain: the claim extraction's
    a = evaluate(samples[:1], metrics=["faithfulness"], judge=get_judge(
        f"openai:{MODEL}", {"base_url": smol_server.url, "structured": "json_object"}), cache=False,
        metric_options=claims, judge_check=False)
    b = evaluate(samples[:1], metrics=["faithfulness"], judge=get_judge(
        f"openai:{MODEL}", {"base_url": smol_server.url, "structured": "grammar"}), cache=False,
        metric_options=claims, judge_check=False)
    assert b.meta["judge_stats"]["failed_calls"] == 0
    assert _scores(a) == _scores(b)


def test_json_schema_type_is_refused_by_this_server_with_its_message(smol_server, samples):
    """llama-cpp-python's server answers a validation error with HTTP 500, so it is retried, then quoted."""
    judge = get_judge(f"openai:{MODEL}", {"base_url": smol_server.url, "retries": 1, "backoff": 0.05})
    # structured=json_schema, the default; the first call a JSON one: the claim extraction (statements=claims)
    report = evaluate(samples[:1], metrics=["faithfulness"], judge=judge, judge_check=False,
                      metric_options={"faithfulness": {"statements": "claims"}})
    reason = report.samples[0].metrics["faithfulness"].unscored
    assert reason.startswith("judge_error: server unreachable after 2 attempts: http://127.0.0.1:"), reason
    assert "HTTP 500" in reason and "Input should be 'text' or 'json_object'" in reason, reason
    assert report.meta["judge_stats"]["calls"] == 1 and report.meta["judge_stats"]["failed_calls"] == 1


def test_server_killed_mid_run_retries_then_unscored_and_the_run_finishes(samples, tmp_path):
    server = Server(tmp_path / "server.log")
    waits: list[float] = []
    try:
        judge = get_judge(f"openai:{MODEL}", {"base_url": server.url, "structured": "json_object",
                                              "retries": 2, "backoff": 0.1, "timeout": 30})
        assert isinstance(judge, OpenAIJudge)
        real_send, real_sleep = judge._send, judge._sleep
        calls = {"n": 0}

        def send(body):  # every request, JSON replies and graded verdicts alike
            calls["n"] += 1
            if calls["n"] == 5:  # a few replies in: the server dies
                server.kill()
            return real_send(body)

        def sleep(seconds):
            if calls["n"] >= 5:  # after the kill (a call that timed out on a loaded machine before it may retry too)
                waits.append(seconds)
            real_sleep(seconds)

        judge._send, judge._sleep = send, sleep
        started = time.monotonic()
        report = evaluate(samples, metrics=["faithfulness", "context_recall"], judge=judge, judge_check=False)
        took = time.monotonic() - started
    finally:
        server.stop()
    assert len(report.samples) == 4
    results = [m for s in report.samples for m in s.metrics.values()]
    scored = [m for m in results if m.value is not None]
    dead = [m for m in results if m.unscored and m.unscored.startswith("judge_error:")]
    assert scored, "the calls before the kill were answered"
    assert dead, "the calls after the kill failed"
    for m in dead:
        assert m.unscored.startswith("judge_error: server unreachable after 3 attempts: http://127.0.0.1:"), m.unscored
    assert len(waits) == 2 * len(dead)  # two backoff waits per failed call
    assert took < 60
    assert json.loads(report.model_dump_json())["meta"]["judge_stats"]["failed_calls"] == len(dead)


def test_graded_verdicts_through_the_server_agree_with_in_process(smol_server, smol_judge):
    """verdicts=probability over HTTP: one token with its top_logprobs (the server keeps logits by default)."""
    prompts = [verify_statement(s, ["The Eiffel Tower is a wrought-iron tower in Paris, completed in 1889."])
               for s in ("The Eiffel Tower is in Paris.", "The Eiffel Tower was completed in 1925.")]
    judge = get_judge(f"openai:{MODEL}", {"base_url": smol_server.url, "structured": "json_object"})
    served_top = [judge.next_tokens(p, YES_NO) for p in prompts]  # the data behind p_yes
    assert all(any(word_of(t) for t, _ in top.candidates) for top in served_top)
    served = [p_yes(top.candidates, p.name) for top, p in zip(served_top, prompts)]
    local = [p_yes(smol_judge.next_tokens(p, YES_NO).candidates, p.name) for p in prompts]
    for s, l in zip(served, local):  # the same GGUF and llama.cpp; the server sees only its top 20 tokens
        assert abs(s - l) < 0.05, (served, local)
