"""A conversation row (the chat format) read as the samples of its turns: ids, questions, contexts, history."""
from __future__ import annotations

import json

import pytest

from localragas.core.errors import DatasetError
from localragas.data.dataset import load_samples
from localragas.data.sample_inputs import as_samples

CHAT = {"id": "plans", "category": "pricing", "messages": [
    {"role": "system", "content": "You answer questions about Acme's plans."},
    {"role": "assistant", "content": "Hi! How can I help?"},
    {"role": "user", "content": "What does the basic plan cost?"},
    {"role": "assistant", "content": "The basic plan costs $10 a month.",
     "contexts": ["Acme's basic plan costs $10 per month."]},
    {"role": "user", "content": "And the premium tier?"},
    {"role": "tool", "content": "The premium tier is $25 per month."},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "x"}]},
    {"role": "assistant", "content": [{"type": "text", "text": "It costs $25 a month."}], "reference": "$25."},
]}


def _write(tmp_path, *rows):
    p = tmp_path / "chats.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return p


def test_each_assistant_reply_to_a_user_message_is_a_turn(tmp_path):
    samples, _ = load_samples(_write(tmp_path, CHAT))
    assert [s.id for s in samples] == ["plans#1", "plans#2"]
    first, second = samples
    assert first.question == "What does the basic plan cost?" and first.category == "pricing"
    assert first.turn.turns == 2 and not first.turn.needs_rewrite  # a greeting alone is no conversation to rewrite
    assert second.question == "And the premium tier?" and second.answer == "It costs $25 a month."
    assert second.contexts == ["The premium tier is $25 per month."]  # the tool's result, as it has none of its own
    assert second.reference == "$25." and second.turn.needs_rewrite
    assert [m.role for m in second.turn.history] == ["system", "assistant", "user", "assistant"]
    assert second.turn.said_by("user") == ["What does the basic plan cost?"]


def test_a_given_standalone_question_is_the_question_scored(tmp_path):
    chat = json.loads(json.dumps(CHAT))
    chat["messages"][-1]["standalone_question"] = "What does Acme's premium tier cost?"
    second = load_samples(_write(tmp_path, chat))[0][1]
    assert second.question == "What does Acme's premium tier cost?"
    assert second.turn.user_message == "And the premium tier?" and not second.turn.needs_rewrite


def test_python_lists_and_files_give_the_same_turns(tmp_path):
    from_file = load_samples(_write(tmp_path, CHAT, {"messages": CHAT["messages"][2:4]}))[0]
    from_list = as_samples([CHAT, {"messages": CHAT["messages"][2:4]}])
    assert [s.model_dump() for s in from_file] == [s.model_dump() for s in from_list]
    assert from_list[2].id.startswith("c-") and from_list[2].id.endswith("#1")


@pytest.mark.parametrize("message, field, words", [
    ({"role": "bot", "content": "x"}, "messages[1].role", "expected one of user, assistant"),
    ({"role": "assistant", "content": "x", "contexts": "one"}, "messages[1].contexts", "expected a list"),
    ({"role": "assistant", "content": "x", "contexts": [1]}, "messages[1].contexts[0]", "expected a string"),
    ({"role": "assistant", "content": "x", "contxts": ["a"]}, "messages[1].contxts", "did you mean 'contexts'"),
    ({"role": "user", "content": "x", "contexts": ["a"]}, "messages[1].contexts", "only an assistant message"),
    ({"role": "assistant", "content": 3}, "messages[1].content", "expected a string or a list"),
])
def test_a_bad_message_is_named_by_line_message_and_field(tmp_path, message, field, words):
    row = {"messages": [{"role": "user", "content": "q"}, message, {"role": "assistant", "content": "a"}]}
    with pytest.raises(DatasetError) as e:
        load_samples(_write(tmp_path, {"question": "q", "contexts": [], "answer": "a"}, row))
    assert e.value.line == 2 and e.value.field == field and words in e.value.detail


def test_a_conversation_with_no_turn_is_refused(tmp_path):
    with pytest.raises(DatasetError, match="no turn to score"):
        load_samples(_write(tmp_path, {"messages": [{"role": "user", "content": "hello?"}]}))


def test_a_turn_row_is_one_sample_with_its_history(tmp_path):
    earlier = [{"role": "user", "content": "What does the basic plan cost?"},
               {"role": "assistant", "content": "$10 a month."}]
    rows = [{"id": "t1", "question": "What does the basic plan cost?", "contexts": ["c"], "answer": "$10 a month.",
             "history": []},
            {"id": "t2", "question": "And premium?", "contexts": ["c"], "answer": "$25.", "history": earlier,
             "standalone_question": "What does the premium plan cost?"}]
    first, second = load_samples(_write(tmp_path, *rows))[0]
    assert (first.id, first.turn.turn, first.turn.history) == ("t1", 1, [])
    assert second.question == "What does the premium plan cost?" and second.turn.user_message == "And premium?"
    assert (second.turn.turn, second.turn.standalone_given) == (2, True)
    assert first.turn.conversation == second.turn.conversation  # named by the conversation's first user message
    assert [s.model_dump() for s in as_samples(rows)] == [first.model_dump(), second.model_dump()]


@pytest.mark.parametrize("extra, field, words", [
    ({"history": "earlier"}, "history", "expected a list of messages"),
    ({"history": [{"role": "user"}]}, "history[0].content", "missing required field"),
    ({"history": [{"role": "assistant", "content": "x", "contexts": ["c"]}]}, "history[0].contexts", "not read"),
    ({"standalone_question": "Q?"}, "standalone_question", "give the turn's earlier messages"),
])
def test_a_bad_turn_row_is_named_by_field(tmp_path, extra, field, words):
    with pytest.raises(DatasetError) as e:
        load_samples(_write(tmp_path, {"question": "q", "contexts": [], "answer": "a", **extra}))
    assert e.value.field == field and words in e.value.detail


def test_an_empty_reply_is_a_turn_a_tool_call_is_not(tmp_path):
    row = {"id": "e", "messages": [{"role": "user", "content": "q1"}, {"role": "assistant", "content": ""},
                                   {"role": "user", "content": "q2"},
                                   {"role": "assistant", "content": None, "tool_calls": [{"id": "t"}]},
                                   {"role": "tool", "content": "found"}, {"role": "assistant", "content": "a2"}]}
    first, second = load_samples(_write(tmp_path, row))[0]
    assert (first.id, first.answer) == ("e#1", "")  # scored as the empty answer it is, never dropped
    assert (second.answer, second.contexts) == ("a2", ["found"])
