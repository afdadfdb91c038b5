"""scripts/bench_vs_ragas.py: the localragas side end to end with the test judge (the ragas side needs its own venv
and a server, and is run by hand: see docs/benchmark.md), and the summary arithmetic."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "bench_vs_ragas.py"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_vs_ragas", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_localragas_side_end_to_end(tmp_path):
    out = tmp_path / "bench.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--skip-ragas", "--judge", "smollm2-135m", "--limit", "1", "--bench-rows", "0",
         "--metrics", "context_precision", "--out", str(out)],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "samples/min" in done.stdout and "only the localragas/ragas ratios are meaningful" in done.stdout
    result = json.loads(out.read_text())
    records = result["localragas"]["records"]
    assert [r["metric"] for r in records] == ["context_precision"]
    for r in records:
        assert r["seconds"] > 0 and r["calls"] >= 1 and r["prompt_tokens"] > 0 and r["parse_errors"] == 0
    assert result["judge"]["sha256"].startswith("b179c9523d0e")
    assert result["machine"]["cores"] >= 1
    overall = result["summary"]["localragas"]["overall"]
    assert overall["samples"] == 1 and overall["samples_per_min"] > 0
    assert result["summary"]["ratios"] == {}
    assert result["localragas"]["cache"].startswith("off")  # a judge cache would fake the speed


def test_summary_and_ratios():
    bench = _bench()

    def rec(sample, metric, seconds, tokens, **kw):
        return {"sample": sample, "metric": metric, "seconds": seconds, "prompt_tokens": tokens, "completion_tokens": 0,
                "calls": 1, "nan": False, "parse_errors": 0, "exception": None, **kw}

    ours = bench.summarise([rec("a", "faithfulness", 1, 100), rec("b", "faithfulness", 1, 100),
                            rec("a", "context_recall", 2, 50)], ["faithfulness", "context_recall"])
    theirs = bench.summarise([rec("a", "faithfulness", 4, 400), rec("b", "faithfulness", 4, 200, nan=True),
                              rec("a", "context_recall", 6, 50, exception="TimeoutError")],
                             ["faithfulness", "context_recall"])
    assert ours["faithfulness"]["samples_per_min"] == 60.0 and ours["overall"]["samples"] == 2
    assert ours["overall"]["seconds_per_sample"] == 2.0 and ours["overall"]["tokens_per_sample"] == 125.0
    assert theirs["faithfulness"]["nan"] == 1 and theirs["overall"]["exceptions"] == 1
    r = bench.ratios(ours, theirs)
    assert r["faithfulness"] == {"speed": 4.0, "tokens": round(200 / 600, 3)}
    assert r["overall"]["speed"] == round(14 / 4, 3)


def test_metric_applicability():
    bench = _bench()
    sample = {"answer": "", "reference": "ref", "contexts": ["c"]}
    assert bench.applicable_metrics(sample, list(bench.METRICS)) == ["context_precision", "context_recall"]
    sample = {"answer": "a", "reference": None, "contexts": []}
    assert bench.applicable_metrics(sample, list(bench.METRICS)) == ["answer_relevancy"]
