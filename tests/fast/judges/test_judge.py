"""Judging.generate (validation, stats, errors), the bounded output schemas, and the judge registry."""
from __future__ import annotations

import pytest

from localragas.judges import catalogue
from localragas.core.errors import ConfigError, JudgeError, ModelIntegrityError, ModelNotFoundError
from localragas.judges import Completion, FakeJudge, Judge, Judging, get_judge, judge_names
from localragas.core.reply_schemas import (
    MAX_CLAIM_CHARS, MAX_CLAIMS, N_QUESTIONS, Claims, GeneratedQuestions, _check_bounded, json_schema, verdicts_for,
)
from localragas.prompts import Prompt, extract_claims

PROMPT = Prompt("verify_statements", "judge these")


# --- Judging.generate --------------------------------------------------------------------------------------------


def test_valid_reply_is_parsed_and_counted():
    judge = FakeJudge([{"claims": ["A is B."]}])
    judging = Judging(judge)
    out = judging.generate(extract_claims("A is B."), Claims)
    assert isinstance(out, Claims) and out.claims == ["A is B."]
    assert judging.stats.calls == 1 and judging.stats.failed_calls == 0 and judging.stats.parse_failures == 0
    assert judging.stats.prompt_tokens > 0 and judging.stats.completion_tokens > 0


def test_invalid_json_reply_is_a_judge_error_and_a_parse_failure():
    judge = FakeJudge(['{"claims": ["unterminated'])
    judging = Judging(judge)
    with pytest.raises(JudgeError, match="Claims"):
        judging.generate(extract_claims("x"), Claims)
    assert judging.stats.parse_failures == 1
    assert judging.stats.failed_calls == 1
    assert judging.stats.errors and judging.stats.errors[0].startswith("extract_claims:")


def test_extra_key_is_rejected():
    judge = FakeJudge([{"claims": [], "confidence": 0.9}])
    judging = Judging(judge)
    with pytest.raises(JudgeError):
        judging.generate(extract_claims("x"), Claims)
    assert judging.stats.parse_failures == 1


@pytest.mark.parametrize("n_given", [2, 4])
def test_wrong_number_of_verdicts_is_a_judge_error(n_given):
    reply = {"verdicts": [{"id": i, "verdict": "yes"} for i in range(1, n_given + 1)]}
    judge = FakeJudge([reply])
    judging = Judging(judge)
    with pytest.raises(JudgeError):
        judging.generate(PROMPT, verdicts_for(3))
    assert judging.stats.parse_failures == 1


def test_verdicts_out_of_order_ids_are_rejected():
    judge = FakeJudge([{"verdicts": [{"id": 2, "verdict": "yes"}, {"id": 1, "verdict": "no"}]}])
    judging = Judging(judge)
    with pytest.raises(JudgeError):
        judging.generate(PROMPT, verdicts_for(2))


def test_verdict_must_be_yes_or_no():
    judge = FakeJudge([{"verdicts": [{"id": 1, "verdict": "maybe"}]}])
    judging = Judging(judge)
    with pytest.raises(JudgeError):
        judging.generate(PROMPT, verdicts_for(1))


def test_verdicts_flags_in_order():
    judge = FakeJudge([{"verdicts": [{"id": 1, "verdict": "no"}, {"id": 2, "verdict": "yes"}]}])
    judging = Judging(judge)
    assert judging.generate(PROMPT, verdicts_for(2)).flags() == [False, True]


def test_exception_reply_is_raised_as_judge_error_and_counted():
    judge = FakeJudge([RuntimeError("server down"), {"claims": ["ok."]}])
    judging = Judging(judge)
    with pytest.raises(JudgeError, match="server down"):
        judging.generate(extract_claims("x"), Claims)
    assert judging.stats.failed_calls == 1 and judging.stats.parse_failures == 0
    assert "server down" in judging.stats.errors[0]
    # the queue moves on: the next call gets the next reply
    assert judging.generate(extract_claims("x"), Claims).claims == ["ok."]
    assert judging.stats.calls == 2


def test_judge_error_reply_is_raised_as_is():
    err = JudgeError("too long a prompt")
    judge = FakeJudge([err])
    judging = Judging(judge)
    with pytest.raises(JudgeError) as e:
        judging.generate(extract_claims("x"), Claims)
    assert e.value is err


def test_fake_judge_records_calls_and_asked():
    judge = FakeJudge([{"claims": []}, {"verdicts": [{"id": 1, "verdict": "yes"}]}])
    judging = Judging(judge)
    p1 = extract_claims("text one")
    judging.generate(p1, Claims)
    judging.generate(PROMPT, verdicts_for(1))
    assert [c.output for c in judge.calls] == [Claims, verdicts_for(1)]
    assert judge.asked("extract_claims") == [p1]
    assert judge.asked("verify_statements") == [PROMPT]
    assert judge.asked("judge_chunks") == []


def test_responder_is_used_after_the_queue():
    seen = []

    def responder(prompt, output):
        seen.append(prompt.name)
        return {"claims": ["from responder."]}

    judge = FakeJudge([{"claims": ["queued."]}], responder=responder)
    judging = Judging(judge)
    assert judging.generate(extract_claims("x"), Claims).claims == ["queued."]
    assert judging.generate(extract_claims("y"), Claims).claims == ["from responder."]
    assert seen == ["extract_claims"]


class TruncatingJudge(Judge):
    name = "trunc"

    def complete(self, prompt, schema, output):
        return Completion(text='{"claims": ["a', prompt_tokens=10, completion_tokens=16, truncated=True)


def test_truncated_reply_is_a_judge_error_not_a_parse_failure():
    judge = TruncatingJudge()
    judging = Judging(judge)
    with pytest.raises(JudgeError, match="truncated"):
        judging.generate(extract_claims("x"), Claims)
    assert judging.stats.failed_calls == 1 and judging.stats.parse_failures == 0
    assert judging.stats.completion_tokens == 16


class SchemaSpy(Judge):
    def __init__(self):
        super().__init__()
        self.schemas = []

    def complete(self, prompt, schema, output):
        self.schemas.append(schema)
        return Completion(text='{"claims": []}')


def test_backend_receives_the_bounded_schema_of_the_output():
    judge = SchemaSpy()
    judging = Judging(judge)
    judging.generate(extract_claims("x"), Claims)
    assert judge.schemas == [json_schema(Claims)]


def test_stats_as_dict_caps_errors():
    judge = FakeJudge(["not json"] * 25)
    judging = Judging(judge)
    for _ in range(25):
        with pytest.raises(JudgeError):
            judging.generate(extract_claims("x"), Claims)
    d = judging.stats.as_dict()
    assert d["failed_calls"] == 25 and d["parse_failures"] == 25
    assert len(d["errors"]) == 20


# --- output schemas --------------------------------------------------------------------------------------------


def _walk(node):
    if isinstance(node, dict):
        yield node
        for v in node.values():
            yield from _walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from _walk(v)


@pytest.mark.parametrize(
    "output", [Claims, GeneratedQuestions, *(verdicts_for(n) for n in range(1, 6))], ids=lambda o: o.__name__
)
def test_output_schema_is_bounded(output):
    schema = json_schema(output)
    assert "$ref" not in str(schema) and "$defs" not in schema
    nodes = list(_walk(schema))
    arrays = [n for n in nodes if n.get("type") == "array"]
    strings = [n for n in nodes if n.get("type") == "string"]
    assert arrays, "every output holds an array"
    for a in arrays:
        assert "maxItems" in a or "prefixItems" in a, a
    for s in strings:
        assert "maxLength" in s or "enum" in s or "const" in s, s
    for obj in (n for n in nodes if n.get("type") == "object"):
        assert obj.get("additionalProperties") is False, obj


def test_claims_and_questions_limits():
    claims = json_schema(Claims)["properties"]["claims"]
    assert claims["maxItems"] == MAX_CLAIMS and claims["items"]["maxLength"] == MAX_CLAIM_CHARS
    q = json_schema(GeneratedQuestions)["properties"]["questions"]
    assert q["minItems"] == q["maxItems"] == N_QUESTIONS
    assert q["items"]["minLength"] == 1


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_verdicts_for_has_exactly_n_items_with_constant_ids(n):
    v = json_schema(verdicts_for(n))["properties"]["verdicts"]
    assert v["minItems"] == v["maxItems"] == n
    items = v["prefixItems"]
    assert [it["properties"]["id"]["const"] for it in items] == list(range(1, n + 1))
    assert all(it["properties"]["verdict"]["enum"] == ["yes", "no"] for it in items)
    assert all(set(it["required"]) == {"id", "verdict"} for it in items)


def test_verdicts_for_is_cached_and_rejects_zero():
    assert verdicts_for(3) is verdicts_for(3)
    with pytest.raises(ValueError):
        verdicts_for(0)


def test_check_bounded_refuses_unbounded_schemas():
    with pytest.raises(ValueError, match="maxItems"):
        _check_bounded({"type": "array", "items": {"type": "integer"}}, "X")
    with pytest.raises(ValueError, match="maxLength"):
        _check_bounded({"type": "object", "properties": {"s": {"type": "string"}}}, "X")
    _check_bounded({"type": "string", "enum": ["a"]}, "X")  # bounded: no error


# --- registry --------------------------------------------------------------------------------------------------


def test_get_judge_fake():
    j = get_judge("fake")
    assert isinstance(j, FakeJudge)
    assert j.describe() == {"name": "fake", "fingerprint": "fake:fake"}
    assert isinstance(get_judge("fake:anything"), FakeJudge)


def test_fake_judge_takes_no_options():
    with pytest.raises(ConfigError, match="no --judge-option"):
        get_judge("fake", {"n_ctx": 1024})


def test_get_judge_unknown_lists_valid_names():
    with pytest.raises(ConfigError) as e:
        get_judge("bogus")
    msg = str(e.value)
    assert "bogus" in msg
    for name in judge_names():
        assert name in msg
    assert "fake" in msg and "llamacpp" in msg


def test_judge_names_are_the_catalogue_judges():
    names = judge_names()
    assert catalogue.DEFAULT_JUDGE in names and catalogue.TEST_JUDGE in names
    assert catalogue.DEFAULT_EMBEDDER not in names


def test_llamacpp_bad_option_is_a_config_error_naming_it():
    """Options are validated before any model is looked up or loaded."""
    with pytest.raises(ConfigError) as e:
        get_judge("smollm2-135m", {"nope": 1})
    assert "nope" in str(e.value)
    assert "n_ctx" in str(e.value)  # lists the valid options


def test_llamacpp_out_of_range_option_is_a_config_error():
    with pytest.raises(ConfigError, match="n_ctx"):
        get_judge("llamacpp:smollm2-135m", {"n_ctx": 8})


def test_embedder_is_not_a_judge():
    with pytest.raises(ConfigError, match="not a judge"):
        get_judge(catalogue.DEFAULT_EMBEDDER)


def test_a_file_that_is_not_gguf_is_refused(tmp_path):
    p = tmp_path / "model.gguf"
    p.write_bytes(b"NOPE" + b"\0" * 32)
    with pytest.raises(ModelIntegrityError, match="is not a GGUF model file"):
        get_judge(str(p))


def test_unknown_backend_target_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="neither a catalogue model"):
        get_judge("llamacpp:bogus")
    with pytest.raises(ModelNotFoundError, match="judge model file not found: .*missing.gguf"):
        get_judge(f"llamacpp:{tmp_path / 'missing.gguf'}")


# --- known bugs ------------------------------------------------------------------------------------------------


def test_fake_heuristic_claims_respect_the_claim_length_limit():
    long_sentence = "The Archive tier of Acme Cloud Storage " + "and the Standard tier " * 12 + "restores in hours."
    assert len(long_sentence) > MAX_CLAIM_CHARS
    judge = FakeJudge()
    judging = Judging(judge)
    out = judging.generate(extract_claims(long_sentence), Claims)
    assert out.claims and all(len(c) <= MAX_CLAIM_CHARS for c in out.claims)
