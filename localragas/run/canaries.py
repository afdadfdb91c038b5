"""Canaries: the judge check's backstop during the run. A judge that passed the check (run/judge_check.py) may stop
judging afterwards: a round-robin replica stuck on "yes" that the check's calls missed, a server that degrades, a
judge that recognised the check's items. So a few obvious items of each checked family (run/canary_items.py), with
known answers, are asked at points of the run drawn for it, through the same path as the run's items, and a run whose
canaries the judge answered no better than a coin cannot pass: each metric of that family could not be evaluated
(exit 4), named in every report (docs/gate.md#canaries).

- What is asked: for each (family, language) the check asked, PER_GROUP items, half of each side, in tasks of
  PER_TASK (one supported and one unsupported statement, or one relevant and one irrelevant chunk, in a drawn order),
  each task asked where one sample would be: in the engine's stream of samples (local threads or Dask batches), at a
  slot drawn among the samples to score, through judge_check.ask_items (the family's metric's own verdict strategy:
  one graded call an item, or one JSON call a task) on the run's judging context (its cache, its prompt overrides).
- Drawn for the run: from the sha256 of its samples' hashes, the bridge's name and year, the items and the slots; so
  a re-run or a resume of the same data asks the same canaries (the judge cache answers them, as it answers the
  samples), and a run of other data asks others (a cache cannot answer them from an earlier run).
- Read against the check: a graded canary is "yes" from the midpoint of the check's mean raw P(yes) of the two sides,
  for its family and language (the judge's own scale); a JSON one by its verdict.
- The rule (the constants below): a group passes when the chance of a coin getting as many of its answered canaries
  right is at most ALPHA (a one-sided binomial test): of 8, at least 7 right.
- Only after a passed check: skipped with --no-judge-check, none for an exempt judge, not asked when the check did
  not complete (no scale to read them by: the flat rule, judge_check.flat_metrics, stands in).
- Never a sample: not in the report's samples, means or checkpoint; their calls are counted in meta.canaries, not in
  judge_stats.
"""
from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.errors import JudgeError
from ..core.number_text import score_text as _n
from ..data.language import NAMES as LANGUAGES
from ..judge_calls.verdicts import YES
from ..metrics.base import WithVerdicts
from .canary_items import CHUNKS, NAME_PARTS, STATEMENTS, YEARS
from .judge_check import SIDES, Family, ask_items, family_of, items_context

if TYPE_CHECKING:
    from ..data.schema import Report
    from ..judges.judging import Judging
    from ..metrics import Metric

# --- the rule: every constant of the canaries, in one place (docs/gate.md#canaries) ---------------------------------
PER_GROUP = 8  # canaries per (family, language) the check asked: half supported (relevant), half not
PER_TASK = 2  # canaries asked together, where one sample would be: one of each side, in a drawn order
ALPHA = 0.05  # a group fails unless a coin would get as many of its canaries right with at most this chance
SHOWN_WRONG = 3  # canaries it got wrong named in a failure


@dataclass(frozen=True)
class Canary:
    """One task of canaries: asked like one sample of the run (an engine scores it where it scores a sample; run/
    scoring.py score_item), after `slot` of the run's samples to score. Sent to a Dask worker as it is."""

    id: str
    group: int  # the index of its (family, language) group in the run's plan
    kind: str
    family: str
    metric: str  # the run's metric whose verdict strategy asks it
    language: str
    question: str
    given: str  # statements: the context; chunks: the reference answer
    items: tuple[tuple[str, bool], ...]  # (text, a yes item)
    slot: int
    category: None = None  # as a Sample has: an engine that reports a crash reads it

    def ask(self, judging: "Judging", metrics: Sequence["Metric"]) -> "CanaryAnswers":
        """The judge's values for the items (judge_check.ask_items), or the judge error that stopped them."""
        metric = next(m for m in metrics if m.name == self.metric and isinstance(m, WithVerdicts))
        texts = [t for t, _ in self.items]
        ctx = items_context(judging, self.kind, self.language, self.question, self.given, texts)
        try:
            values = ask_items(ctx, Family(self.kind, self.family, metric), self.question, self.given, texts)
        except JudgeError as e:
            return CanaryAnswers(self.id, None, f"judge_error: {e}"[:300], ctx.log.stats.counters())
        return CanaryAnswers(self.id, values, None, ctx.log.stats.counters())


@dataclass
class CanaryAnswers:
    """What a canary task got: the judge's value per item, or why none (a judge error); its calls' counters."""

    id: str
    values: list[float] | None
    error: str | None
    judge: dict[str, float] = field(default_factory=dict)


def seed_of(hashes: Iterable[str]) -> str:
    """The run's canary seed: the sha256 of its samples' hashes (run/checkpoint.py sample_hash), in dataset order."""
    h = hashlib.sha256()
    for digest in hashes:
        h.update(digest.encode())
    return h.hexdigest()


def _name(lang: str, rng: random.Random) -> str:
    return "".join(rng.choice(part) for part in NAME_PARTS[lang])


def plan(check: Mapping[str, Any], metrics: Sequence["Metric"], seed: str, slots: int) -> list[Canary]:
    """The run's canaries: PER_GROUP for each (family, language) a passed check asked, in tasks of PER_TASK, each at a
    slot in [0, slots] (after that many of the samples to score); none unless the check passed."""
    if check.get("status") != "passed":
        return []
    out: list[Canary] = []
    for g, record in enumerate(check["families"]):
        kind, family, lang = record["kind"], record["family"], record["language"]
        metric = next(m for m in metrics if family_of(m) == (kind, family))
        rng = random.Random(int(hashlib.sha256(f"{seed}:{kind}:{family}:{lang}".encode()).hexdigest()[:16], 16))
        texts = (STATEMENTS if kind == "statements" else CHUNKS)[lang]
        fill = {"name": _name(lang, rng), "year": rng.randrange(*YEARS)}
        half = PER_GROUP // 2
        yes = [t.format(**fill) for t in rng.sample(texts.yes, half)]
        no = [t.format(**fill) for t in rng.sample(texts.no, half)]
        per_side = PER_TASK // 2
        for k in range(half // per_side):
            items = [(t, True) for t in yes[k * per_side:(k + 1) * per_side]] + \
                    [(t, False) for t in no[k * per_side:(k + 1) * per_side]]
            rng.shuffle(items)
            out.append(Canary(id=f"canary-{len(out) + 1}", group=g, kind=kind, family=family, metric=metric.name,
                              language=lang, question=texts.question.format(**fill),
                              given=texts.given.format(**fill), items=tuple(items), slot=rng.randint(0, slots)))
    return out


def p_value(right: int, answered: int) -> float:
    """The chance that a coin gets at least `right` of `answered` right (a one-sided binomial test); 1 when none was
    answered."""
    return sum(math.comb(answered, k) for k in range(right, answered + 1)) / 2 ** answered


def least_right(n: int = PER_GROUP) -> int:
    """The fewest right of n that pass the rule."""
    return next((r for r in range(n + 1) if p_value(r, n) <= ALPHA), n + 1)


def rule() -> dict[str, Any]:
    """The rule's constants, as a report records them."""
    return {"per_group": PER_GROUP, "per_task": PER_TASK, "alpha": ALPHA, "least_right": least_right(),
            "cut": "graded: midway between the judge check's mean raw P(yes) of the two sides; json: its verdict"}


def cut_of(record: Mapping[str, Any]) -> float:
    """Where a canary of the check's family record counts as yes: the midpoint of the check's two sides' mean raw
    P(yes) (graded), else YES (a JSON verdict is 1.0 or 0.0)."""
    if "mean_yes" in record:
        return (record["mean_yes"] + record["mean_no"]) / 2
    return YES


class Tally:
    """The canaries' answers as the run's engine hands them back (in any order), and their verdict: meta.canaries."""

    def __init__(self, canaries: list[Canary], check: Mapping[str, Any], metrics: Sequence["Metric"]):
        self.canaries, self.check = canaries, check
        self.answers: dict[str, CanaryAnswers] = {}
        self.names = {g: [m.name for m in metrics if family_of(m) == (r["kind"], r["family"])]
                      for g, r in enumerate(check.get("families") or [])}

    def record(self, canary: Canary, answers: Any) -> None:
        """A task's answers; anything else an engine hands back (a task that crashed every Dask worker) counts as
        unanswered, with its reason."""
        if not isinstance(answers, CanaryAnswers):
            why = next((r.unscored for r in getattr(answers, "metrics", {}).values()), None) or "no answer"
            answers = CanaryAnswers(canary.id, None, str(why)[:300], dict(getattr(answers, "judge", {}) or {}))
        self.answers[canary.id] = answers

    def meta(self) -> dict[str, Any]:
        """report.meta["canaries"]: the status (passed, failed; skipped, exempt, not_asked when the check did not
        pass), each group's counts and verdict, the rule, and their calls' counters."""
        status = self.check.get("status")
        if not self.canaries:
            if status == "skipped":
                return {"status": "skipped", "reason": self.check.get("reason", "")}
            if status == "exempt":
                return {"status": "exempt", "reason": self.check.get("reason", "")}
            if status == "error":
                return {"status": "not_asked", "reason": "the judge check did not complete"}
            return {"status": "not_needed"}
        groups = [self._group(g, record) for g, record in enumerate(self.check["families"])]
        spent: dict[str, float] = {}
        for a in self.answers.values():
            for k, v in a.judge.items():
                spent[k] = spent.get(k, 0) + v
        seconds = round(spent.pop("seconds", 0.0), 3)
        return {"status": "passed" if all(g["passed"] for g in groups) else "failed",
                "asked": sum(g["asked"] for g in groups), "answered": sum(g["answered"] for g in groups),
                "wrong": sum(g["wrong"] for g in groups), "groups": groups, "rule": rule(),
                "judge_seconds": seconds, **{k: int(v) for k, v in spent.items()}}

    def _group(self, g: int, record: Mapping[str, Any]) -> dict[str, Any]:
        cut = cut_of(record)
        yes_word, no_word = SIDES[record["kind"]]
        asked = answered = right = 0
        wrong, errors, slots = [], [], []
        for c in (c for c in self.canaries if c.group == g):
            slots.append(c.slot)
            asked += len(c.items)
            got = self.answers.get(c.id)
            if got is None or got.values is None:
                errors.append(got.error if got is not None else "not asked: the run stopped first")
                continue
            for (text, yes), value in zip(c.items, got.values):
                answered += 1
                if (value >= cut) == yes:
                    right += 1
                else:
                    wrong.append({"item": text, "expected": yes_word if yes else no_word, "value": round(value, 4)})
        p = p_value(right, answered)
        return {"kind": record["kind"], "family": record["family"], "label": record.get("label", record["kind"]),
                "language": record["language"], "metrics": self.names.get(g, []), "cut": round(cut, 4),
                "asked": asked, "answered": answered, "right": right, "wrong": answered - right,
                "p_value": round(p, 6), "passed": p <= ALPHA, "slots": sorted(slots), "wrong_items": wrong,
                **({"errors": errors[:3], "unanswered": asked - answered} if errors else {})}


# --- reading a report: the gate, the lines -------------------------------------------------------------------------

def failures(report: "Report") -> dict[str, str]:
    """Metric -> why it could not be evaluated, for each metric of a family whose canaries failed (meta.canaries;
    run.regate.gate_report applies it, so `report` and `merge` do too)."""
    out: dict[str, str] = {}
    for g in (report.meta.get("canaries") or {}).get("groups") or []:
        if g.get("passed", True):
            continue
        for name in g.get("metrics") or []:
            out.setdefault(name, _failure(g))
    return out


def _failure(g: Mapping[str, Any]) -> str:
    where = f"{g.get('label', g['kind'])}, {LANGUAGES.get(g['language'], g['language'])}"
    if g.get("shard"):
        where += f", shard {g['shard']}"
    if g["answered"] < g["asked"]:
        why = (f"only {g['answered']} of the {g['asked']} canaries ({where}) were answered, too few to show the judge "
               f"was judging ({(g.get('errors') or ['?'])[0]})")
    else:
        shown = "; ".join(f"{w['item']!r} ({w['expected']}, {_n(w['value'])})" for w in g["wrong_items"][:SHOWN_WRONG])
        why = (f"the judge got {g['wrong']} of {g['answered']} canaries wrong ({where}), no better than a coin: obvious "
               f"items asked during the run, answered as if it no longer read them (got wrong: {shown})")
    return why + " (docs/gate.md#canaries)"


def canary_line(meta: Mapping[str, Any]) -> str | None:
    """The line a report shows about the canaries (terminal, Markdown, HTML, JUnit), from its meta, in words ("canaries
    passed: the judge got 16 of 16 obvious items asked during the run right (statements 8/8, chunks 8/8) …"); None
    when the run recorded none or there was nothing to ask."""
    c = meta.get("canaries")
    if not isinstance(c, Mapping) or c.get("status") in (None, "not_needed"):
        return None
    status = c["status"]
    if status in ("skipped", "exempt"):
        return f"canaries {status} ({c.get('reason', '')})"
    if status == "not_asked":
        return f"canaries not asked ({c.get('reason', '')}): the flat rule stands in"
    shown = []
    for label in dict.fromkeys(g.get("label", g["kind"]) for g in c.get("groups", [])):
        rows = [g for g in c["groups"] if g.get("label", g["kind"]) == label]
        shown.append(f"{label} {sum(g['right'] for g in rows)}/{sum(g['asked'] for g in rows)}")
    calls = f"{c.get('calls', 0)} judge call(s), {c.get('cache_hits', 0)} from the cache"
    asked, right = c.get("asked", 0), sum(g["right"] for g in c.get("groups", []))
    if status == "passed":
        said = f"passed: the judge got {right} of {asked} obvious items asked during the run right"
    else:
        said = (f"FAILED: the judge got {c.get('wrong', 0)} of {c.get('answered', 0)} obvious items asked during the run wrong, "
                "no better than a coin")
    return f"canaries {said} ({', '.join(shown)} right) ({calls})"


def merged(parts: Sequence[Mapping[str, Any] | None], shards: Sequence[str]) -> dict[str, Any] | None:
    """meta.canaries of a merged report (run/shard.py): each shard's groups, named by shard, kept as they are (a shard
    whose canaries failed fails the merge); the counts and counters summed."""
    given = [(p, s) for p, s in zip(parts, shards) if isinstance(p, Mapping)]
    if not given:
        return None
    asked = [(p, s) for p, s in given if p.get("groups") is not None]
    if not asked:
        return dict(given[0][0])
    groups = [{**g, "shard": s} for p, s in asked for g in p["groups"]]
    counters = {k for p, _ in asked for k, v in p.items() if isinstance(v, (int, float)) and k != "status"}
    out: dict[str, Any] = {"status": "passed" if all(g["passed"] for g in groups) else "failed", "groups": groups,
                           "rule": asked[0][0].get("rule")}
    for k in sorted(counters):
        total = sum(p.get(k, 0) for p, _ in asked)
        out[k] = round(total, 3) if isinstance(total, float) else total
    return out
