"""`localragas run-rag` on a test set of conversations: a Python chat function given the conversation so far, an HTTP
chat endpoint on 127.0.0.1 given it in the body, a failed turn recorded on its conversation (and refused by eval),
and eval scoring the written conversations turn by turn with the fake judge."""
from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from localragas.core.errors import ConfigError
from localragas.testset.rag_run import RagRunSpec, run_rag

from cli_helpers import cli, write_jsonl
from stub_server import StubServer, send_json

FACTS = {"basic": "The basic plan costs $10 a month.", "premium": "The premium tier costs $25 a month.",
         "warranty": "The warranty lasts two years.", "returns": "Returns are accepted within 30 days."}

# A chat function that answers from the history: a follow-up naming no topic is about the last one the user named.
# It checks what it was given: each earlier turn with the pipeline's own reply (never the test set's old one).
CHAT = f"""
FACTS = {FACTS!r}

def chat(question, history):
    said = [m["content"] for m in history if m["role"] == "user"]
    replies = [m["content"] for m in history if m["role"] == "assistant"]
    assert len(said) == len(replies), history
    assert all(r.startswith("Said ") for r in replies), replies
    assert all(m["role"] in ("system", "user", "assistant") and set(m) == {{"role", "content"}} for m in history)
    topics = [k for k in FACTS if k in question.lower()]
    for earlier in reversed(said):
        topics = topics or [k for k in FACTS if k in earlier.lower()]
    facts = [FACTS[k] for k in topics]
    return {{"answer": f"Said {{len(said)}} before. " + " ".join(facts), "contexts": facts}}
"""

TESTSET = [
    {"id": "plans", "category": "pricing", "messages": [
        {"role": "system", "content": "You answer questions about Acme's plans."},
        {"role": "user", "content": "What does the basic plan cost?", "reference": "$10 a month."},
        {"role": "assistant", "content": "An old reply, replaced.", "contexts": ["old"]},
        {"role": "user", "content": "And the premium tier?"},
        {"role": "assistant", "content": "Old.", "standalone_question": "What does Acme's premium tier cost?",
         "reference": "$25 a month."}]},
    {"id": "warranty", "turns": ["What is the warranty?",
                                 {"content": "How long does it last?", "reference": "Two years."}]},
    {"id": "single", "question": "How are returns handled?", "reference": "Within 30 days."},
]


def _rows(path: Path) -> dict[str, dict]:
    return {r["id"]: r for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())}


def test_a_chat_function_is_asked_turn_by_turn_and_eval_scores_each_turn(tmp_path, monkeypatch):
    (tmp_path / "chatbot.py").write_text(CHAT, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    testset, filled = write_jsonl(tmp_path / "chats.jsonl", TESTSET), tmp_path / "filled.jsonl"
    r = cli("run-rag", testset, "--target", "chatbot.py:chat", "--out", filled, "--no-progress")
    assert r.exit_code == 0 and "3 of 3 rows answered" in r.output, r.output
    rows = _rows(filled)
    plans = rows["plans"]["messages"]
    assert [m["role"] for m in plans] == ["system", "user", "assistant", "user", "assistant"]
    assert plans[1] == {"role": "user", "content": "What does the basic plan cost?"}  # its reference moved on
    assert plans[2] == {"role": "assistant", "content": "Said 0 before. " + FACTS["basic"],
                        "contexts": [FACTS["basic"]], "reference": "$10 a month."}
    assert plans[4] == {"role": "assistant", "content": "Said 1 before. " + FACTS["premium"],
                        "contexts": [FACTS["premium"]], "reference": "$25 a month.",
                        "standalone_question": "What does Acme's premium tier cost?"}
    assert rows["plans"]["category"] == "pricing" and "turns" not in rows["warranty"]
    warranty = rows["warranty"]["messages"]
    assert warranty[3]["content"] == "Said 1 before. " + FACTS["warranty"]  # "it": the warranty, from the history
    assert warranty[3]["reference"] == "Two years."
    assert rows["single"]["answer"] == "Said 0 before. " + FACTS["returns"]  # a single question: history []

    report = tmp_path / "report.json"
    r = cli("eval", filled, "--judge", "fake", "--embedder", "fake", "--no-progress", "--out", report)
    assert r.exit_code in (0, 1), r.output
    samples = {s["id"]: s for s in json.loads(report.read_text())["samples"]}
    assert sorted(samples) == ["plans#1", "plans#2", "single", "warranty#1", "warranty#2"]
    assert samples["plans#2"]["turn"]["conversation"] == "plans" and samples["plans#2"]["turn"]["turns"] == 2
    assert samples["plans#2"]["turn"]["question"] == "What does Acme's premium tier cost?"  # the given one
    faithfulness = [samples[i]["metrics"]["faithfulness"]["value"] for i in ("plans#1", "plans#2", "warranty#2")]
    assert all(v is not None for v in faithfulness)  # each turn scored against its own contexts


class ChatEndpoint:
    """A chat endpoint: answers from the body's history; a question holding "boom" gets a 500."""

    def __init__(self):
        self.bodies: list[dict] = []
        self._lock = threading.Lock()
        self.http = StubServer(self.on_post)
        self.url = self.http.url + "/chat"

    def on_post(self, handler, body: dict) -> None:
        with self._lock:
            self.bodies.append(body)
        if "boom" in body["question"]:
            return send_json(handler, {"error": "boom"}, status=500)
        earlier = [m["content"] for m in body.get("history", []) if m["role"] == "user"]
        send_json(handler, {"answer": f"{body['question']} (after: {' / '.join(earlier) or 'nothing'})",
                            "contexts": [f"chunk for {body['question']}"]})


@pytest.fixture
def endpoint():
    e = ChatEndpoint()
    yield e
    e.http.close()


def test_an_http_endpoint_gets_the_history_and_a_failed_turn_fails_its_conversation(tmp_path, endpoint):
    testset = write_jsonl(tmp_path / "chats.jsonl", [
        {"id": "ok", "turns": ["first question", "second question"]},
        {"id": "broken", "messages": [{"role": "user", "content": "fine question"},
                                      {"role": "user", "content": "boom question", "reference": "r"},
                                      {"role": "user", "content": "never asked"}]},
        {"id": "q", "question": "a single question"},
        {"id": "t", "question": "a turn row", "history": [{"role": "user", "content": "its first question"},
                                                          {"role": "assistant", "content": "its first answer"}]}])
    filled = tmp_path / "filled.jsonl"
    r = cli("run-rag", testset, "--url", endpoint.url, "--out", filled, "--retries", 0, "--no-progress")
    assert r.exit_code == 4, r.output
    assert "3 of 4 rows answered" in r.output and "1 of 4 rows failed" in r.output
    assert "broken: turn 2 of 3 (messages[1]): HTTP 500" in r.output
    asked = {b["id"]: b for b in endpoint.bodies}
    assert asked["ok#1"] == {"question": "first question", "id": "ok#1", "history": []}
    assert asked["ok#2"]["history"] == [{"role": "user", "content": "first question"},
                                        {"role": "assistant", "content": "first question (after: nothing)"}]
    assert asked["q"] == {"question": "a single question", "id": "q"}  # a single row's body as before
    assert asked["t"]["history"] == [{"role": "user", "content": "its first question"},
                                     {"role": "assistant", "content": "its first answer"}]  # a turn row's own
    assert "broken#3" not in asked  # the conversation stopped at its failed turn
    rows = _rows(filled)
    assert rows["ok"]["messages"][3] == {"role": "assistant", "content": "second question (after: first question)",
                                         "contexts": ["chunk for second question"]}
    assert rows["t"]["answer"] == "a turn row (after: its first question)" and len(rows["t"]["history"]) == 2
    broken = rows["broken"]
    assert broken["rag_error"].startswith("turn 2 of 3 (messages[1]): HTTP 500")
    assert [m["role"] for m in broken["messages"]] == ["user", "assistant", "user", "user"]  # turn 1 kept
    assert broken["messages"][2] == {"role": "user", "content": "boom question", "reference": "r"}

    r = cli("eval", filled, "--judge", "fake", "--embedder", "fake", "--no-progress")
    assert r.exit_code == 2 and "line 2, field 'rag_error': the RAG pipeline failed on this row" in r.output
    report = tmp_path / "report.json"
    r = cli("eval", filled, "--judge", "fake", "--embedder", "fake", "--no-progress", "--skip-invalid", "--no-gate",
            "--out", report)
    assert r.exit_code == 0, r.output
    written = json.loads(report.read_text())
    assert [s["id"] for s in written["samples"]] == ["ok#1", "ok#2", "q", "t"]
    assert written["samples"][3]["turn"]["turn"] == 2  # eval reads the filled turn row as a conversation's turn
    assert [(s["line"], s["field"]) for s in written["skipped"]] == [(2, "rag_error")]


def test_a_failed_turn_of_a_python_function_and_an_empty_answer_fail_their_conversation(tmp_path):
    def chat(question, history):  # a closure: asked in a thread
        if question == "raise":
            raise KeyError("no such document")
        return {"answer": "" if question == "empty" else f"{len(history)}", "contexts": []}

    testset = write_jsonl(tmp_path / "t.jsonl", [{"id": "a", "turns": ["x", "raise", "y"]},
                                                 {"id": "b", "turns": ["empty"]}, {"id": "c", "turns": ["x", "y"]}])
    run = run_rag(RagRunSpec(testset, target=chat))
    assert run.failed == [("a", "turn 2 of 3 (turns[1]): KeyError: 'no such document'"),
                          ("b", "turn 1 of 1 (turns[0]): malformed reply: an empty answer to a turn of a "
                                "conversation")]
    assert [m["content"] for m in run.rows[2]["messages"]] == ["x", "0", "y", "2"]


def test_a_pipeline_that_takes_no_history_is_refused_before_any_call(tmp_path, monkeypatch, endpoint):
    (tmp_path / "single.py").write_text("CALLS = []\ndef ask(question):\n    raise SystemExit('asked')\n")
    monkeypatch.chdir(tmp_path)
    testset = write_jsonl(tmp_path / "t.jsonl", [{"question": "q"}, {"id": "c", "turns": ["a", "b"]}])
    r = cli("run-rag", testset, "--target", "single.py:ask", "--out", tmp_path / "o.jsonl", "--no-progress")
    assert r.exit_code == 2 and "the test set holds conversations (first: 'c'), but single.py:ask takes no " \
                                "history" in r.output, r.output
    assert not (tmp_path / "o.jsonl").exists()
    with pytest.raises(ConfigError, match="takes no history"):
        run_rag(RagRunSpec(testset, target=lambda question: ("a", [])))
    assert run_rag(RagRunSpec(testset, target=lambda question, chat_history: ("a", []))).failed == []


@pytest.mark.parametrize("row, field, words", [
    ({"turns": ["a", 3]}, "turns[1]", "expected a message object, got int"),
    ({"turns": [{"role": "assistant", "content": "a"}]}, "turns[0].role", "expected one of user"),
    ({"messages": [{"role": "user", "content": "a", "contexts": ["c"]}]}, "messages[0].contexts",
     "written by run-rag on the turn's reply"),
    ({"messages": [{"role": "user", "content": "a", "refrence": "r"}]}, "messages[0].refrence",
     "unknown field; did you mean 'reference'?"),
    ({"messages": [{"role": "user", "content": "a", "reference": "r"}, {"role": "assistant", "reference": "s"}]},
     "messages[1].reference", "differs from the reference given on messages[0]"),
    ({"messages": [{"role": "system", "content": "s"}]}, "messages", "no user message: nothing to ask"),
    ({"messages": [{"role": "user", "content": " "}]}, "messages[0].content", "expected the user's message"),
])
def test_a_bad_conversation_is_named_by_line_message_and_field(tmp_path, endpoint, row, field, words):
    testset = write_jsonl(tmp_path / "t.jsonl", [{"question": "q"}, row])
    r = cli("run-rag", testset, "--url", endpoint.url, "--out", tmp_path / "o.jsonl", "--no-progress")
    assert r.exit_code == 2 and f"line 2, field '{field}': {words}" in r.output, r.output
    assert endpoint.bodies == []  # the test set is checked before any call


def test_a_langchain_chain_gets_its_chat_history_and_one_without_is_refused(tmp_path):
    pytest.importorskip("langchain_core", reason="langchain-core is not installed (pip install 'localragas[test]')")
    from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
    from langchain_core.runnables import RunnableLambda

    said = RunnableLambda(lambda p: " | ".join(f"{m.type}: {m.content}" for m in p.to_messages()))
    chain = ChatPromptTemplate.from_messages([MessagesPlaceholder("chat_history"), ("human", "{input}")]) | said
    testset = write_jsonl(tmp_path / "t.jsonl", [{"id": "c", "messages": [
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": "first"},
        {"role": "user", "content": "second"}]}])
    run = run_rag(RagRunSpec(testset, target=chain))
    replies = [m["content"] for m in run.rows[0]["messages"] if m["role"] == "assistant"]
    assert replies == ["system: Be brief. | human: first",
                       "system: Be brief. | human: first | ai: system: Be brief. | human: first | human: second"]
    alone = ChatPromptTemplate.from_messages([("human", "{input}")]) | said
    with pytest.raises(ConfigError, match="takes no history"):
        run_rag(RagRunSpec(testset, target=alone))


def test_a_llamaindex_chat_engine_is_given_the_chat_history(tmp_path, monkeypatch):
    pytest.importorskip("llama_index.core", reason="llama-index-core is not installed (pip install 'localragas[test]')")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from llama_index.core import Document, VectorStoreIndex
    from llama_index.core.embeddings import MockEmbedding
    from llama_index.core.llms import MockLLM

    index = VectorStoreIndex.from_documents([Document(text=FACTS["warranty"])], embed_model=MockEmbedding(embed_dim=8))
    engine = index.as_chat_engine(chat_mode="condense_plus_context", llm=MockLLM(max_tokens=2))
    testset = write_jsonl(tmp_path / "t.jsonl", [{"id": "c", "turns": ["What is the warranty?", "How long?"]}])
    run = run_rag(RagRunSpec(testset, target=engine))
    assert run.failed == [] and run.rows[0]["messages"][3] == {"role": "assistant", "content": "text text",
                                                               "contexts": [FACTS["warranty"]],
                                                               "retrieved_context_ids": run.rows[0]["messages"][3][
                                                                   "retrieved_context_ids"]}
    # the second turn was asked with the first in its chat_history, which the engine then kept
    assert [(m.role.value, m.content) for m in engine.chat_history] == [
        ("user", "What is the warranty?"), ("assistant", "text text"), ("user", "How long?"),
        ("assistant", "text text")]
    with pytest.raises(ConfigError, match="takes no history"):
        run_rag(RagRunSpec(testset, target=index.as_query_engine(llm=MockLLM(max_tokens=2))))
