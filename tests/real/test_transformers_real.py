"""The transformers backend with the real SmolLM2-135M: its GGUF loaded through transformers (`gguf_file=`) on CPU,
decoding constrained by xgrammar. Every call on two example samples gives schema-valid JSON (the llama.cpp pipeline
test runs all of them; here one with a reference and one without cover every prompt family on CPU: four took a few
minutes, all sixteen ten)."""
from __future__ import annotations

import time

import pytest

from localragas.judges import catalogue
from localragas.core.reply_schemas import Claims, GeneratedQuestions
from localragas.judges.yes_no import YES_NO, p_yes, word_of
from localragas.judges import Judging
from localragas.prompts import extract_claims, generate_questions, verify_statement

from cli_helpers import cli
from real_helpers import EXAMPLES, examples_report

SPEC = "transformers:smollm2-135m"


@pytest.fixture(scope="module")
def tf_judge():
    from localragas.judges import get_judge

    try:
        catalogue.path("smollm2-135m")
    except Exception as e:  # noqa: BLE001
        pytest.fail(f"real-tier model missing: {e}")
    judge = get_judge(SPEC, {"device": "cpu"})
    yield judge
    judge.close()


ROWS = (0, 3)  # the first example (with a reference) and the fourth (without)
N_SAMPLES = len(ROWS)


def test_examples_through_the_cli_give_schema_valid_json_on_every_call(tmp_path):
    lines = [line for line in EXAMPLES.read_text(encoding="utf-8").splitlines() if line.strip()]
    data, out = tmp_path / "data.jsonl", tmp_path / "report.json"
    data.write_text("".join(lines[i] + "\n" for i in ROWS), encoding="utf-8")
    started = time.perf_counter()
    result = cli("eval", str(data), "--judge", SPEC, "--judge-option", "device=cpu",
                 "--no-progress", "--no-cache", "--no-resume", "--out", str(out))
    seconds = time.perf_counter() - started
    assert result.exit_code in (0, 1), result.output  # the gate may fail with a 135M judge; never an error
    assert "GGUF tensors" not in result.output  # --no-progress: no progress bar from the GGUF loader either
    report, n = examples_report(out, limit=N_SAMPLES)  # N_SAMPLES of the examples, checked as examples_report does
    assert n == N_SAMPLES
    assert [s.input.reference is not None for s in report.samples] == [True, False], "one with a reference, one without"
    judge = report.meta["judge"]
    assert judge["name"] == "transformers/smollm2-135m"
    assert judge["fingerprint"].startswith(catalogue.spec("smollm2-135m").sha256 + ":")
    assert judge["settings"]["dtype"] == "float32"
    assert {"faithfulness", "answer_relevancy", "context_precision", "context_recall"} <= set(report.samples[0].metrics)
    for s in report.samples:
        for name, m in s.metrics.items():
            assert m.value is not None or m.unscored.split(":")[0] in {"no_claims", "no_reference"}, (s.id, name)
    assert seconds < 300, f"{seconds:.0f} s for {n} samples"


def test_replies_are_deterministic_and_counted(tf_judge):
    prompt = extract_claims("The Standard tier costs $0.02 per GB per month. Restores take up to 12 hours.")
    judging = Judging(tf_judge)
    a = judging.generate(prompt, Claims)
    b = judging.generate(prompt, Claims)
    assert a == b
    log = judging.log.records[-1]
    assert log["prompt_tokens"] > 50 and 0 < log["completion_tokens"] < tf_judge.settings.max_new_tokens


def test_generate_many_batches_prompts_of_different_lengths(tf_judge):
    """Left-padded rows in one model.generate: every reply is valid JSON of the schema."""
    answers = ["Restores from Archive take up to 12 hours.",
               "Standard storage costs $0.02 per GB per month, billed monthly, with no minimum storage duration."]
    got = tf_judge.generate_many([generate_questions(a) for a in answers], GeneratedQuestions)
    assert all(isinstance(x, GeneratedQuestions) and len(x.questions) == 3 for x in got), got
    verdicts = tf_judge.generate_many([extract_claims(a) for a in answers], Claims)
    assert all(isinstance(x, Claims) for x in verdicts), verdicts


def test_graded_verdict_from_the_next_token_logits(tf_judge):
    """verdicts=probability through transformers: one forward pass, P(yes) against P(no); the same on a rerun."""
    prompt = verify_statement("The Eiffel Tower is in Paris.", ["The Eiffel Tower is a tower in Paris, France."])
    a = tf_judge.next_tokens(prompt, YES_NO)  # the backend's data behind Judging.p_yes
    b = tf_judge.next_tokens(prompt, YES_NO)
    assert any(word_of(t) for t, _ in a.candidates) and a.completion_tokens == 1
    assert 0.0 <= p_yes(a.candidates, prompt.name) <= 1.0
    assert a == b
