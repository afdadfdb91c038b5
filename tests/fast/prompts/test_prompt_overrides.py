"""Prompt overrides: a file's text replaces a built-in family's instruction block (the data layout and reply line
stay), what the judge is asked changes, the report records each family's template hash, compare warns when two runs'
differ, and the resume checkpoint's key covers them."""
from __future__ import annotations

import json

import pytest

import localragas
from localragas.quality.compare import compare_reports
from localragas.core.errors import ConfigError
from localragas.judges import FakeJudge, Judging
from localragas.prompts import (check_question, contradict_statement, entities_in_contexts, extract_claims,
                                extract_entities, generate_questions, judge_chunk, judge_chunks,
                                rate_context_relevance, standalone_question, verify_statement, verify_statements)
from localragas.data.conversation_models import Message
from localragas.prompts.conversation import knowledge_retained, request_addressed
from localragas.prompts.overrides import TEMPLATES, PromptOverrides, load_overrides

from cli_helpers import cli, write_file, write_jsonl
from reports_helpers import make_report

MINE = "Say yes only when a context states the statement word for word."
ROWS = [{"id": "a", "question": "What colour is the sky?", "answer": "The sky is blue.",
         "contexts": ["The sky is blue."]}]

TALK = [Message(role="user", content="u"), Message(role="assistant", content="a")]  # a conversation's prompts' data
BUILT = {  # one prompt of each family, per language, with every variant of its instruction block
    "extract_claims": lambda lang: [extract_claims("x", lang=lang)],
    "extract_entities": lambda lang: [extract_entities("x", lang=lang)],
    "entities_in_contexts": lambda lang: [entities_in_contexts(["e"], ["c"], lang=lang)],
    "generate_questions": lambda lang: [generate_questions("x", lang=lang)],
    "check_question": lambda lang: [check_question("a", "q", lang=lang)],
    "rate_context_relevance": lambda lang: [rate_context_relevance("q", ["c"], v, lang=lang) for v in (0, 1)],
    "judge_chunk": lambda lang: [judge_chunk("q", t, k, "c", lang=lang)
                                 for t, k in (("r", "reference answer"), ("a", "answer"), ("", "question"))],
    "judge_chunks": lambda lang: [judge_chunks("q", t, k, ["c"], lang=lang)
                                  for t, k in (("r", "reference answer"), ("a", "answer"), ("", "question"))],
    "verify_statements": lambda lang: [verify_statements(["s"], ["c"], lang=lang)],
    "verify_statement": lambda lang: [verify_statement("s", ["c"], lang=lang)],
    "contradict_statement": lambda lang: [contradict_statement("s", ["c"], lang=lang)],
    "standalone_question": lambda lang: [standalone_question([Message(role="user", content="u")], "m", lang=lang)],
    "knowledge_retained": lambda lang: [knowledge_retained(TALK, "m", "r", lang=lang)],
    "request_addressed": lambda lang: [request_addressed(TALK, "m", 1, lang=lang)],
}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("family", sorted(TEMPLATES))
def test_every_familys_block_is_found_and_replaced_in_its_prompts(family, lang):
    overrides = PromptOverrides({family: MINE})
    for prompt in BUILT[family](lang):
        asked = overrides.apply(prompt)
        assert MINE in asked.user and asked.user != prompt.user, prompt.name
        assert asked.system == prompt.system and asked.name == prompt.name
        assert asked.user.endswith(prompt.user[-40:])  # the reply line stays


def test_the_split_moves_with_the_replaced_block():
    prompt = verify_statement("The sky is blue.", ["The sky is blue."])
    asked = PromptOverrides({"verify_statement": MINE}).apply(prompt)
    assert asked.user[asked.splits[0]:] == prompt.user[prompt.splits[0]:]  # the item's own text, after the split
    assert asked.user[:asked.splits[0]].endswith(MINE + "\n\n")


def test_an_override_changes_what_the_judge_is_asked_and_the_reports_hashes(tmp_path):
    instruction = write_file(tmp_path, "mine.txt", MINE + "\n")
    judge = FakeJudge()
    claims = {"faithfulness": {"statements": "claims"}}  # two prompts: the one overridden, and extract_claims kept
    plain = localragas.evaluate(ROWS, metrics=["faithfulness"], judge=FakeJudge(), cache=False, progress=False,
                                metric_options=claims)
    mine = localragas.evaluate(ROWS, metrics=["faithfulness"], judge=judge, cache=False, progress=False,
                               prompts={"verify_statement": instruction}, metric_options=claims)
    (asked,) = judge.asked("verify_statement")
    assert MINE in asked.user and "Do not use your own knowledge." not in asked.user
    assert "<statement>\nThe sky is blue.\n</statement>" in asked.user
    before, after = plain.meta["prompts"], mine.meta["prompts"]
    assert before["overridden"] == {} and after["overridden"] == {"verify_statement": str(instruction)}
    assert before["sha256"]["verify_statement"] != after["sha256"]["verify_statement"]
    assert before["sha256"]["extract_claims"] == after["sha256"]["extract_claims"]
    (differs,) = [d for d in compare_reports(plain, mine).method_differences if d.aspect == "prompts"]
    assert differs.text.startswith("prompts asked in other words: verify_statement: built-in (localragas ")
    assert differs.text.endswith(f" in base, {instruction} in new") and differs.metrics == ["faithfulness"]
    assert compare_reports(plain, plain).method_differences == []


def test_the_judge_cache_keys_on_the_text_asked(tmp_path):
    instruction = write_file(tmp_path, "mine.txt", MINE)
    judge = FakeJudge()
    for prompts in (None, {"verify_statement": instruction}, None):
        localragas.evaluate(ROWS, metrics=["faithfulness"], judge=judge, cache_dir=tmp_path / "cache",
                            progress=False, prompts=prompts)
    assert len(judge.asked("verify_statement")) == 2  # the third run is the first one's, from the cache


def test_eval_reads_prompts_from_the_settings_file_and_the_flag_and_keys_the_checkpoint(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LOCALRAGAS_STATE_DIR", str(tmp_path / "state"))
    (tmp_path / "prompts").mkdir()
    write_file(tmp_path / "prompts", "support.txt", MINE)
    write_file(tmp_path, "other.txt", "Answer yes when the contexts agree with the statement.")
    write_file(tmp_path, "localragas.toml", '[prompts]\nverify_statement = "prompts/support.txt"\n')
    write_jsonl(tmp_path / "d.jsonl", ROWS)
    args = ("eval", "d.jsonl", "--judge", "fake", "-m", "faithfulness", "--no-cache", "--no-progress")
    r1 = cli(*args, "--out", "a.json")
    r2 = cli(*args, "--prompt", "verify_statement=other.txt", "--out", "b.json")
    assert r1.exit_code == 0 and r2.exit_code == 0, r1.output + r2.output
    a, b = (json.loads((tmp_path / n).read_text())["meta"]["prompts"] for n in ("a.json", "b.json"))
    assert a["overridden"] == {"verify_statement": str(tmp_path / "prompts" / "support.txt")}
    assert b["overridden"] == {"verify_statement": "other.txt"}
    r = cli("compare", "a.json", "b.json")
    assert ("prompts asked in other words: verify_statement: " + str(tmp_path / "prompts" / "support.txt")
            + " in base, other.txt in new") in " ".join(r.output.split())


def test_the_checkpoint_key_covers_the_overrides(tmp_path):
    judge = FakeJudge()
    bare = Judging(judge).scoring_fingerprint
    mine = Judging(judge, prompts=load_overrides({"verify_statement": write_file(tmp_path, "m.txt", MINE)}))
    assert mine.scoring_fingerprint.startswith(bare + "+prompts:") and mine.scoring_fingerprint != bare


@pytest.mark.parametrize("files, message", [
    ({"verify_everything": "m.txt"}, "--prompt: unknown prompt family 'verify_everything'; valid: extract_claims"),
    ({"verify_statement": "missing.txt"}, "--prompt: verify_statement: cannot read"),
    ({"verify_statement": "empty.txt"}, "--prompt: verify_statement: "),
])
def test_a_bad_override_is_refused(tmp_path, monkeypatch, files, message):
    monkeypatch.chdir(tmp_path)
    write_file(tmp_path, "m.txt", MINE)
    write_file(tmp_path, "empty.txt", "  \n")
    with pytest.raises(ConfigError) as e:
        load_overrides(files)
    assert message in str(e.value)


def test_an_unknown_family_in_the_settings_file_names_the_key(tmp_path):
    from localragas.run.config import load_settings

    path = write_file(tmp_path, "localragas.toml", '[prompts]\nverify = "m.txt"\n')
    with pytest.raises(ConfigError, match=r"key 'prompts.verify': unknown prompt family"):
        load_settings(path)


def test_a_report_from_before_prompt_hashes_compares_without_a_prompt_warning():
    old = make_report({"s1": {"faithfulness": 0.5}})  # no meta.prompts
    new = make_report({"s1": {"faithfulness": 0.5}})
    new.meta["prompts"] = {"sha256": {"verify_statement": "ab"}, "overridden": {}}
    assert compare_reports(old, new).method_differences == []


def test_calibrate_from_python_takes_prompts_as_evaluate_does(tmp_path):
    instruction = write_file(tmp_path, "mine.txt", MINE)
    labelled = [{**ROWS[0], "label": {"metric": "faithfulness", "kind": "binary", "value": 1}}]
    judge = FakeJudge()
    run = localragas.calibrate(labelled, judge, cache=False, progress=False, resume=False,
                               prompts={"verify_statement": instruction})
    (asked,) = judge.asked("verify_statement")
    assert MINE in asked.user and "Do not use your own knowledge." not in asked.user
    assert run.results[0].scored == 1
    with pytest.raises(ConfigError, match="unknown prompt family 'verify_statemnt'"):
        localragas.calibrate(labelled, "fake", cache=False, progress=False, resume=False,
                             prompts={"verify_statemnt": instruction})
