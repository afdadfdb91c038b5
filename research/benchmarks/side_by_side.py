"""Two versions of the package side by side: the same `localragas eval` command run with each, one right after the
other, and the before/after table of docs/speed.md (walls, time inside the judge, judge calls, prompt tokens sent /
reused / evaluated, generated tokens, per prompt family, how many scores differ). The command we use:

    python -m research.benchmarks.side_by_side --before 236cdfd --after HEAD --own-tokens

**Nothing else may run on the machine while it does**: on 2 cores a second process slows llama.cpp several-fold
(its threads spin-wait), and the ratio is only worth what the sitting was.

Each side's package is exported into DIR/<side>/src (`git archive REV localragas | tar -x`; REV `WORKTREE`: the
`localragas` folder of this checkout as it is, uncommitted changes included) and run from a state folder of its own
(DIR/<side>/state: its cache, checkpoints and run history apart) with this Python:

    PYTHONPATH=DIR/<side>/src HF_HUB_OFFLINE=1 python -m localragas eval DATA --no-cache --no-resume \\
        --out DIR/<side>/report.json --no-progress [EXTRA EVAL ARGS…]

($LOCALRAGAS_MODELS_DIR: the models folder eval would use from this checkout, its models/ unless set.) The package each side imports is checked to be its
export. Sides run before, after (before, after again with --repeat 2, …), never at once; each process's wall is timed
around it. Exit 1 of eval (the gate failed) is a finished run; any other code stops the script (exit 1) with the
side, the code and the end of eval's stderr. Bad usage (a revision git does not know, no data file): exit 2.

Prints the tables (Markdown, to stdout; progress goes to stderr) and writes them to DIR/side_by_side.md, the figures
to DIR/side_by_side.json. With --repeat N the times are the median of the N runs, each run's process wall listed.
--own-tokens adds the samples' own tokens counted with the judge's tokenizer (research/benchmarks/own_tokens.py) and
each side's evaluated prompt tokens against them (issue 50's yardstick).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localragas.cli.options import EXIT_GATE_FAILED
from localragas.judges import catalogue

from . import own_tokens
from .side_by_side_figures import family_table, figures, main_table, median, score_differences, scores_line

ROOT = Path(__file__).resolve().parents[2]
WORKTREE = "WORKTREE"
SIDES = ("before", "after")
STDERR_TAIL = 15  # lines of a failed eval's stderr shown


class Refused(Exception):
    """Why the script stops (one line or a few), and its exit code."""

    def __init__(self, message: str, code: int = 2):
        super().__init__(message)
        self.code = code


@dataclass
class Side:
    name: str  # "before" | "after"
    rev: str  # as given
    label: str  # the short commit, or "working tree"
    folder: Path
    env: dict[str, str] = field(default_factory=dict)
    walls: list[float] = field(default_factory=list)
    reports: list[Path] = field(default_factory=list)

    @property
    def src(self) -> Path:
        return self.folder / "src"

    @property
    def state(self) -> Path:
        return self.folder / "state"


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)


def commit_label(rev: str, flag: str) -> str:
    """The short commit of `rev` (or "working tree" for WORKTREE); Refused when git does not know it."""
    if rev == WORKTREE:
        return "working tree"  # the package as it is in this checkout
    r = _git("rev-parse", "--verify", "--quiet", "--short", f"{rev}^{{commit}}")
    if r.returncode != 0:
        raise Refused(f"{flag} {rev}: not a commit of the repository {ROOT}")
    return r.stdout.strip()


def export(rev: str, src: Path) -> None:
    """The package of `rev` into src/localragas."""
    src.mkdir(parents=True)
    if rev == WORKTREE:
        shutil.copytree(ROOT / "localragas", src / "localragas", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        return
    archive = subprocess.Popen(["git", "-C", str(ROOT), "archive", rev, "localragas"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    tar = subprocess.run(["tar", "-x", "-C", str(src)], stdin=archive.stdout, capture_output=True, text=True)
    assert archive.stdout is not None and archive.stderr is not None
    archive.stdout.close()
    err = archive.stderr.read().decode(errors="replace")
    if archive.wait() != 0 or tar.returncode != 0:
        raise Refused(f"git archive {rev} localragas | tar -x -C {src} failed: {(err + tar.stderr).strip()}")


def child_env(src: Path, models_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(PYTHONPATH=str(src), HF_HUB_OFFLINE="1", **{catalogue.MODELS_DIR_ENV: str(models_dir)})
    return env


def check_import(side: Side) -> None:
    """Refused unless `import localragas` with the side's env, from its state folder, is its export."""
    r = subprocess.run([sys.executable, "-c", "import localragas; print(localragas.__file__)"], cwd=side.state,
                       env=side.env, capture_output=True, text=True)
    where = Path(r.stdout.strip() or "?").resolve()
    if r.returncode != 0 or not where.is_relative_to(side.src.resolve()):
        raise Refused(f"{side.name} ({side.rev}): localragas is imported from {where}, not from its export "
                      f"{side.src} {r.stderr.strip()[-300:]}".rstrip())


def absolute(args: list[str]) -> list[str]:
    """The eval arguments with each one naming an existing file or folder (FILE or --opt=FILE) made absolute, so they
    name the same file from the side's state folder."""
    out = []
    for arg in args:
        opt, eq, value = arg.partition("=") if arg.startswith("--") else ("", "", arg)
        if value and not value.startswith("-") and Path(value).exists():
            value = str(Path(value).resolve())
        out.append(f"{opt}{eq}{value}")
    return out


def judge_named(extra: list[str]) -> str | None:
    """The --judge/-j that the eval arguments give, None for the default."""
    judge = None
    for i, arg in enumerate(extra):
        if arg in ("--judge", "-j") and i + 1 < len(extra):
            judge = extra[i + 1]
        elif arg.startswith("--judge="):
            judge = arg.split("=", 1)[1]
    return judge


def run_eval(side: Side, data: Path, extra: list[str], k: int) -> None:
    """One eval of the side (its k-th run): its wall and report recorded; Refused (exit 1) when eval failed."""
    report = side.folder / ("report.json" if k == 1 else f"report-{k}.json")
    cmd = [sys.executable, "-m", "localragas", "eval", str(data), "--no-cache", "--no-resume", "--out", str(report),
           "--no-progress", *extra]
    suffix = "" if k == 1 else f"-{k}"
    with open(side.folder / f"stdout{suffix}.txt", "w") as out, open(side.folder / f"stderr{suffix}.txt", "w") as err:
        started = time.perf_counter()
        r = subprocess.run(cmd, cwd=side.state, env=side.env, stdout=out, stderr=err)
        wall = time.perf_counter() - started
    if r.returncode not in (0, EXIT_GATE_FAILED) or not report.is_file():
        tail = (side.folder / f"stderr{suffix}.txt").read_text(errors="replace").splitlines()[-STDERR_TAIL:]
        raise Refused(f"{side.name} ({side.rev}), run {k}: eval exited {r.returncode}"
                      + ("" if report.is_file() else " without a report") + "; the end of its stderr:\n  "
                      + "\n  ".join(tail), code=1)
    side.walls.append(wall)
    side.reports.append(report)
    print(f"{side.name} ({side.label}), run {k}: {wall:.1f} s, exit {r.returncode}", file=sys.stderr, flush=True)


def side_figures(side: Side) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the first run's report, its figures with the times the median of the side's runs)."""
    reports = [json.loads(p.read_text(encoding="utf-8")) for p in side.reports]
    each = [figures(r) for r in reports]
    fig = dict(each[0])
    fig.update(process_wall=median(side.walls), process_walls=[round(w, 3) for w in side.walls],
               report_wall=median(f["report_wall"] for f in each), judge_seconds=median(f["judge_seconds"] for f in each))
    return reports[0], fig


def _own(data: Path, gguf: Path | str, judge: str | None, report: dict[str, Any]) -> dict[str, Any] | str:
    """The samples' own tokens (those the report scored) with the judge's GGUF, or why not (a line): a failure here
    loses no run."""
    if isinstance(gguf, str):
        return gguf
    try:
        counted = own_tokens.count(data, gguf, {s["id"] for s in report.get("samples") or []})
    except Exception as e:  # noqa: BLE001 (the runs' tables are printed all the same)
        return f"own tokens: not counted, {type(e).__name__}: {e}"
    return {**counted, "judge": judge or catalogue.DEFAULT_JUDGE}


def render(sides: list[Side], figs: list[dict[str, Any]], scores: dict[str, Any], own: dict[str, Any] | str,
           command: str, runs: int) -> str:
    labels = (f"`{sides[0].label}`", f"`{sides[1].label}`")
    named = [f"{label} ({s.rev})" if s.rev not in (s.label, WORKTREE) else label for s, label in zip(sides, labels)]
    out = [f"## Side by side: {named[0]} → {named[1]}", "",
           f"`{command}`, {figs[0]['samples']} samples; each side from its own export and state folder, one after the "
           "other. Ratio: before / after (> 1: the after side is faster, or uses fewer).", ""]
    if runs > 1:
        out += ["Process wall of each run: " + "; ".join(
            f"{s.name} " + ", ".join(f"{w:.1f} s" for w in s.walls) + f" (median {median(s.walls):.1f} s)"
            for s in sides), ""]
    out += [main_table(labels, (figs[0], figs[1]), runs, own if isinstance(own, dict) else None), "",
            "Per prompt family (the samples' calls, then the judge check's and the canaries'), before → after:", "",
            family_table((figs[0], figs[1])), "", scores_line(scores)]
    if isinstance(own, str):
        out += ["", own]
    elif own:
        out += ["", f"Own tokens ({own['gguf']}): {own['total']:,} in {own['samples']} samples; per sample "
                + ", ".join(f"{sid} {n:,}" for sid, n in own["per_sample"].items()) + "."]
    return "\n".join(out) + "\n"


def parse(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    ours, extra = (argv[:argv.index("--")], argv[argv.index("--") + 1:]) if "--" in argv else (argv, [])
    ap = argparse.ArgumentParser(prog="python -m research.benchmarks.side_by_side", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 usage="%(prog)s --before REV --after REV [options] [-- EXTRA EVAL ARGS]")
    ap.add_argument("--before", required=True, metavar="REV", help=f"a git revision, or {WORKTREE}: this checkout")
    ap.add_argument("--after", required=True, metavar="REV", help=f"a git revision, or {WORKTREE}: this checkout")
    ap.add_argument("--data", type=Path, default=Path("examples/rag_samples.jsonl"),
                    help="the samples both sides score (default: %(default)s)")
    ap.add_argument("--out-dir", type=Path, default=Path(".localragas/side-by-side"), metavar="DIR",
                    help="the exports, state folders, reports and tables (default: %(default)s, git-ignored); "
                         "DIR/before and DIR/after are emptied first")
    ap.add_argument("--repeat", type=int, default=1, metavar="N", help="run each side N times, alternating "
                    "(default: %(default)s); the times are the medians")
    ap.add_argument("--own-tokens", action="store_true",
                    help="count the samples' own tokens with the judge's tokenizer (needs llama_cpp and a GGUF judge)")
    args = ap.parse_args(ours)
    if args.repeat < 1:
        ap.error("--repeat: at least 1")
    return args, extra


def main(argv: list[str] | None = None) -> int:
    args, extra = parse(sys.argv[1:] if argv is None else argv)
    try:
        return measure(args, extra)
    except Refused as e:
        print(f"side_by_side: {e}", file=sys.stderr)
        return e.code


def measure(args: argparse.Namespace, extra: list[str]) -> int:
    if not args.data.is_file():
        raise Refused(f"--data {args.data}: no such file")
    args.data = args.data.resolve()
    extra = absolute(extra)
    out_dir = args.out_dir.resolve()
    models_dir = catalogue.models_dir()  # the children's too: an export is no checkout with a models/ of its own
    gguf = own_tokens.gguf_or_why(judge_named(extra)) if args.own_tokens else ""
    if args.own_tokens and isinstance(gguf, str):
        print(gguf, file=sys.stderr)  # said before the runs too, not only under the tables
    sides = [Side(name, rev, commit_label(rev, f"--{name}"), out_dir / name)
             for name, rev in zip(SIDES, (args.before, args.after))]
    for side in sides:
        if side.folder.exists():
            shutil.rmtree(side.folder)
        export(side.rev, side.src)
        side.state.mkdir()
        side.env = child_env(side.src, models_dir)
        check_import(side)
    for k in range(1, args.repeat + 1):
        for side in sides:
            run_eval(side, args.data, extra, k)
    (first_before, fig_before), (first_after, fig_after) = (side_figures(s) for s in sides)
    scores = score_differences(first_before, first_after)
    own: dict[str, Any] | str = _own(args.data, gguf, judge_named(extra), first_after) if args.own_tokens else ""
    command = " ".join(["localragas eval", str(args.data), "--no-cache --no-resume --out SIDE.json --no-progress",
                        *extra])
    text = render(sides, [fig_before, fig_after], scores, own, command, args.repeat)
    print(text, end="")
    (out_dir / "side_by_side.md").write_text(text, encoding="utf-8")
    doc = {"command": command, "data": str(args.data), "repeat": args.repeat, "scores": scores, "own_tokens": own,
           **{s.name: {"rev": s.rev, "label": s.label, "reports": [str(p) for p in s.reports], "figures": f}
              for s, f in zip(sides, (fig_before, fig_after))}}
    (out_dir / "side_by_side.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
