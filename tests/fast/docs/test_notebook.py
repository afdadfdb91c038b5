"""examples/quickstart.ipynb runs from top to bottom in a fresh Jupyter kernel (nbclient) with the fake judge, and
its outputs are what it says: a report, a summary frame of the core metrics, a frame of its 3 samples, a failed gate
printed by assert_gate."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = Path(__file__).resolve().parents[3]
NOTEBOOK = ROOT / "examples" / "quickstart.ipynb"
CORE = ("faithfulness", "answer_relevancy", "context_precision", "context_recall")
IDS = ("acme-storage-tiers", "hr-pto-carryover-halluc", "sci-speed-of-light-offtopic")


def output_of(nb, tag: str) -> dict:
    """The outputs of the cell tagged `tag`, by MIME type (stream text under 'stdout')."""
    cell = next(c for c in nb.cells if tag in c.metadata.get("tags", []))
    out: dict[str, str] = {}
    for o in cell.outputs:
        if o.output_type == "stream":
            out[o.name] = out.get(o.name, "") + o.text
        elif o.output_type in ("execute_result", "display_data"):
            out.update(o.data)
    return out


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    run_in = tmp_path_factory.mktemp("notebook")
    env = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "LOCALRAGAS_STATE_DIR": str(run_in / "state"),
           "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # the kernel inherits them: this checkout's localragas, offline, state in the tmp folder
    try:
        nb = nbformat.read(NOTEBOOK, as_version=4)
        nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                                resources={"metadata": {"path": str(run_in)}}).execute()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return nb, run_in


def test_every_cell_runs_without_an_error(executed):
    nb, _ = executed
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors, [f"{e.ename}: {e.evalue}" for e in errors]


def test_the_report_shows_its_verdict_and_metrics(executed):
    shown = output_of(executed[0], "evaluate")
    assert "gate FAILED" in shown["text/plain"] and "3 samples" in shown["text/plain"]
    assert all(m in shown["text/html"] for m in CORE)


def test_the_summary_frame_has_a_row_per_core_metric(executed):
    html = output_of(executed[0], "summary")["text/html"]
    assert all(f"<th>{m}</th>" in html for m in CORE)
    assert all(c in html for c in ("mean", "ci_low", "ci_high", "threshold", "passed"))


def test_the_sample_frame_has_the_3_samples_and_a_column_per_metric(executed):
    html = output_of(executed[0], "samples")["text/html"]
    assert all(i in html for i in IDS)
    assert all(f"<th>{m}</th>" in html for m in CORE)
    assert "no_reference" in html  # the third sample has no reference: context recall unscored, not 0


def test_assert_gate_fails_naming_the_failed_metric(executed):
    printed = output_of(executed[0], "gate")["stdout"]
    assert "answer_relevancy" in printed


def test_the_notebook_writes_nothing_beside_itself(executed):
    _, run_in = executed
    assert not (run_in / ".localragas").exists()
    assert not (run_in / "state" / "cache").exists()  # cache=False
