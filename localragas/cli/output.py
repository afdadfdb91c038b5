"""What a command does around a finished run: refuse bad output paths before any judging, write and print the
report in the formats asked for, and the exit code of its gate."""
from __future__ import annotations

from pathlib import Path

import click

from .options import EXIT_BAD_INPUT, EXIT_GATE_FAILED, EXIT_NOT_EVALUATED
from ..core.printable import printable


_CHECKPOINT = "localragas.checkpoint"  # click's ctx.meta (shared by a command and its group): the run's checkpoint


def note_checkpoint(checkpoint) -> None:
    """Say which resume checkpoint this command's run keeps (a run/checkpoint.py Checkpoint, or None: none), so that
    an internal error names it (checkpoint_words) and never claims one that holds nothing."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None and checkpoint is not None:
        ctx.meta[_CHECKPOINT] = Path(checkpoint.path)


def checkpoint_words(checkpoint=None) -> str:
    """'the … finished so far are kept in the resume checkpoint PATH: the same command goes on from there', when the
    checkpoint given (else the one noted by note_checkpoint) is a file holding finished work; else ''."""
    ctx = click.get_current_context(silent=True)
    path = Path(checkpoint.path) if checkpoint is not None else ctx.meta.get(_CHECKPOINT) if ctx else None
    try:
        if path is None or not path.is_file() or not path.stat().st_size:
            return ""
    except OSError:
        return ""
    return f"what was finished is kept in the resume checkpoint {path}: the same command goes on from there"


def gate_exit(report) -> int:
    """4 when a metric could not be evaluated (even if another failed), else 1 when the gate failed, else 0."""
    if not report.gate.evaluated:
        return EXIT_NOT_EVALUATED
    return 0 if report.gate.passed else EXIT_GATE_FAILED


def tracked_exit(report, io, eval_name: str | None = None) -> int:
    """eval --mlflow: the run logged to MLflow (its written reports as artifacts), then the exit code. A tracking
    error (TrackingError, MissingDependencyError) is printed; it exits 2 when the gate passed (a run asked to be
    recorded and not recorded is no pass), and a failed gate's own code (1, 4) wins over it: CI sees what the data
    scored, and the reports are written either way."""
    from ..core.errors import LocalragasError  # noqa: PLC0415
    from ..integrations.mlflow import log_report  # noqa: PLC0415

    code = gate_exit(report)
    try:
        run_id = log_report(report, report_paths=io.reports(), experiment=io.mlflow_experiment,
                            run_name=io.mlflow_run_name, tags={"localragas.eval": eval_name} if eval_name else None)
    except LocalragasError as e:
        click.echo(f"Error: {printable(e)}", err=True)
        return code or EXIT_BAD_INPUT
    click.echo(f"logged to MLflow: run {run_id}")
    return code


def check_outputs(inputs, **outputs) -> None:
    """Refuse bad output paths before any judging (an input, a folder, one file for two outputs, unwritable).

    inputs: what the command reads, each a path or (path, what it is), None left out; localragas's own state (the
    run history, the checkpoints, the judge cache: core/paths.py state_inputs) is added: every command may read it.
    outputs: by flag name without its dashes ("out" for --out; any text: "out (its .meta.json)")."""
    from ..core.paths import state_inputs  # noqa: PLC0415
    from ..report.destinations import check_outputs as check  # noqa: PLC0415

    read = [i for i in inputs if (i[0] if isinstance(i, tuple) else i)]
    check({f"--{k}": v for k, v in outputs.items()}, [*read, *state_inputs()])


def _write(key: str, report, path) -> None:
    """Write one format, by its flag's name (out, csv, html, md, junit), its writer's module imported only now: a run
    that asks for no HTML loads no HTML writer."""
    if key == "out":
        from ..report.json_report import write_json as write  # noqa: PLC0415
    elif key == "csv":
        from ..report.csv_report import write_csv as write  # noqa: PLC0415
    elif key == "html":
        from ..report.html_report import write_html as write  # noqa: PLC0415
    elif key == "md":
        from ..report.markdown import write_markdown as write  # noqa: PLC0415
    elif key == "junit":
        from ..report.junit import write_junit as write  # noqa: PLC0415
    else:
        raise KeyError(key)
    write(report, path)


def write_and_print(report, ragas_names: bool = False, **paths) -> None:
    """Write each requested format, print the terminal report, and list what was written.

    ragas_names: the JSON and CSV files name the metrics as ragas does (localragas.data.ragas_compat.RAGAS_NAMES)."""
    from ..report.terminal import print_report  # noqa: PLC0415

    renamed = None
    for key, path in paths.items():
        if path is None:
            continue
        if ragas_names and key in ("out", "csv"):
            from ..data.ragas_compat import to_ragas_names  # noqa: PLC0415

            renamed = renamed or to_ragas_names(report)
            _write(key, renamed, path)
        else:
            _write(key, report, path)
    print_report(report)
    written = [str(p) for p in paths.values() if p]
    if written:
        click.echo("wrote " + printable(", ".join(written)))
