"""SmolLM2-135M + MiniLM end to end through the CLI on examples/: every call parses, every metric is scored or
unscored with a reason, and every score is in [0, 1]."""
from __future__ import annotations

import pytest

from cli_helpers import cli
from real_helpers import EXAMPLES, examples_report


@pytest.fixture(scope="module")
def examples_run(tmp_path_factory):
    """`localragas eval` of the examples with SmolLM2 + MiniLM, its judge cache in a folder of its own (state of its
    own too), shared by the tests below: its result, report, CSV and cache folder."""
    folder = tmp_path_factory.mktemp("examples-run")
    out, csv_path, cache = folder / "report.json", folder / "scores.csv", folder / "cache"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LOCALRAGAS_STATE_DIR", str(folder / "state"))
        result = cli("eval", EXAMPLES, "--judge", "smollm2-135m", "--embedder", "minilm-l6", "--no-progress",
                     "--out", out, "--csv", csv_path, "--cache-dir", cache)
    return result, out, csv_path, cache


def test_cli_end_to_end_with_test_judge(examples_run):
    result, out, csv_path, _ = examples_run
    assert result.exit_code in (0, 1), result.output  # the gate may fail with a 135M judge; never an error
    assert "quality gate" in result.output
    report, n = examples_report(out)
    assert report.meta["judge"]["fingerprint"].startswith("b179c9523d0e")
    for s in report.samples:
        assert set(s.metrics) == {"faithfulness", "answer_relevancy", "context_precision", "context_recall"}
        for name, m in s.metrics.items():
            if m.value is None:
                assert m.unscored, f"{s.id}/{name} unscored without a reason"
                assert m.unscored.split(":")[0] in {"no_claims", "no_reference", "no_contexts"}, m.unscored
            else:
                assert 0.0 <= m.value <= 1.0
        if s.metrics["answer_relevancy"].value is not None and not s.metrics["answer_relevancy"].evidence.get("noncommittal"):
            assert len(s.metrics["answer_relevancy"].evidence["generated_questions"]) == 3
    no_ref = [s for s in report.samples if s.metrics["context_recall"].unscored == "no_reference"]
    assert len(no_ref) == 4
    assert len(csv_path.read_text().strip().splitlines()) == n + 1


def test_same_input_same_scores(examples_run, smol_judge, minilm):
    """Deterministic decoding: a second run (in Python, through the session's own judge and embedder, no cache) gives
    the CLI examples run's per-sample scores and evidence, to the last digit."""
    from localragas import evaluate, load_samples

    _, out, _, _ = examples_run
    first, _ = examples_report(out)
    samples, _ = load_samples(EXAMPLES)
    again = evaluate(samples[:3], judge=smol_judge, embedder=minilm, cache=False)  # every call judged again
    assert sum(s.judge_calls for s in again.samples) > 0
    assert [s.metrics for s in first.samples[:3]] == [s.metrics for s in again.samples]


def test_cached_rerun_loads_no_model_and_calls_no_judge(examples_run):
    """A re-run with the persistent cache (the examples run's) makes zero judge calls, and never even loads the GGUF
    or the embedder: every reply that run needed validated and was cached (a failed call is never cached)."""
    from localragas import evaluate, get_embedder, load_samples
    from localragas.judges import get_judge

    _, out, _, cache = examples_run
    first, _ = examples_report(out)  # every call parsed, none failed
    samples, _ = load_samples(EXAMPLES)
    judge, embedder = get_judge("smollm2-135m"), get_embedder("minilm-l6")
    second = evaluate(samples[:2], judge=judge, embedder=embedder, cache_dir=cache)
    assert first.meta["judge_stats"]["calls"] > 0
    assert second.meta["judge_stats"]["calls"] == 0
    assert second.meta["judge_stats"]["cache_hits"] > 0
    assert judge._llm is None and embedder._model is None
    assert [s.metrics for s in first.samples[:2]] == [s.metrics for s in second.samples]
