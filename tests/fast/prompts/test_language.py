"""Prompts in English or Simplified Chinese, chosen per sample from its script, overridable: what the judge is asked."""
from __future__ import annotations

import re

import pytest

from localragas import evaluate
from localragas.judges.embeddings import get_embedder
from localragas.core.errors import ConfigError
from localragas.judges import FakeJudge
from localragas.judge_calls import claims_of
from localragas.data.language import check_language, cjk_share, detect
from localragas.metrics import all_metrics, get_metrics
from localragas.prompts import extract_claims, generate_questions, judge_chunks, verify_statements
from localragas.prompts.base import ONE_WORD, SYSTEM, SYSTEM_ZH, YES_NO_SYSTEMS
from localragas.prompts.claims import INSTRUCTIONS as CLAIMS
from localragas.prompts.verdicts import INSTRUCTIONS as VERIFY
from localragas.prompts.verdicts import ONE as VERIFY_ONE
from localragas.data.conversation_models import Message, Turn
from localragas.data.schema import Sample
from localragas.prompts.conversation import SYSTEMS as CONVERSATION_SYSTEMS
from localragas.judge_calls.sample_context import Scoring

from metrics_helpers import MODES, SUPPORT_CALL, Texts, replies

M = all_metrics()
FAITH_CLAIMS = M["faithfulness"].with_options(statements="claims")  # the judge's claims: their extraction prompt
CJK = re.compile(r"[\u4e00-\u9fff]")

# The same sample in Simplified Chinese and in English.
ZH = Texts("Java是什么样的语言？由谁开发？", ["Java是一种面向对象的编程语言。", "Java最初由Sun公司开发，于1995年发布。"],
           "Java是面向对象的语言，由Sun公司开发。", "Java是面向对象的编程语言，由Sun公司开发。")(id="zh1")
EN = Texts("What kind of language is Java and who developed it?",
           ["Java is an object-oriented programming language.", "Java was developed by Sun Microsystems."],
           "Java is an object-oriented language developed by Sun Microsystems.",
           "Java is an object-oriented language developed by Sun Microsystems.")(id="en1")


def in_chinese(prompt) -> bool:
    return prompt.system in (SYSTEM_ZH, YES_NO_SYSTEMS["zh"], CONVERSATION_SYSTEMS["zh"])


def in_english(prompt) -> bool:
    """English instructions: the English system prompt, and no Chinese outside the data."""
    outside = re.sub(r"<(context|answer|question|reference|statement|entity|message|request)[^>]*>\n.*?\n</\1>", "",
                     prompt.user, flags=re.S)
    return prompt.system in (SYSTEM, YES_NO_SYSTEMS["en"], CONVERSATION_SYSTEMS["en"]) and not CJK.search(outside)


def as_turn(sample: Sample) -> Sample:
    """The sample as the second turn of a conversation in its language (the conversation metrics' sample)."""
    zh = sample is ZH
    earlier = [Message(role="user", content="我在学习编程。" if zh else "I am learning to program."),
               Message(role="assistant", content="好的。" if zh else "Good.")]
    return sample.model_copy(update={"turn": Turn(conversation="c", turn=2, turns=2, user_message=sample.question,
                                                  history=earlier)})


# --- detection -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, lang", [
    ("Java是面向对象的语言，由Sun公司开发", "zh"),  # 13 CJK characters (6.5 words), 2 Latin words
    ("如何配置Spring Boot的application.yml", "zh"),  # 5 CJK characters (2.5 words), 4 Latin words
    ("Java是面向对象的语言", "zh"),
    ("长城", "zh"),
    ("The Great Wall (长城) is in China.", "en"),  # 2 CJK characters among 7 words
    ("What does 面向对象 mean in Java programming?", "en"),  # 2 Chinese words among 8
    ("Java 和 Python 都是编程语言", "zh"),
    ("", "en"),
    ("12345 !!!", "en"),
    ("これはペンです", "en"),  # kana is not Chinese: Japanese, asked in English
])
def test_detect_by_the_share_of_cjk_characters(text, lang):
    assert detect(text) == lang


def test_cjk_share_counts_characters_against_words():
    assert cjk_share("") is None and cjk_share("42") is None
    assert cjk_share("中文 and English words") == pytest.approx(1 / 4)


def test_check_language():
    assert check_language(None) == "auto" and check_language(" ZH") == "zh"
    with pytest.raises(ConfigError, match="auto, en, zh"):
        check_language("fr")
    with pytest.raises(ConfigError):
        check_language("auto", allow_auto=False)


def test_sample_rejects_an_unknown_language():
    with pytest.raises(ValueError):
        Sample(id="x", question="q", answer="a", language="fr")


# --- what the judge is asked -----------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_chinese_sample_is_judged_with_chinese_instructions(mode):
    values = {"json": [1, 1], "probability": [1.0, 0.5]}[mode]
    judge = FakeJudge([{"claims": ["Java是面向对象的语言。", "Java由Sun公司开发。"]}, *replies(mode, values)])
    r = FAITH_CLAIMS.with_options(verdicts=mode).score(Scoring(ZH, judge))
    extract, *verify = (c.prompt for c in judge.calls)
    assert in_chinese(extract) and CLAIMS["zh"] in extract.user and ZH.answer in extract.user
    assert "长城" in extract.user  # the Chinese few-shot example, not the article's Java sentence
    assert [v.name for v in verify] == [SUPPORT_CALL[mode]] * (1 if mode == "json" else 2)
    assert all(in_chinese(v) for v in verify)
    assert r.value == pytest.approx(sum(values) / 2) and r.evidence["language"] == "zh"
    if mode == "json":
        assert VERIFY["zh"] in verify[0].user and "恰好 2 个判断" in verify[0].user
    else:
        assert all(v.system == YES_NO_SYSTEMS["zh"] for v in verify)
        assert all(VERIFY_ONE["zh"] in v.user and v.user.endswith(ONE_WORD["zh"]) for v in verify)


def test_english_sample_is_judged_with_english_instructions():
    judge = FakeJudge([{"claims": ["Java is object-oriented."]}, {"p_yes": 1.0, "mass": 0.9}])
    r = FAITH_CLAIMS.score(Scoring(EN, judge))
    extract, verify = (c.prompt for c in judge.calls)
    assert in_english(extract) and CLAIMS["en"] in extract.user
    assert in_english(verify) and VERIFY_ONE["en"] in verify.user and verify.system == YES_NO_SYSTEMS["en"]
    assert r.evidence["language"] == "en"


@pytest.mark.parametrize("name", [n for n, m in M.items() if m.uses_judge])
def test_every_judged_metric_asks_a_chinese_sample_in_chinese_and_an_english_one_in_english(name):
    emb = get_embedder("fake")
    for sample, check in ((ZH, in_chinese), (EN, in_english)):
        judge = FakeJudge()
        r = M[name].score(Scoring(as_turn(sample) if "turn" in M[name].needs else sample, judge, emb))
        assert judge.calls, name
        assert all(check(c.prompt) for c in judge.calls), (name, sample.id, [c.prompt.name for c in judge.calls])
        assert r.value is None or r.evidence["language"] == ("zh" if sample is ZH else "en")


def test_language_override_on_the_sample_and_in_evaluate():
    judge = FakeJudge()
    M["faithfulness"].score(Scoring(ZH.model_copy(update={"language": "en"}), judge))
    assert judge.calls and all(in_english(c.prompt) for c in judge.calls)

    judge = FakeJudge()
    report = evaluate([EN], metrics=["faithfulness", "context_precision"], judge=judge, language="zh")
    assert judge.calls and all(in_chinese(c.prompt) for c in judge.calls)
    assert report.meta["language"] == "zh"
    assert report.samples[0].metrics["faithfulness"].evidence["language"] == "zh"

    judge = FakeJudge()
    report = evaluate([ZH], metrics=["faithfulness"], judge=judge, language="en")
    assert all(in_english(c.prompt) for c in judge.calls)

    judge = FakeJudge()
    report = evaluate([ZH, EN], metrics=["faithfulness"], judge=judge)  # auto: per sample
    assert [c.prompt.name for c in judge.calls] == ["verify_statement"] * 2  # each answer is one sentence
    assert [in_chinese(c.prompt) for c in judge.calls] == [True, False]
    assert report.meta["language"] == "auto"
    with pytest.raises(ConfigError):
        evaluate([EN], metrics=["faithfulness"], judge=FakeJudge(), language="de")


def test_mixed_sample_claims_in_each_texts_own_language():
    """A Chinese question answered in English, with a Chinese reference: the answer decides the sample's language;
    each text is split into claims in its own language."""
    mixed = Sample(id="mx", question="Java由谁开发？", contexts=["Java was developed by Sun Microsystems."],
                   answer="Java was developed by Sun Microsystems.", reference="Java由Sun公司开发。")
    judge = FakeJudge()
    FAITH_CLAIMS.score(Scoring(mixed, judge))
    M["context_recall"].score(Scoring(mixed, judge))
    answer_claims, answer_verify, ref_claims, ref_verify = (c.prompt for c in judge.calls)
    assert in_english(answer_claims) and mixed.answer in answer_claims.user
    assert in_chinese(ref_claims) and mixed.reference in ref_claims.user  # the reference's own language
    assert in_english(answer_verify) and in_english(ref_verify)  # the sample's language: its answer's


def test_mixed_sample_generated_questions_are_asked_in_the_questions_language():
    mixed = Sample(id="mx", question="Java由谁开发？", contexts=[], answer="Java was developed by Sun Microsystems.")
    judge = FakeJudge()
    M["answer_relevancy"].score(Scoring(mixed, judge, get_embedder("fake")))
    (p,) = judge.asked("generate_questions")
    assert p.system == SYSTEM and "Write the questions in Chinese." in p.user
    assert all(in_english(c) for c in judge.asked("check_question"))  # checked against the answer, in its language
    judge = FakeJudge()
    M["answer_relevancy"].score(Scoring(EN, judge, get_embedder("fake")))
    assert "Write the questions in" not in judge.calls[0].prompt.user  # one language: nothing added
    judge = FakeJudge()
    asked = mixed.model_copy(update={"question": "Who developed Java?", "answer": ZH.answer})
    M["answer_relevancy"].score(Scoring(asked, judge, get_embedder("fake")))
    assert in_chinese(judge.calls[0].prompt) and "请用英语写这些问题。" in judge.calls[0].prompt.user


def test_forced_language_applies_to_claims_too():
    judge = FakeJudge()
    claims_of(Scoring(EN.model_copy(update={"language": "zh"}), judge), EN.answer, None)
    claims_of(Scoring(EN, judge), ZH.answer, None)  # auto: a text's claims in its own language
    assert [in_chinese(p) for p in judge.asked("extract_claims")] == [True, True]


def test_prompts_outside_a_sample_take_their_texts_language_and_english_stays_unchanged():
    assert in_chinese(verify_statements(["Java由Sun公司开发。"], ["Java最初由Sun公司开发。"]))
    assert in_chinese(judge_chunks("Java由谁开发？", "Sun公司", "reference answer", ["Java最初由Sun公司开发。"]))
    assert "参考答案" in judge_chunks("Java由谁开发？", "Sun公司", "reference answer", ["x"]).user
    assert in_chinese(generate_questions("Java由Sun公司开发。"))
    assert "（没有检索到上下文）" in verify_statements(["Java由Sun公司开发。"], []).user
    en = verify_statements(["Java was developed by Sun."], [])
    assert in_english(en) and "(no context was retrieved)" in en.user
    assert extract_claims("Paris is in France.", lang="zh").system == SYSTEM_ZH  # explicit wins


def test_article_java_example_is_sent_whole_to_the_chinese_claims_prompt():
    judge = FakeJudge([{"claims": ["Java是面向对象的语言", "Java由Sun公司开发"]}])
    s = ZH.model_copy(update={"answer": "Java是面向对象的语言，由Sun公司开发"})
    claims = claims_of(Scoring(s, judge), s.answer, s.question)
    assert claims == ["Java是面向对象的语言", "Java由Sun公司开发"]
    p = judge.calls[0].prompt
    assert in_chinese(p) and "<answer>\nJava是面向对象的语言，由Sun公司开发\n</answer>" in p.user


def test_default_metrics_on_a_chinese_sample_through_evaluate():
    judge = FakeJudge()
    report = evaluate([ZH], metrics=[m.name for m in get_metrics()], judge=judge, embedder=get_embedder("fake"))
    assert all(in_chinese(c.prompt) for c in judge.calls)
    assert all(r.evidence.get("language") == "zh" for r in report.samples[0].metrics.values() if r.scored)


# --- Japanese and Korean: no prompts of their own, asked in English, and said so --------------------------------

JA = ("東京は日本の首都ですか？", "はい、東京は日本の首都です。", "東京は日本の首都です。")
JA_KATAKANA = ("コンピュータとは何ですか？", "ｺﾝﾋﾟｭｰﾀは計算する機械です。", "コンピュータは計算機です。")  # halfwidth kana
KO = ("서울은 한국의 수도입니까?", "네, 서울은 한국의 수도입니다.", "서울은 대한민국의 수도이다.")


@pytest.mark.parametrize("text, script, prompts", [
    ("これはペンです", "ja", "en"),
    ("東京は日本の首都です", "ja", "en"),  # kanji with kana: Japanese, not Chinese
    ("ｺﾝﾋﾟｭｰﾀ", "ja", "en"),  # halfwidth katakana
    ("서울은 한국의 수도입니다", "ko", "en"),
    ("ᄒᆞᆫ글", "ko", "en"),  # conjoining Jamo
    ("韓國語는 어렵다", "ko", "en"),  # hanja with hangul: Korean
    ("列夫・托尔斯泰是俄国作家", "zh", "zh"),  # the katakana middle dot in Chinese is not kana
    ("Java是面向对象的语言", "zh", "zh"),
    ("What is Tokyo?", "en", "en"),
])
def test_kana_and_hangul_are_told_apart_from_han(text, script, prompts):
    from localragas.data.language import script_language

    assert script_language(text) == script and detect(text) == prompts


def test_prompts_line_names_the_languages_without_prompts_of_their_own():
    from localragas.data.language import prompts_line

    assert prompts_line({"en": 1, "ja": 2, "ko": 1, "zh": 2}) == \
        "prompts: en for 4 rows (2 ja, 1 ko: no prompts of their own), zh for 2"
    assert prompts_line({"ja": 1}) == "prompts: en for 1 row (1 ja: no prompts of their own)"
    assert prompts_line({"en": 3, "zh": 1}) == "prompts: en for 3 rows, zh for 1"
    assert prompts_line({"en": 3}) is None and prompts_line({"zh": 2}) is None and prompts_line({}) is None


def test_cli_asks_japanese_and_korean_rows_in_english_and_says_which_language_each_row_got(tmp_path, monkeypatch):
    import json

    import localragas.judges.backends
    from cli_helpers import cli, write_jsonl

    judge = FakeJudge()
    monkeypatch.setattr(localragas.judges.backends, "fake", lambda target, options: judge)  # --judge fake
    texts = {"ja1": JA, "ja2": JA_KATAKANA, "ko1": KO,
             "zh1": ("Java是什么样的语言？", "Java是面向对象的语言，由Sun公司开发。", "Java是面向对象的编程语言。"),
             "zh2": ("长城在哪里？", "长城在中国北方。", "长城位于中国北方。"),
             "en1": ("What is Java?", "Java is an object-oriented language.", "Java is an object-oriented language.")}
    rows = [{"id": i, "question": q, "contexts": [a], "answer": a, "reference": r} for i, (q, a, r) in texts.items()]
    data = write_jsonl(tmp_path / "d.jsonl", rows, ensure_ascii=False)
    r = cli("eval", data, "--judge", "fake", "--embedder", "fake", "--no-progress", "--no-cache", "--no-resume",
            "--no-gate", "--out", tmp_path / "r.json")
    assert r.exit_code == 0, r.output
    assert "prompts: en for 4 rows (2 ja, 1 ko: no prompts of their own), zh for 2" in r.output
    for row_id, (question, answer, _) in texts.items():
        asked = [c.prompt for c in judge.calls if answer in c.prompt.user or question in c.prompt.user]
        assert asked, row_id
        if row_id.startswith("zh"):
            assert all(in_chinese(p) for p in asked), row_id
        else:
            assert all(p.system in (SYSTEM, YES_NO_SYSTEMS["en"]) for p in asked), row_id
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert report["meta"]["languages"] == {"en": 1, "ja": 2, "ko": 1, "zh": 2}
    for s in report["samples"]:
        judged = [m["evidence"] for m in s["metrics"].values() if "language" in m["evidence"]]
        assert judged, s["id"]
        want = {"language": "zh"} if s["id"].startswith("zh") else {"language": "en"}
        if s["id"][:2] in ("ja", "ko"):
            want["detected_language"] = s["id"][:2]
        assert all({k: e.get(k) for k in ("language", "detected_language") if k in e or k in want} == want
                   for e in judged), (s["id"], judged)
