"""Conversations in other tools' shapes (data/conversation_shapes.py): ragas MultiTurnSamples, deepeval
ConversationalTestCases (Turns, and the older LLMTestCase turns), LangChain and LlamaIndex chat histories (the
objects and their dicts), a DataFrame's or CSV's `messages` cells, JSON files: each gives the samples of the
equivalent chat-format row; a bad one is named by its row, message and field, as given. ragas and deepeval are not
installed: their classes are pydantic look-alikes with their field names; LangChain's and LlamaIndex's are the real
ones where installed, and duck-typed objects besides."""
from __future__ import annotations

import csv
import json
from enum import Enum
from typing import Any, Literal

import numpy as np
import pandas as pd
import pytest
from pydantic import BaseModel

from localragas.core.errors import DatasetError
from localragas.data.dataset import load_samples
from localragas.data.sample_inputs import as_samples

from cli_helpers import cli, write_jsonl

SYSTEM = "You answer questions about Acme's plans."
Q1, A1, C1 = "What does the basic plan cost?", "The basic plan costs $10 a month.", "The basic plan is $10 a month."
Q2, A2, C2 = "And the premium tier?", "It costs $25 a month.", "The premium tier is $25 a month."
REF = "$25 a month."
FAST = ["--judge", "fake", "--embedder", "fake", "--no-progress", "--no-gate", "--no-cache", "--no-resume",
        "--no-history"]

# The chat format: what every shape below is read as.
CHAT = {"messages": [
    {"role": "system", "content": SYSTEM},
    {"role": "user", "content": Q1}, {"role": "assistant", "content": A1, "contexts": [C1]},
    {"role": "user", "content": Q2}, {"role": "assistant", "content": A2, "contexts": [C2], "reference": REF}]}
# ... and with its contexts as a retrieval tool's results (ragas has no system message and no contexts field)
CALL = [{"name": "search", "args": {"q": "plans"}}]
TOOL_CHAT = {"messages": [
    {"role": "user", "content": Q1}, {"role": "assistant", "content": "", "tool_calls": CALL},
    {"role": "tool", "content": C1}, {"role": "assistant", "content": A1},
    {"role": "user", "content": Q2}, {"role": "assistant", "content": "", "tool_calls": CALL},
    {"role": "tool", "content": C2}, {"role": "assistant", "content": A2, "reference": REF}]}


def dumped(data: Any) -> list[dict]:
    return [s.model_dump() for s in as_samples(data)]


# --- ragas: MultiTurnSample (look-alikes of ragas.messages and ragas.dataset_schema) --------------------------------

class ToolCall(BaseModel):
    name: str
    args: dict[str, Any]


class HumanMessage(BaseModel):
    content: str
    metadata: dict | None = None
    type: Literal["human"] = "human"


class AIMessage(BaseModel):
    content: str
    metadata: dict | None = None
    type: Literal["ai"] = "ai"
    tool_calls: list[ToolCall] | None = None


class ToolMessage(BaseModel):
    content: str
    metadata: dict | None = None
    type: Literal["tool"] = "tool"


class MultiTurnSample(BaseModel):
    user_input: list[HumanMessage | AIMessage | ToolMessage]
    reference: str | None = None
    reference_tool_calls: list[ToolCall] | None = None
    rubrics: dict[str, str] | None = None
    reference_topics: list[str] | None = None


class EvaluationDataset:  # ragas's: `samples`, and to_list() (a MultiTurnSample's content as text when not text)
    def __init__(self, samples):
        self.samples = samples

    def to_list(self):
        return [s.model_dump(exclude_none=True) for s in self.samples]


def ragas_sample() -> MultiTurnSample:
    call = [ToolCall(name="search", args={"q": "plans"})]
    return MultiTurnSample(user_input=[
        HumanMessage(content=Q1), AIMessage(content="", tool_calls=call), ToolMessage(content=C1),
        AIMessage(content=A1),
        HumanMessage(content=Q2), AIMessage(content="", tool_calls=call), ToolMessage(content=C2),
        AIMessage(content=A2)], reference=REF, reference_topics=["pricing"])


def ragas_to_dict_messages() -> dict:
    """ragas's AIMessage.to_dict() writes a tool call's content as {"text", "tool_calls"}, and
    EvaluationDataset.to_list() that as JSON text."""
    row = ragas_sample().model_dump()
    for i in (1, 5):
        del row["user_input"][i]["tool_calls"]
    row["user_input"][1]["content"] = json.dumps({"text": "", "tool_calls": CALL})
    row["user_input"][5]["content"] = {"text": "", "tool_calls": CALL}
    return row


@pytest.mark.parametrize("given", [
    pytest.param(lambda: [ragas_sample()], id="MultiTurnSample"),
    pytest.param(lambda: [ragas_sample().model_dump()], id="its-model_dump"),
    pytest.param(lambda: [{"user_input": ragas_sample().user_input, "reference": REF}], id="message-objects"),
    pytest.param(lambda: [ragas_to_dict_messages()], id="to_dict-contents"),
])
def test_a_ragas_multi_turn_sample_gives_the_chat_rows_turns(given):
    got = dumped(given())
    assert got == dumped([TOOL_CHAT])
    assert got[0]["contexts"] == [C1] and got[1]["reference"] == REF  # the row's reference: the last turn's


def test_an_evaluation_dataset_of_multi_turn_samples():
    other = ragas_sample()
    other.user_input[0] = HumanMessage(content="What does the starter plan cost?")
    got = dumped(EvaluationDataset([ragas_sample(), other]))
    assert [s["turn"]["turn"] for s in got] == [1, 2, 1, 2]
    assert got[:2] == dumped([TOOL_CHAT])


def test_the_rows_reference_and_a_different_one_on_its_last_turn_are_refused():
    chat = json.loads(json.dumps(CHAT))
    chat["reference"] = "Something else."
    with pytest.raises(DatasetError, match="field 'reference': the conversation's reference is its last turn's"):
        as_samples([chat])
    chat["reference"] = REF  # the same: fine
    assert dumped([chat]) == dumped([CHAT])


# --- deepeval: ConversationalTestCase ------------------------------------------------------------------------------

class Turn(BaseModel):
    role: Literal["user", "assistant"]
    content: str
    user_id: str | None = None
    retrieval_context: list[str] | None = None
    tools_called: list[dict] | None = None
    metadata: dict | None = None


class LLMTestCase(BaseModel):
    input: str
    actual_output: str | None = None
    expected_output: str | None = None
    context: list[str] | None = None
    retrieval_context: list[str] | None = None
    tools_called: list[dict] | None = None
    token_cost: float | None = None


class ConversationalTestCase(BaseModel):
    turns: list[Turn | LLMTestCase]
    scenario: str | None = None
    context: list[str] | None = None
    name: str | None = None
    user_description: str | None = None
    expected_outcome: str | None = None
    chatbot_role: str | None = None


DEEPEVAL_CHAT = {"messages": CHAT["messages"][1:]}


def deepeval_case() -> ConversationalTestCase:
    return ConversationalTestCase(turns=[
        Turn(role="user", content=Q1, user_id="u1"), Turn(role="assistant", content=A1, retrieval_context=[C1]),
        Turn(role="user", content=Q2), Turn(role="assistant", content=A2, retrieval_context=[C2])],
        scenario="A customer compares plans.", expected_outcome=REF, chatbot_role="A sales assistant",
        context=["Acme sells plans."], user_description="A small business owner", name="plans")


def deepeval_old_case() -> ConversationalTestCase:
    return ConversationalTestCase(turns=[
        LLMTestCase(input=Q1, actual_output=A1, retrieval_context=[C1], context=["ideal"]),
        LLMTestCase(input=Q2, actual_output=A2, retrieval_context=[C2], expected_output=REF)])


def camel_case_json() -> dict:
    """deepeval's JSON datasets write camelCase: retrievalContext, expectedOutcome."""
    row = deepeval_case().model_dump(exclude_none=True)
    for turn in row["turns"]:
        if "retrieval_context" in turn:
            turn["retrievalContext"] = turn.pop("retrieval_context")
    row["expectedOutcome"] = row.pop("expected_outcome")
    return row


@pytest.mark.parametrize("given", [
    pytest.param(lambda: [deepeval_case()], id="Turns"),
    pytest.param(lambda: [deepeval_case().model_dump()], id="Turns-model_dump"),
    pytest.param(lambda: [{"turns": deepeval_case().turns, "expected_outcome": REF}], id="Turn-objects"),
    pytest.param(lambda: [camel_case_json()], id="camelCase-json"),
    pytest.param(lambda: [deepeval_old_case()], id="LLMTestCase-turns"),
    pytest.param(lambda: [{"turns": [{"llm_test_case": t.model_dump(), "should_evaluate": True}
                                     for t in deepeval_old_case().turns]}], id="Message-llm_test_case"),
])
def test_a_deepeval_conversational_test_case_gives_the_chat_rows_turns(given):
    assert dumped(given()) == dumped([DEEPEVAL_CHAT])


def test_deepevals_conversation_fields_are_known_not_unknown(tmp_path):
    """A table of test cases: its scenario, chatbot_role, ... columns are neither refused nor listed as ignored."""
    frame = pd.DataFrame([deepeval_case().model_dump()])
    samples = as_samples(frame)
    assert [s.id.split("#")[1] for s in samples] == ["1", "2"]
    assert samples.ignored == []


# --- LangChain and LlamaIndex chat histories ----------------------------------------------------------------------

class DuckMessage:  # a message with LangChain's `.type` and `.content` only
    def __init__(self, type: str, content: str, **more):
        self.type, self.content = type, content
        for k, v in more.items():
            setattr(self, k, v)


class Role(str, Enum):  # LlamaIndex's MessageRole
    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"


class DuckChatMessage:  # LlamaIndex's ChatMessage: `.role` a MessageRole, `.blocks` of text blocks
    def __init__(self, role: Role, text: str, **kwargs):
        self.role, self.additional_kwargs = role, kwargs
        self.blocks = [type("TextBlock", (), {"block_type": "text", "text": text})()]


def duck_langchain() -> list:
    return [DuckMessage("system", SYSTEM), DuckMessage("human", Q1),
            DuckMessage("ai", A1, response_metadata={"contexts": [C1]}), DuckMessage("human", Q2),
            DuckMessage("AIMessageChunk", A2, additional_kwargs={"contexts": [C2]})]


def duck_llamaindex() -> list:
    return [DuckChatMessage(Role.SYSTEM, SYSTEM), DuckChatMessage(Role.USER, Q1),
            DuckChatMessage(Role.ASSISTANT, A1, contexts=[C1]), DuckChatMessage(Role.USER, Q2),
            DuckChatMessage(Role.ASSISTANT, A2, source_documents=[{"page_content": C2, "id": None}])]


NO_REFERENCE = {"messages": [{k: v for k, v in m.items() if k != "reference"} for m in CHAT["messages"]]}


@pytest.mark.parametrize("given", [
    pytest.param(lambda: [{"messages": duck_langchain()}], id="langchain-messages"),
    pytest.param(lambda: [{"chat_history": duck_langchain()}], id="langchain-chat_history"),
    pytest.param(lambda: [duck_langchain()], id="langchain-list-as-a-row"),
    pytest.param(lambda: duck_langchain(), id="langchain-list-as-the-input"),
    pytest.param(lambda: [{"messages": duck_llamaindex()}], id="llamaindex-messages"),
    pytest.param(lambda: [duck_llamaindex()], id="llamaindex-list-as-a-row"),
])
def test_duck_typed_chat_histories_give_the_chat_rows_turns(given):
    assert dumped(given()) == dumped([NO_REFERENCE])


def test_langchains_own_messages_and_their_dicts():
    lc = pytest.importorskip("langchain_core.messages")
    from langchain_core.documents import Document

    history = [lc.SystemMessage(SYSTEM), lc.HumanMessage(Q1),
               lc.AIMessage("", tool_calls=[{"name": "search", "args": {}, "id": "1"}]),
               lc.ToolMessage(C1, tool_call_id="1"), lc.AIMessage(A1), lc.HumanMessage(Q2),
               lc.AIMessage(A2, response_metadata={"source_documents": [Document(C2, id="d2")]})]
    want = {"messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": Q1},
                         {"role": "assistant", "content": "", "tool_calls": [
                             {"name": "search", "args": {}, "id": "1", "type": "tool_call"}]},
                         {"role": "tool", "content": C1},
                         {"role": "assistant", "content": A1}, {"role": "user", "content": Q2},
                         {"role": "assistant", "content": A2, "contexts": [C2], "retrieved_context_ids": ["d2"]}]}
    assert dumped([{"messages": history}]) == dumped([want])
    assert dumped([{"messages": lc.messages_to_dict(history)}]) == dumped([want])  # {"type", "data"}
    assert dumped([{"messages": [m.model_dump() for m in history]}]) == dumped([want])


def test_llamaindexs_own_chat_messages_and_their_dicts():
    llms = pytest.importorskip("llama_index.core.llms")
    history = [llms.ChatMessage(role="system", content=SYSTEM), llms.ChatMessage(role="user", content=Q1),
               llms.ChatMessage(role="assistant", content=A1, additional_kwargs={"contexts": [C1]}),
               llms.ChatMessage(role="user", content=Q2),
               llms.ChatMessage(role="assistant", content=A2, additional_kwargs={"contexts": [C2]})]
    assert dumped([{"messages": history}]) == dumped([NO_REFERENCE])
    assert dumped([{"messages": [m.model_dump(mode="json") for m in history]}]) == dumped([NO_REFERENCE])


def test_a_chat_chains_output_is_a_turn_row_with_its_chat_history():
    """{"input", "chat_history", "answer", "context"} (LangChain's history-aware retrieval chain): one sample, the
    turn, with its history read as a turn row's `history` is, whatever the messages' shape."""
    row = {"input": Q2, "chat_history": duck_langchain()[:3], "answer": A2, "context": [C2], "reference": REF}
    (turn,) = as_samples([row])
    (plain,) = as_samples([{"question": Q2, "answer": A2, "contexts": [C2], "reference": REF,
                            "history": [{"role": m["role"], "content": m["content"]}
                                        for m in NO_REFERENCE["messages"][:3]]}])
    assert turn.model_dump() == plain.model_dump()
    assert turn.turn.turn == 2 and [m.role for m in turn.turn.history] == ["system", "user", "assistant"]


# --- tables and files ---------------------------------------------------------------------------------------------

def test_a_dataframes_messages_cells_arrays_or_text():
    messages = CHAT["messages"]
    arrays = pd.DataFrame({"id": ["plans"], "messages": [np.array(messages, dtype=object)]})
    text = pd.DataFrame({"id": ["plans"], "messages": [json.dumps(messages)]})
    want = dumped([{"id": "plans", **CHAT}])
    assert dumped(arrays) == want and dumped(text) == want


def test_csv_files_with_messages_as_json_or_python_text(tmp_path):
    """A CSV's `messages` cell as JSON; a ragas CSV's `user_input` as the Python literal pandas writes."""
    chat_csv, ragas_csv = tmp_path / "chats.csv", tmp_path / "ragas.csv"
    with chat_csv.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([["id", "messages"], ["plans", json.dumps(CHAT["messages"])]])
    pd.DataFrame([ragas_sample().model_dump(exclude_none=True)]).to_csv(ragas_csv, index=False)
    assert [s.model_dump() for s in load_samples(chat_csv)[0]] == dumped([{"id": "plans", **CHAT}])
    assert [s.model_dump() for s in load_samples(ragas_csv)[0]] == dumped([TOOL_CHAT])


def test_a_json_file_of_conversation_objects_through_the_cli(tmp_path):
    path = tmp_path / "chats.json"
    rows = [{"id": "chat", **CHAT}, {"id": "ragas", **ragas_sample().model_dump()},
            {"id": "deepeval", **deepeval_case().model_dump()}]
    path.write_text(json.dumps(rows), encoding="utf-8")
    out = tmp_path / "report.json"
    r = cli("eval", path, *FAST, "-m", "faithfulness", "--out", out)
    assert r.exit_code == 0, r.output
    report = json.loads(out.read_text(encoding="utf-8"))
    assert [s["id"] for s in report["samples"]] == ["chat#1", "chat#2", "ragas#1", "ragas#2", "deepeval#1",
                                                    "deepeval#2"]
    assert report["samples"][3]["turn"]["user_message"] == Q2


# --- bad shapes: the row, the message and the field as given -------------------------------------------------------

def _bad_turn(**more) -> dict:
    return {"turns": [{"role": "user", "content": Q1}, {"role": "assistant", "content": A1, **more}]}


@pytest.mark.parametrize("row, field, words", [
    (_bad_turn(retrieval_context=[1]), "turns[1].retrieval_context[0]", "expected a string, got int"),
    (_bad_turn(retrievalContext="one"), "turns[1].retrievalContext", "expected a list of strings, got str"),
    (_bad_turn(retreival_context=["a"]), "turns[1].retreival_context", "did you mean 'retrieval_context'"),
    ({"turns": [{"input": "", "actual_output": A1}]}, "turns[0].input", "must not be empty"),
    ({"turns": [{"input": Q1, "actual_output": 3}]}, "turns[0].actual_output", "expected a string or a list"),
    ({"user_input": [{"type": "human", "content": Q1}, {"type": "bot", "content": A1}]}, "user_input[1].type",
     "expected one of user, assistant, system, tool (or human, ai,"),
    ({"messages": [{"type": "human", "data": {"content": Q1}},
                   {"type": "ai", "data": {"content": A1, "response_metadata": {"contexts": "one"}}}]},
     "messages[1].data.response_metadata.contexts", "expected a list of strings, got str"),
    ({"messages": [{"role": "user", "blocks": [{"block_type": "text", "text": Q1}]},
                   {"role": "assistant", "blocks": "oops"}]}, "messages[1].blocks", "expected a list of blocks"),
    ({"messages": "[{'role': 'user', 'content': "}, "messages", "neither JSON nor a Python list"),
    ({**_bad_turn(), "expected_outcome": 3}, "expected_outcome", "expected a string, got int"),
    ({"turns": [{"role": "user", "content": Q1}]}, "turns", "no turn to score"),
    ({"chat_history": [{"type": "human", "content": Q1}, {"type": "bot", "content": A1}], "input": Q2,
      "actual_output": A2, "retrieval_context": []}, "chat_history[1].type", "expected one of user, assistant"),
])
def test_a_bad_shape_exits_2_naming_the_line_the_message_and_the_field(tmp_path, row, field, words):
    path = write_jsonl(tmp_path / "chats.jsonl", [{"question": "q", "contexts": [], "answer": "a"}, row])
    with pytest.raises(DatasetError) as e:
        load_samples(path)
    assert (e.value.line, e.value.field) == (2, field) and words in e.value.detail
    r = cli("eval", path, *FAST)
    assert r.exit_code == 2, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)  # a message, never a traceback
    assert r.output.strip().splitlines()[-1].startswith(f"Error: {path}, line 2, field '{field}': ")
