"""`localragas generate` with the fake judge: every kind written and checked, each check dropping what it should with
its reason, duplicates dropped, the same test set for the same seed, and a killed run resumed from its checkpoint."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from localragas.core.errors import ConfigError, JudgeError
from localragas.testset.generation import (KINDS, UNANSWERABLE_REFERENCE, UNANSWERABLE_THRESHOLD, GenerateSpec, Generation,
                                           attempts, generate_testset, linked_facts, parse_mix, plan,
                                           summary_lines)
from localragas.judges import Judging
from localragas.judges.fake import FakeJudge, heuristic_reply
from localragas.core.reply_schemas import GeneratedItem, GeneratedLinkedItem, GeneratedQuestion
from localragas.prompts.base import neutralise

from cli_helpers import cli
from metrics_helpers import dies_after

EXAMPLE_DOCS = Path(__file__).resolve().parents[3] / "examples" / "docs"


def spec(judge, docs=EXAMPLE_DOCS, **kw) -> GenerateSpec:
    return GenerateSpec([docs], judge=judge, embedder="fake", cache=False, progress=False, **kw)


def replacing(kind: str, **reply):
    """The heuristic judge, but the write_<kind> prompt answered with `reply` over the heuristic's."""
    def respond(prompt, output):
        got = heuristic_reply(prompt, output)
        return {**got, **reply} if prompt.name == f"write_{kind}" else got
    return respond


def one_kind(kind: str, **kw) -> dict:
    return dict(mix={kind: 1.0}, **kw)


def test_every_kind_is_written_checked_and_kept_in_the_input_format():
    judge = FakeJudge()
    ts = generate_testset(spec(judge, size=12))
    kinds = [r["meta"]["kind"] for r in ts.rows]
    assert set(kinds) == set(KINDS) and ts.summary["kept"] == len(ts.rows) == 12
    for r in ts.rows:
        assert r["answer"] == "" and r["contexts"] == [] and r["id"].startswith("q-")
        kind = r["meta"]["kind"]
        assert len(r["reference_context_ids"]) == {"single": 1, "multi": 2, "abstract": r["meta"]["chunk_ids"].__len__(),
                                                   "unanswerable": 0}[kind]
        assert r["reference_contexts"] == [] if kind == "unanswerable" else len(r["reference_contexts"]) >= 1
    unanswerable = [r for r in ts.rows if r["meta"]["kind"] == "unanswerable"]
    assert all(r["reference"] == UNANSWERABLE_REFERENCE["en"] and r["meta"]["answerable"] < 0.5 for r in unanswerable)
    multi = [r for r in ts.rows if r["meta"]["kind"] == "multi"]
    assert all(len({i.split("#")[0] for i in r["reference_context_ids"]}) == 2 for r in multi)  # two documents
    # what the judge was asked: each kind's prompt with its chunks, then the reference's support and answerability
    for kind in KINDS:
        assert judge.asked(f"write_{kind}")
    single = next(r for r in ts.rows if r["meta"]["kind"] == "single")
    chunk = neutralise(single["reference_contexts"][0]).strip()
    assert any(chunk in p.user for p in judge.asked("write_single"))
    assert any(single["question"] in p.user and chunk in p.user for p in judge.asked("question_answerable"))
    assert any(chunk in p.user for p in judge.asked("verify_statement"))
    assert single["meta"]["reference_support"] >= 0.7 and single["meta"]["answerable"] >= 0.5


@pytest.mark.parametrize("kind, reply, reason", [
    ("single", {"question": "What about zebra quantum banana?"}, "not_answerable"),
    ("single", {"reference": "The moon is made of green cheese and blue marble."}, "reference_unsupported"),
    ("multi", {"reference": "Penguins vote in the winter parliament of Mars."}, "reference_unsupported"),
    ("multi", {"fact_2": "Penguins vote in the winter parliament of Mars."}, "not_linked"),
    ("abstract", {"question": "What about zebra quantum banana?"}, "not_answerable"),
    ("unanswerable", {"question": "What about the bicycle tyres pressure bar chain?"}, "answerable"),
])
def test_an_item_that_fails_a_check_is_dropped_with_its_reason(kind, reply, reason):
    judge = FakeJudge(responder=replacing(kind, **reply))
    ts = generate_testset(spec(judge, size=2, **one_kind(kind)))
    assert ts.rows == []
    counts = ts.summary["by_kind"][kind]
    tried = 2 * attempts(kind) if kind != "abstract" else counts["dropped"][reason]  # abstract: fewer windows
    assert counts["kept"] == 0 and counts["dropped"] == {reason: tried}
    assert ts.summary["dropped_by_reason"] == counts["dropped"]
    assert all(d["reason"] == reason and d["kind"] == kind for d in ts.summary["dropped_items"])


def test_a_question_copying_its_chunk_is_dropped_before_any_check():
    def copy(prompt, output):
        if prompt.name == "write_single":
            chunk = prompt.user.split("</context>")[0]  # the chunk, inside its <context id=...> tag
            words = max(chunk.splitlines(), key=lambda line: len(line.split())).split()  # its longest line's words
            return {"question": " ".join(words[:12]) + "?", "reference": "x"}
        return heuristic_reply(prompt, output)
    judge = FakeJudge(responder=copy)
    ts = generate_testset(spec(judge, size=1, **one_kind("single")))
    assert ts.summary["by_kind"]["single"]["dropped"] == {"copied_wording": 3}
    assert judge.asked("verify_statement") == [] and judge.asked("question_answerable") == []
    assert ts.summary["dropped_items"][0]["checks"]["copied_run"] >= 8


def test_near_duplicates_are_dropped():
    def same_question(prompt, output):
        if prompt.name == "question_answerable":
            return {"p_yes": 1.0, "mass": 1.0}
        return replacing("single", question="What about the lighthouse keepers?")(prompt, output)
    ts = generate_testset(spec(FakeJudge(responder=same_question), size=3, top_up=False, **one_kind("single")))
    assert len(ts.rows) == 1
    assert ts.summary["by_kind"]["single"]["dropped"] == {"duplicate": 8}  # 3 x 3 attempts, one kept
    dup = ts.summary["dropped_items"][0]
    assert dup["checks"] == {"similarity": 1.0, "of": ts.rows[0]["id"]}
    # with the top-up, single (it kept an item) goes on through further candidates, up to (3 planned + 2 short) x 3
    # attempts in all or every chunk, one kept
    topped = generate_testset(spec(FakeJudge(responder=same_question), size=3, **one_kind("single")))
    assert len(topped.rows) == 1 and topped.summary["topped_up"] == 0
    tried = min(topped.summary["chunks"], (3 + 2) * 3)
    assert topped.summary["by_kind"]["single"]["dropped"] == {"duplicate": tried - 1}


def test_a_multi_item_needs_a_second_chunk(tmp_path):
    (tmp_path / "one.txt").write_text("Only one short document about the harbour ferry timetable.", encoding="utf-8")
    ts = generate_testset(spec(FakeJudge(), docs=tmp_path, size=1, **one_kind("multi")))
    assert ts.summary["by_kind"]["multi"]["dropped"] == {"no_linked_chunk": 1}


def test_the_same_seed_gives_the_same_test_set_and_another_seed_another():
    a = generate_testset(spec(FakeJudge(), size=6, seed=3))
    b = generate_testset(spec(FakeJudge(), size=6, seed=3))
    c = generate_testset(spec(FakeJudge(), size=6, seed=4))
    assert a.rows == b.rows and a.summary["by_kind"] == b.summary["by_kind"]
    assert [r["reference_context_ids"] for r in a.rows] != [r["reference_context_ids"] for r in c.rows]


def test_a_killed_run_resumes_from_its_checkpoint():
    whole = generate_testset(spec(FakeJudge(), size=8))
    run = Generation(spec(FakeJudge(responder=dies_after(15)), size=8))
    with pytest.raises(JudgeError):
        run.run()
    assert run.checkpoint.path.is_file()
    finished = len(run.checkpoint.load())
    assert finished >= 3
    again = FakeJudge()
    second = Generation(spec(again, size=8))
    ts = second.run()
    assert second.resumed == finished
    assert ts.rows == whole.rows
    asked = sum(len(again.asked(f"write_{k}")) for k in KINDS)
    assert asked == 8 + whole.summary["dropped"] - finished  # only the candidates not in the checkpoint
    second.finish()
    assert not second.checkpoint.path.exists()


def test_a_kind_that_falls_short_is_topped_up_from_a_kind_that_kept_items():
    """Every multi candidate fails not_linked: the 2 planned multi items are filled from further single candidates
    (each checked as any single item), unless --no-top-up keeps the plan."""
    kw = dict(size=4, mix="single=1,multi=1")
    judge = FakeJudge(responder=replacing("multi", fact_2="Penguins vote in the winter parliament of Mars."))
    ts = generate_testset(spec(judge, **kw))
    by_kind = ts.summary["by_kind"]
    assert by_kind["multi"]["kept"] == 0 and by_kind["multi"]["dropped"] == {"not_linked": 2 * attempts("multi")}
    assert by_kind["single"]["kept"] == 4 and by_kind["single"]["topped_up"] == 2 and ts.summary["topped_up"] == 2
    assert [r["meta"]["kind"] for r in ts.rows] == ["single"] * 4 and len({r["id"] for r in ts.rows}) == 4
    assert [r["meta"].get("topped_up", False) for r in ts.rows] == [False, False, True, True]
    assert len(judge.asked("write_single")) == 4  # the heuristic keeps every single candidate: 2 planned + 2 more
    assert any(line.startswith("  topped up: 2 item(s) beyond the plan (single 2)") for line in summary_lines(ts.summary))
    exact = generate_testset(spec(FakeJudge(responder=replacing("multi", fact_2="Penguins vote on Mars.")),
                                  top_up=False, **kw))
    assert exact.summary["kept"] == 2 and exact.summary["topped_up"] == 0 and exact.summary["top_up"] is False
    assert not any("topped up" in line for line in summary_lines(exact.summary))


def test_top_up_never_uses_unanswerable_nor_a_kind_that_kept_nothing():
    """Every single candidate fails its answerability check: neither single (it kept nothing) nor unanswerable fills
    the set, abstract does."""
    judge = FakeJudge(responder=replacing("single", question="What about zebra quantum banana?"))
    ts = generate_testset(spec(judge, size=4, mix="single=2,abstract=1,unanswerable=1"))
    by_kind = ts.summary["by_kind"]
    assert by_kind["single"]["kept"] == 0 and by_kind["single"]["topped_up"] == 0
    assert by_kind["unanswerable"]["topped_up"] == 0 and by_kind["unanswerable"]["kept"] == 1
    assert by_kind["abstract"]["topped_up"] == 2 and by_kind["abstract"]["kept"] == 3 and ts.summary["kept"] == 4


def test_mix_and_plan():
    assert parse_mix("single=1,multi=1") == {"single": 0.5, "multi": 0.5, "abstract": 0.0, "unanswerable": 0.0}
    assert plan(20, parse_mix(None)) == {"single": 10, "multi": 5, "abstract": 3, "unanswerable": 2}
    assert sum(plan(7, parse_mix(None)).values()) == 7
    for bad, message in [("single=x", "must be a number"), ("other=1", "unknown kind 'other'"),
                         ("single=0", "at least one kind"), ("single", "KIND=SHARE"), ("single=-1", ">= 0")]:
        with pytest.raises(ConfigError, match=message):
            parse_mix(bad)


def test_generated_replies_are_schema_valid():
    from localragas.prompts import write_item
    for kind, output in (("single", GeneratedItem), ("multi", GeneratedLinkedItem), ("abstract", GeneratedItem)):
        output.model_validate(heuristic_reply(write_item(kind, ["A tram ran in Oslo in 1875."] * 2), output))
    from localragas.prompts import write_unanswerable
    GeneratedQuestion.model_validate(heuristic_reply(write_unanswerable("A tram ran in Oslo."), GeneratedQuestion))


def test_cli_writes_the_test_set_and_the_counts(tmp_path):
    out = tmp_path / "testset.jsonl"
    r = cli("generate", EXAMPLE_DOCS, "--out", out, "--size", 6, "--judge", "fake", "--embedder", "fake",
            "--no-progress", "--seed", 1)
    assert r.exit_code == 0, r.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    meta = json.loads((tmp_path / "testset.jsonl.meta.json").read_text())
    assert len(rows) == meta["kept"] == 6 and meta["seed"] == 1
    assert set(meta["by_kind"]) == set(KINDS) and meta["judge_stats"]["parse_failures"] == 0
    assert "generate: kept 6 of 6 wanted" in r.output and "single" in r.output
    assert list((tmp_path / "state" / "runs").glob("generate-*")) == []  # the checkpoint is removed


def test_cli_refuses_a_bad_mix_and_stops_on_a_judge_error(tmp_path, monkeypatch):
    r = cli("generate", EXAMPLE_DOCS, "--out", tmp_path / "t.jsonl", "--mix", "single=x", "--judge", "fake")
    assert r.exit_code == 2 and "--mix" in r.output
    import localragas.judges.fake as fake
    monkeypatch.setattr(fake, "heuristic_reply", lambda p, o: JudgeError("no reply"))
    r = cli("generate", EXAMPLE_DOCS, "--out", tmp_path / "t.jsonl", "--judge", "fake", "--embedder", "fake",
            "--no-progress")
    assert r.exit_code == 4, r.output
    assert "could not generate" in r.output and not (tmp_path / "t.jsonl").exists()


def test_a_rerun_is_answered_from_the_judge_cache(tmp_path):
    runs = [generate_testset(GenerateSpec([EXAMPLE_DOCS], size=5, judge=FakeJudge(), embedder="fake",
                                          cache_dir=tmp_path / "cache", resume=False, progress=False))
            for _ in range(2)]
    first, second = (ts.summary["judge_stats"] for ts in runs)
    ts = runs[1]
    # within the first run a prompt asked twice is a hit too (a one-sentence chunk that is its item's reference: the
    # chunk's and the reference's answerability prompts are the same text)
    assert first["calls"] > 0
    assert second["calls"] == 0 and second["cache_hits"] == first["calls"] + first["cache_hits"]
    assert ts.summary["kept"] == 5


def test_chinese_documents_get_chinese_prompts(tmp_path):
    (tmp_path / "zh.txt").write_text("奥斯陆有轨电车网络于1875年开通，共有六条线路。\n\n白天每十分钟一班，夜间每半小时一班。",
                                     encoding="utf-8")
    judge = FakeJudge()
    ts = generate_testset(spec(judge, docs=tmp_path, size=2, mix="single=1,unanswerable=1"))
    assert all(p.system.startswith("你根据给你的文档") for p in judge.asked("write_single"))
    assert all("只回复 JSON 对象" in p.user for p in judge.asked("write_unanswerable"))
    assert {r["meta"]["language"] for r in ts.rows} == {"zh"}
    assert [r["reference"] for r in ts.rows if r["meta"]["kind"] == "unanswerable"] == [UNANSWERABLE_REFERENCE["zh"]]


def test_the_reference_support_is_read_on_the_calibrated_scale():
    """A judge calibrated for verify_statement: the support kept in meta is the calibrated value (as faithfulness
    scores a claim), checked against SUPPORT_THRESHOLD; uncalibrated, the raw P(yes) against
    UNCALIBRATED_SUPPORT_THRESHOLD."""
    from localragas.judges.calibration_map import CalibrationMap, FamilyMap, logit
    from localragas.testset.generation import SUPPORT_THRESHOLD, UNCALIBRATED_SUPPORT_THRESHOLD

    raw = generate_testset(spec(FakeJudge(), size=4, **one_kind("single")))
    assert raw.summary["thresholds"]["support"] == UNCALIBRATED_SUPPORT_THRESHOLD
    assert raw.summary["thresholds"]["support_calibrated"] is False
    raw_support = [r["meta"]["reference_support"] for r in raw.rows]

    assert min(raw_support) >= UNCALIBRATED_SUPPORT_THRESHOLD
    # a flat map (a=0) sends every P(yes) to one value: 0.8 keeps every item, 0.6 (above the raw threshold, below the
    # calibrated one) drops every reference
    flat = {"calibration": CalibrationMap({"verify_statement": FamilyMap(0.0, logit(0.8))})}
    cal = generate_testset(spec(FakeJudge(), size=4, judge_options=flat, **one_kind("single")))
    assert cal.summary["thresholds"] == {**raw.summary["thresholds"], "support": SUPPORT_THRESHOLD,
                                         "support_calibrated": True}
    assert [r["question"] for r in cal.rows] == [r["question"] for r in raw.rows]
    assert [r["meta"]["reference_support"] for r in cal.rows] == [0.8] * 4

    flat = {"calibration": CalibrationMap({"verify_statement": FamilyMap(0.0, logit(0.6))})}
    dropped = generate_testset(spec(FakeJudge(), size=2, judge_options=flat, **one_kind("single")))
    assert dropped.rows == [] and set(dropped.summary["dropped_by_reason"]) == {"reference_unsupported"}
    assert all(d["checks"]["reference_support"] == 0.6 for d in dropped.summary["dropped_items"])


def test_a_calibration_fitted_under_another_support_prompt_is_not_applied():
    from localragas.judges.calibration_map import CalibrationMap, FamilyMap
    from localragas.testset.generation import UNCALIBRATED_SUPPORT_THRESHOLD, support_calibration
    from localragas.prompts.overrides import template_hashes

    judge = FakeJudge()
    fitted = {"verify_statement": template_hashes(["verify_statement"])["verify_statement"]}
    same = CalibrationMap({"verify_statement": FamilyMap(1.0, -8.0, prompt_sha256=fitted)})
    assert support_calibration(Judging(judge, calibration=same)).covers("verify_statement")
    other = CalibrationMap({"verify_statement": FamilyMap(1.0, -8.0, prompt_sha256={"verify_statement": "0" * 64})})
    in_effect = support_calibration(Judging(judge, calibration=other))
    assert not in_effect.covers("verify_statement") and "verify_statement" in in_effect.not_applied
    ts = generate_testset(spec(judge, size=2, judge_options={"calibration": other}, **one_kind("single")))
    assert ts.summary["thresholds"]["support"] == UNCALIBRATED_SUPPORT_THRESHOLD and len(ts.rows) == 2


def test_the_answerability_check_is_read_on_the_calibrated_scale_when_the_map_has_it():
    """A question_answerable map (calibrate --fit --family question_answerable) is applied to the check's P(yes): a
    flat map at 0.3 makes every question unanswerable: answerable kinds dropped "not_answerable", unanswerable ones
    kept with 0.15 (under UNANSWERABLE_THRESHOLD)."""
    from localragas.judges.calibration_map import CalibrationMap, FamilyMap, logit

    flat = {"calibration": CalibrationMap({"question_answerable": FamilyMap(0.0, logit(0.15))})}
    ts = generate_testset(spec(FakeJudge(), size=4, mix={"single": 0.5, "unanswerable": 0.5}, judge_options=flat))
    assert ts.summary["thresholds"]["answerable_calibrated"] is True
    assert ts.summary["thresholds"]["support_calibrated"] is False
    assert {r["meta"]["kind"] for r in ts.rows} == {"unanswerable"}
    assert all(r["meta"]["answerable"] == 0.15 for r in ts.rows)
    assert set(ts.summary["by_kind"]["single"]["dropped"]) == {"not_answerable"}
    assert all(d["checks"]["answerable"] == 0.15 for d in ts.summary["dropped_items"])


def test_a_reference_that_does_not_answer_its_question_is_dropped():
    """The chunks answer the question and support the reference, but asked with the reference as its only context,
    the judge says it does not answer: dropped "reference_not_an_answer", with the check's value."""
    reference = "A reference no chunk holds, said to be supported."

    def respond(prompt, output):
        got = heuristic_reply(prompt, output)
        if prompt.name == "write_single":
            return {**got, "reference": reference}
        if prompt.name == "question_answerable":
            return {**got, "p_yes": 0.2 if reference in prompt.user else 0.9, "mass": 1.0}
        if prompt.name == "verify_statement":
            return {**got, "p_yes": 0.95, "mass": 1.0}
        return got

    judge = FakeJudge(responder=respond)
    ts = generate_testset(spec(judge, size=2, **one_kind("single")))
    assert ts.rows == [] and set(ts.summary["dropped_by_reason"]) == {"reference_not_an_answer"}
    for d in ts.summary["dropped_items"]:
        assert d["checks"]["answerable"] == 0.9 and d["checks"]["reference_answers"] == 0.2
    alone = [p for p in judge.asked("question_answerable") if reference in p.user]
    assert len(alone) == 6 and all(p.user.count("<context") == 1 for p in alone)  # 2 items x 3 attempts


def test_a_multi_item_states_a_fact_of_each_chunk_each_checked_against_its_own_chunk_alone():
    judge = FakeJudge()
    ts = generate_testset(spec(judge, size=2, **one_kind("multi")))
    assert len(ts.rows) == 2
    for r in ts.rows:
        facts, support = r["meta"]["facts"], r["meta"]["fact_support"]
        assert len(facts) == 2 and min(support) >= 0.7
        for fact, chunk in zip(facts, r["reference_contexts"]):
            alone = [p for p in judge.asked("verify_statement") if p.user.count("<context") == 1]
            assert any(fact in p.user and neutralise(chunk).strip() in p.user for p in alone)


def test_an_unanswerable_question_is_checked_against_each_near_chunk_alone_and_dropped_from_0_2():
    """Each chunk checked is asked alone; the highest P(yes) decides: dropped from UNANSWERABLE_THRESHOLD (0.2)."""
    judge = FakeJudge()
    kept = generate_testset(spec(judge, size=1, **one_kind("unanswerable"))).rows
    assert len(kept) == 1 and kept[0]["meta"]["answerable"] < UNANSWERABLE_THRESHOLD
    checked = kept[0]["meta"]["checked_against"]
    asked = [p for p in judge.asked("question_answerable") if kept[0]["question"] in p.user]
    assert len(asked) == len(checked) >= 2 and all(p.user.count("<context") == 1 for p in asked)

    def answered(p_yes: float):
        def respond(prompt, output):
            got = heuristic_reply(prompt, output)
            return {**got, "p_yes": p_yes, "mass": 1.0} if prompt.name == "question_answerable" else got
        return respond

    ts = generate_testset(spec(FakeJudge(responder=answered(0.2)), size=1, **one_kind("unanswerable")))
    assert ts.rows == [] and ts.summary["by_kind"]["unanswerable"]["dropped"] == {"answerable": attempts("unanswerable")}
    assert ts.summary["thresholds"]["unanswerable"] == UNANSWERABLE_THRESHOLD == 0.2
    ts = generate_testset(spec(FakeJudge(responder=answered(0.19)), size=1, **one_kind("unanswerable")))
    assert [r["meta"]["answerable"] for r in ts.rows] == [0.19]


def test_linked_facts_takes_the_facts_in_the_order_asked_else_the_other_way_round():
    asked: list[tuple[int, int]] = []

    def support(table):
        def f(fact, chunk):
            asked.append((fact, chunk))
            return table[fact][chunk]
        return f

    assert linked_facts(support([[0.9, 0.1], [0.2, 0.8]]), 0.7) == ((0, 1), [0.9, 0.8])
    assert asked == [(0, 0), (1, 1)]  # the other order is not asked when the first holds
    assert linked_facts(support([[0.1, 0.9], [0.8, 0.2]]), 0.7) == ((1, 0), [0.9, 0.8])
    assert linked_facts(support([[0.9, 0.9], [0.1, 0.1]]), 0.7) == ((0, 1), [0.9, 0.1])  # both facts in chunk 1


def test_a_multi_item_whose_facts_come_in_the_other_order_is_kept_with_the_chunks_it_took_them_from():
    def respond(prompt, output):
        got = heuristic_reply(prompt, output)
        if prompt.name == "write_multi":
            return {**got, "fact_1": got["fact_2"], "fact_2": got["fact_1"]}
        return got

    ts = generate_testset(spec(FakeJudge(responder=respond), size=2, **one_kind("multi")))
    assert len(ts.rows) == 2
    for r in ts.rows:
        assert r["meta"]["fact_chunks"] == list(reversed(r["meta"]["chunk_ids"]))
        assert min(r["meta"]["fact_support"]) >= 0.7


def test_a_judge_error_claims_a_resume_checkpoint_only_when_one_holds_candidates(tmp_path, monkeypatch):
    import localragas.judges.fake as fake
    replies = fake.heuristic_reply
    calls = []

    def failing_later(prompt, output):  # the judge fails from its 40th call on: some candidates were finished
        calls.append(1)
        return JudgeError("no reply") if len(calls) >= 40 else replies(prompt, output)

    monkeypatch.setattr(fake, "heuristic_reply", failing_later)
    args = ["generate", EXAMPLE_DOCS, "--out", tmp_path / "t.jsonl", "--judge", "fake", "--embedder", "fake",
            "--no-progress", "--no-cache"]
    r = cli(*args)
    assert r.exit_code == 4, r.output
    kept = list((tmp_path / "state" / "runs").glob("generate-*.jsonl"))
    assert len(kept) == 1 and kept[0].stat().st_size
    assert (f"what was finished is kept in the resume checkpoint {kept[0]}: the same command goes on from there"
            in " ".join(r.output.split()))
    calls.clear()
    r = cli(*args, "--no-resume")
    assert r.exit_code == 4 and "kept in the resume checkpoint" not in r.output, r.output
    assert "no candidate was kept (--no-resume, or none finished)" in r.output
