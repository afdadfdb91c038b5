"""The pytest plugin (options -> fixtures, evaluate(), the example test) and assert_gate's failure message."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import warnings
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from localragas.run import canaries, judge_check
from localragas.run.gate import run_gate
from localragas.metrics import all_metrics
from localragas.data.schema import MetricResult, Report, SampleResult
from localragas.run.results import columns_of
from localragas.run.stats import summarise_columns
from localragas.report.evidence import brief as evidence_text
from localragas.testing import GateNotEvaluatedWarning, assert_gate, gate_failure_message

pytest_plugins = ["pytester"]

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "test_rag_quality_gate.py"
FAKE = ["--localragas-judge", "fake", "--localragas-embedder", "fake"]
PROBLEMS = {n: m.problem for n, m in all_metrics().items()}


# --- assert_gate on constructed reports -------------------------------------------------------------------------


def faith(*flags: bool, claims: list[str] | None = None) -> MetricResult:
    claims = claims or [f"claim {i}" for i in range(len(flags))]
    return MetricResult.fraction(list(flags), claims=[{"claim": c, "supported": f} for c, f in zip(claims, flags)])


def report_of(results: dict[str, dict[str, MetricResult]], thresholds: dict[str, float], enabled=True,
              max_error_rate=0.0) -> Report:
    samples = [SampleResult(id=sid, metrics=ms) for sid, ms in results.items()]
    names = list(dict.fromkeys(m for ms in results.values() for m in ms))
    summary = summarise_columns(columns_of(samples, names), names)
    gate = run_gate(summary, {k: v for k, v in thresholds.items() if k in names}, PROBLEMS, enabled=enabled,
                    max_error_rate=max_error_rate)
    return Report(meta={"judge": {"name": "fake"}}, metrics=names, summary=summary, gate=gate, samples=samples)


def failing_report(max_error_rate=0.2) -> Report:
    """faithfulness fails; its one judge error in 5 samples is accepted (max_error_rate 0.2)."""
    return report_of({
        "q-good": {"faithfulness": faith(True, True), "context_recall": MetricResult.fraction([True])},
        "q-half": {"faithfulness": faith(True, False, claims=["Paris is in France.", "The moon is cheese."]),
                   "context_recall": MetricResult.fraction([True])},
        "q-zero": {"faithfulness": faith(False, claims=["Refunds are paid in gift cards."]),
                   "context_recall": MetricResult.fraction([True])},
        "q-none": {"faithfulness": MetricResult.unscored_because("no_claims"),
                   "context_recall": MetricResult.fraction([True])},
        "q-err": {"faithfulness": MetricResult.unscored_because("judge_error: reply truncated at the token limit"),
                  "context_recall": MetricResult.fraction([True])},
    }, {"faithfulness": 0.8, "context_recall": 0.7}, max_error_rate=max_error_rate)


def test_assert_gate_passes_quietly_on_a_passing_gate():
    report = report_of({"a": {"faithfulness": faith(True)}, "b": {"faithfulness": faith(True, True)}},
                       {"faithfulness": 0.8})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert assert_gate(report) is None


def test_assert_gate_message_names_metric_mean_threshold_worst_samples_evidence_and_unscored():
    report = failing_report()
    with pytest.raises(AssertionError) as info:
        assert_gate(report)
    msg = str(info.value)
    assert msg.startswith("RAG quality gate failed: 1 of 2 gated metric(s) below threshold (5 sample(s), judge fake)")
    assert "FAILED faithfulness: mean 0.500, threshold 0.80" in msg
    assert PROBLEMS["faithfulness"] in msg
    # worst first, with the unsupported claims as evidence
    worst = [m.group(1) for m in re.finditer(r"^    (q-\S+)  \d\.\d{3}", msg, flags=re.M)]
    assert worst == ["q-zero", "q-half", "q-good"]
    assert 'q-zero  0.000  unsupported 1/1: "Refunds are paid in gift cards."' in msg
    assert 'unsupported 1/2: "The moon is cheese."' in msg
    assert "all 2 statement(s) supported" in msg
    assert "worst 3 of 3 scored sample(s) (2 below 0.80)" in msg
    # unscored samples with their reasons
    assert "unscored (2; left out of the mean):" in msg
    assert "q-none: no_claims" in msg
    assert "q-err: judge_error: reply truncated at the token limit" in msg
    # the passing metric is listed too
    assert "passed context_recall: mean 1.000, threshold 0.70" in msg


def test_assert_gate_fails_closed_on_a_judge_error_beyond_the_max_error_rate():
    msg = gate_failure_message(failing_report(max_error_rate=0.0))
    assert msg.startswith("RAG quality gate failed: 0 of 2 gated metric(s) below threshold, 1 metric(s) could not be "
                          "evaluated (errors left samples unscored)")
    assert "COULD NOT EVALUATE faithfulness: could not evaluate: 1 of 5 sample(s) unscored by an error" in msg
    assert "q-err: judge_error: reply truncated at the token limit" in msg
    report = report_of({"a": {"faithfulness": MetricResult.unscored_because("error: OSError: disk")}},
                       {"faithfulness": 0.8}, enabled=False)
    with pytest.raises(AssertionError, match="could not be evaluated"):
        assert_gate(report)  # a disabled gate never fails, but a run that could not evaluate does


def test_assert_gate_shows_the_confidence_interval_when_the_summary_has_one():
    report = failing_report()
    s = report.summary_for("faithfulness")
    if "ci_low" not in type(s).model_fields:
        pytest.skip("this schema has no confidence intervals yet")
    s.ci_low, s.ci_high = 0.25, 0.75
    assert "FAILED faithfulness: mean 0.500, threshold 0.80, 95% CI [0.250, 0.750], 3 scored, 2 unscored" in (
        gate_failure_message(report))


def test_no_interval_without_ci_fields():
    report = failing_report()
    for s in report.summary:
        for attr in ("ci_low", "ci_high"):
            if hasattr(s, attr):
                setattr(s, attr, None)
    for r in report.gate.results:
        for attr in ("ci_low", "ci_high"):
            if hasattr(r, attr):
                setattr(r, attr, None)
    assert "CI" not in gate_failure_message(report)


def test_worst_limits_the_samples_listed():
    msg = gate_failure_message(failing_report(), worst=1)
    assert "worst 1 of 3 scored sample(s)" in msg
    assert "q-zero" in msg and "q-half" not in msg
    msg0 = gate_failure_message(failing_report(), worst=0)
    assert "worst" not in msg0 and "q-zero" not in msg0
    assert "q-none: no_claims" in msg0  # unscored samples are still listed


def test_not_evaluated_metric_is_named_in_the_failure_and_warned_about_when_the_gate_passes():
    results = {
        "a": {"faithfulness": faith(False), "context_recall": MetricResult.unscored_because("no_reference")},
        "b": {"faithfulness": faith(False), "context_recall": MetricResult.unscored_because("no_reference")},
    }
    msg = gate_failure_message(report_of(results, {"faithfulness": 0.8, "context_recall": 0.7}))
    assert "NOT EVALUATED context_recall: no scored sample (unscored: 2 no_reference)" in msg

    ok = report_of({k: {**v, "faithfulness": faith(True)} for k, v in results.items()},
                   {"faithfulness": 0.8, "context_recall": 0.7})
    with pytest.warns(GateNotEvaluatedWarning, match="context_recall"):
        assert_gate(ok)


def test_a_disabled_gate_never_fails():
    report = report_of({"a": {"faithfulness": faith(False)}}, {"faithfulness": 0.8}, enabled=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_gate(report)


def test_evidence_lines_per_metric():
    cp = MetricResult.of(0.5, judged_against="reference", fraction_relevant=1 / 3,
                         chunks=[{"rank": 1, "relevant": False}, {"rank": 2, "relevant": True},
                                 {"rank": 3, "relevant": False}])
    assert evidence_text("context_precision", cp) == "irrelevant chunk rank(s) 1, 3 of 3 (judged against the reference)"
    cr = MetricResult.fraction([True, False], statements=[{"statement": "A is B.", "attributed": True},
                                                          {"statement": "C is D.", "attributed": False}])
    assert evidence_text("context_recall", cr) == 'not in the contexts 1/2: "C is D."'
    dodge = MetricResult.of(0.0, noncommittal=True, generated_questions=[{"question": "q?", "similarity": 0.9}])
    assert evidence_text("answer_relevancy", dodge) == "noncommittal answer (scored 0)"
    ar = MetricResult.of(0.5, noncommittal=False, generated_questions=[
        {"question": "What is the refund window?", "similarity": 0.8},
        {"question": "What is the weather?", "similarity": 0.2}])
    assert evidence_text("answer_relevancy", ar) == 'similarities 0.80, 0.20; least similar: "What is the weather?"'
    many = faith(False, False, False, False, False)
    assert "(+2 more)" in evidence_text("faithfulness", many)
    long_claim = MetricResult.fraction([False], claims=[{"claim": "x" * 300, "supported": False}])
    assert evidence_text("faithfulness", long_claim).endswith('…"')
    assert evidence_text("other_metric", MetricResult.of(0.3, hits=[1, 2], label="abc", ratio=0.123456)) == (
        "hits: 2 item(s); label=abc; ratio=0.123")


def test_assert_gate_is_exported_from_the_package():
    import localragas

    assert localragas.assert_gate is assert_gate
    assert "assert_gate" in localragas.__all__


# --- the plugin -------------------------------------------------------------------------------------------------


def test_plugin_is_registered_and_cheap_to_load():
    assert any(ep.value == "localragas.pytest_plugin" for ep in entry_points(group="pytest11")), (
        "entry point missing: run `pip install -e . --no-deps`")
    heavy = ("torch", "llama_cpp", "sentence_transformers", "transformers", "numpy", "pydantic")
    code = f"import sys, localragas.pytest_plugin; print([m for m in {heavy!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


CONFIG_TEST = """
def test_config(localragas_config):
    c = localragas_config
    print("CONFIG", c.judge, c.embedder, sorted(c.judge_options.items()), c.cache_folder())
"""

JUDGE_TEST = """
def test_judge(localragas_judge, localragas_embedder):
    print("JUDGE", localragas_judge.name, type(localragas_judge).__name__, localragas_embedder.name)
"""


def _line(result, tag: str) -> str:
    return next(line[line.index(tag):] for line in result.outlines if tag + " " in line)


def test_command_line_options_reach_the_fixtures(pytester):
    pytester.makepyfile(test_cfg=CONFIG_TEST)
    r = pytester.runpytest("-s", "--localragas-judge", "llamacpp:my.gguf", "--localragas-embedder", "fake",
                           "--localragas-judge-option", "n_ctx=4096", "--localragas-judge-option", "flash=true",
                           "--localragas-judge-option", "label=x y", "--localragas-cache-dir", "cachehere")
    r.assert_outcomes(passed=1)
    assert _line(r, "CONFIG") == (
        "CONFIG llamacpp:my.gguf fake [('flash', True), ('label', 'x y'), ('n_ctx', 4096)] cachehere")
    r.stdout.fnmatch_lines(["localragas: judge=llamacpp:my.gguf, embedder=fake, cache_dir=cachehere, "
                            "judge_options=n_ctx=4096,flash=True,label=x y"])


def test_judge_and_embedder_fixtures_use_the_options(pytester):
    pytester.makepyfile(test_j=JUDGE_TEST)
    r = pytester.runpytest("-s", *FAKE)
    r.assert_outcomes(passed=1)
    assert _line(r, "JUDGE") == "JUDGE fake FakeJudge fake"
    r.stdout.fnmatch_lines(["*= localragas =*",
                            "judge fake; embedder fake; 0 judge call(s), 0 from the cache; cache *"])


def test_environment_and_ini_fallbacks_and_precedence(pytester, monkeypatch):
    pytester.makepyfile(test_cfg=CONFIG_TEST)
    pytester.makeini("[pytest]\nlocalragas_judge = from-ini\nlocalragas_embedder = ini-embedder\n"
                     "localragas_judge_options = n_ctx=1024 seed=1\nlocalragas_cache_dir = ini-cache\n")
    r = pytester.runpytest("-s")
    assert _line(r, "CONFIG") == "CONFIG from-ini ini-embedder [('n_ctx', 1024), ('seed', 1)] ini-cache"

    monkeypatch.setenv("LOCALRAGAS_JUDGE", "from-env")
    monkeypatch.setenv("LOCALRAGAS_JUDGE_OPTIONS", "seed=2 n_threads=2")
    monkeypatch.setenv("LOCALRAGAS_CACHE_DIR", "env-cache")
    r = pytester.runpytest("-s")
    assert _line(r, "CONFIG") == (
        "CONFIG from-env ini-embedder [('n_ctx', 1024), ('n_threads', 2), ('seed', 2)] env-cache")

    r = pytester.runpytest("-s", "--localragas-judge", "from-cli", "--localragas-judge-option", "seed=3",
                           "--localragas-no-cache")
    assert _line(r, "CONFIG") == "CONFIG from-cli ini-embedder [('n_ctx', 1024), ('n_threads', 2), ('seed', 3)] None"


def test_defaults_without_settings_and_no_header(pytester, monkeypatch):
    for var in ("LOCALRAGAS_JUDGE", "LOCALRAGAS_EMBEDDER", "LOCALRAGAS_JUDGE_OPTIONS", "LOCALRAGAS_CACHE_DIR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("LOCALRAGAS_STATE_DIR", str(pytester.path / "state"))
    pytester.makepyfile(test_cfg=CONFIG_TEST)
    r = pytester.runpytest("-s")
    r.assert_outcomes(passed=1)
    assert _line(r, "CONFIG") == f"CONFIG None None [] {pytester.path / 'state' / 'cache'}"
    assert not any(line.startswith("localragas") for line in r.outlines)  # no header, no summary section


def test_a_malformed_judge_option_is_a_usage_error(pytester):
    pytester.makepyfile(test_cfg=CONFIG_TEST)
    r = pytester.runpytest("--localragas-judge-option", "n_ctx")
    assert r.ret == pytest.ExitCode.USAGE_ERROR
    r.stderr.fnmatch_lines(["*--localragas-judge-option: 'n_ctx' must look like KEY=VALUE*"])


GATE_TESTS = """
from localragas import Sample, assert_gate

CTX = ["Paris is the capital of France."]

def test_good(evaluate):
    report = evaluate([Sample(id="ok", question="What is the capital of France?", contexts=CTX,
                              answer="Paris is the capital of France.")], metrics=["faithfulness"])
    assert report.meta["judge"]["name"] == "fake"
    assert report.summary_for("faithfulness").mean == 1.0
    assert_gate(report)

def test_bad(evaluate):
    samples = [
        {"id": "good", "question": "Capital?", "contexts": CTX, "answer": "Paris is the capital of France."},
        {"id": "half", "question": "Capital?", "contexts": CTX,
         "answer": "Paris is the capital of France. The moon is made of green cheese."},
        {"id": "bad", "question": "Capital?", "contexts": CTX, "answer": "The moon is made of green cheese."},
        {"id": "worse", "question": "Capital?", "contexts": CTX, "answer": "The sun is a cold planet."},
        {"id": "dodge", "question": "Capital?", "contexts": CTX, "answer": "Yes."},
    ]
    # the judge's claims (statements=claims): "Yes." states none, so it is unscored (a sentence would be scored)
    report = evaluate(samples, metrics=["faithfulness"], metric_options={"faithfulness": {"statements": "claims"}})
    assert report.summary_for("faithfulness").mean == 0.375
    assert_gate(report)
"""


def test_a_passing_gate_passes_and_a_failing_gate_fails_with_the_details(pytester):
    pytester.makepyfile(test_gate=GATE_TESTS)
    r = pytester.runpytest(*FAKE, "-rA", "--junitxml=junit.xml")
    r.assert_outcomes(passed=1, failed=1)
    r.stdout.fnmatch_lines([
        "E*AssertionError: RAG quality gate failed: 1 of 1 gated metric(s) below threshold (5 sample(s), judge fake)",
        "E*FAILED faithfulness: mean 0.375, threshold 0.50*",
        "E*faithfulness * < 0.50: answers state things the retrieved contexts do not support*",
        "E*worst 4 of 4 scored sample(s) (2 below 0.50):",
        'E*bad    0.000  unsupported 1/1: "The moon is made of green cheese."',
        'E*worse  0.000  unsupported 1/1: "The sun is a cold planet."',
        'E*half   0.500  unsupported 1/2: "The moon is made of green cheese."',
        "E*good   1.000  all 1 statement(s) supported",
        "E*unscored (1; left out of the mean):",
        "E*dodge: no_claims",
    ])
    # the terminal summary: one line per evaluate() call
    r.stdout.fnmatch_lines([
        "*= localragas =*",
        "judge fake; embedder -; * judge call(s), * from the cache; cache *",
        "PASSED test_gate.py::test_good (1 samples): faithfulness 1.000 >= 0.5",
        "FAILED test_gate.py::test_bad (5 samples): faithfulness 0.375 < 0.5",
    ])
    junit = (pytester.path / "junit.xml").read_text()
    assert '<property name="localragas.faithfulness" value="0.3750" />' in junit
    assert '<property name="localragas.faithfulness.status" value="failed" />' in junit


def test_evaluate_kwargs_and_project_config_thresholds(pytester):
    pytester.makefile(".toml", localragas='[thresholds]\nfaithfulness = 0.3\n')
    pytester.makepyfile(test_gate=GATE_TESTS)
    r = pytester.runpytest(*FAKE)
    r.assert_outcomes(passed=2)  # mean 0.375 >= the project's 0.3

    pytester.makepyfile(test_kwargs="""
from localragas import assert_gate
CTX = ["Paris is the capital of France."]

def test_override(evaluate):
    report = evaluate([{"question": "Capital?", "contexts": CTX, "answer": "The moon is made of green cheese."}],
                      metrics=["faithfulness"], thresholds={"faithfulness": 0.0})
    assert report.samples[0].id.startswith("q-")  # named by its question, as a file row without an id
    assert report.meta["thresholds"] == {"faithfulness": 0.0}
    assert_gate(report)
""")
    r = pytester.runpytest(*FAKE, "test_kwargs.py")
    r.assert_outcomes(passed=1)


def test_gate_on_reaches_evaluate(pytester):
    pytester.makepyfile(test_on="""
def test_on(evaluate):
    report = evaluate([{"question": "Capital?", "contexts": ["Paris is the capital of France."],
                        "answer": "Paris is the capital of France."}], metrics=["faithfulness"])
    assert report.gate.on == "lower-bound"
""")
    pytester.runpytest(*FAKE, "--localragas-gate-on", "lower-bound").assert_outcomes(passed=1)
    assert pytester.runpytest(*FAKE, "--localragas-gate-on", "median").ret == pytest.ExitCode.USAGE_ERROR


def test_the_cache_makes_a_rerun_ask_the_judge_nothing(pytester, tmp_path):
    pytester.makepyfile(test_gate=GATE_TESTS)
    args = [*FAKE, "--localragas-cache-dir", str(tmp_path / "c"), "-k", "good"]
    first = pytester.runpytest(*args)
    # faithfulness by default: one graded verdict for the answer's one sentence, no extraction call; and the judge
    # check's statements (supported and not, in English: run/judge_check.py STATEMENT_ORDER)
    calls = 1 + len(judge_check.STATEMENT_ORDER) + canaries.PER_GROUP  # and the canaries asked during the run
    first.stdout.fnmatch_lines([f"judge fake; embedder -; {calls} judge call(s), 0 from the cache; cache *"])
    again = pytester.runpytest(*args)
    again.stdout.fnmatch_lines([f"judge fake; embedder -; 0 judge call(s), {calls} from the cache; cache *"])


CHECK_TEST = """
from localragas import Sample

def test_check(evaluate):
    report = evaluate([Sample(id="ok", question="Capital?", contexts=["Paris is the capital of France."],
                              answer="Paris is the capital of France.")], metrics=["faithfulness"])
    print("CHECK", report.meta["judge_check"]["status"], report.meta["judge_check"].get("reason"))
"""


@pytest.mark.parametrize("how, status", [((), "passed None"),
                                         (("--localragas-no-judge-check",), "skipped --no-judge-check"),
                                         (("-o", "localragas_judge_check=false"), "skipped --no-judge-check")])
def test_the_judge_check_runs_in_the_evaluate_fixture_unless_it_is_switched_off(pytester, how, status):
    pytester.makepyfile(test_check=CHECK_TEST)
    r = pytester.runpytest("-s", *FAKE, "--localragas-no-cache", *how)
    r.assert_outcomes(passed=1)
    assert _line(r, "CHECK") == f"CHECK {status}"


# --- the example ------------------------------------------------------------------------------------------------


def example(pytester) -> None:
    """The example test and its test set, in pytester's folder."""
    pytester.makepyfile(test_rag_quality_gate=EXAMPLE.read_text(encoding="utf-8"))
    cases = EXAMPLE.with_name("help_centre_cases.jsonl")
    (pytester.path / cases.name).write_text(cases.read_text(encoding="utf-8"), encoding="utf-8")


def test_the_example_passes_with_the_fake_judge(pytester):
    example(pytester)
    r = pytester.runpytest(*FAKE)
    r.assert_outcomes(passed=1)
    r.stdout.fnmatch_lines(["PASSED test_rag_quality_gate.py::test_rag_quality_gate_passes (6 samples): "
                            "faithfulness 1.000 >= 0.8, answer_relevancy * >= 0.75, context_precision * >= 0.65, "
                            "context_recall 1.000 >= 0.7"])


BREAKAGES = {
    # the generator adds a sentence no retrieved chunk supports
    "hallucination": ("generate", "lambda self, q, c: original(self, q, c) + ' Every plan includes a free espresso "
                                  "machine.'", ["FAILED faithfulness: mean 0.567, threshold 0.80*",
                                                '*unsupported 1/2: "Every plan includes a free espresso machine."']),
    # retrieval returns the wrong chunks
    "retrieval": ("retrieve", "lambda self, q: [self.chunks[-1]]",
                  ["FAILED context_precision: mean 0.056, threshold 0.65*", "*irrelevant chunk rank(s) 1 of 1*"]),
}


@pytest.mark.parametrize("breakage", sorted(BREAKAGES))
def test_the_example_fails_when_the_rag_system_regresses(pytester, breakage):
    method, replacement, expected = BREAKAGES[breakage]
    example(pytester)
    pytester.makeconftest(f"""
import pytest

@pytest.fixture(autouse=True)
def broken(request, monkeypatch):
    original = getattr(request.module.ToyRag, {method!r})
    monkeypatch.setattr(request.module.ToyRag, {method!r}, {replacement})
""")
    r = pytester.runpytest(*FAKE)
    r.assert_outcomes(failed=1)
    r.stdout.fnmatch_lines(["E*AssertionError: RAG quality gate failed:*", *[f"E*{e.lstrip('*')}" for e in expected]])


def test_a_calibration_judge_option_reaches_the_runs_and_the_thresholds(pytester):
    families = {"verify_statement": {"a": 2.0, "b": 0.0}}
    (pytester.path / "cal.json").write_text(json.dumps({"format": "localragas-calibration/1", "families": families}))
    pytester.makepyfile(test_cal="""
def test_cal(localragas_judge, evaluate):
    report = evaluate([{"question": "Capital?", "contexts": ["Paris is the capital of France."],
                        "answer": "Paris is the capital of France."}], metrics=["faithfulness"])
    print("CAL", report.meta["calibration"]["source"], report.meta["thresholds"], report.meta["uncalibrated"])
""")
    r = pytester.runpytest("-s", *FAKE, "--localragas-judge-option", "calibration=cal.json")
    r.assert_outcomes(passed=1)
    assert _line(r, "CAL") == "CAL cal.json {'faithfulness': 0.8} []"


def test_the_project_configs_prompt_overrides_and_custom_metrics_reach_the_judge(pytester, own_metrics):
    (pytester.path / "mine.txt").write_text("Say yes only when a context states the statement word for word.")
    (pytester.path / "other.txt").write_text("Say yes when a context implies the statement.")
    pytester.makefile(".toml", localragas='[prompts]\nverify_statement = "mine.txt"\n\n'
                                          '[custom_metrics.on_topic]\nquestion = "Does the answer reply?"\n')
    pytester.makepyfile(test_prompts="""
import hashlib
from pathlib import Path

ROWS = [{"question": "Capital?", "contexts": ["Paris is the capital of France."],
         "answer": "Paris is the capital of France."}]


def sha(name):
    return hashlib.sha256(Path(name).read_text().strip().encode()).hexdigest()


def test_config_prompts(localragas_judge, evaluate):
    report = evaluate(ROWS, metrics=["faithfulness", "on_topic"])
    assert report.meta["prompts"]["overridden"] == {"verify_statement": str(Path("mine.txt").resolve())}
    assert report.meta["prompts"]["sha256"]["verify_statement"] == sha("mine.txt")
    assert report.samples[0].metrics["on_topic"].value is not None
    other = evaluate(ROWS, metrics=["faithfulness"], prompts={"verify_statement": "other.txt"})
    assert other.meta["prompts"]["sha256"]["verify_statement"] == sha("other.txt")
    again = evaluate(ROWS, metrics=["faithfulness"])  # the session's again: the judge holds no run's prompts
    assert again.meta["prompts"]["sha256"]["verify_statement"] == sha("mine.txt")
    assert not hasattr(localragas_judge, "prompts")
""")
    r = pytester.runpytest("-s", *FAKE)
    r.assert_outcomes(passed=1)


LABELS_TEST = """
def test_eval(evaluate, localragas_config):
    assert localragas_config.labels == []
    report = evaluate([{"id": "s1", "question": "Which tier is cheapest?", "answer": "The Archive tier.",
                        "contexts": ["The Archive tier is the cheapest tier."]}], metrics=["faithfulness"])
    assert report.spot_checks is None
    print("RAN-WITHOUT-LABELS")
"""


def test_the_settings_files_labels_are_not_applied_to_every_evaluate(pytester, monkeypatch):
    """A top-level `labels` of localragas.toml names one run's labels: every evaluate() of a test suite is another run,
    so the plugin does not inherit it (it would be refused as another run's labels)."""
    from localragas.data.labels import Label, append_label  # noqa: PLC0415

    monkeypatch.setenv("LOCALRAGAS_STATE_DIR", str(pytester.path / "state"))
    append_label(pytester.path / "labels.jsonl", Label(key="other|faithfulness|0|0123456789abcdef", sample_id="other",
                                                       metric="faithfulness", item=0, item_hash="0123456789abcdef",
                                                       label=1, reviewer="ana", time="2026-12-01T10:00:00+00:00"))
    pytester.makefile(".toml", localragas='labels = ["labels.jsonl"]\n')
    pytester.makepyfile(test_labels=LABELS_TEST)
    r = pytester.runpytest("-s", *FAKE, "--localragas-no-cache")
    assert r.ret == 0, r.stdout.str()
    assert "RAN-WITHOUT-LABELS" in r.stdout.str()
