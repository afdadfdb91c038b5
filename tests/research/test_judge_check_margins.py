"""research.accuracy.judge_check_margins with the fake judge: each family and language printed with its room to the
check's rules, the rows written, exit 1 when a rule is not met."""
from __future__ import annotations

import json

from localragas.run import judge_check
from research.accuracy import judge_check_margins


def test_the_margins_script_prints_each_family_and_language_and_exits_1_when_one_fails(tmp_path, capsys,
                                                                                       monkeypatch):
    script = judge_check_margins
    out = tmp_path / "m.json"
    assert script.main(["--judge", "fake", "--out", str(out), "--metric-option", "faithfulness.verdicts=json"]) == 0
    shown = capsys.readouterr().out
    s, c = len(judge_check.STATEMENT_ORDER), len(judge_check.CHUNK_ORDER)
    assert (f"verify_statements (English), {s} items: accuracy 1.000 (room {1 - judge_check.MIN_ACCURACY:+.3f}) "
            "-> passed") in shown
    assert (f"judge_chunk (Chinese), {c} items: AUC 1.000 (room {1 - judge_check.MIN_AUC:+.3f}), margin 1.000 "
            f"(room {1 - judge_check.MIN_MARGIN:+.3f})") in shown
    assert "1 call(s) (0 from the cache)" in shown and f"{c} call(s) (0 from the cache)" in shown
    rows = json.loads(out.read_text())["rows"]
    assert [(r["family"], r["language"]) for r in rows] == [
        ("verify_statements", "en"), ("verify_statements", "zh"), ("judge_chunk", "en"), ("judge_chunk", "zh")]
    # more items than the check asks by default; a rule the judge does not meet: exit 1
    monkeypatch.setattr(judge_check, "STATEMENT_ORDER", judge_check.STATEMENT_ORDER)  # restored after the test
    monkeypatch.setattr(judge_check, "MIN_MARGIN", 0.75)
    assert script.main(["--judge", "fake", "--language", "en", "--statement-order", "yn" * 7]) == 1
    shown = capsys.readouterr().out
    assert (f"verify_statement (English), 14 items: AUC 1.000 (room {1 - judge_check.MIN_AUC:+.3f}), margin 0.734 "
            "(room -0.016)") in shown
    assert shown.rstrip().endswith("the check FAILS")
