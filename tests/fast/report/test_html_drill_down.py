"""The HTML report's evidence panel (report/html/app.js) run in node over a stub DOM
(tests/fast/report/js/drill_down.js): each metric's evidence is shown by the renderer its definition in the report
names, and the sample's text (question, answer and reference with the judged statements marked, contexts numbered,
context precision's ranks with their chunk) as text, never markup. Skipped without node; the browser tier
(tests/browser) runs the page in Chromium."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import cli
from reports_helpers import NODE
from reports_helpers import html_tree as drill_down

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE.parents[2] / "examples" / "rag_samples.jsonl"
FAST = ["--judge", "fake", "--embedder", "fake", "--no-progress", "--no-cache", "--no-resume"]


@pytest.mark.skipif(NODE is None, reason="needs node")
def test_each_metric_evidence_is_shown_by_the_renderer_its_stored_definition_names(tmp_path):
    out = tmp_path / "run.json"
    assert cli("eval", EXAMPLE, *FAST, "--no-gate", "-n", "2", "--out", out).exit_code == 0
    data = json.loads(out.read_text(encoding="utf-8").replace('"context_recall"', '"plugin_recall"'))
    data["definitions"]["plugin_recall"]["renderer"].update(yes="PLUGIN-YES", no="PLUGIN-NO")
    data["definitions"]["faithfulness"]["renderer"] = {}  # no renderer: its evidence as a key/value list
    tree = drill_down(tmp_path, data)
    assert tree.startswith("rows 2\n")
    panels = tree.split("\nDIV \n")[1:]  # the detail body, once per sample
    assert len(panels) == 2
    first = panels[0]
    assert "OL.chunks" in first and "TABLE.data.compact" in first  # context_precision, answer_relevancy
    assert '"✓ PLUGIN-YES"' in tree or '"✗ PLUGIN-NO"' in tree  # the plugin metric, by its stored renderer
    faithfulness = first.split('H3 "faithfulness"')[1].split("SECTION.metric-detail")[0]
    assert "OL.verdicts" not in faithfulness and 'DT "claims"' in faithfulness


@pytest.mark.skipif(NODE is None, reason="needs node")
def test_the_drawer_shows_the_samples_text_with_the_judged_statements_marked(tmp_path):
    hostile = "<img src=x onerror=alert(1)>"
    rows = [{"id": "s", "question": f"What colour is the sky {hostile}?",
             "contexts": ["The sky is blue on a clear day.", f"Grass is green {hostile}."],
             "answer": "The sky is blue. The moon is made of cheese.", "reference": "The sky is blue."}]
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps(rows[0]) + "\n", encoding="utf-8")
    out = tmp_path / "run.json"
    assert cli("eval", data, *FAST, "--no-gate", "--out", out).exit_code == 0
    tree = drill_down(tmp_path, json.loads(out.read_text(encoding="utf-8")))
    text = tree.split('H3 "sample"')[1].split("SECTION.metric-detail ")[0]
    assert f'DIV.sample-text "What colour is the sky {hostile}?"' in text  # a text node: never parsed as markup
    answer = text.split('H4 "answer"')[1].split('H4 "reference"')[0]
    assert 'MARK.yes "The sky is blue." title="faithfulness: supported' in answer
    assert 'MARK.no "The moon is made of cheese." title="faithfulness: not supported' in answer
    assert 'SUP.tag.passed "✓ supported"' in answer and 'SUP.tag.failed "✗ not supported"' in answer
    assert 'MARK.yes "The sky is blue." title="context_recall: attributed' in text.split('H4 "reference"')[1]
    assert 'OL.contexts' in text and f'LI.sample-text "Grass is green {hostile}."' in text
    chunks = tree.split("OL.chunks.with-text")[1]
    assert 'SPAN.rank "rank 2"' in chunks and f'DIV.chunk-text "Grass is green {hostile}."' in chunks

    assert cli("eval", data, *FAST, "--no-gate", "--no-sample-text", "--out", out).exit_code == 0
    tree = drill_down(tmp_path, json.loads(out.read_text(encoding="utf-8")))
    assert 'H3 "sample"' not in tree and "no sample text: the run kept none (--no-sample-text)" in tree
    assert "OL.chunks " in tree and "chunk-text" not in tree


@pytest.mark.skipif(NODE is None, reason="needs node")
def test_the_conversation_metrics_show_their_verdicts_and_their_unscored_reasons_in_plain_words(tmp_path):
    out = tmp_path / "run.json"
    single = {"id": "single", "question": "Where is Paris?", "answer": "In France.", "contexts": ["In France."]}
    chats = tmp_path / "chats.jsonl"
    chats.write_text((EXAMPLE.parent / "chat_samples.jsonl").read_text(encoding="utf-8") + json.dumps(single) + "\n",
                     encoding="utf-8")
    assert cli("eval", chats, *FAST, "-m", "knowledge_retention,conversation_completeness", "--out", out).exit_code == 0
    tree = drill_down(tmp_path, json.loads(out.read_text(encoding="utf-8")))
    plans, lisbon, alone = tree.split("\nROW ")[1:]  # two conversations as chats, then the single sample
    assert plans.startswith("conversation-table plans") and alone.startswith("sample-table single")
    first, second = plans.split('H3.turn-head "Turn ')[1:]
    assert ('CODE "no_earlier_turn"\n' in first and "the first turn of its conversation: the user had said nothing "
            "earlier to remember." in first)
    assert 'CODE "no_conversation_end"\n' in first and "scored once per conversation, on its last turn." in first
    assert ('CODE "no_conversation"\n' in alone and "this metric scores a conversation's turns; this sample is a "
            "single question and answer." in alone)
    completeness = second.split('H4 "conversation_completeness"')[1]
    assert 'P.summary-line "2 of 2 addressed"' in completeness and 'SPAN.text "And the premium tier?"' in completeness
    assert 'P.summary-line "1 of 1 consistent"' in second.split('H4 "knowledge_retention"')[1]
    assert 'P.summary-line "0 of 1 addressed"' in lisbon
