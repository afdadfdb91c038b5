"""What a conversation's turn costs against a single-turn sample of the same size (issue 51).

    .venv/bin/python -m research.benchmarks.conversation_cost HUMAN_EVAL.json OUT_DIR [--conversations 2]
        [--turns N] [--judge qwen2.5-1.5b] [--metrics faithfulness,answer_relevancy,context_precision]

Takes the first N conversations of MTRAG's dev split (research.accuracy.build_conversation_rows: the human reference
answers, each turn's reference passages as its contexts) and writes them twice: as conversations (one chat-format row
each: the rewrite, the user's words in faithfulness) and as single samples (each turn alone: its user message as the
question, the same contexts and answer). Scores each with `localragas eval` (a fresh cache each, the judge check
off: both runs pay the same for it), one after the other, and prints per turn: seconds, judge calls, prompt tokens
sent / reused / evaluated, generated tokens, and the per-family table, from the reports (side_by_side_figures). The
history is read once per conversation when the rewrite's prompts reuse the previous turn's prefix: the
`standalone_question` row's reused tokens say how much. Run it alone on the machine.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from research.accuracy.build_conversation_rows import dev_part, mtrag_rows
from .side_by_side_figures import evaluated, families, parts


def conversations(data: dict, n: int, most: int | None = None) -> tuple[list[dict], list[dict]]:
    """(chat rows, single rows) of the first n dev conversations with a reference answer on every turn (their first
    `most` turns)."""
    rows = [r for r in dev_part(mtrag_rows(data, clear_only=False)) if r["meta"]["model"] == "reference"]
    by_conversation: dict[str, list[dict]] = {}
    for r in rows:
        by_conversation.setdefault(r["conversation_id"], []).append(r)
    chats, singles = [], []
    for cid, turns in by_conversation.items():
        turns.sort(key=lambda r: r["meta"]["turn"])
        if [r["meta"]["turn"] for r in turns] != list(range(1, len(turns) + 1)):
            continue  # a turn not rated: the conversation is not whole
        turns = turns[:most]
        messages = []
        for r in turns:
            messages += [{"role": "user", "content": r["question"]},
                         {"role": "assistant", "content": r["answer"], "contexts": r["contexts"]}]
            singles.append({"id": f"{cid[:10]}-t{r['meta']['turn']}", "question": r["question"],
                            "contexts": r["contexts"], "answer": r["answer"]})
        chats.append({"id": cid[:10], "messages": messages})
        if len(chats) == n:
            break
    return chats, [s for s in singles if s["id"].split("-t")[0] in {c["id"] for c in chats}]


def _eval(data: Path, out: Path, judge: str, metrics: str) -> dict:
    cmd = [sys.executable, "-m", "localragas", "eval", str(data), "--judge", judge, "--metrics", metrics,
           "--cache-dir", str(out.with_suffix(".cache")), "--no-judge-check", "--no-gate", "--out", str(out),
           "--no-progress"]
    subprocess.run(cmd, check=True)
    return json.loads(out.read_text(encoding="utf-8"))


def _line(name: str, c: dict[str, float], turns: int) -> str:
    return (f"| {name} | {c['seconds'] / turns:.1f} | {c['calls'] / turns:.1f} | {c['prompt_tokens'] / turns:,.0f} | "
            f"{c['cached_tokens'] / turns:,.0f} | {evaluated(c) / turns:,.0f} | {c['completion_tokens'] / turns:,.0f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("human_eval", type=Path)
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--conversations", type=int, default=2)
    ap.add_argument("--judge", default="qwen2.5-1.5b")
    ap.add_argument("--turns", type=int, default=None, help="each conversation's first N turns")
    # the default metrics but context recall: the turns have no reference
    ap.add_argument("--metrics", default="faithfulness,answer_relevancy,context_precision")
    a = ap.parse_args()
    a.out_dir.mkdir(parents=True, exist_ok=True)
    chats, singles = conversations(json.loads(a.human_eval.read_text(encoding="utf-8")), a.conversations, a.turns)
    turns = len(singles)
    print(f"{len(chats)} conversations, {turns} turns")
    header = ("| run | s/turn | calls/turn | prompt tokens sent/turn | reused | evaluated | generated |\n"
              "|---|---:|---:|---:|---:|---:|---:|")
    tables = []
    for name, rows in (("single", singles), ("conversation", chats)):
        data = a.out_dir / f"{name}.jsonl"
        data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        report = _eval(data, a.out_dir / f"{name}.json", a.judge, a.metrics)
        lines = [_line(f"{name}: all", parts(report)["samples"], turns)]
        lines += [_line(f"{name}: {fam}", c, turns) for fam, c in families(report).items()]
        tables.append("\n".join(lines))
    print(header)
    print("\n".join(tables))


if __name__ == "__main__":
    main()
