"""ragas 0.4.3's agreement with human labels on the rows `localragas calibrate` scores, with the same judge GGUF.

    .venv/bin/python -m research.benchmarks.ragas_agreement --judge qwen2.5-1.5b --limit 24 \\
        --limit-for faithbench=20 --limit-for qags=20 --limit-for context_precision_wikiqa=60 \\
        --limit-for answer_relevancy_haluquestqa=30 \\
        --out-dir calibration/ragas-qwen2.5-1.5b --ours calibration/qwen2.5-1.5b

Rows. Each labelled .jsonl file of --benchmarks (filtered by --only) is read with localragas.quality.labelled.load_labelled
and cut with localragas.quality.labelled.take (pairs kept whole), with the --limit / --limit-for rules of
research.accuracy.calibrate_all: the same arguments select the same rows as calibrate_all does.

Judge. ragas runs as in vs_ragas.py, on the machinery both share (ragas_harness.py): a
separate venv (.localragas/bench-venv, ragas 0.4.3 and LangChain), llama-cpp-python's OpenAI-compatible server on a
loopback port serving the same GGUF (chat template from the GGUF, n_ctx 8192 as localragas's default, all cores;
sampling temperatures as ragas sets them: 0.01, ContextRelevance 0.1), MiniLM (minilm-l6, localragas's default
embedder) for answer relevancy, and a child process (ragas_child.py) that scores one row at a time with
`metric.single_turn_ascore`, restarting the server after a failed row so that an abandoned generation cannot slow
the next. max_tokens is not set (ragas's default), so a judge that does not stop runs until --ragas-timeout.

Which ragas metric scores a row (label.metric -> ragas 0.4.3 class; the sample fields it gets):
- faithfulness      -> Faithfulness (user_input = question, retrieved_contexts = contexts, response = answer)
- answer_relevancy  -> ResponseRelevancy (strictness 3; question and answer; embeddings: MiniLM)
- context_recall    -> LLMContextRecall (question, contexts, reference)
- context_precision -> in the order localragas judges a chunk: against the reference, else the answer, else the
  question alone:
  - a reference:           LLMContextPrecisionWithReference
  - an answer only:        LLMContextPrecisionWithoutReference (needs `response`)
  - neither (both WikiQA files: `answer` empty, `reference` null): ContextRelevance ("nv_context_relevance").
    ragas's context precision needs a reference or a response and ragas 0.4.3 has no question-only variant of it.
    ContextRelevance is ragas's question-only judgement of retrieved contexts (two prompts each rate 0, 1 or 2;
    score = mean rating / 2) and it gets exactly what localragas gets: the question and the chunks. On the
    single-chunk file this is a per-chunk judgement like localragas's (the average precision of one chunk is its
    verdict). On the ranked file ContextRelevance rates all chunks joined into one text and is not rank-aware,
    while the graded label is average precision over the ranked list: ragas is at a disadvantage on that file.
    Not done: filling `reference` from meta.relevance (what bench_vs_ragas.py does to time the ranked file) would
    hand ragas the human labels; filling `response` with the question would give ragas an answer that is none.
--ragas-metric-for NAME=VARIANT scores the files whose name contains NAME with another variant (one of VARIANTS).
A row that lacks a field its variant needs is not sent to ragas and counts as unscored (missing_input).

Unscored rows. A row for which ragas returns NaN, or whose run ends in an exception or a timeout (--ragas-timeout),
is unscored, with its reason (nan / timeout / error). Agreement is computed with localragas.quality.agreement's
binary_agreement / graded_agreement / pairwise_agreement exactly as localragas.quality.calibration does it (unscored rows get
score None): each figure over the scored rows, and with the unscored rows counted wrong; binary balanced accuracy
@ gate uses localragas's gate threshold of the label's metric.

Output, in --out-dir (default .localragas/ragas-agreement/JUDGE; note that calibration/ is not git-ignored):
- ragas_rows.jsonl: one line per ragas run (row key FILE/ID, ragas variant, value or error, seconds, judge tokens),
  appended as rows finish. A re-run skips the rows already there (--retry-failed runs failed ones again, --fresh
  starts over); ragas_rows.meta.json holds the judge and n_ctx they were scored with, and a different judge refuses
  to resume.
- ragas_agreement.json: localragas's calibration format (one Calibration per file, per-row ids, labels, ragas
  values and errors; the run's settings and per-row seconds and tokens under meta).
- ragas_vs_localragas.md with --ours DIR (a research/accuracy/calibrate_all.py --out-dir: one JSON per file), else
  ragas_agreement.md: the table that is also printed. --report-only rebuilds both from the rows file, no judge.
Only ids, labels, scores and errors are written (an error message, cut short, may quote a judge reply); the
benchmark rows stay where they are (the job file the child reads lives in a temporary folder). Progress (row i/n,
file/id, seconds) goes to stderr.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from localragas.quality.agreement import (
    MEASURES,
    Agreement,
    Estimate,
    binary_agreement,
    graded_agreement,
    pairwise_agreement,
)
from localragas.quality.calibration_results import Calibration, CalibrationRun, RowOutcome
from localragas.quality.labelled import LabelledRow, load_labelled, take
from localragas.core.errors import ConfigError
from localragas.core.key_values import split_item
from localragas.metrics import all_metrics
from localragas.report.markdown import cell
from localragas.data.unscored import reason_kind
from localragas.run.stats import CI_LEVEL, RESAMPLES, SEED
from research.benchmarks import ragas_harness as harness

ROOT = Path(__file__).resolve().parents[2]
ROWS_FILE = "ragas_rows.jsonl"
ROWS_META = "ragas_rows.meta.json"
JSON_FILE = "ragas_agreement.json"
DEFAULT_BENCHMARKS = ROOT.parent / "shared" / "benchmarks"

# the ragas child's metric keys (research/benchmarks/ragas_child.py build_metrics) -> (ragas 0.4.3 class, fields needed)
VARIANTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "faithfulness": ("Faithfulness", ("question", "contexts", "answer")),
    "answer_relevancy": ("ResponseRelevancy", ("question", "answer")),
    "context_precision": ("LLMContextPrecisionWithReference", ("question", "contexts", "reference")),
    "context_precision_without_reference": ("LLMContextPrecisionWithoutReference", ("question", "contexts", "answer")),
    "context_recall": ("LLMContextRecall", ("question", "contexts", "reference")),
    "context_relevance": ("ContextRelevance", ("question", "contexts")),
}
RAGAS_FIELD = {"question": "user_input", "contexts": "retrieved_contexts", "answer": "response",
               "reference": "reference"}
WHY_VARIANT = {
    "context_relevance": "no answer and no reference, which ragas's context precision needs one of: ContextRelevance "
                         "judges the chunks against the question alone, as localragas does, but rates them together, "
                         "not rank by rank",
    "context_precision_without_reference": "no reference: chunks judged against the answer, as localragas does",
}


def log(message: str) -> None:
    print(f"[ragas-agreement] {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------------- rows -> jobs


@dataclass
class Job:
    """One labelled row and the ragas metric that scores it."""

    file: str  # the benchmark file's name
    row: LabelledRow
    variant: str  # a key of VARIANTS
    missing: tuple[str, ...] = ()  # ragas fields the row lacks for its variant (then it is not sent to ragas)

    @property
    def key(self) -> str:
        return row_key(self.file, self.row.sample.id)

    @property
    def ragas_class(self) -> str:
        return VARIANTS[self.variant][0]


def row_key(file: str, row_id: str) -> str:
    return f"{file}/{row_id}"


def default_variant(metric: str, sample) -> str | None:
    """The ragas metric for a row labelled for `metric`; None when ragas has none. context_precision follows
    localragas's order: the reference, else the answer, else the question alone."""
    if metric == "context_precision":
        if sample.reference:
            return "context_precision"
        if sample.answer.strip():
            return "context_precision_without_reference"
        return "context_relevance"
    return metric if metric in VARIANTS else None


def missing_inputs(variant: str, sample) -> tuple[str, ...]:
    have = {"question": bool(sample.question.strip()), "contexts": bool(sample.contexts),
            "answer": bool(sample.answer.strip()), "reference": bool(sample.reference)}
    return tuple(RAGAS_FIELD[f] for f in VARIANTS[variant][1] if not have[f])


def ragas_fields(sample) -> dict[str, Any]:
    """The SingleTurnSample fields of a row: everything localragas gets, nothing more (an empty answer is None)."""
    return {"user_input": sample.question, "retrieved_contexts": list(sample.contexts),
            "response": sample.answer if sample.answer.strip() else None, "reference": sample.reference or None}


def plan_file(path: Path, limit: int | None, variant: str | None = None) -> list[Job]:
    """The rows calibrate scores (load_labelled + take), each with its ragas variant (`variant` overrides)."""
    jobs = []
    for row in take(load_labelled(path), limit):
        chosen = variant or default_variant(row.metric, row.sample)
        if chosen is None:
            raise SystemExit(f"{path.name}: ragas has no metric for label.metric {row.metric!r}")
        jobs.append(Job(path.name, row, chosen, missing_inputs(chosen, row.sample)))
    return jobs


def name_values(items: list[str], option: str, convert, shape: str) -> dict[str, Any]:
    """NAME=VALUE options (the first NAME contained in a file's name applies to it, as in calibrate_all.py)."""
    out = {}
    for item in items:
        try:
            name, value = split_item(item, option, shape)
            out[name] = convert(value)
        except (ConfigError, ValueError):
            raise SystemExit(f"{option}: '{item}' must look like {shape}") from None
    return out


def positive(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise ValueError
    return int(value)


def known_variant(value: str) -> str:
    if value not in VARIANTS:
        raise SystemExit(f"unknown ragas variant {value!r}; valid: {', '.join(VARIANTS)}")
    return value


def pick(by_name: dict[str, Any], file_name: str, default: Any = None) -> Any:
    return next((v for name, v in by_name.items() if name in file_name), default)


# --------------------------------------------------------------------------------------------- records, resume


def read_records(path: Path) -> dict[tuple[str, str], dict]:
    """(row key, variant) -> its latest record in the rows file; a line cut short by an interruption is skipped."""
    done: dict[tuple[str, str], dict] = {}
    if not path.is_file():
        return done
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and "sample" in record and "metric" in record:
            done[(record["sample"], record["metric"])] = record
    return done


def to_run(jobs: list[Job], done: dict[tuple[str, str], dict], retry_failed: bool = False) -> list[Job]:
    """The jobs ragas still has to score: no record for (row, variant) yet, or a failed one with retry_failed."""
    out = []
    for job in jobs:
        if job.missing:
            continue
        record = done.get((job.key, job.variant))
        if record is None or (retry_failed and record.get("exception")):
            out.append(job)
    return out


def outcome(job: Job, record: dict | None) -> tuple[float | None, str | None]:
    """(score, why unscored) of a row; reasons start with nan / timeout / error / missing_input / not_run."""
    if job.missing:
        return None, f"missing_input: ragas {job.ragas_class} needs {', '.join(job.missing)}"
    if record is None:
        return None, "not_run: no ragas result recorded yet"
    if record.get("exception"):
        error = str(record["exception"])
        return None, f"{'timeout' if error.startswith('TimeoutError') else 'error'}: {error[:300]}"
    if record.get("nan") or record.get("value") is None:
        return None, "nan: ragas returned NaN"
    return float(record["value"]), None


# ------------------------------------------------------------------------------------------------------ agreement


def json_threshold(metric: str) -> float | None:
    """localragas's default gate threshold of a metric, on the scale of yes/no verdicts (ragas's)."""
    m = all_metrics().get(metric)
    if m is None:
        return None
    return (m.with_options(verdicts="json") if "verdicts" in dict(m.options) else m).threshold


def agreement_of(kind: str, per_row: list[RowOutcome], threshold: float | None, level: float = CI_LEVEL,
                 resamples: int = RESAMPLES, seed: int = SEED) -> Agreement:
    """As localragas.quality.calibration._calibration: unscored rows have score None."""
    scores = [o.score for o in per_row]
    if kind == "binary":
        return binary_agreement([int(o.label) for o in per_row], scores, threshold, level, resamples, seed)
    if kind == "graded":
        return graded_agreement([o.label for o in per_row], scores, level, resamples, seed)
    pairs: dict[str, dict[bool, float | None]] = {}
    for o in per_row:
        pairs.setdefault(o.pair, {})[bool(o.better)] = o.score  # type: ignore[arg-type]
    return pairwise_agreement([p[True] for p in pairs.values()], [p[False] for p in pairs.values()], level,
                              resamples, seed)


def ragas_calibrations(file: str, jobs: list[Job], records: dict[tuple[str, str], dict],
                       judge: dict | None = None, **ci: Any) -> list[Calibration]:
    """One Calibration per label metric and kind of a file's jobs, from the ragas records (None: not run)."""
    out = []
    for metric, kind in dict.fromkeys((j.row.metric, j.row.kind) for j in jobs):
        group = [j for j in jobs if (j.row.metric, j.row.kind) == (metric, kind)]
        per_row, seconds, calls, recorded = [], 0.0, 0, 0
        for j in group:
            record = records.get((j.key, j.variant))
            score, why = outcome(j, record)
            per_row.append(RowOutcome(id=j.row.sample.id, line=j.row.line, label=j.row.value, score=score,
                                      unscored=why, pair=j.row.pair, better=j.row.better))
            if record is not None:
                recorded += 1
                seconds += float(record.get("seconds") or 0.0)
                calls += int(record.get("calls") or 0)
        agreement = agreement_of(kind, per_row, json_threshold(metric), **ci)
        used = Counter(j.variant for j in group)
        notes = [f"ragas {VARIANTS[v][0]}: {n} of {len(group)} rows" + (f" ({WHY_VARIANT[v]})" if v in WHY_VARIANT
                                                                          else "") for v, n in used.items()]
        reasons = Counter(reason_kind(o.unscored) for o in per_row if o.score is None and o.unscored)
        out.append(Calibration(
            file=file, metric=" + ".join(VARIANTS[v][0] for v in used), label_metric=metric,
            kind=kind, rows=len(group),  # type: ignore[arg-type]
            pairs=agreement.rows if kind == "pairwise" else None,
            scored=sum(o.score is not None for o in per_row), unscored=sum(o.score is None for o in per_row),
            unscored_reasons=dict(sorted(reasons.items())), agreement=agreement,
            seconds_per_sample=round(seconds / recorded, 3) if recorded else None, judge_calls=calls,
            judge=judge or {}, notes=notes, per_row=per_row))
    return out


# ---------------------------------------------------------------------------------------------------- localragas


def load_ours(ours_dir: Path, file: str, label_metric: str, kind: str) -> Calibration | None:
    """localragas's Calibration of a file from a calibrate_all.py out-dir (FILE_STEM.json), matched on the labels'
    metric and kind; None when there is none."""
    path = ours_dir / f"{Path(file).stem}.json"
    if not path.is_file():
        return None
    run = CalibrationRun.model_validate_json(path.read_text(encoding="utf-8"))
    return next((c for c in run.results if (c.label_metric or c.metric) == label_metric and c.kind == kind), None)


# ------------------------------------------------------------------------------------------------------- table


def _figure(e: Estimate | None) -> str:
    if e is None or e.value is None:
        return "—"
    ci = "" if e.ci_low is None or e.ci_high is None else f" [{e.ci_low:.3f}, {e.ci_high:.3f}]"
    return f"{e.value:.3f}{ci}"


def figure(c: Calibration | None, name: str) -> str:
    """value [CI] over the scored rows; with unscored rows, also the figure with them counted wrong."""
    if c is None:
        return "—"
    text = _figure(c.agreement.measures.get(name))
    if c.unscored and name in c.agreement.counted_wrong:
        text += f"; counted wrong {_figure(c.agreement.counted_wrong[name])}"
    return text


def unscored_text(c: Calibration | None) -> str:
    if c is None:
        return "—"
    reasons = ", ".join(f"{k} {v}" for k, v in sorted(c.unscored_reasons.items()))
    return f"{c.unscored}" + (f" ({reasons})" if reasons else "")


def seconds_text(c: Calibration | None) -> str:
    return "—" if c is None or c.seconds_per_sample is None else f"{c.seconds_per_sample:.2f}"


def rows_text(c: Calibration) -> str:
    return f"{c.rows} ({c.pairs} pairs)" if c.pairs is not None else str(c.rows)


def measure_label(name: str) -> str:
    title, higher = MEASURES.get(name, (name, True))
    return title if higher else f"{title} (lower is better)"


def same_rows(ragas: Calibration, ours: Calibration) -> bool:
    return [o.id for o in ragas.per_row] == [o.id for o in ours.per_row] if ours.per_row else ragas.rows == ours.rows


def render_table(entries: list[tuple[Calibration, Calibration | None]], ours_given: bool,
                 level: float = CI_LEVEL) -> str:
    """Markdown: per file and agreement figure, localragas's and ragas's value [CI], unscored rows and s/sample."""
    ci = f"{level:.0%} CI"
    ours_head = f" localragas [{ci}] | localragas unscored | localragas s/sample |" if ours_given else ""
    lines = [f"| file | metric | rows | agreement |{ours_head} ragas [{ci}] | ragas NaN / failed | ragas s/sample |",
             "|---|---|---:|---|" + ("---:|" * 3 if ours_given else "") + "---:|---:|---:|"]
    notes: list[str] = []
    for ragas, ours in entries:
        name = Path(ragas.file).name
        metric = f"{ragas.label_metric} (ragas {ragas.metric}"
        options = ", ".join(f"{k}={v}" for k, v in (getattr(ours, "metric_options", None) or {}).items())
        if ours is not None and (ours.metric != ragas.label_metric or options):
            metric += f"; localragas {ours.metric}" + (f" {options}" if options else "")
        metric += ")"
        rows = rows_text(ragas)
        if ours is not None and not same_rows(ragas, ours):
            rows += f" (localragas: {rows_text(ours)}, other rows)"
            notes.append(f"- {cell(name)}: localragas's figures are from other rows ({rows_text(ours)}) than "
                         f"ragas's ({rows_text(ragas)}): run both with the same --limit / --limit-for")
        names = list(dict.fromkeys([*ragas.agreement.measures, *((ours.agreement.measures) if ours else [])]))
        for m in names:
            # figures, row counts and s/sample are digits and brackets: not escaped, so that they read in a terminal
            theirs = f" {figure(ours, m)} | {cell(unscored_text(ours))} | {seconds_text(ours)} |"
            lines.append(f"| {cell(name)} | {cell(metric)} | {rows} | {cell(measure_label(m))} |"
                         f"{theirs if ours_given else ''} {figure(ragas, m)} | {cell(unscored_text(ragas))} | "
                         f"{seconds_text(ragas)} |")
        if ours_given and ours is None:
            notes.append(f"- {cell(name)}: no localragas result for it in the --ours folder")
        for tool, c in (("localragas", ours), ("ragas", ragas)):
            undefined = {} if c is None else {m: e.note for m, e in c.agreement.measures.items() if e.value is None}
            notes += [f"- {cell(name)}, {tool} {cell(measure_label(m))}: {cell(why or 'undefined')}"
                      for m, why in undefined.items()]
        notes += [f"- {cell(name)}: {cell(n)}" for n in ragas.notes]
    legend = ("Figures over the scored rows; \"counted wrong\": with the unscored rows counted wrong, as "
              "`localragas calibrate` does. ragas NaN / failed: rows ragas returned NaN for (nan), or whose run "
              "failed (timeout, error); missing_input: the row lacks a field the ragas metric needs; not_run: no "
              "result recorded yet. s/sample: judging seconds per row.")
    return "\n".join([*lines, "", legend, *([""] + notes if notes else [])]) + "\n"


# ---------------------------------------------------------------------------------------------------------- run


def run_ragas(jobs: list[Job], args: argparse.Namespace, judge_path: Path, alias: str, rows_file: Path) -> dict:
    """Score the jobs with ragas in the bench venv against the llama.cpp server; records are appended to
    rows_file by the child as each row finishes. Returns the bench venv's package versions."""
    from localragas.judges import catalogue  # noqa: PLC0415

    versions, _ = harness.ensure_bench_venv()
    python = harness.venv_python(harness.BENCH_VENV)
    server = harness.LlamaServer(python, judge_path, alias, args.n_ctx, args.threads,
                               harness.STATE_DIR / "ragas-agreement-server.log")
    with tempfile.TemporaryDirectory(prefix="localragas-ragas-agreement-") as tmp:
        job_file = Path(tmp) / "jobs.json"  # holds row text: kept out of the checkout, removed afterwards
        job_file.write_text(json.dumps({
            "model": alias, "embedder": str(catalogue.path("minilm-l6")), "timeout": args.ragas_timeout,
            "jobs": [{"key": j.key, "metric": j.variant, "sample": ragas_fields(j.row.sample)} for j in jobs],
        }))
        with server:
            harness.drive_child(python, server, job_file, rows_file)
    return versions


def check_resume(out_dir: Path, identity: dict, fresh: bool) -> None:
    """Start over with --fresh; refuse to add rows scored with another judge or n_ctx to the rows file."""
    rows, meta = out_dir / ROWS_FILE, out_dir / ROWS_META
    if fresh:
        rows.unlink(missing_ok=True)
        meta.unlink(missing_ok=True)
    if rows.is_file() and meta.is_file():
        stored = json.loads(meta.read_text())
        differ = [k for k in identity if stored.get(k) != identity[k]]
        if differ:
            raise SystemExit(f"{rows} holds rows scored with other settings ({', '.join(differ)}: "
                             f"{', '.join(str(stored.get(k)) for k in differ)}); use another --out-dir or --fresh")
    out_dir.mkdir(parents=True, exist_ok=True)
    kept = json.loads(meta.read_text()) if meta.is_file() else {}
    meta.write_text(json.dumps({**kept, **identity}, indent=2) + "\n")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--judge", default="qwen2.5-1.5b", metavar="NAME|PATH",
                    help="judge GGUF: a localragas catalogue name or a .gguf file, the one --ours was scored with "
                         "(default qwen2.5-1.5b)")
    ap.add_argument("--limit", type=int, default=None, help="first N rows of each file (pairs kept whole)")
    ap.add_argument("--limit-for", action="append", default=[], metavar="NAME=N",
                    help="first N rows of the files whose name contains NAME, overriding --limit (repeatable)")
    ap.add_argument("--benchmarks", type=Path, default=DEFAULT_BENCHMARKS,
                    help="folder of labelled .jsonl files (default ../shared/benchmarks)")
    ap.add_argument("--only", action="append", default=[], metavar="NAME",
                    help="only files whose name contains NAME (repeatable)")
    ap.add_argument("--ragas-metric-for", action="append", default=[], metavar="NAME=VARIANT",
                    help=f"score the files whose name contains NAME with this ragas variant: {', '.join(VARIANTS)}")
    ap.add_argument("--out-dir", type=Path, default=None,
                    help="results folder (default .localragas/ragas-agreement/JUDGE)")
    ap.add_argument("--ours", type=Path, default=None, metavar="DIR",
                    help="a research/accuracy/calibrate_all.py --out-dir made with the same judge and limits: "
                         "print both side by side")
    ap.add_argument("--ragas-timeout", type=float, default=600, metavar="SECONDS",
                    help="timeout of one row's ragas run and of each request to the judge server (default 600); "
                         "a timed-out row counts as unscored")
    ap.add_argument("--n-ctx", type=int, default=8192, metavar="TOKENS",
                    help="judge context window (default 8192, as localragas)")
    ap.add_argument("--threads", type=int, default=None, metavar="N", help="judge CPU threads (default: all cores)")
    ap.add_argument("--retry-failed", action="store_true", help="run again the rows whose ragas run failed")
    ap.add_argument("--fresh", action="store_true", help="forget the rows already scored in --out-dir")
    ap.add_argument("--report-only", action="store_true",
                    help="no judging: the figures from the rows already scored (the others count as not_run)")
    args = ap.parse_args(argv)
    args.limit_for = name_values(args.limit_for, "--limit-for", positive, "NAME=N with N >= 1")
    args.ragas_metric_for = name_values(args.ragas_metric_for, "--ragas-metric-for", known_variant, "NAME=VARIANT")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    files = sorted(p for p in args.benchmarks.glob("*.jsonl") if not args.only or any(o in p.name for o in args.only))
    if not files:
        log(f"no .jsonl files in {args.benchmarks}" + (f" matching {args.only}" if args.only else ""))
        return 2
    limits = {f.name: pick(args.limit_for, f.name, args.limit) for f in files}
    plans = {f.name: plan_file(f, limits[f.name], pick(args.ragas_metric_for, f.name)) for f in files}
    out_dir = args.out_dir or harness.STATE_DIR / "ragas-agreement" / Path(args.judge).stem
    rows_file = out_dir / ROWS_FILE
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    judge_meta: dict[str, Any] = {"spec": args.judge}
    if not args.report_only:
        from localragas.judges import catalogue  # noqa: PLC0415

        judge_path, alias = harness.resolve_judge(args.judge)
        judge_meta.update(judge_file=judge_path.name, judge_sha256=catalogue.sha256_of(judge_path), n_ctx=args.n_ctx)
        check_resume(out_dir, {k: judge_meta[k] for k in ("judge_file", "judge_sha256", "n_ctx")}, args.fresh)
        done = read_records(rows_file)
        todo: list[Job] = []
        for name, jobs in plans.items():
            waiting = to_run(jobs, done, args.retry_failed)
            variants = ", ".join(f"{k} {v}" for k, v in Counter(j.ragas_class for j in jobs).items())
            log(f"{name}: {len(jobs)} rows ({variants}); {len(waiting)} to score, {len(jobs) - len(waiting)} "
                f"already done or not scorable")
            todo += waiting
        if todo:
            log(f"{len(todo)} rows to score with ragas, judge {judge_path.name}; rows file {rows_file}")
            args.threads = args.threads or os.cpu_count() or 1
            versions = run_ragas(todo, args, judge_path, alias, rows_file)
            stored = json.loads((out_dir / ROWS_META).read_text())  # kept for --report-only
            (out_dir / ROWS_META).write_text(json.dumps({**stored, "bench_venv": versions}, indent=2) + "\n")
        else:
            log("every row is already scored")

    stored = json.loads((out_dir / ROWS_META).read_text()) if (out_dir / ROWS_META).is_file() else {}
    versions = stored.pop("bench_venv", None)
    if args.report_only:
        judge_meta.update(stored)
    records = read_records(rows_file)
    results = [c for name, jobs in plans.items()
               for c in ragas_calibrations(str(args.benchmarks / name), jobs, records, judge_meta)]
    entries = [(c, load_ours(args.ours, c.file, c.label_metric or c.metric, c.kind) if args.ours else None)
               for c in results]
    table = render_table(entries, ours_given=args.ours is not None)
    title = "against localragas" if args.ours else "agreement with human labels"
    head = f"### ragas {harness.RAGAS_VERSION} {title}, judge {cell(args.judge)}\n\n"
    out_dir.mkdir(parents=True, exist_ok=True)
    md = out_dir / ("ragas_vs_localragas.md" if args.ours else "ragas_agreement.md")
    md.write_text(head + table, encoding="utf-8")
    runs = [{"file": j.file, "id": j.row.sample.id, "ragas_metric": j.ragas_class,
             **{k: r.get(k) for k in ("seconds", "calls", "prompt_tokens", "completion_tokens", "parse_errors",
                                      "note")}}
            for jobs in plans.values() for j in jobs if (r := records.get((j.key, j.variant)))]
    meta = {"tool": f"ragas {harness.RAGAS_VERSION}", "script": "research.benchmarks.ragas_agreement",
            "written": started,
            "command": [Path(sys.argv[0]).name, *(argv if argv is not None else sys.argv[1:])],
            "judge": judge_meta, "bench_venv": versions, "files": [str(f) for f in files], "limits": limits,
            "settings": {"ragas_timeout": args.ragas_timeout, "n_ctx": args.n_ctx, "threads": args.threads,
                         "embedder": "minilm-l6", "temperature": "as ragas sets it (0.01; ContextRelevance 0.1)"},
            "variants": {name: dict(Counter(j.ragas_class for j in jobs)) for name, jobs in plans.items()},
            "ci": {"level": CI_LEVEL, "resamples": RESAMPLES, "seed": SEED, "method": "percentile bootstrap"},
            "ours": str(args.ours) if args.ours else None, "rows_file": str(rows_file), "row_runs": runs}
    (out_dir / JSON_FILE).write_text(CalibrationRun(meta=meta, results=results).model_dump_json(indent=2) + "\n",
                                     encoding="utf-8")
    print(head + table)
    print(f"wrote {out_dir / JSON_FILE} and {md}")
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, harness.on_sigterm)  # leaves through the finally blocks that stop server and child
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        log("interrupted; rows scored so far are kept in the rows file and skipped on the next run")
        sys.exit(130)
