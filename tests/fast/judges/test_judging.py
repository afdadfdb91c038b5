"""A judge is never changed by a run: each run asks it through its own judging context (judges/judging.py), with
that run's cache, prompt overrides, calibration and counters."""
from __future__ import annotations

import copy

import localragas
from localragas.judges import FakeJudge, Judging

from calibration_helpers import calibration_file

MINE = "Say yes only when a context states the statement word for word."
BUILT_IN = "Do not use your own knowledge."  # a line of verify_statement's built-in instruction
ROWS = [{"id": "a", "question": "What colour is the sky?", "answer": "The sky is blue. Grass is green.",
         "contexts": ["The sky is blue on a clear day."]}]


def _state(judge: FakeJudge) -> dict:
    """The judge's attributes, but for `calls`: the fake's record of what it was asked (the test's instrument)."""
    return {k: copy.copy(v) for k, v in vars(judge).items() if k != "calls"}


def test_two_runs_on_one_judge_each_ask_with_their_own_settings_and_leave_it_unchanged(tmp_path):
    judge = FakeJudge()
    before = _state(judge)
    instruction = tmp_path / "mine.txt"
    instruction.write_text(MINE + "\n", encoding="utf-8")

    first = localragas.evaluate(ROWS, metrics=["faithfulness"], judge=judge, cache_dir=tmp_path / "cache",
                                prompts={"verify_statement": str(instruction)}, progress=False,
                                judge_options={"calibration": calibration_file(tmp_path / "c.json")})
    asked_first = list(judge.asked("verify_statement"))
    judge.calls.clear()
    second = localragas.evaluate(ROWS, metrics=["faithfulness"], judge=judge, cache=False, progress=False)
    asked_second = judge.asked("verify_statement")

    assert _state(judge) == before  # nothing attached, nothing changed
    for run_setting in ("cache", "prompts", "calibration", "stats", "log"):
        assert not hasattr(judge, run_setting)
    # the first run asked with its override (its judge check too), the second with the built-in text
    assert asked_first and all(MINE in p.user and BUILT_IN not in p.user for p in asked_first)
    assert asked_second and all(BUILT_IN in p.user and MINE not in p.user for p in asked_second)
    assert first.meta["prompts"]["overridden"] == {"verify_statement": str(instruction)}
    assert second.meta["prompts"]["overridden"] == {}
    # the first run's calibration, cache and counters are its own
    assert first.meta["calibration"]["families"]["verify_statement"]["a"] == 2.0
    assert second.meta["calibration"] is None and "faithfulness" in second.meta["uncalibrated"]
    assert first.meta["judge_cache"] == str(tmp_path / "cache" / "judge-cache.sqlite3")
    assert second.meta["judge_cache"] is None
    check_calls = second.meta["judge_check"].get("calls", 0)
    assert second.meta["judge_stats"]["calls"] + check_calls == len(judge.calls)  # not the first run's added in


def test_a_judging_context_counts_its_own_calls_only():
    judge = FakeJudge()
    one, two = Judging(judge), Judging(judge)
    from localragas.prompts import extract_claims
    from localragas.core.reply_schemas import Claims

    one.generate(extract_claims("A is B."), Claims)
    two.generate(extract_claims("C is D."), Claims)
    two.generate(extract_claims("E is F."), Claims)
    assert (one.stats.calls, two.stats.calls) == (1, 2)
    assert [r["prompt"] for r in one.log.records] == ["extract_claims"]
    assert len(judge.calls) == 3
