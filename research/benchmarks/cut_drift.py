"""How much the place of a step cut moves P(yes) (judges/prefix_steps.py): each answer sentence of the first 6
examples asked as verify_statement, cut as today (the contexts and instructions one step) and with one more cut after
the contexts block, with the default judge; then the first way again (the same floats: a cut is deterministic).

    .venv/bin/python -m research.benchmarks.cut_drift

Prints, per sentence, P(yes) today, with the extra cut, today again, and the difference; then the largest."""
import json
from dataclasses import replace

from localragas.core.sentences import sentences
from localragas.judges import get_judge
from localragas.judges.yes_no import p_yes
from localragas.prompts import verify_statement
from localragas.prompts.base import contexts_block


def main() -> int:
    judge = get_judge("qwen2.5-1.5b")
    with open("examples/rag_samples.jsonl", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f][:6]

    def read(prompt) -> float:
        return p_yes(judge.next_tokens(prompt, ("yes", "no")).candidates, prompt.name)

    diffs = []
    for row in rows:
        for sentence in sentences(row["answer"]):
            today = verify_statement(sentence, row["contexts"], lang="en")
            cut = len(contexts_block(row["contexts"], "en")) + 2  # after the contexts block and its blank line
            a, b, again = read(today), read(replace(today, splits=(cut, *today.splits))), read(today)
            diffs.append(abs(a - b))
            print(f"{a:.6f} {b:.6f} {again:.6f} {abs(a - b):.2e}", flush=True)
    print(f"largest difference {max(diffs):.4f} over {len(diffs)} sentences")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
