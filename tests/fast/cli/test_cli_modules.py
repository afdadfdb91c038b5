"""The command line is split by concern (localragas/cli/: eval.py, reports.py, calibrate.py, ...), every command still
in the one group; `report` and `merge` take the gate and format options declared once (cli/options.py
regate_options)."""
from __future__ import annotations

from localragas.cli import main

GATE_AND_FORMATS = ["html", "md", "junit", "threshold", "gate_on", "no_gate", "max_error_rate"]


def test_every_command_is_in_the_group():
    assert sorted(main.commands) == ["cache", "calibrate", "compare", "eval", "generate", "merge", "metrics", "models",
                                     "report", "review", "run-rag", "runs", "view"]


def test_report_and_merge_take_the_gate_and_format_options_in_one_order():
    for name in ("report", "merge"):
        params = [p.name for p in main.commands[name].params]
        start = params.index("html")
        assert params[start:start + len(GATE_AND_FORMATS)] == GATE_AND_FORMATS, (name, params)
