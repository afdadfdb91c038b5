"""What the analyses read from `localragas calibrate --out` files: the binary-labelled results, their single-item
rows, each item's raw P(yes), and the labelled file a result was scored on."""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from localragas.judge_calls.verdicts import raw_p_yes


def raw_of(item: dict) -> float:
    """The raw P(yes) of a graded evidence item of a `calibrate --out` row; exits naming the item's keys without one."""
    p = raw_p_yes(item)
    if p is None:
        raise SystemExit(f"an item without a raw P(yes) (p_<flag>_raw): {sorted(item)}; re-run calibrate with a "
                         "localragas that records per-row items")
    return p


def labelled_file_rows(result: dict, needed_for: str) -> list[tuple[int, dict]]:
    """(line number, row) of each row of the labelled file `result` was scored on; exits when the file is gone."""
    path = Path(result["file"])
    if not path.is_file():
        raise SystemExit(f"{path}: the labelled file this result was scored on is not there (needed for {needed_for})")
    return [(n, json.loads(line)) for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if line.strip()]


def binary_results(paths: list[Path]) -> list[dict]:
    """The binary-labelled results of `calibrate --out` files."""
    return [r for p in paths for r in json.loads(p.read_text())["results"] if r["kind"] == "binary"]


def single_rows(paths: list[Path]) -> Iterator[tuple[dict, dict]]:
    """(result, row) for every row of `paths` scored on exactly one item."""
    for r in binary_results(paths):
        for row in r["per_row"]:
            if row.get("items") and len(row["items"]) == 1:
                yield r, row
