"""Labelled turn rows for measuring how localragas scores a conversation's turns against people's labels (issue 51).

    .venv/bin/python -m research.accuracy.build_conversation_rows mtrag HUMAN_EVAL.json OUT_DIR
    .venv/bin/python -m research.accuracy.build_conversation_rows begin BEGIN.jsonl OUT_DIR

mtrag: IBM/mt-rag-benchmark (Apache-2.0), `mtrag-human/evaluations/reference_subset_with_human_evaluations.json`:
159 turns of 20 human-written conversations over four corpora, each answered by three systems (the human reference,
GPT-4o, Llama 3.1 405B) from the turn's reference passages, each answer rated by three annotators on faithfulness
("the response is faithful and grounded on the context": 1 No, 2 Mostly no, 3 Mostly yes, 4 Yes). Label 1 = median
4, 0 = median <= 2; a median of 3 or 3.5 ("mostly") is left out, as ambiguous. The dev split: the conversations in
sha256("mtrag-dev:" + conversation id) order, the first two thirds (the rest kept aside, never written here), so the
turns of one conversation stay together. Writes `mtrag_faithfulness.jsonl` (turn rows: `history` = the turn's
earlier messages) and `mtrag_faithfulness_single.jsonl` (the same rows without it: today's single-turn score).

begin: the dev split's begin_faithfulness.jsonl, whose `question` is the other speaker's previous turn (BEGIN keeps no
longer history): written as turn rows with an empty `history`, so the turn-faithfulness rule (the user's own words
count as support) applies to that turn. `begin_faithfulness_turns.jsonl`.

The rows follow the dev split's schema (id, question, contexts, answer, reference, label, source, meta) and are read
by `localragas calibrate`; they are written outside the package (never copy benchmark data into localragas/).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import statistics
from pathlib import Path

MTRAG_SOURCE = ("MTRAG (Katsis et al., 2025) IBM/mt-rag-benchmark: mtrag-human/evaluations/"
                "reference_subset_with_human_evaluations.json; license: Apache-2.0")
DEV_SHARE = 2 / 3


def _speaker(s: str) -> str:
    return "user" if s == "user" else "assistant"


def mtrag_rows(data: dict, clear_only: bool = True) -> list[dict]:
    """Every rated answer with a clear faithfulness label (every rated answer with clear_only false: its label 1 for
    a median of 3 or more), as a turn row (history given)."""
    docs = {d["document_id"]: d for d in data["documents"]}
    tasks = {t["task_id"]: t for t in data["tasks"]}
    rows = []
    for e in data["evaluations"]:
        task = tasks[e["task_id"]]
        votes = [int(a["value"]) for a in e["annotations"]["faithfulness"].values()]
        median = statistics.median(votes)
        if clear_only and 2 < median < 4:
            continue
        *earlier, last = task["input"]
        assert last["speaker"] == "user", task["task_id"]
        conversation, turn = task["task_id"].split("<::>")
        contexts = [f"{docs[c['document_id']].get('title', '')}\n{docs[c['document_id']]['text']}".strip()
                    for c in task["contexts"]]
        rows.append({
            "id": f"mtrag-{conversation[:10]}-t{turn}-{e['model_id']}", "question": last["text"],
            "contexts": contexts, "answer": e["model_response"], "reference": None,
            "history": [{"role": _speaker(m["speaker"]), "content": m["text"]} for m in earlier],
            "conversation_id": conversation,
            "label": {"metric": "faithfulness", "value": int(median >= (4 if clear_only else 3)), "kind": "binary"},
            "source": MTRAG_SOURCE,
            "meta": {"dataset": "MTRAG", "conversation": conversation, "turn": int(turn), "model": e["model_id"],
                     "votes": votes, "answerability": task.get("Answerability"),
                     "multi_turn": task.get("Multi-Turn"), "collection": task.get("Collection"),
                     "selection": "median faithfulness 4 -> 1, <= 2 -> 0; 3 and 3.5 left out; dev: the first 2/3 "
                                  "of conversations in sha256('mtrag-dev:' + id) order"}})
    return rows


def dev_part(rows: list[dict]) -> list[dict]:
    """The rows of the first two thirds of the conversations, in sha256 order (the rest kept aside); a turn's answers
    next to each other, so the judge reads their shared contexts once (the prefix cache)."""
    conversations = sorted({r["conversation_id"] for r in rows},
                           key=lambda c: hashlib.sha256(f"mtrag-dev:{c}".encode()).hexdigest())
    dev = set(conversations[:round(len(conversations) * DEV_SHARE)])
    kept = [r for r in rows if r["conversation_id"] in dev]
    return sorted(kept, key=lambda r: (conversations.index(r["conversation_id"]), r["meta"]["turn"], r["meta"]["model"]))


def _write(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    labels = [r["label"]["value"] for r in rows]
    print(f"{path}: {len(rows)} rows, {sum(labels)} labelled 1, {len(labels) - sum(labels)} labelled 0")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source", choices=("mtrag", "begin"))
    ap.add_argument("input", type=Path)
    ap.add_argument("out_dir", type=Path)
    a = ap.parse_args()
    a.out_dir.mkdir(parents=True, exist_ok=True)
    if a.source == "mtrag":
        rows = dev_part(mtrag_rows(json.loads(a.input.read_text(encoding="utf-8"))))
        _write(a.out_dir / "mtrag_faithfulness.jsonl", rows)
        single = [{k: v for k, v in r.items() if k not in ("history", "conversation_id")} for r in rows]
        _write(a.out_dir / "mtrag_faithfulness_single.jsonl", single)
    else:
        rows = [json.loads(line) for line in a.input.read_text(encoding="utf-8").splitlines() if line.strip()]
        _write(a.out_dir / "begin_faithfulness_turns.jsonl", [{**r, "history": []} for r in rows])


if __name__ == "__main__":
    main()
