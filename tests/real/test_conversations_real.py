"""A conversation scored by the default Qwen2.5-1.5B judge, end to end, in English and Chinese: the follow-up rewritten
into a standalone question, the user's own words counting as support in turn faithfulness, knowledge retention telling
a reply that keeps what the user said from one that ignores it, and conversation completeness telling an addressed
request from a dropped one."""
from __future__ import annotations

import pytest

from localragas import evaluate

PLANS = {
    "en": {"id": "plans", "messages": [
        {"role": "user", "content": "What does the basic plan cost?"},
        {"role": "assistant", "content": "The basic plan costs $10 a month.",
         "contexts": ["Acme's basic plan costs $10 per month and includes 5 users."]},
        {"role": "user", "content": "And the premium tier?"},
        {"role": "assistant", "content": "The premium tier costs $25 a month.",
         "contexts": ["Acme's premium tier costs $25 per month and includes 20 users."]}]},
    "zh": {"id": "plans-zh", "messages": [
        {"role": "user", "content": "基础套餐多少钱？"},
        {"role": "assistant", "content": "基础套餐每月10美元。", "contexts": ["Acme 的基础套餐每月10美元，包含5个用户。"]},
        {"role": "user", "content": "那高级套餐呢？"},
        {"role": "assistant", "content": "高级套餐每月25美元。", "contexts": ["Acme 的高级套餐每月25美元，包含20个用户。"]}]},
}
# the user's words, in the turn-faithfulness rule: a statement only the user said is not a hallucination
ORDER = [{"role": "user", "content": "My order number is 4417 and I paid for express delivery."},
         {"role": "assistant", "content": "Thanks, let me check."},
         {"role": "user", "content": "When will it arrive?"}]
ORDER_CONTEXT = ["Express delivery orders arrive within two business days."]
# knowledge retention reads what the user said before the turn (a first turn is unscored, no_earlier_turn)
DIET = [{"role": "user", "content": "I am vegetarian and I never eat meat."},
        {"role": "assistant", "content": "Noted: no meat."},
        {"role": "user", "content": "Can you suggest a dinner?"}]


def _chat(messages, reply, contexts, cid):
    return {"id": cid, "messages": [*messages, {"role": "assistant", "content": reply, "contexts": contexts}]}


@pytest.mark.parametrize("lang, referent, asked", [("en", "premium", ("cost", "price", "much")),
                                                    ("zh", "高级", ("多少", "价格", "费用", "钱"))])
def test_a_follow_up_is_rewritten_into_a_standalone_question(qwen_judge, tmp_path, lang, referent, asked):
    report = evaluate([PLANS[lang]], metrics=["answer_relevancy"], judge=qwen_judge, cache_dir=tmp_path, gate=False,
                      judge_check=False)
    first, second = report.samples
    assert not first.turn.rewritten and first.turn.question == first.turn.user_message
    question = second.turn.question
    assert second.turn.rewritten and question != second.turn.user_message, second.turn
    # the referent kept, and what the conversation asked of it (the cost) brought in from the earlier turn
    assert referent in question and any(w in question.lower() for w in asked), second.turn
    assert second.calls_by_prompt["standalone_question"]["calls"] == 1
    assert second.metrics["answer_relevancy"].value > 0.5, second.metrics["answer_relevancy"].evidence


def test_what_the_user_said_supports_the_turn_the_same_reply_alone_is_not(qwen_judge, tmp_path):
    reply = "Your order number is 4417. Express delivery orders arrive within two business days."
    turn = _chat(ORDER, reply, ORDER_CONTEXT, "order")
    alone = {"id": "alone", "question": "When will it arrive?", "contexts": ORDER_CONTEXT, "answer": reply}
    report = evaluate([turn, alone], metrics=["faithfulness"], judge=qwen_judge, cache_dir=tmp_path, gate=False,
                      judge_check=False)
    scored = {s.id: s.metrics["faithfulness"] for s in report.samples}
    in_chat, single = scored["order#2"], scored["alone"]
    assert in_chat.value > single.value, (in_chat.evidence, single.evidence)
    assert any(c.get("by_user_words") for c in in_chat.evidence["claims"]), in_chat.evidence  # 4417: the user said it


def test_knowledge_retention_tells_a_reply_that_keeps_what_the_user_said(qwen_judge, tmp_path):
    kept = _chat(DIET, "Try a mushroom risotto with parmesan and a green salad.", [], "kept")
    forgot = _chat(DIET, "Try a grilled beef steak with pepper sauce and fries.", [], "forgot")
    report = evaluate([kept, forgot], metrics=["knowledge_retention"], judge=qwen_judge, cache_dir=tmp_path,
                      gate=False, judge_check=False)
    good, bad = (s.metrics["knowledge_retention"] for s in report.samples if s.turn.turn == 2)
    assert good.value > bad.value, (good.evidence, bad.evidence)


def test_conversation_completeness_tells_an_addressed_request_from_a_dropped_one(qwen_judge, tmp_path):
    asks = [{"role": "user", "content": "What does the basic plan cost?"},
            {"role": "assistant", "content": "The basic plan costs $10 a month."},
            {"role": "user", "content": "How many users does the premium tier include?"}]
    done = _chat(asks, "The premium tier includes 20 users.", [], "done")
    dropped = _chat(asks, "We also sell gift cards in three designs.", [], "dropped")
    report = evaluate([done, dropped], metrics=["conversation_completeness"], judge=qwen_judge, cache_dir=tmp_path,
                      gate=False, judge_check=False)
    last = [s for s in report.samples if s.turn.turn == s.turn.turns]
    good, bad = (s.metrics["conversation_completeness"] for s in last)
    assert good.value > bad.value, (good.evidence, bad.evidence)
