"""`localragas generate --size 3` with the test judge (SmolLM2-135M) and the real embedder: every reply parses and
every kept item is a schema-valid row of the input format, with its counts in the sidecar."""
from __future__ import annotations

import json
from pathlib import Path

from localragas.testset.generation import KINDS
from localragas.core.reply_schemas import MAX_QUESTION_CHARS, MAX_REFERENCE_CHARS
from localragas.data.schema import Sample

from cli_helpers import cli

DOCS = Path(__file__).resolve().parents[2] / "examples" / "docs"


def test_generate_size_3_with_the_test_judge(tmp_path):
    out = tmp_path / "testset.jsonl"
    result = cli("generate", str(DOCS), "--out", str(out), "--size", "3", "--judge",
                 "smollm2-135m", "--embedder", "minilm-l6", "--no-progress", "--no-cache")
    assert result.exit_code == 0, result.output
    meta = json.loads((tmp_path / "testset.jsonl.meta.json").read_text())
    assert meta["judge_stats"]["parse_failures"] == 0 and meta["judge_stats"]["failed_calls"] == 0, meta["judge_stats"]
    assert meta["kept"] + sum(meta["dropped_by_reason"].values()) >= 1
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == meta["kept"] <= 3
    for row in rows:
        Sample.model_validate({k: v for k, v in row.items() if k not in ("meta", "reference_contexts")})
        assert row["meta"]["kind"] in KINDS and row["answer"] == "" and row["contexts"] == []
        assert 0 < len(row["question"]) <= MAX_QUESTION_CHARS and 0 < len(row["reference"]) <= MAX_REFERENCE_CHARS
        assert set(row["reference_context_ids"]) <= set(row["meta"]["chunk_ids"])
