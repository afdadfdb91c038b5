"""`localragas runs` (the run history: list, show, rm, --reset) and `localragas view` (the history as an offline HTML
page, or shown on 127.0.0.1). The history: localragas/run/history.py; the page: localragas/report/dashboard.py."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..core import paths
from ..core.errors import ConfigError, HistoryError
from ..core.number_text import interval_text, score_text, threshold_text
from ..core.printable import printable
from .output import check_outputs

_FILTERS = (
    click.option("--dataset", "-d", metavar="PATH|SHA256", help="Only runs of this data file (its path, a part of "
                 "it, or the first digits of its sha256)."),
    click.option("--tag", metavar="TAG", help="Only runs with this tag (eval --tag)."),
    click.option("--name", metavar="NAME", help="Only runs of this name (eval --name)."),
)


def _filters(fn):
    for option in reversed(_FILTERS):
        fn = option(fn)
    return fn


def _history():
    from ..run.history import History  # noqa: PLC0415

    return History()


@click.group("runs", invoke_without_command=True)
@_filters
@click.option("--limit", "-n", type=click.IntRange(min=1), default=20, show_default=True,
              help="List at most N runs (the newest).")
@click.option("--all", "every", is_flag=True, help="List every run (no --limit).")
@click.option("--json", "as_json", is_flag=True, help="Print the runs as JSON lines (one record a line).")
@click.option("--reset", is_flag=True, help="Delete the run history file (.localragas/history.sqlite, or under "
              "$LOCALRAGAS_STATE_DIR): every recorded run is forgotten; report files are kept. Asks first on a "
              "terminal; elsewhere needs --yes.")
@click.option("--yes", is_flag=True, help="With --reset: delete without asking (needed when stdin is not a terminal).")
@click.pass_context
def runs_group(ctx, dataset, tag, name, limit, every, as_json, reset, yes):
    """The run history: every `localragas eval` and `evaluate()` recorded (unless --no-history), newest first.

    \b
    Examples:
      localragas runs --tag nightly
      localragas runs show 12
      localragas runs rm 12
    """
    if ctx.invoked_subcommand is not None:
        return
    history = _history()
    if reset:
        if not yes and not _confirmed_reset(history):
            click.echo("nothing deleted")
            return
        gone = history.reset()
        click.echo(f"removed {', '.join(printable(p) for p in gone)}" if gone else
                   f"no run history at {printable(history.path)}")
        return
    with history:
        runs = history.runs(dataset=dataset, tag=tag, name=name, limit=None if every else limit)
        _warn_damaged(history)
        if as_json:
            for run in runs:
                click.echo(run.model_dump_json())
            return
        if not runs:
            click.echo(f"no run recorded in {printable(history.path)}" + (" matches" if dataset or tag or name else ""))
            return
        lines = [("id", "started", "verdict", "rows", "dataset", "name", "tags", "means")]
        for r in runs:
            means = " ".join(f"{m.metric}={score_text(m.mean)}" for m in r.metrics)
            lines.append((str(r.id), r.started.replace("T", " ")[:16], r.verdict, str(r.rows),
                          Path(r.dataset).name if r.dataset else "evaluate()", r.name or "", ",".join(r.tags), means))
        widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]) - 1)]
        for line in lines:
            click.echo(printable("  ".join(c.ljust(w) for c, w in zip(line, widths)) + "  " + line[-1]))
        shown = len(runs)
        total = history.count()
        if shown + len(set(history.damaged)) < total and not (dataset or tag or name):
            click.echo(f"({shown} of {total} runs; --all or --limit N for more)")


def _warn_damaged(history) -> None:
    """One warning line (on stderr) per damaged run left out of what was read."""
    for line in dict.fromkeys(history.damaged):
        click.echo(printable(f"warning: left out: {line}"), err=True)


def _stdin_is_terminal() -> bool:
    return sys.stdin is not None and sys.stdin.isatty()


def _confirmed_reset(history) -> bool:
    """Whether the user said yes to deleting the history (asked on a terminal); off a terminal, a ConfigError naming
    --yes: a script never deletes the history by accident, nor waits for an answer no one gives."""
    try:
        n = history.count()
        what = f"{n} run{'' if n == 1 else 's'} in {printable(history.path)}"
    except HistoryError:
        what = f"the run history {printable(history.path)} (it cannot be read)"
    finally:
        history.close()
    if not _stdin_is_terminal():
        raise ConfigError(f"runs --reset would delete {what}; stdin is not a terminal to ask on: add --yes to "
                          "delete without asking")
    return click.confirm(f"delete {what}?", default=False)


@runs_group.command("show")
@click.argument("run", type=int)
@click.option("--json", "as_json", is_flag=True, help="Print the record and its per-sample scores as JSON.")
def runs_show(run, as_json):
    """Show run RUN: what it measured and how (dataset, judge, calibration, prompts, options), each metric's mean
    with its interval and gate, where its reports are."""
    with _history() as history:
        record = history.get(run)
        if as_json:
            click.echo(json.dumps({**record.model_dump(), "scores": history.scores(run)}, indent=1))
            return
        rows = [("run", str(record.id)), ("started", record.started), ("name", record.name or ""),
                ("tags", ", ".join(record.tags)),
                ("dataset", f"{record.dataset or 'evaluate() samples'} (sha256 {record.dataset_sha256 or '?'})"),
                ("rows", f"{record.rows}" + (f", {record.skipped} skipped" if record.skipped else "")),
                ("verdict", f"{record.verdict} (gate on the {record.gate_on})"),
                ("judge", f"{record.judge.get('name', '?')} ({record.judge.get('fingerprint', '?')})"),
                ("calibration", f"{(record.calibration or {}).get('source') or 'none'}"),
                ("embedder", record.embedder or ""),
                ("prompts", f"{record.prompts.get('digest', '?')}"
                 + (f", overridden: {', '.join(record.prompts['overridden'])}" if record.prompts.get("overridden")
                    else "")),
                ("metric options", json.dumps(record.metric_options, sort_keys=True)),
                ("localragas", record.version or "?")]
        rows += [(f"report ({kind})", where) for kind, where in record.outputs.items()]
        width = max(len(k) for k, _ in rows)
        for key, value in rows:
            click.echo(printable(f"{key.ljust(width)}  {value}"))
        click.echo("")
        for m in record.metrics:
            gate = f"  {m.status} at {threshold_text(m.threshold)}" if m.status and m.threshold is not None else ""
            click.echo(printable(f"{m.metric:<24} {score_text(m.mean)} 95% CI {interval_text(m.ci_low, m.ci_high)}"
                                 f"  scored {m.scored}, unscored {m.unscored}{gate}"))


@runs_group.command("rm")
@click.argument("run", type=int, nargs=-1, required=True)
def runs_rm(run):
    """Forget run RUN (its record and per-sample scores; its report files are kept). Several ids may be given."""
    with _history() as history:
        for i in run:
            history.remove(i)
            click.echo(f"removed run {i}")


@click.command("view")
@_filters
@click.option("--limit", "-n", type=click.IntRange(min=1), default=200, show_default=True,
              help="Show at most the newest N runs.")
@click.option("--compare", "pair", type=int, nargs=2, metavar="BASE NEW",
              help="The two runs side by side (default: the newest run and the one before it on its dataset).")
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the page here (default: view.html in the state folder, .localragas/).")
@click.option("--serve", is_flag=True, help="Show the page on http://127.0.0.1 (a free port, or --port) until "
              "Ctrl-C, instead of writing it; each reload shows the history as it is then. It answers only "
              "requests addressed to 127.0.0.1 or localhost at its port.")
@click.option("--port", type=click.IntRange(0, 65535), default=0, help="The port for --serve (default: a free one).")
def view_cmd(dataset, tag, name, limit, pair, out, serve, port):
    """Write the run history as one offline HTML page: each metric's mean and interval over time per dataset with
    the gate thresholds, the runs, and two runs side by side (paired changes, the samples that moved most).

    \b
    Examples:
      localragas view                       # writes .localragas/view.html
      localragas view --serve               # http://127.0.0.1:PORT/
      localragas view --compare 3 7 --out runs.html
    """
    from ..report.dashboard import render_dashboard  # noqa: PLC0415
    from ..report.dashboard_server import serve as serve_page, serve_until_interrupted, server_url  # noqa: PLC0415

    where = out or paths.state_dir() / "view.html"
    if not serve:
        check_outputs([], out=where)  # never over the history it reads (nor any other state), a folder, unwritable

    def page(warn: bool = False) -> str:  # the history as it is now: --serve renders it again at each request
        with _history() as history:
            try:
                return render_dashboard(history, dataset=dataset, tag=tag, name=name, limit=limit, pair=pair)
            finally:  # said even when view --compare names a run left out (a served page shows them)
                if warn:
                    _warn_damaged(history)

    shown = page(warn=True)  # a history that cannot be read, a --compare of runs not shown: exit 2 before serving
    if serve:
        server = serve_page(page, port)
        click.echo(f"serving the run history on {server_url(server)} (Ctrl-C stops; a reload shows new runs)")
        serve_until_interrupted(server)
        return
    from ..core.atomic_write import write_atomic  # noqa: PLC0415

    where.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(where, [shown])
    click.echo(f"wrote {printable(where)}")
