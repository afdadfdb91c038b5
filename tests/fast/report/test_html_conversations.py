"""The HTML report of conversations (docs/html-report.md, "Conversations"): one row per conversation with each metric's
mean over its turns and its worst turn, opening a chat view (the user's messages and the assistant's replies in turn
order, each turn's scores, evidence and contexts behind buttons); single samples keep the sample table; no text under
--no-sample-text; a large report's page keeps each conversation whole. app.js is run in node over a stub DOM
(reports_helpers.html_tree); the browser tier (tests/browser/test_html_chat_chromium.py) runs it in Chromium."""
from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from localragas.data.conversation_models import TurnResult
from localragas.report.html_report import embedded_samples

from cli_helpers import cli
from reports_helpers import NODE, html_tree, make_report

FAST = ["--judge", "fake", "--embedder", "fake", "--no-progress", "--no-cache", "--no-resume", "--no-gate"]
ROWS = [
    {"id": "plans", "messages": [
        {"role": "system", "content": "You answer questions about Acme's plans."},
        {"role": "user", "content": "What does the basic plan cost?"},
        {"role": "assistant", "content": "The basic plan costs $10 a month.",
         "contexts": ["Acme's basic plan costs $10 per month and includes 5 users."]},
        {"role": "user", "content": "And the premium tier?"},
        {"role": "assistant", "content": "The premium tier costs $25 a month. It includes free coffee.",
         "contexts": ["The premium tier is $25 per month with up to 20 users.", "Support is by email."],
         "reference": "$25 a month.", "standalone_question": "What does Acme's premium tier cost?"}]},
    {"id": "zh", "messages": [
        {"role": "user", "content": "基本套餐每月多少钱？<img src=x onerror=alert(1)>"},
        {"role": "assistant", "content": "基本套餐每月十美元。", "contexts": ["基本套餐每月十美元，包含五个用户。"]}]},
    {"id": "single", "question": "What colour is the sky?", "answer": "The sky is blue.",
     "contexts": ["The sky is blue on a clear day."]},
]
pytestmark = pytest.mark.skipif(NODE is None, reason="needs node")


def run(tmp_path: Path, *flags: str) -> tuple[dict, str]:
    """The JSON and the HTML report of ROWS."""
    data, out, page = tmp_path / "chats.jsonl", tmp_path / "run.json", tmp_path / "run.html"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS), encoding="utf-8")
    got = cli("eval", data, *FAST, *flags, "--out", out, "--html", page)
    assert got.exit_code == 0, got.output
    return json.loads(out.read_text(encoding="utf-8")), page.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> tuple[dict, str]:
    return run(tmp_path_factory.mktemp("chats"))


@pytest.fixture
def report(reports) -> dict:
    return copy.deepcopy(reports[0])


def panels(tree: str) -> dict[str, str]:
    """The printed tree by row: 'conversation-table plans' -> its row and the drawer it opened."""
    parts = re.split(r"^ROW (\S+ \S+)\n", tree, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def turn_of(tree: str, n: int) -> str:
    return tree.split(f'H3.turn-head "Turn {n} of ')[1].split("H3.turn-head")[0]


def test_one_row_per_conversation_opens_the_conversation_as_a_chat(reports, report, tmp_path):
    html = reports[1]
    assert '<section id="conversations">' in html and '<a href="#conversations">Conversations</a>' in html
    assert '<section id="samples">' in html  # the single sample keeps today's table
    tree = html_tree(tmp_path, report)
    rows = panels(tree)
    assert tree.startswith("rows 3\n")
    assert list(rows) == ["conversation-table plans", "conversation-table zh", "sample-table single"]

    # the conversation's row: turns, each metric's mean over its turns and its worst turn
    turns = [s for s in report["samples"] if s["id"].startswith("plans#")]
    precision = [s["metrics"]["context_precision"]["value"] for s in turns]
    row = rows["conversation-table plans"].split("\nDIV \n")[0]
    assert 'TD.num "2"' in row
    assert f'"{sum(precision) / 2:.3f}"' in row
    worst = min(range(2), key=lambda i: precision[i])
    assert f'"worst {precision[worst]:.3f} · turn {worst + 1}"' in row

    chat = rows["conversation-table plans"].split("\nDIV \n")[1]
    assert 'OL.chat  aria-label=conversation plans' in chat
    first, second = turn_of(chat, 1), turn_of(chat, 2)
    assert 'DIV.sample-text "What does the basic plan cost?"' in first  # the user's message as written
    assert "The basic plan costs $10 a month." in first  # the reply, its judged statements marked
    assert 'DIV.sample-text "And the premium tier?"' in second
    assert re.search(r'MARK\.(yes|no) "The premium tier costs \$25 a month\."', second)
    assert "standalone question" not in first  # the same as the user's message: not repeated
    assert ('STRONG "standalone question, given with the data: "' in second
            and 'SPAN.sample-text "What does Acme\'s premium tier cost?"' in second)
    # each turn's scores, then its contexts and evidence behind buttons, hidden until pressed
    faithfulness = turns[1]["metrics"]["faithfulness"]["value"]
    assert 'SPAN.name "faithfulness "' in second and f'"{faithfulness:.3f}"' in second
    assert 'BUTTON.toggle "evidence of turn 2" aria-expanded=false' in second
    assert 'BUTTON.toggle "contexts (2)" aria-expanded=false' in second
    assert 'OL.contexts  [hidden]' in second and 'LI.sample-text "Support is by email."' in second
    evidence = second.split("DIV.turn-evidence  [hidden]")[1]
    assert 'H4 "faithfulness"' in evidence and "OL.verdicts" in evidence  # the metrics' own renderers
    assert "OL.chunks.with-text" in evidence and "TABLE.data.compact" in evidence
    assert 'H4 "reference"' in evidence and 'H4 "judge"' in evidence

    opened = panels(html_tree(tmp_path, report, open_toggles=True))["conversation-table plans"]
    assert 'BUTTON.toggle "evidence of turn 2" aria-expanded=true' in opened
    assert "[hidden]" not in opened.split("\nDIV \n")[1]

    zh = rows["conversation-table zh"]
    assert 'DIV.sample-text "基本套餐每月多少钱？<img src=x onerror=alert(1)>"' in zh  # a text node, never markup
    assert "基本套餐每月十美元。" in zh
    single = rows["sample-table single"]
    assert 'H3 "sample"' in single and "OL.chat" not in single  # today's evidence panel


def test_a_rewritten_question_a_metric_scored_once_and_turns_left_out(report, tmp_path):
    data = report
    second = next(s for s in data["samples"] if s["id"] == "plans#2")
    second["turn"].update(question="What does the premium tier of Acme cost?", rewritten=True)
    first = next(s for s in data["samples"] if s["id"] == "plans#1")
    # a metric scored once per conversation, on its last turn (conversation completeness)
    first["metrics"]["context_recall"] = {"value": None, "unscored": "no_conversation_end", "evidence": {}}
    second["metrics"]["context_recall"]["value"] = 0.5
    rows = panels(html_tree(tmp_path, data))
    plans = rows["conversation-table plans"]
    assert 'STRONG "standalone question, rewritten by the judge: "' in plans
    assert 'SPAN.sample-text "What does the premium tier of Acme cost?"' in plans
    assert '"0.500"' in plans and 'SPAN.worst "the conversation\'s"' in plans
    assert 'LI.na  title="no_conversation_end"' in turn_of(plans, 1)  # not applicable: not a fault

    data["samples"] = [s for s in data["samples"] if s["id"] != "plans#1"]  # a turn not on the page
    plans = panels(html_tree(tmp_path, data))["conversation-table plans"]
    assert 'TD.num "1 of 2"' in plans
    assert 'P.note "Turn 1 of 2 is not on this page' in plans and 'H3.turn-head "Turn 1 of' not in plans


def test_without_sample_text_the_chat_shows_turns_and_scores_and_says_why(tmp_path):
    data, _ = run(tmp_path, "--no-sample-text")
    assert all("input" not in s and (s.get("turn") or {}).get("user_message") is None for s in data["samples"])
    chat = panels(html_tree(tmp_path, data))["conversation-table plans"].split("\nDIV \n")[1]
    assert "P.note \"No text: the run kept none (--no-sample-text)" in chat
    assert 'H3.turn-head "Turn 1 of 2"' in chat and 'H3.turn-head "Turn 2 of 2"' in chat
    assert chat.count('P.muted "(text not kept)"') == 4  # each user message and each reply
    assert 'SPAN.name "faithfulness "' in chat and "OL.verdicts" in chat
    assert "What does the basic plan cost?" not in chat and "And the premium tier?" not in chat
    assert "contexts (" not in chat


def test_a_page_of_only_conversations_has_no_sample_table(tmp_path):
    example = Path(__file__).resolve().parents[3] / "examples" / "chat_samples.jsonl"
    got = cli("eval", example, *FAST, "--html", tmp_path / "chat.html")
    assert got.exit_code == 0, got.output
    html = (tmp_path / "chat.html").read_text(encoding="utf-8")
    assert '<section id="conversations">' in html and 'id="conversation-table"' in html
    assert '<section id="samples">' not in html and 'href="#samples"' not in html


def conversation_report(turns: dict[str, int], worst: str):
    """Conversations of the given turns (single samples: 0) in this order, every score 0.9 but `worst`'s 0.1."""
    ids = [f"{c}#{t}" if n else c for c, n in turns.items() for t in range(1, max(n, 1) + 1)]
    report = make_report({i: {"faithfulness": 0.1 if i == worst else 0.9} for i in ids}, gate=False)
    for s in report.samples:
        c, _, t = s.id.partition("#")
        if t:
            s.turn = TurnResult(conversation=c, turn=int(t), turns=turns[c])
    return report


def test_a_large_page_keeps_each_conversation_whole_and_says_so():
    report = conversation_report({"c1": 3, "s1": 0, "s2": 0, "c2": 3, "s3": 0, "c3": 3, "s4": 0}, worst="c3#2")
    shown, note = embedded_samples(report, limit=6)
    assert [s.id for s in shown.samples] == ["c1#1", "c1#2", "c1#3", "c3#1", "c3#2", "c3#3"]
    assert "6 of the 13 samples" in note and "each conversation with all its turns" in note

    long = conversation_report({"s1": 0, "long": 5, "s2": 0, "s3": 0}, worst="s3")
    shown, note = embedded_samples(long, limit=6)
    assert [s.id for s in shown.samples] == ["s1", "long#1", "long#2", "long#3", "s2", "s3"]
    assert "(but 1 conversation(s) of more than 3 turns with their first 3 only)" in note


def test_a_conversation_given_one_turn_per_row_is_one_chat_of_its_rows(tmp_path):
    """Turn rows (a sample with its `history` and `conversation_id`) know only their own place: the chat counts the
    conversation's turns to its last row's, and names a turn no row gave."""
    ask = [{"role": "user", "content": "What does the basic plan cost?"},
           {"role": "assistant", "content": "The basic plan costs $10 a month."}]
    later = [*ask, {"role": "user", "content": "And the premium tier?"},
             {"role": "assistant", "content": "The premium tier costs $25 a month."}]
    rows = [{"id": "t1", "conversation_id": "log", "history": [], "question": ask[0]["content"],
             "answer": ask[1]["content"], "contexts": ["The basic plan costs $10 per month."]},
            {"id": "t3", "conversation_id": "log", "history": later, "question": "How many users does it include?",
             "answer": "It includes 20 users.", "contexts": ["The premium tier has up to 20 users."]}]
    data, out = tmp_path / "turns.jsonl", tmp_path / "run.json"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    got = cli("eval", data, *FAST, "--out", out)
    assert got.exit_code == 0, got.output
    chat = panels(html_tree(tmp_path, json.loads(out.read_text(encoding="utf-8"))))["conversation-table log"]
    assert 'TD.num "2 of 3"' in chat
    assert 'H3.turn-head "Turn 1 of 3"' in chat and 'H3.turn-head "Turn 3 of 3"' in chat
    assert 'P.note "Turn 2 of 3 is not on this page' in chat
    assert 'DIV.sample-text "How many users does it include?"' in chat
