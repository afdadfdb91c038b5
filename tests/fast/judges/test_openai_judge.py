"""The openai backend against a stub OpenAI-compatible server (http.server on 127.0.0.1, port 0), and concurrency.

The stub answers every schema the metrics ask for with a deterministic reply derived from the prompt, so runs
can be compared; `plan` scripts failures (HTTP codes, dropped connections, truncation, slow replies). Its graded
P(yes) is one value for every prompt (0.75), so it cannot pass the judge check: the runs here skip it
(judge_check=False, --no-judge-check); test_judge_check.py runs the check against a stub that can judge.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
import socket
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler

import pytest

from localragas.judges.embeddings import HashingEmbedder
from localragas.core.errors import ConfigError, JudgeError
from localragas.judges import FakeJudge, Judging, get_judge
from localragas.judges.openai_compat import OpenAIJudge
from localragas.core.reply_schemas import Claims, YesNo, json_schema, verdicts_for
from localragas.judges.yes_no import YES_NO
from localragas.prompts import extract_claims, verify_statement
from localragas.run.runner import evaluate
from localragas.data.schema import Sample

from cli_helpers import cli
from stub_server import StubServer, send_json

CTX = ["Paris is the capital of France.", "Berlin is the capital of Germany.", "The Seine flows through Paris."]


def mk(i: int, **kw) -> Sample:
    base = dict(id=f"s{i}", question=f"What is the capital of France, case {i}?", contexts=list(CTX),
                answer=f"Paris is the capital of France. Case {i} has the Seine.", reference="Paris is the capital.")
    base.update(kw)
    return Sample(**base)


def _flag(text: str, i: int) -> bool:
    return hashlib.sha256(f"{text}|{i}".encode()).digest()[0] % 3 != 0


def stub_reply(schema: dict, user: str) -> dict:
    """A valid reply for any of the metrics' schemas, a deterministic function of the prompt."""
    props = schema["properties"]
    if "claims" in props:
        answer = re.search(r"<answer>\n(.*?)\n</answer>", user, re.S)
        text = answer.group(1) if answer else user
        return {"claims": [s.strip() for s in re.split(r"(?<=\.)\s+", text) if s.strip()][:4]}
    if "questions" in props:
        return {"noncommittal": False, "questions": ["What is the capital of France?"] * 3}
    n = props["verdicts"]["maxItems"]
    return {"verdicts": [{"id": i, "verdict": "yes" if _flag(user, i) else "no"} for i in range(1, n + 1)]}


class Stub:
    """One stub server. `plan`: actions for the next requests, else `default`. Records every request."""

    def __init__(self, delay: float = 0.0):
        self.plan: deque = deque()
        self.delay = delay
        self.fail_if: str | None = None  # a substring of the prompt: such requests get 503, always
        self.no_logprobs = False  # True: a server that ignores the logprobs field
        self.requests: list[dict] = []
        self.in_flight = self.max_in_flight = 0
        self.lock = threading.Lock()
        self.http = StubServer(self.on_post)
        self.url = self.http.url

    def on_post(self, h: BaseHTTPRequestHandler, body: dict) -> None:
        with self.lock:
            self.requests.append({"path": h.path, "headers": dict(h.headers), "body": body})
            action = self.plan.popleft() if self.plan else "ok"
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            self.answer(h, body, action)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout test)
        finally:
            with self.lock:
                self.in_flight -= 1

    def answer(self, h: BaseHTTPRequestHandler, body: dict, action) -> None:
        user = body["messages"][-1]["content"]
        if self.fail_if and self.fail_if in user:
            action = (503, "model overloaded")
        if action == "drop":  # close the connection without a reply
            h.close_connection = True
            h.connection.shutdown(socket.SHUT_RDWR)
            return
        if isinstance(action, tuple) and action[0] == "sleep":
            time.sleep(action[1])
            action = "ok"
        if isinstance(action, tuple):  # (status, message[, retry_after])
            code, message = action[0], action[1]
            send_json(h, {"error": {"message": message, "type": "server_error", "code": code}}, code,
                      {"Retry-After": str(action[2])} if len(action) > 2 else None)
            return
        if self.delay:
            time.sleep(self.delay)
        logprobs = None
        if body.get("logprobs"):  # a graded verdict: one token and its top log-probabilities
            content = "yes"
            if not self.no_logprobs:
                top = [{"token": "yes", "logprob": math.log(0.6)}, {"token": "{", "logprob": math.log(0.2)},
                       {"token": " No", "logprob": math.log(0.15)}, {"token": "no", "logprob": math.log(0.05)}]
                logprobs = {"content": [{"token": "yes", "logprob": top[0]["logprob"],
                                         "top_logprobs": top[:body["top_logprobs"]]}]}
        else:
            content = json.dumps(stub_reply(_schema_of(body), user))
        finish = "stop"
        if action == "truncate":
            content, finish = content[: len(content) // 2], "length"
        reply = {
            "id": "chatcmpl-stub", "object": "chat.completion", "model": body.get("model"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish,
                         **({"logprobs": logprobs} if logprobs else {})}],
            "usage": {"prompt_tokens": len(user.split()), "completion_tokens": len(content.split()),
                      "total_tokens": 0, "prompt_tokens_details": {"cached_tokens": 3}},
        }
        send_json(h, reply)

    def close(self) -> None:
        self.http.close()


def _schema_of(body: dict) -> dict:
    if "response_format" in body:
        rf = body["response_format"]
        return rf["json_schema"]["schema"] if rf["type"] == "json_schema" else rf.get("schema", rf.get("value"))
    if "json_schema" in body:
        return body["json_schema"]
    raise AssertionError(f"no schema in the request: {sorted(body)}")


@pytest.fixture
def stub():
    s = Stub()
    yield s
    s.close()


@pytest.fixture
def stub2():
    s = Stub()
    yield s
    s.close()


def dead_url() -> str:
    """A loopback URL where nothing listens: connection refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def judge_for(*urls: str, sleeps: list | None = None, **options) -> OpenAIJudge:
    judge = get_judge("openai:stub-model", {"base_url": ",".join(urls), **options})
    assert isinstance(judge, OpenAIJudge)
    judge._sleep = (sleeps.append if sleeps is not None else (lambda s: None))
    return judge


# --- the request --------------------------------------------------------------------------------------------


def test_request_carries_the_schema_in_response_format_and_deterministic_decoding(stub):
    judge = judge_for(stub.url)
    judging = Judging(judge)
    out = judging.generate(extract_claims("Paris is in France. It is big."), Claims)
    assert out.claims
    (req,) = stub.requests
    assert req["path"] == "/v1/chat/completions"
    body = req["body"]
    assert body["model"] == "stub-model"
    assert body["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "Claims", "schema": json_schema(Claims), "strict": True}}
    assert (body["temperature"], body["seed"], body["max_tokens"], body["stream"]) == (0.0, 42, 1024, False)
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert "Authorization" not in req["headers"]


def test_graded_verdict_asks_one_token_with_top_logprobs_and_pools_yes_and_no(stub):
    judge = judge_for(stub.url)
    prompt = verify_statement("Paris is the capital of France.", CTX)
    top = judge.next_tokens(prompt, YES_NO)  # the data behind p_yes: the server's top tokens, as it sent them
    assert [t for t, _ in top.candidates] == ["yes", "{", " No", "no"]
    assert top.candidates[0][1] == pytest.approx(math.log(0.6))
    assert top.prompt_tokens > 0 and (top.completion_tokens, top.cached_tokens) == (1, 3)  # the usage field's
    assert Judging(judge).p_yes(prompt) == round(0.6 / 0.8, 6)  # " No" and "no" pooled
    (req, _) = stub.requests
    body = req["body"]
    assert (body["max_tokens"], body["logprobs"], body["top_logprobs"], body["temperature"]) == (1, True, 20, 0.0)
    assert "response_format" not in body and "grammar" not in body and "json_schema" not in body
    assert body["messages"][0]["content"].endswith('Reply with one word: "yes" or "no".')


def test_a_server_without_logprobs_leaves_graded_metrics_unscored_with_the_fix(stub):
    stub.no_logprobs = True
    judge = judge_for(stub.url)
    judging = Judging(judge)
    with pytest.raises(JudgeError, match=r"no token log-probabilities.*verify_statement.*verdicts=json"):
        judging.p_yes(verify_statement("Paris is the capital of France.", CTX))
    report = evaluate([mk(1)], metrics=["faithfulness"], judge=judge, gate=False,
                      metric_options={"faithfulness": {"verdicts": "probability"}})
    r = report.samples[0].metrics["faithfulness"]
    assert r.value is None and "verdicts=json" in r.unscored


def test_usage_gives_the_token_counts(stub):
    judge = judge_for(stub.url)
    judging = Judging(judge)
    judging.generate(extract_claims("Paris is in France."), Claims)
    assert judging.stats.prompt_tokens > 0 and judging.stats.completion_tokens > 0
    assert judging.stats.cached_tokens == 3
    assert judging.log.records[-1]["cached_tokens"] == 3


@pytest.mark.parametrize("mode,key", [("json_object", "response_format"), ("tgi", "response_format"),
                                      ("llamacpp", "json_schema")])
def test_other_structured_modes(stub, mode, key):
    judge = judge_for(stub.url, structured=mode)
    judging = Judging(judge)
    judging.generate(extract_claims("Paris is in France."), Claims)
    body = stub.requests[0]["body"]
    if mode == "json_object":
        assert body[key] == {"type": "json_object", "schema": json_schema(Claims)}
    elif mode == "tgi":
        assert body[key] == {"type": "json_object", "value": json_schema(Claims)}
    else:
        assert body[key] == json_schema(Claims) and "response_format" not in body


def test_grammar_mode_sends_gbnf_built_from_the_schema():
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    from localragas.core.reply_schemas import schema_text

    judge = judge_for("http://127.0.0.1:9/v1", structured="grammar")
    body = judge._body(extract_claims("x"), json_schema(verdicts_for(2)), verdicts_for(2))
    assert body["grammar"] == json_schema_to_gbnf(schema_text(verdicts_for(2)))
    assert "root ::=" in body["grammar"] and "response_format" not in body


def test_extra_body_is_sent_and_is_part_of_the_fingerprint(stub):
    judge = judge_for(stub.url, extra_body={"repeat_penalty": 1.0, "top_k": 1})
    judging = Judging(judge)
    judging.generate(extract_claims("Paris is in France."), Claims)
    body = stub.requests[0]["body"]
    assert body["repeat_penalty"] == 1.0 and body["top_k"] == 1 and "response_format" in body
    assert judge.fingerprint != judge_for(stub.url).fingerprint
    with pytest.raises(ConfigError, match="response_format, temperature set by localragas itself"):
        judge_for(stub.url, extra_body={"temperature": 1, "response_format": {"type": "text"}})


def test_extra_body_from_the_command_line_as_json(stub, tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text(mk(1).model_dump_json() + "\n")
    result = cli(
        "eval", str(data), "--judge", "openai:stub-model", "--judge-option", f"base_url={stub.url}",
        "--judge-option", 'extra_body={"repeat_penalty": 1.0}', "-m", "faithfulness", "--no-gate", "--no-progress",
        "--no-judge-check")
    assert result.exit_code == 0, result.output
    assert all(r["body"]["repeat_penalty"] == 1.0 for r in stub.requests)


def test_api_key_comes_from_the_named_environment_variable(stub, monkeypatch, tmp_path):
    monkeypatch.setenv("STUB_KEY", "s3cret-key")
    judge = judge_for(stub.url, api_key_env="STUB_KEY")
    judging = Judging(judge)
    judging.generate(extract_claims("Paris is in France."), Claims)
    assert stub.requests[0]["headers"]["Authorization"] == "Bearer s3cret-key"
    report = evaluate([mk(1)], metrics=["faithfulness"], judge=judge, judge_check=False)
    text = report.model_dump_json()
    assert "s3cret-key" not in text and "s3cret-key" not in judge.fingerprint
    assert report.meta["judge"]["settings"]["api_key_env"] == "STUB_KEY"


def test_api_key_env_unset_or_a_literal_key_is_a_config_error(monkeypatch):
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    with pytest.raises(ConfigError, match="NO_SUCH_KEY_VAR"):
        get_judge("openai:m", {"base_url": "http://127.0.0.1:9/v1", "api_key_env": "NO_SUCH_KEY_VAR"})
    with pytest.raises(ConfigError, match="NAME of an environment variable") as e:
        get_judge("openai:m", {"base_url": "http://127.0.0.1:9/v1", "api_key_env": "sk-abc.def"})
    assert "sk-abc.def" not in str(e.value)


def test_base_url_is_required_and_validated():
    with pytest.raises(ConfigError, match="base_url=http"):
        get_judge("openai:m")
    with pytest.raises(ConfigError, match="not an http"):
        get_judge("openai:m", {"base_url": "127.0.0.1:8080"})
    with pytest.raises(ConfigError, match="model name"):
        get_judge("openai:", {"base_url": "http://127.0.0.1:9/v1"})
    with pytest.raises(ConfigError, match="structured"):
        get_judge("openai:m", {"base_url": "http://127.0.0.1:9/v1", "structured": "regex"})


def test_fingerprint_is_model_and_decoding_not_urls_or_key(monkeypatch):
    monkeypatch.setenv("K1", "a")
    a = get_judge("openai:m", {"base_url": "http://127.0.0.1:1/v1", "api_key_env": "K1", "timeout": 5})
    b = get_judge("openai:m", {"base_url": ["http://127.0.0.1:2/v1", "http://127.0.0.1:3/v1"]})
    assert a.fingerprint == b.fingerprint
    assert get_judge("openai:m", {"base_url": "http://127.0.0.1:1/v1", "seed": 7}).fingerprint != a.fingerprint
    assert get_judge("openai:other", {"base_url": "http://127.0.0.1:1/v1"}).fingerprint != a.fingerprint
    described = get_judge("openai:m", {"base_url": "http://user:pw@127.0.0.1:1/v1?key=x"}).describe()
    assert described["base_url"] == ["http://127.0.0.1:1/v1"]


def test_round_robin_over_two_urls(stub, stub2):
    judge = judge_for(stub.url, stub2.url)
    judging = Judging(judge)
    for _ in range(4):
        judging.generate(extract_claims("Paris is in France."), Claims)
    assert len(stub.requests) == len(stub2.requests) == 2


# --- retries ------------------------------------------------------------------------------------------------


def test_500_then_success_is_retried_with_doubling_backoff(stub):
    stub.plan.extend([(500, "boom"), (502, "bad gateway"), (408, "request timeout"), "ok"])
    sleeps: list[float] = []
    judge = judge_for(stub.url, sleeps=sleeps, backoff=0.5)
    judging = Judging(judge)
    assert judging.generate(extract_claims("Paris is in France."), Claims).claims
    assert len(stub.requests) == 4
    assert len(sleeps) == 3
    for i, wait in enumerate(sleeps):
        assert 0.5 * 2 ** i <= wait <= 0.5 * 2 ** i * 1.25
    assert judging.stats.calls == 1 and judging.stats.failed_calls == 0


def test_429_honours_retry_after(stub):
    stub.plan.extend([(429, "slow down", 7), "ok"])
    sleeps: list[float] = []
    judge = judge_for(stub.url, sleeps=sleeps)
    judging = Judging(judge)
    judging.generate(extract_claims("Paris is in France."), Claims)
    assert sleeps == [7.0]


def test_connection_refused_moves_on_to_the_next_url(stub):
    sleeps: list[float] = []
    judge = judge_for(dead_url(), stub.url, sleeps=sleeps)
    judging = Judging(judge)
    assert judging.generate(extract_claims("Paris is in France."), Claims).claims
    assert len(stub.requests) == 1 and len(sleeps) == 1


def test_dropped_connection_is_retried(stub):
    stub.plan.extend(["drop", "ok"])
    judge = judge_for(stub.url)
    judging = Judging(judge)
    assert judging.generate(extract_claims("Paris is in France."), Claims).claims
    assert len(stub.requests) == 2


def test_timeout_is_retried_then_gives_up(stub):
    stub.plan.extend([("sleep", 1.0), ("sleep", 1.0)])
    judge = judge_for(stub.url, timeout=0.2, retries=1)
    judging = Judging(judge)
    with pytest.raises(JudgeError, match=r"unreachable after 2 attempts: .*within 0.2 s"):
        judging.generate(extract_claims("Paris is in France."), Claims)


def test_retries_exhausted_leave_that_metric_unscored_and_the_run_goes_on(stub):
    stub.fail_if = "Case 2 has"  # the prompts that quote sample s2's answer
    sleeps: list[float] = []
    judge = judge_for(stub.url, sleeps=sleeps, retries=2)
    report = evaluate([mk(1), mk(2), mk(3)], metrics=["faithfulness", "context_recall"], judge=judge,
                      judge_check=False)
    by_id = {s.id: s.metrics for s in report.samples}
    bad = by_id["s2"]["faithfulness"]
    assert bad.value is None
    assert bad.unscored.startswith("judge_error: server unreachable after 3 attempts:")
    assert "HTTP 503: model overloaded" in bad.unscored
    assert len(sleeps) == 2
    assert by_id["s2"]["context_recall"].value is not None  # its prompt does not quote the answer
    assert all(m.value is not None for sid in ("s1", "s3") for m in by_id[sid].values())
    assert report.meta["judge_stats"]["failed_calls"] == 1


def test_all_servers_down_leaves_every_metric_unscored_the_run_finishes_and_its_gate_fails():
    judge = judge_for(dead_url(), dead_url(), retries=1)
    report = evaluate([mk(1), mk(2)], metrics=["faithfulness", "context_recall"], judge=judge)
    reasons = [m.unscored for s in report.samples for m in s.metrics.values()]
    assert len(reasons) == 4
    assert all(r.startswith("judge_error: server unreachable after 2 attempts: http://127.0.0.1:") for r in reasons)
    assert all("ConnectionRefusedError" in r for r in reasons)
    # fail closed: the run finishes, but its gate does not pass
    assert not report.gate.evaluated and not report.gate.passed
    assert [x.metric for x in report.gate.errors] == ["faithfulness", "context_recall"]


def test_400_fails_at_once_quoting_the_server(stub):
    stub.plan.append((400, "'response_format.type' must be one of text, json_object"))
    sleeps: list[float] = []
    judge = judge_for(stub.url, sleeps=sleeps)
    judging = Judging(judge)
    with pytest.raises(JudgeError, match=r"HTTP 400 from http://127.0.0.1:\d+/v1: 'response_format.type' must be"):
        judging.generate(extract_claims("Paris is in France."), Claims)
    assert len(stub.requests) == 1 and sleeps == []


def test_fastapi_style_422_detail_is_quoted(stub, monkeypatch):
    def answer_422(h, body, action):
        payload = json.dumps({"detail": [{"loc": ["body", "response_format"], "msg": "Input should be 'text'"}]})
        h.send_response(422)
        h.send_header("Content-Length", str(len(payload)))
        h.end_headers()
        h.wfile.write(payload.encode())

    monkeypatch.setattr(stub, "answer", answer_422)
    with pytest.raises(JudgeError, match=r"HTTP 422 .*Input should be 'text'"):
        Judging(judge_for(stub.url)).generate(extract_claims("Paris is in France."), Claims)


def test_truncated_reply_leaves_the_metric_unscored(stub):
    stub.plan.append("truncate")
    judge = judge_for(stub.url)
    # a JSON reply cut at the token limit: the claim extraction's (a graded verdict is one token, never cut)
    report = evaluate([mk(1)], metrics=["faithfulness"], judge=judge, judge_check=False,
                      metric_options={"faithfulness": {"statements": "claims"}})
    m = report.samples[0].metrics["faithfulness"]
    assert m.value is None and "truncated" in m.unscored


# --- concurrency --------------------------------------------------------------------------------------------


def _scores(report) -> list:
    return [(s.id, {k: m.model_dump() for k, m in s.metrics.items()}) for s in report.samples]


def test_concurrency_4_gives_the_same_results_as_1_and_overlaps_requests():
    stub = Stub(delay=0.01)
    try:
        samples = [mk(i) for i in range(12)]
        metrics = ["faithfulness", "answer_relevancy", "context_precision", "context_recall"]
        one = evaluate(samples, metrics=metrics, judge=judge_for(stub.url), embedder=HashingEmbedder(), cache=False,
                       judge_check=False)
        # a handler thread may still be unwinding after its reply when the next request arrives: sequential is <= 2
        assert stub.max_in_flight <= 2
        stub.max_in_flight = 0
        four = evaluate(samples, metrics=metrics, judge=judge_for(stub.url), embedder=HashingEmbedder(), concurrency=4,
                        cache=False, judge_check=False)  # every request reaches the server
    finally:
        stub.close()
    assert stub.max_in_flight >= 3  # really 4 in flight at times; more than the sequential run's overlap can reach
    assert _scores(four) == _scores(one)
    assert [s.id for s in four.samples] == [f"s{i}" for i in range(12)]
    assert four.meta["concurrency"] == 4 and one.meta["concurrency"] == 1
    # per-sample counters come from each sample's own thread; they add up to the run totals
    assert sum(s.judge_calls for s in four.samples) == four.meta["judge_stats"]["calls"] == sum(
        row["calls"] for s in four.samples for row in s.calls_by_prompt.values())
    assert [s.judge_calls for s in four.samples] == [s.judge_calls for s in one.samples]
    assert [_calls_by_prompt(s) for s in four.samples] == [_calls_by_prompt(s) for s in one.samples]


def _calls_by_prompt(sample) -> list[tuple[str, int]]:
    return [(p, row["calls"]) for p, row in sample.calls_by_prompt.items()]


def test_concurrency_with_the_cache_and_checkpoint(stub, tmp_path):
    samples = [mk(i) for i in range(6)]
    first = evaluate(samples, metrics=["faithfulness"], judge=judge_for(stub.url), cache_dir=tmp_path / "c",
                     concurrency=3, checkpoint=tmp_path / "run.jsonl", judge_check=False)
    n = len(stub.requests)
    assert len((tmp_path / "run.jsonl").read_text().splitlines()) == 6
    again = evaluate(samples, metrics=["faithfulness"], judge=judge_for(stub.url), cache_dir=tmp_path / "c",
                     concurrency=3, judge_check=False)
    assert len(stub.requests) == n  # every reply came from the cache
    assert _scores(again) == _scores(first)


def test_in_process_judges_are_kept_to_one_call_at_a_time(caplog):
    threads: set[str] = set()

    class OneAtATime(FakeJudge):
        max_concurrency = 1

        def _scripted(self, prompt, output):  # every call, JSON or graded
            threads.add(threading.current_thread().name)
            return super()._scripted(prompt, output)

    report = evaluate([mk(i) for i in range(4)], metrics=["faithfulness"], judge=OneAtATime(), concurrency=4)
    assert report.meta["concurrency"] == 1
    assert threads == {threading.current_thread().name}
    assert "lowered to 1" in caplog.text


def test_llamacpp_judge_declares_one_call_at_a_time():
    from localragas.judges.llamacpp import LlamaCppJudge

    assert LlamaCppJudge.max_concurrency == 1


def test_a_run_stopping_error_in_a_thread_stops_the_run_and_keeps_finished_samples(tmp_path):
    def respond(prompt, output):
        if "case 5?" in prompt.user or "Case 5 " in prompt.user:
            raise ConfigError("wrong for every sample")
        time.sleep(0.01)
        return {"p_yes": 0.9, "mass": 1.0} if output is YesNo else stub_reply(json_schema(output), prompt.user)

    ck = tmp_path / "run.jsonl"
    with pytest.raises(ConfigError, match="wrong for every sample"):
        evaluate([mk(i) for i in range(8)], metrics=["faithfulness"], judge=FakeJudge(responder=respond),
                 concurrency=2, checkpoint=ck)
    kept = [json.loads(line)["result"]["id"] for line in ck.read_text().splitlines()]
    assert "s5" not in kept and len(kept) == len(set(kept)) >= 1


def test_bad_concurrency_is_a_config_error():
    with pytest.raises(ConfigError, match="concurrency"):
        evaluate([mk(1)], metrics=["faithfulness"], judge=FakeJudge(), concurrency=0)


# --- the command line -----------------------------------------------------------------------------------------


def test_cli_eval_with_the_openai_judge_and_concurrency(stub, tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text("\n".join(mk(i).model_dump_json() for i in range(5)) + "\n")
    out = tmp_path / "report.json"
    result = cli(
        "eval", str(data), "--judge", "openai:stub-model", "--judge-option", f"base_url={stub.url}",
        "--judge-option", "timeout=30", "-e", "fake", "--concurrency", "4", "--no-gate", "--no-progress",
        "--out", str(out), "--no-judge-check",
    )
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["meta"]["concurrency"] == 4
    assert report["meta"]["judge"]["name"] == "openai/stub-model"
    assert report["meta"]["judge"]["base_url"] == [stub.url]
    assert all(m["value"] is not None for s in report["samples"] for m in s["metrics"].values())


def test_cli_openai_without_base_url_exits_2(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text(mk(1).model_dump_json() + "\n")
    result = cli("eval", str(data), "--judge", "openai:m", "-e", "fake", "--no-progress")
    assert result.exit_code == 2
    assert "base_url" in result.output


def test_cli_concurrency_must_be_positive(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text(mk(1).model_dump_json() + "\n")
    result = cli("eval", str(data), "--judge", "fake", "--concurrency", "0")
    assert result.exit_code == 2


def test_cli_config_file_lists_urls_for_round_robin(stub, stub2, tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text("\n".join(mk(i).model_dump_json() for i in range(2)) + "\n")
    config = tmp_path / "localragas.toml"
    config.write_text(f'judge = "openai:stub-model"\n[judge_options]\nbase_url = ["{stub.url}", "{stub2.url}"]\n'
                      'retries = 1\n')
    result = cli("eval", str(data), "--config", str(config), "-m", "faithfulness",
                 "--no-gate", "--no-progress", "--no-cache", "--no-judge-check")
    assert result.exit_code == 0, result.output
    assert len(stub.requests) == len(stub2.requests) >= 2


def test_choice_probabilities_read_the_same_top_logprobs_as_graded_verdicts(stub):
    judge = judge_for(stub.url)
    judging = Judging(judge)
    got = judging.choice_probabilities(verify_statement("Paris is the capital of France.", CTX), ["yes", "no"])
    assert got == {"yes": pytest.approx(0.75), "no": pytest.approx(0.25)}  # " No" and "no" pooled, "{" left out
    (req,) = stub.requests
    assert (req["body"]["max_tokens"], req["body"]["logprobs"], req["body"]["top_logprobs"]) == (1, True, 20)
