"""The built-in prompts' digest in the resume checkpoints' keys (prompts/digest.py): stable from call to call, changed
by a changed built-in prompt of a family the run asks (in either language), every built-in family rendered; and so a
killed `generate`, `eval` or `calibrate` resumed with the same prompts resumes, and with a changed one starts
afresh."""
from __future__ import annotations

from pathlib import Path

import pytest

from localragas.judge_calls.generation import FAMILIES
from localragas.judge_calls.statements import STATEMENT_MODES
from localragas.judge_calls.verdicts import VERDICTS
from localragas.judge_calls.support import QUESTIONS
from localragas.core.errors import ConfigError, JudgeError
from localragas.judges import FakeJudge
from localragas.metrics.answer_relevancy import QUESTION_MODES
from localragas.prompts import generation, verdicts
from localragas.metrics import all_metrics, get_metrics
from localragas.metrics.custom import Criterion, Rubric
from localragas.prompts.digest import metrics_digest, probe, prompts_digest
from localragas.prompts.families import FAMILIES as prompt_families
from localragas.quality.calibration import calibrate_source
from localragas.quality.labelled import read_labelled
from localragas.run.checkpoint import Checkpoint
from localragas.run.evaluation import Evaluation, checkpoint_key, spec_from_flags
from localragas.testset.generation import GenerateSpec, Generation

from calibration_helpers import faith_row
from cli_helpers import write_jsonl
from metrics_helpers import dies_after

EXAMPLE_DOCS = Path(__file__).resolve().parents[3] / "examples" / "docs"


def changed(monkeypatch, texts: dict, lang: str = "en") -> None:
    """A built-in prompt's text in `lang` changed, as an upgrade might change it."""
    monkeypatch.setitem(texts, lang, texts[lang] + "\nBe careful.")


def cut_to_first_line(path: Path) -> None:
    """The checkpoint as a kill after its first unit leaves it."""
    path.write_text(path.read_text(encoding="utf-8").splitlines(keepends=True)[0], encoding="utf-8")


# --- the digest -------------------------------------------------------------------------------------------------------


def test_the_digest_is_short_stable_and_ignores_order_and_repeats():
    one = prompts_digest(["verify_statement", "extract_claims"])
    assert len(one) == 12 and int(one, 16) >= 0
    assert one == prompts_digest(["extract_claims", "verify_statement", "extract_claims"])
    assert one != prompts_digest(["verify_statement"]) != prompts_digest(["contradict_statement"])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_changed_prompt_changes_the_digest_of_the_families_that_ask_it_only(monkeypatch, lang):
    before = prompts_digest(["verify_statement"]), prompts_digest(["extract_claims"])
    changed(monkeypatch, verdicts.ONE, lang)
    assert prompts_digest(["verify_statement"]) != before[0]
    assert prompts_digest(["extract_claims"]) == before[1]


def test_every_family_a_built_in_metric_or_generate_asks_is_rendered_on_the_probe_in_both_languages():
    choices = {"verdicts": VERDICTS, "statements": STATEMENT_MODES, "questions": QUESTION_MODES, "question": QUESTIONS}
    BUILT_IN = [m for m in all_metrics().values() if m.source is None]
    configured = [m.with_options(question="both") for m in BUILT_IN if "question" in dict(m.options)]
    for m in BUILT_IN:
        for option in dict(m.options):
            for value in choices.get(option, ()):
                try:
                    configured.append(m.with_options(**{option: value}))
                except ConfigError:
                    pass  # e.g. a way of asking with verdicts=json
    asked = {p for m in (*BUILT_IN, *configured) for p in m.prompts}
    assert {"verify_statement", "contradict_statement", "verify_statements", "check_question"} <= asked
    for family in {*asked, *prompt_families, *FAMILIES}:
        for lang in ("en", "zh"):
            got = probe(family, lang)
            assert got and all(p.name == family for p in got), (family, lang)
    assert probe("criterion:tone", "en") is None  # a custom metric's family: not built in


def test_a_custom_metrics_template_is_in_the_digest_and_a_built_ins_digest_is_its_families():
    """An edited criterion question, fields or rubric level names another checkpoint; built-ins hash their families."""
    polite = metrics_digest([Criterion("tone", "Is the answer polite?")])
    assert polite == metrics_digest([Criterion("tone", "Is the answer polite?")])
    assert polite != metrics_digest([Criterion("tone", "Is the answer rude?")])
    assert polite != metrics_digest([Criterion("tone", "Is the answer polite?", ("question", "answer", "contexts"))])
    levels = {1: "vague", 2: "clear"}
    clear = metrics_digest([Rubric("clarity", "How clear is the answer?", levels)])
    assert clear != metrics_digest([Rubric("clarity", "How clear is the answer?", {**levels, 2: "very clear"})])
    faith = get_metrics(["faithfulness"])
    assert metrics_digest(faith) == prompts_digest(p for m in faith for p in m.prompts)


# --- generate ---------------------------------------------------------------------------------------------------------


def generate_run(judge) -> Generation:
    return Generation(GenerateSpec([EXAMPLE_DOCS], size=6, judge=judge, embedder="fake", cache=False, progress=False))


def killed_generate_run() -> Generation:
    """A generate run whose judge goes away after 15 calls: its checkpoint holds the candidates finished before."""
    run = generate_run(FakeJudge(responder=dies_after(15)))
    with pytest.raises(JudgeError):
        run.run()
    assert run.checkpoint.path.is_file() and run.checkpoint.load()
    return run


@pytest.mark.parametrize("texts", [generation.TASKS["single"], generation.UNANSWERABLE, generation.ANSWERABLE,
                                   verdicts.ONE], ids=["write_single", "write_unanswerable", "question_answerable",
                                                       "verify_statement"])
def test_a_killed_generate_run_resumes_with_the_same_prompts_and_starts_afresh_with_a_changed_one(monkeypatch, texts):
    killed = killed_generate_run()
    finished = len(killed.checkpoint.load())
    same = generate_run(FakeJudge())
    same.run()
    assert same.checkpoint.path == killed.checkpoint.path and same.resumed == finished
    same.finish()

    killed = killed_generate_run()
    changed(monkeypatch, texts)
    fresh = generate_run(FakeJudge())
    fresh.run()
    assert fresh.checkpoint.path != killed.checkpoint.path and fresh.resumed == 0
    assert killed.checkpoint.path.is_file()  # the old run's checkpoint is left alone

# --- eval -------------------------------------------------------------------------------------------------------------


def eval_spec(data: Path, metrics: str = "faithfulness"):
    return spec_from_flags(data, judge="fake", embedder="fake", metrics=[metrics], no_cache=True, progress=False)


def test_the_eval_key_holds_the_prompts_its_metrics_ask_as_configured(monkeypatch, data):
    faithfulness, relevance = eval_spec(data), eval_spec(data, "context_relevance")
    both = spec_from_flags(data, judge="fake", metrics=["faithfulness"], metric_option=["faithfulness.question=both"])
    before = [checkpoint_key(s, "fake") for s in (faithfulness, relevance, both)]
    assert before == [checkpoint_key(s, "fake") for s in (faithfulness, relevance, both)]
    changed(monkeypatch, verdicts.ONE, "zh")
    after = [checkpoint_key(s, "fake") for s in (faithfulness, relevance, both)]
    assert after[0] != before[0] and after[2] != before[2]
    assert after[1] == before[1]  # context_relevance does not ask verify_statement


@pytest.mark.parametrize("change", [False, True], ids=["same prompts", "changed prompt"])
def test_a_killed_eval_run_resumes_with_the_same_prompts_and_starts_afresh_with_a_changed_one(monkeypatch, data,
                                                                                            change):
    killed = Evaluation(eval_spec(data))
    killed.run()  # not finished: its checkpoint stays, as a kill leaves it
    killed.close()  # and is let go, as a kill lets it go
    cut_to_first_line(killed.checkpoint.path)
    if change:
        changed(monkeypatch, verdicts.ONE)
    again = Evaluation(eval_spec(data))
    report = again.run()
    assert report.meta["resumed_samples"] == (0 if change else 1)
    assert (again.checkpoint.path != killed.checkpoint.path) == change


# --- calibrate --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("change", [False, True], ids=["same prompts", "changed prompt"])
def test_a_killed_calibrate_run_resumes_with_the_same_prompts_and_starts_afresh_with_a_changed_one(
        monkeypatch, tmp_path, change):
    source = read_labelled(write_jsonl(tmp_path / "faith.jsonl", [faith_row(1, "The Eiffel Tower is in Paris.", 1),
                                                                 faith_row(2, "The Eiffel Tower is in Rome.", 0)]))
    runs = tmp_path / "state" / "runs"
    with monkeypatch.context() as kept:
        kept.setattr(Checkpoint, "remove", lambda self: None)  # the checkpoint stays, as a kill leaves it
        whole = FakeJudge()
        calibrate_source(source, whole, progress=False)
    [killed] = runs.glob("*.jsonl")
    cut_to_first_line(killed)
    if change:
        changed(monkeypatch, verdicts.ONE)
    again = FakeJudge()
    calibrate_source(source, again, progress=False)
    assert (len(again.calls) == len(whole.calls)) == change  # afresh: every row asked again; resumed: the second only
    assert killed.is_file() == change  # resumed: its checkpoint is removed when done; afresh: another one was used
