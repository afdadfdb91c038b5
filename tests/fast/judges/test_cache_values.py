"""The judge cache keeps the number a next-token read gave (P(yes), a rubric's probabilities), under the keys caches
have always had; the YesNo / Choices JSON older versions stored under them is read too, so a cache filled before is
still hit: a re-run makes no judge call and gives the same scores."""
from __future__ import annotations

import json
import sqlite3

import pytest

from localragas.core.errors import JudgeError
from localragas.core.reply_schemas import Choices, YesNo, schema_text
from localragas.judges import FakeJudge, Judging
from localragas.judges.base import Judge
from localragas.judges.cache import DB_NAME, JudgeCache, cache_key
from localragas.prompts import Prompt

from cli_helpers import EXAMPLES, cli

YES_NO_PROMPT = Prompt("verify_statement", "Is the sky blue?", "Reply yes or no.")
RUBRIC_PROMPT = Prompt("rubric:x", "Levels 1, 2 or 3?", "Reply with a digit.")


class NeverAsked(Judge):
    """A backend the test must not reach: every value comes from the cache."""

    name = "fake"
    fingerprint = "fake:fake"

    def complete(self, prompt, schema, output):
        raise AssertionError(f"{prompt.name} was asked of the judge")

    def next_tokens(self, prompt, words):
        raise AssertionError(f"{prompt.name} was asked of the judge")


def test_the_keys_are_those_caches_have_always_had():
    """Pinned: computed by the code before P(yes) was cached as a number (a changed key empties every cache)."""
    assert cache_key("fake:fake", schema_text(YesNo), YES_NO_PROMPT) == (
        "8b4c99862395ced5aa01f7ac01041914b29c369c8264b3f791a4afb2c121c551")
    assert cache_key("fake:fake", schema_text(Choices), RUBRIC_PROMPT) == (
        "22bd9e6be6a76f8981117dc2f6398866abce3a53a67226c80b008b04c13eb169")


def test_a_read_is_cached_as_its_number(tmp_path):
    judging = Judging(FakeJudge([{"p_yes": 0.25, "mass": 1.0}, {"probabilities": {"1": 0.2, "3": 0.8}, "mass": 1.0}]),
                      cache=JudgeCache(tmp_path))
    assert judging.p_yes(YES_NO_PROMPT) == 0.25
    assert judging.choice_probabilities(RUBRIC_PROMPT, ["1", "2", "3"]) == {"1": 0.2, "2": 0.0, "3": 0.8}
    judging.cache.close()
    with sqlite3.connect(tmp_path / DB_NAME) as db:
        stored = dict(db.execute("SELECT prompt_name, reply FROM replies"))
    assert stored == {"verify_statement": "0.25", "rubric:x": '{"1": 0.2, "2": 0.0, "3": 0.8}'}


@pytest.mark.parametrize("reply, expected", [
    ('{"p_yes": 0.736842, "mass": 0.95}', 0.736842),  # as localragas before this change wrote it
    ("0.736842", 0.736842),
    ("1.0", 1.0),
    ("0", 0.0),
])
def test_p_yes_is_read_from_either_stored_form_without_asking(tmp_path, reply, expected):
    key = cache_key("fake:fake", schema_text(YesNo), YES_NO_PROMPT)
    with JudgeCache(tmp_path) as cache:
        cache.put(key, "fake", "verify_statement", reply, 31, 4, 0.5)
        judging = Judging(NeverAsked(), cache=cache)
        assert judging.p_yes(YES_NO_PROMPT) == expected
    assert (judging.stats.calls, judging.stats.cache_hits) == (0, 1)
    assert judging.log.records == [{"prompt": "verify_statement", "cache_hit": True, "prompt_tokens": 31,
                                    "completion_tokens": 4, "cached_tokens": 0, "seconds": 0.0}]


@pytest.mark.parametrize("reply", ['{"probabilities": {"1": 0.1, "2": 0.3, "3": 0.6}, "mass": 0.9}',
                                   '{"1": 0.1, "2": 0.3, "3": 0.6}'])
def test_a_rubrics_probabilities_are_read_from_either_stored_form_without_asking(tmp_path, reply):
    key = cache_key("fake:fake", schema_text(Choices), RUBRIC_PROMPT)
    with JudgeCache(tmp_path) as cache:
        cache.put(key, "fake", "rubric:x", reply, 20, 9, 0.5)
        judging = Judging(NeverAsked(), cache=cache)
        assert judging.choice_probabilities(RUBRIC_PROMPT, [1, 2, 3]) == {"1": 0.1, "2": 0.3, "3": 0.6}
    assert (judging.stats.calls, judging.stats.cache_hits) == (0, 1)


@pytest.mark.parametrize("reply", ['{"p_yes": 1.5, "mass": 1.0}', "1.5", "true", '"yes"', "not json", "[0.5]"])
def test_a_stale_or_foreign_value_is_asked_again_and_replaced(tmp_path, reply):
    key = cache_key("fake:fake", schema_text(YesNo), YES_NO_PROMPT)
    with JudgeCache(tmp_path) as cache:
        cache.put(key, "fake", "verify_statement", reply, 31, 4, 0.5)
        judging = Judging(FakeJudge([{"p_yes": 0.4, "mass": 1.0}]), cache=cache)
        assert judging.p_yes(YES_NO_PROMPT) == 0.4
        assert cache.get(key)[0] == "0.4"
    assert (judging.stats.calls, judging.stats.cache_hits) == (1, 0)


def test_a_rubric_value_for_other_levels_is_asked_again(tmp_path):
    key = cache_key("fake:fake", schema_text(Choices), RUBRIC_PROMPT)
    with JudgeCache(tmp_path) as cache:
        cache.put(key, "fake", "rubric:x", '{"probabilities": {"7": 1.0}, "mass": 1.0}', 20, 9, 0.5)
        judging = Judging(FakeJudge([{"probabilities": {"1": 1.0}, "mass": 1.0}]), cache=cache)
        assert judging.choice_probabilities(RUBRIC_PROMPT, ["1", "2", "3"]) == {"1": 1.0, "2": 0.0, "3": 0.0}
    assert judging.stats.calls == 1


def test_a_failed_read_is_not_cached(tmp_path):
    with JudgeCache(tmp_path) as cache:
        judging = Judging(FakeJudge([{"probabilities": {"9": 1.0}, "mass": 1.0}]), cache=cache)
        with pytest.raises(JudgeError, match="none of 1, 2, 3 among the judge's top next tokens"):
            judging.choice_probabilities(RUBRIC_PROMPT, ["1", "2", "3"])
        assert cache.info()["entries"] == 0
    assert (judging.stats.calls, judging.stats.failed_calls, judging.stats.prompt_tokens) == (1, 1, 0)


def _as_before(reply: str, prompt_name: str) -> str:
    """A row's reply as localragas wrote it before P(yes) was cached as a number: the YesNo / Choices JSON."""
    value = json.loads(reply)
    if isinstance(value, float):
        return json.dumps({"p_yes": value, "mass": 1.0})
    if prompt_name.startswith("rubric:"):
        return json.dumps({"probabilities": value, "mass": 1.0})
    return reply


def test_eval_on_a_cache_written_in_the_old_form_makes_no_judge_call(tmp_path):
    cache = tmp_path / "cache"
    args = ["eval", EXAMPLES, "--judge", "fake", "--embedder", "fake", "--cache-dir", cache, "--no-resume",
            "--no-history", "--no-progress"]
    first = cli(*args, "--out", tmp_path / "first.json")
    assert first.exit_code in (0, 1), first.output
    with sqlite3.connect(cache / DB_NAME) as db:
        rows = db.execute("SELECT key, prompt_name, reply FROM replies").fetchall()
        old = [(_as_before(reply, name), key) for key, name, reply in rows]
        db.executemany("UPDATE replies SET reply = ? WHERE key = ?", old)
    assert sum(new != reply for (new, _), (_, _, reply) in zip(old, rows)) > 50  # the graded verdicts' rows
    again = cli(*args, "--out", tmp_path / "again.json")
    assert again.exit_code == first.exit_code, again.output
    a, b = (json.loads((tmp_path / f).read_text()) for f in ("first.json", "again.json"))
    for part in ("judge_stats", "judge_check", "canaries"):  # the samples' calls, the judge check's, the canaries'
        assert b["meta"][part]["calls"] == 0 and b["meta"][part]["cache_hits"] == a["meta"][part]["calls"] > 0, part
    assert [s["metrics"] for s in b["samples"]] == [s["metrics"] for s in a["samples"]]
