"""`localragas review RUN.json`: people check a seeded random draw of the run's judged items (spot checks,
docs/spot-checks.md), in the terminal (cli/review_terminal.py) or on a local page (--serve: report/review_server.py),
or in a spreadsheet (--export / --import); --plan says beforehand how many labels the gate needs. Thin over the
library: the items and their draw (quality/review_items.py, review_draw.py), the reviewer's session over the labels
file (quality/review_session.py), the labels store (data/labels.py). Added to the command group in localragas.cli,
whose one error-to-exit mapping it runs through."""
from __future__ import annotations

import getpass
import os
import sys
from pathlib import Path

import click

from .options import max_input_bytes_option, report_limit
from ..core.printable import printable
from ..quality.review_draw import DEFAULT_DRAWS


def _reviewer(name: str | None) -> str:
    """--reviewer, else the login name."""
    if name and name.strip():
        return name.strip()
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name (a container without a passwd entry)
        from ..core.errors import ConfigError  # noqa: PLC0415

        raise ConfigError("review: no login name to record as the reviewer: give --reviewer NAME") from None


def _next_step(report_path: Path, labels: Path) -> str:
    return f"localragas report {report_path} --labels {labels}"


@click.command("review")
@click.argument("report_path", metavar="RUN.json", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--metric", "-m", "metrics", multiple=True, metavar="NAME",
              help="Review this metric's items: faithfulness (the answer's statements), context_recall (the "
                   "reference's statements) or context_precision (the retrieved chunks). Repeatable; default every "
                   "one of them the run has.")
@click.option("--n", "n", type=click.IntRange(min=1), default=DEFAULT_DRAWS, show_default=True,
              help="Draws per metric: a sample picked at random, then one of its items (context precision: every "
                   "chunk of the sample). 50 labels give an interval about 0.25 wide, 30 about 0.31 (docs/spot-checks.md).")
@click.option("--seed", type=int, default=0, show_default=True,
              help="The draw's seed. Two reviewers on one seed check the same items; on different seeds they split the "
                   "work.")
@click.option("--labels", "labels_path", type=click.Path(dir_okay=False, path_type=Path),
              help="The labels file (JSON Lines, appended to; default: beside the report, RUN.labels.jsonl).")
@click.option("--reviewer", metavar="NAME", help="Who labels (default: the login name). Each reviewer's labels are "
              "kept; a review resumes where this reviewer stopped.")
@click.option("--show-judge", is_flag=True, help="Show the judge's verdict on each item (hidden by default: people "
              "anchor on it).")
@click.option("--data", "data_path", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="The data file the run was made on: the samples' text, for a report made without it "
                   "(eval --no-sample-text).")
@click.option("--serve", is_flag=True, help="Review on a local page, http://127.0.0.1:PORT/, until Ctrl-C, instead "
              "of in the terminal.")
@click.option("--port", type=click.IntRange(0, 65535), default=0, help="The port for --serve (default: a free one).")
@click.option("--export", "export_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the drawn items to this CSV (their text, empty label columns) for a spreadsheet, and stop.")
@click.option("--import", "import_path", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Append the labels of this filled CSV (from --export) to the labels file, and stop. Every row is "
                   "checked first: a bad one is named (row and column) and nothing is appended.")
@click.option("--plan", "show_plan", is_flag=True,
              help="Before anyone labels: per metric, how many labels would make the gate decisive if the judge is "
                   "about as right as on the dev split, and the interval 30, 50 and 100 labels give.")
@max_input_bytes_option
def review_cmd(report_path, metrics, n, seed, labels_path, reviewer, show_judge, data_path, serve, port, export_path,
               import_path, show_plan, max_input_bytes):
    """Check the judge: label a seeded random draw of RUN.json's items (an answer's statement, a reference
    statement, a retrieved chunk) as supported / not, in the terminal (keys y / n / s skip / c note / f full
    contexts / b back / q quit) or on a local page (--serve). Each label is appended to the labels file as it is
    given; run the command again to go on where you stopped. Then `localragas report RUN.json --labels FILE` puts
    the people's verdicts beside the judge's and gates on the corrected means.

    \b
    Examples:
      localragas review run.json --n 30                  # in the terminal
      localragas review run.json --serve                 # http://127.0.0.1:PORT/
      localragas review run.json --plan                  # how many labels the gate needs
      localragas review run.json --export items.csv      # ... fill it in a spreadsheet, then:
      localragas review run.json --import items.csv
    """
    from ..report.json_report import read_json  # noqa: PLC0415
    from ..quality.review_session import ReviewSession, drawn, labels_beside  # noqa: PLC0415

    modes = [flag for flag, on in (("--serve", serve), ("--export", export_path), ("--import", import_path),
                                   ("--plan", show_plan)) if on]
    if len(modes) > 1:
        raise click.UsageError(f"{' and '.join(modes)} cannot be given together")
    report = read_json(report_path, report_limit(max_input_bytes))
    chosen = list(metrics) or None
    if show_plan:
        _print_plan(report, chosen)
        return
    labels = labels_path or labels_beside(report_path)
    items = drawn(report, metrics=chosen, n=n, seed=seed, data_path=data_path)
    if not items:
        _nothing_to_review(report, report_path, chosen)
    if export_path is not None:
        from ..data.labels import export_csv  # noqa: PLC0415

        rows = export_csv(items, export_path)
        click.echo(f"wrote {rows} items to {printable(export_path)}: fill `label` (1 / 0 / skip) and `reviewer`, "
                   f"then `localragas review {printable(report_path)} --import {printable(export_path)}`")
        return
    if import_path is not None:
        _import(items, import_path, labels, _reviewer(reviewer), report_path)
        return
    session = ReviewSession.open(items, labels, _reviewer(reviewer))
    _say_where(session, report_path)
    if serve:
        _serve(session, report_path, show_judge, port)
    else:
        _terminal(session, report_path, show_judge)


def _nothing_to_review(report, report_path: Path, chosen: list[str] | None) -> None:
    from ..core.errors import ConfigError  # noqa: PLC0415
    from ..quality.review_items import ITEM_METRICS  # noqa: PLC0415

    if chosen is None and not any(m in ITEM_METRICS for m in report.metrics):
        raise ConfigError(f"review: {report_path} has no metric whose items a person can check (it has "
                          f"{', '.join(report.metrics)}); review checks {', '.join(ITEM_METRICS)}: run eval with one "
                          "of them (-m)")
    raise ConfigError(f"review: {report_path} has no scored item of {', '.join(chosen or report.metrics)} to review "
                      "(every sample unscored?)")


def _say_where(session, report_path: Path) -> None:
    counts = ", ".join(f"{m} {total}" for m, (_, total) in session.counts().items())
    click.echo(f"reviewing {printable(report_path)} as {printable(session.reviewer)}: {session.total} items "
               f"({counts}); labels go to {printable(session.path)}")
    if session.others:
        click.echo(f"({session.others} lines of {printable(session.path)} are on other items: another run, seed, --n "
                   "or reviewer)")
    click.echo(f"{len(session.done)} of {session.total} done")


def _terminal(session, report_path: Path, show_judge: bool) -> None:
    from ..report.review_view import item_view  # noqa: PLC0415
    from .review_terminal import keys_from, review_in_terminal  # noqa: PLC0415

    if session.todo():
        color = sys.stdout.isatty() and "NO_COLOR" not in os.environ
        with keys_from(sys.stdin) as keys:
            review_in_terminal(session, lambda s: item_view(s.item), keys, show_judge=show_judge, color=color)
    if not session.todo():
        click.echo(f"next: {printable(_next_step(report_path, session.path))}")


def _serve(session, report_path: Path, show_judge: bool, port: int) -> None:
    from ..report.dashboard_server import serve_until_interrupted, server_url  # noqa: PLC0415
    from ..report.review_page import review_page  # noqa: PLC0415
    from ..report.review_server import serve_review  # noqa: PLC0415
    from ..report.review_view import item_view  # noqa: PLC0415

    next_step = _next_step(report_path, session.path)

    def page(token: str) -> str:
        return review_page(session, lambda s: item_view(s.item), token=token, report=str(report_path),
                           show_judge=show_judge, next_step=next_step)

    server = serve_review(session, page, port)
    click.echo(f"serving the review on {server_url(server)} (Ctrl-C stops; every label is saved as it is given)")
    serve_until_interrupted(server)
    click.echo(f"stopped: {len(session.done)} of {session.total} done; next: {printable(next_step)}")


def _import(items, csv_path: Path, labels: Path, reviewer: str, report_path: Path) -> None:
    """The filled CSV's labels appended to the labels file, each checked first (data/labels.py import_csv: a bad
    row names its row and column) and refused when its item is not one of this run's (a CSV of another run)."""
    from ..core.errors import LabelsError  # noqa: PLC0415
    from ..data.labels import append_label, import_csv, latest, read_labels  # noqa: PLC0415

    got = import_csv(csv_path, reviewer=reviewer)
    keys = {s.item.key for s in items}
    for lab in got:
        if lab.key not in keys:
            raise LabelsError(str(csv_path), lab.line, "key", f"item {lab.key!r} is not one of this run's drawn "
                              f"items (another run, --n or --seed?); nothing was imported", unit="row")
    have = latest(read_labels(labels)) if labels.exists() else {}
    new = [lab for lab in got if not _same(have.get(lab.key, {}).get(lab.reviewer), lab)]
    for lab in new:
        append_label(labels, lab)
    click.echo(f"imported {len(new)} labels from {printable(csv_path)} into {printable(labels)}"
               + (f" ({len(got) - len(new)} already there)" if len(new) < len(got) else "")
               + f"; next: {printable(_next_step(report_path, labels))}")


def _same(old, new) -> bool:
    """Whether a label is already in the file as it stands: the same reviewer's latest on the item says the same."""
    return old is not None and (old.label, old.note) == (new.label, new.note)


def _print_plan(report, metrics) -> None:
    """quality/spot_checks.py plan as a table: per metric the judge's mean, the threshold, about how many labels
    would decide the gate (and which way, if the people's mean is near the judge's), the interval n labels give."""
    from ..core.number_text import score_text, threshold_text  # noqa: PLC0415
    from ..quality.ppi import MIN_LABELS  # noqa: PLC0415
    from ..quality.spot_checks import plan  # noqa: PLC0415

    rows = plan(report, metrics)
    sizes = sorted({k for row in rows for k in row.widths})
    table = [("metric", "judge mean", "threshold", "labels to decide", "interval with " + " / ".join(map(str, sizes))
              + " labels")]
    for row in rows:
        if row.threshold is None or row.judge_mean is None:
            decide = "no gate"
        elif row.labels_to_decide is None:
            decide = "none (on the threshold)"
        else:
            passes = (row.judge_mean >= row.threshold) == row.higher_is_better
            decide = f"about {max(row.labels_to_decide, MIN_LABELS)} ({'passes' if passes else 'fails'})"
        table.append((row.metric, score_text(row.judge_mean),
                      threshold_text(row.threshold) if row.threshold is not None else "-", decide,
                      " / ".join(f"±{row.widths[k] / 2:.2f}" for k in sizes)))
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]) - 1)]
    for r in table:
        click.echo(printable("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1]))
    for note in dict.fromkeys(row.note for row in rows if row.note):
        click.echo(printable(f"({note}; the gate reads people's labels from {MIN_LABELS} labelled draws on)"))
