"""What the real tier's tests share: the example samples and the checks of the report a run of them wrote; the
obvious Eiffel Tower cases the default judge is held to."""
from __future__ import annotations

import json
from pathlib import Path

from localragas.data.schema import Report, Sample

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "rag_samples.jsonl"

CONTEXT = [
    "The Eiffel Tower is a wrought-iron lattice tower in Paris, France. It was completed in 1889 "
    "and is 330 metres tall. It was designed by the company of engineer Gustave Eiffel."
]
CLAIMS = [
    "The Eiffel Tower is in Paris.",                 # stated
    "The Eiffel Tower was completed in 1925.",       # contradicted (1889)
    "The Eiffel Tower is 330 metres tall.",          # stated
    "The Eiffel Tower is made of concrete.",         # contradicted (wrought iron)
]
FAITHFUL = Sample(id="ok", question="When was the Eiffel Tower completed?", contexts=CONTEXT,
                  answer="The Eiffel Tower was completed in 1889.")


def examples_report(out: Path, limit: int | None = None) -> tuple[Report, int]:
    """The report `localragas eval` of EXAMPLES (its first `limit` samples, if given) wrote to `out`, and the number of
    samples, after checking one result a sample and a clean judge: every call parsed, none failed, at least three calls
    a sample."""
    report = Report.model_validate(json.loads(out.read_text()))
    n = sum(1 for line in EXAMPLES.read_text().splitlines() if line.strip())
    n = n if limit is None else min(n, limit)
    assert len(report.samples) == n
    stats = report.meta["judge_stats"]
    assert stats["parse_failures"] == 0 and stats["failed_calls"] == 0, stats["errors"]
    assert stats["calls"] >= 3 * n  # verdicts per sentence + questions + chunks + reference claims and verdicts
    return report, n
