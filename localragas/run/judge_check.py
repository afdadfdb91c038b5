"""The judge check: before any sample is scored, the judge is asked obvious items (run/judge_check_items.py) the way
the run's metrics ask theirs, and a judge that cannot tell supported from unsupported statements, or relevant from
irrelevant chunks, stops the run (JudgeCheckError: exit 5) instead of passing the gate with scores that mean nothing.

- What is asked: for each verdict family the run's metrics use (faithfulness and context recall: statements, their
  graded `verify_statement` in the metric's way of asking, or `verify_statements` with verdicts=json; context
  precision: chunks, `judge_chunk` or `judge_chunks`), in each language of the run's samples, through the metric's
  own verdict strategy (judge_calls/verdicts.py, the function its scores come from): the same prompt builders and the
  run's judging context (judges/judging.py: its prompt overrides, its cache and its call counters). Answer relevancy and custom metrics are not
  checked.
- The rule (the constants below, in one place): graded verdicts pass when the ROC AUC of the raw P(yes) (the
  supported or relevant items against the others) is at least MIN_AUC and the mean raw P(yes) of those items is at
  least MIN_MARGIN above the others'; JSON verdicts when at least MIN_ACCURACY of the items get the right yes/no.
  Raw, not calibrated: the check is about the judge, and a calibration map (increasing) cannot make a flat judge
  discriminate.
- Exempt: the catalogue's test judge (ModelSpec.judge_check, matched by the file's sha256, as its calibration is)
  and a fake judge built in code by a test (Judge.judge_check_exempt); the report says so.
- A judge error during the check leaves it "not completed": the run goes on and the samples' own errors decide
  (the gate fails closed on them).

During a run, `flat_metrics` (applied by regate.gate_report, so `report` and `merge` apply it too) reports a graded
metric whose raw P(yes) did not move over many items (FLAT_MIN_ITEMS items within FLAT_SPREAD) as could not evaluate
(exit 4) when the check did not vouch for the judge (skipped, not completed, or a report without it).
"""
from __future__ import annotations

import math
import time
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..judges import catalogue
from ..judge_calls.verdicts import YES, raw_p_yes
from ..core.errors import JudgeError
from ..core.number_text import score_text as _n, seconds_text
from ..data.language import NAMES, scope_of
from ..data.schema import Sample
from ..judges.judging import judging_of
from ..metrics.base import Metric, WithVerdicts
from ..metrics.context_precision import ContextPrecision
from ..metrics.statement_support import StatementSupport
from ..judge_calls.sample_context import Scoring
from .judge_check_items import CHUNKS, STATEMENTS

if TYPE_CHECKING:
    from ..data.metric_definition import MetricDefinition
    from ..data.schema import Report
    from ..judges import Judge, Judging

# --- the rule: every constant of the check, in one place (docs/gate.md#the-judge-check) -------------------------------
# Set from research/accuracy/judge_check_margins.py on the catalogue judges (docs/gate.md#measured-margins): the
# default judge ranks every item right (AUC 1.00) with margins 0.24-0.72, on llama.cpp and behind an OpenAI-compatible
# server alike;
# qwen2.5-0.5b ranks the statements right with a margin of only 0.04 and the chunks at chance (AUC 0.50 / 0.69).
# A judge giving every item the same P(yes) has AUC 0.50. The margin floor only refuses a judge whose P(yes) barely
# moves; the items are as few as keep a flat, inverted or position-following judge from passing (the orders below),
# since a cold run pays for each (about 2 s a call on 2 cores).
MIN_AUC = 0.75  # graded: ROC AUC of the raw P(yes), the supported (relevant) items against the others
MIN_MARGIN = 0.02  # graded: mean raw P(yes) of the supported (relevant) items minus that of the others
MIN_ACCURACY = 0.8  # JSON verdicts (verdicts=json): the share of items given the right yes/no
# The order the items are asked in, per language: y a supported (relevant) item, n an unsupported (irrelevant) one, each
# side's next in judge_check_items' listed order. Graded verdicts ask one item per call, JSON verdicts all of them in one
# list, so a judge whose answers follow the call's position, not its content (two round-robin replicas, one stuck on
# "yes" and one on "no"), would pass labels that alternate. These orders refuse any judge whose answers depend only on
# the position modulo POSITION_PERIODS or less (in the calls, or in a JSON list), or that rise or fall with it: its best
# AUC is 0.64 (statements) and 0.725 (chunks), its best accuracy 0.60 and 0.67 (tests/fast/run/test_judge_check.py
# test_no_answer_by_position_alone_passes_the_check). Found by exhaustive search over the orders of 5 + 5 and 4 + 5
# items; fewer items cannot refuse periods 3 and 4 and a rise or fall together.
STATEMENT_ORDER = "ynynynnyny"  # 5 supported and 5 unsupported statements per language (judge_check_items.STATEMENTS)
CHUNK_ORDER = "ynynnynyn"  # 4 relevant and 5 irrelevant chunks per language (judge_check_items.CHUNKS)
POSITION_PERIODS = 4  # the longest period of a position-only judge the orders refuse (a call period of 8 with two
# calls an item, question=both)
# During a run, when the check did not vouch for the judge: a graded metric with at least FLAT_MIN_ITEMS items whose
# raw P(yes) all lie within FLAT_SPREAD (max - min) could not be evaluated.
FLAT_MIN_ITEMS = 20
FLAT_SPREAD = 0.02

SKIPPED = "--no-judge-check"  # the reason a skipped check records (the flag; judge_check = false, judge_check=False)
TEST_JUDGE = "test judge"  # the reason an exempt catalogue judge records (ModelSpec.judge_check == "exempt")
SHOWN_WRONG = 3  # items it got wrong named in the failure message
# the items' right answers, by kind: (the yes item's word, the no item's)
SIDES = {"statements": ("supported", "unsupported"), "chunks": ("relevant", "irrelevant")}
_PLAIN = {"verify_statement", "verify_statements", "judge_chunk", "judge_chunks"}
_JSON = {"verify_statements", "judge_chunks"}


@dataclass(frozen=True)
class Family:
    """One verdict family the check asks: its kind (statements, chunks), its name (the graded family a calibration
    names, judge_calls/support.py support_family, or the JSON prompt's) and the run's metric whose verdicts it asks
    like."""

    kind: str
    family: str
    metric: WithVerdicts

    @property
    def graded(self) -> bool:
        return self.metric.graded

    @property
    def label(self) -> str:
        """How the terminal names it: the kind, with the family when it is not the plain one."""
        if self.family in _JSON:
            return f"{self.kind} (json)"
        return self.kind if self.family in _PLAIN else f"{self.kind} ({self.family})"


def family_of(m: Metric) -> tuple[str, str] | None:
    """(kind, family) of the verdicts a metric asks that the check covers, else None: faithfulness and context recall
    asked the same way share one."""
    if isinstance(m, StatementSupport):
        kind = "statements"
    elif isinstance(m, ContextPrecision):
        kind = "chunks"
    else:
        return None
    return kind, m.graded_family if m.graded else m.verdict_prompts[1]


def families(metrics: Iterable[Metric]) -> list[Family]:
    """The verdict families the metrics use that the check covers, once each."""
    seen: dict[tuple[str, str], Family] = {}
    for m in metrics:
        if isinstance(m, WithVerdicts) and (key := family_of(m)) is not None:
            seen.setdefault(key, Family(key[0], key[1], m))
    return list(seen.values())


def exemption(judge: "Judge") -> str | None:
    """Why the judge is not checked, else None: the catalogue's test judge (matched by its file's sha256), or a judge
    that says so itself (a fake judge built in code)."""
    own = getattr(judge, "judge_check_exempt", None)
    if own:
        return str(own)
    digest = getattr(judge, "sha256", None)
    entry = next((m for m in catalogue.CATALOGUE.values() if digest and m.sha256 == digest), None)
    return TEST_JUDGE if entry is not None and entry.judge_check == "exempt" else None


def ordered(items: Sequence[tuple[str, bool]], order: str) -> list[tuple[str, bool]]:
    """The items in `order` (STATEMENT_ORDER, CHUNK_ORDER): for each y the next yes item in their listed order, for each
    n the next no item."""
    sides = {True: iter([i for i in items if i[1]]), False: iter([i for i in items if not i[1]])}
    return [next(sides[c == "y"]) for c in order]


def ask(judging: "Judging | Judge", family: Family, lang: str) -> tuple[list[tuple[str, bool]], list[float], Scoring]:
    """The family's check items in `lang`, in their order, the judge's values for them (ask_items) and the scoring
    context they were asked in."""
    if family.kind == "statements":
        data = STATEMENTS[lang]
        items, question, given = ordered(data.statements, STATEMENT_ORDER), data.question, data.context
    else:
        chunks = CHUNKS[lang]
        items, question, given = ordered(chunks.chunks, CHUNK_ORDER), chunks.question, chunks.reference
    texts = [t for t, _ in items]
    ctx = items_context(judging, family.kind, lang, question, given, texts)
    return items, ask_items(ctx, family, question, given, texts), ctx


def items_context(judging: "Judging | Judge", kind: str, lang: str, question: str, given: str,
                  texts: list[str]) -> Scoring:
    """The scoring context items are asked in (ask_items): a sample holding them, in `lang`."""
    if kind == "statements":
        sample = Sample(id="judge-check", question=question, contexts=[given], answer=" ".join(texts), language=lang)
    else:
        sample = Sample(id="judge-check", question=question, contexts=texts, answer=given, reference=given,
                        language=lang)
    return Scoring(sample, judging)


def ask_items(ctx: Scoring, family: Family, question: str, given: str, texts: list[str]) -> list[float]:
    """The judge's values for `texts`, asked through the family's metric's own verdict strategy (graded: the raw
    P(yes); JSON: 1.0 / 0.0) in `ctx` (items_context): statements against the context `given`, chunks for `question`
    and its reference answer `given`. The judge check's items, and the canaries' (run/canaries.py)."""
    metric = family.metric
    if family.kind == "statements":
        assert isinstance(metric, StatementSupport)
        got = metric.verdicts.support(ctx, texts, [given], metric.options.question, [{} for _ in texts])
    else:
        questions = metric.options.questions if isinstance(metric, ContextPrecision) else "useful"
        got = metric.verdicts.relevance(ctx, question, given, "reference answer", texts, questions,
                                        [{} for _ in texts])
    return list(got.raw if got.raw is not None else got.values)


def roc_auc(yes: Sequence[float], no: Sequence[float]) -> float:
    """P(a yes item's value > a no item's), ties counting a half: 0.5 for a judge that gives every item one value."""
    if not yes or not no:
        return 0.5
    wins = sum(1.0 if a > b else 0.5 if a == b else 0.0 for a in yes for b in no)
    return wins / (len(yes) * len(no))


def figures(kind: str, items: Sequence[tuple[str, bool]], values: Sequence[float], graded: bool) -> dict[str, Any]:
    """What the check measured on one family in one language, whether it passes the rule, and the items it got
    wrong (graded: those on the wrong side of the other side's extreme, the overlap that lowers the AUC; JSON: the
    wrong verdicts), the worst first."""
    yes_word, no_word = SIDES[kind]
    yes = [v for (_, y), v in zip(items, values) if y]
    no = [v for (_, y), v in zip(items, values) if not y]
    out: dict[str, Any] = {"items": len(items)}
    if graded:
        auc, margin = roc_auc(yes, no), sum(yes) / len(yes) - sum(no) / len(no)
        low = sorted([(v, t, True) for (t, y), v in zip(items, values) if y and v <= max(no)], key=lambda w: w[0])
        high = sorted([(v, t, False) for (t, y), v in zip(items, values) if not y and v >= min(yes)],
                      key=lambda w: -w[0])
        wrong = [w for pair in zip(low, high) for w in pair] + low[len(high):] + high[len(low):]  # both sides first
        out.update(auc=round(auc, 4), margin=round(margin, 4), mean_yes=round(sum(yes) / len(yes), 4),
                   mean_no=round(sum(no) / len(no), 4), min_yes=round(min(yes), 4), max_no=round(max(no), 4),
                   passed=auc >= MIN_AUC and margin >= MIN_MARGIN)
        out["wrong"] = [{"item": t, "expected": yes_word if y else no_word, "p_yes": round(v, 4)} for v, t, y in wrong]
    else:
        right = [(v >= YES) == y for (_, y), v in zip(items, values)]
        accuracy = sum(right) / len(right)
        out.update(accuracy=round(accuracy, 4), passed=accuracy >= MIN_ACCURACY)
        out["wrong"] = [{"item": t, "expected": yes_word if y else no_word, "verdict": "yes" if v >= YES else "no"}
                        for (t, y), v, ok in zip(items, values, right) if not ok]
    return out


def rule() -> dict[str, Any]:
    """The rule's constants, as a report records them."""
    return {"min_auc": MIN_AUC, "min_margin": MIN_MARGIN, "min_accuracy": MIN_ACCURACY,
            "statement_order": STATEMENT_ORDER, "chunk_order": CHUNK_ORDER}


# the families already asked of a judge in this process (the pytest plugin's session judge, a notebook's): asked once
_DONE: "weakref.WeakKeyDictionary[Any, dict[tuple, dict[str, Any]]]" = weakref.WeakKeyDictionary()
def run_check(judging: "Judging | Judge", metrics: Iterable[Metric], samples: Iterable[Sample],
              enabled: bool = True) -> dict[str, Any]:
    """The check for a run of `metrics` on `samples` (their languages), as report.meta["judge_check"] records it:
    status passed / failed (with each family's figures per language), skipped (enabled=False), exempt, not_needed
    (no metric it covers, or no sample) or error (a judge error stopped it: the run goes on)."""
    if not enabled:
        return {"status": "skipped", "reason": SKIPPED}
    judging = judging_of(judging)  # the run's judging context (a judge alone: its own, nothing set)
    if why := exemption(judging.judge):
        return {"status": "exempt", "reason": why}
    plan = families(metrics)
    languages = sorted({scope_of(s).lang for s in samples})
    if not plan or not languages:
        return {"status": "not_needed", "reason": "no sample, or no metric asks the verdicts it checks "
                                                  "(faithfulness, context recall, context precision)"}
    started, before = time.perf_counter(), judging.stats.counters()  # nothing else asks the run's judge before scoring
    done = _DONE.setdefault(judging.judge, {})
    overrides = judging.prompts.sha256 if judging.prompts else None
    results = []
    try:
        for family in plan:
            for lang in languages:
                key = (family.kind, family.family, lang, overrides, STATEMENT_ORDER, CHUNK_ORDER)
                if key not in done:
                    items, values, _ = ask(judging, family, lang)
                    done[key] = {"kind": family.kind, "family": family.family, "label": family.label,
                                 "verdicts": family.metric.verdicts.name, "language": lang,
                                 **figures(family.kind, items, values, family.graded)}
                results.append(done[key])
    except JudgeError as e:
        return {"status": "error", "error": str(e)[:300], **_spent(judging, before, started)}
    status = "passed" if all(r["passed"] for r in results) else "failed"
    return {"status": status, "families": results, "rule": rule(), **_spent(judging, before, started)}


def _spent(judging: "Judging", before: Mapping[str, float], started: float) -> dict[str, Any]:
    """The check's wall seconds and its share of the run's counters (calls, cache hits, tokens, seconds)."""
    now = judging.stats.counters()
    spent = {k: v - before.get(k, 0) for k, v in now.items()}
    return {"seconds": round(time.perf_counter() - started, 3), "judge_seconds": round(spent.pop("seconds", 0.0), 3),
            **{k: int(v) for k, v in spent.items()}}


def scoring_stats(stats: Mapping[str, Any], *parts: Mapping[str, Any]) -> dict[str, Any]:
    """The run's totals (Judging.stats, JudgeStats.as_dict) less the shares of `parts` (the check's, meta.judge_check;
    the canaries', run/canaries.py), so that a report's judge_stats count the scoring's calls, as its samples' do (each
    part records its own)."""
    out = dict(stats)
    for part in parts:
        spent = {**{k: v for k, v in part.items() if k in stats and k != "seconds"},
                 "seconds": part.get("judge_seconds", 0.0)}
        for k, v in spent.items():
            if isinstance(out.get(k), (int, float)) and isinstance(v, (int, float)):
                out[k] = round(out[k] - v, 3) if isinstance(out[k], float) else out[k] - int(v)
    return out


# --- the messages ------------------------------------------------------------------------------------------------

ADVICE = ("Check the model's chat template (a GGUF without the right one answers about at random), use an instruct "
          "model rather than a base model, try other --judge-option settings or another quantisation of the model, "
          "or a stronger judge; --no-judge-check skips the check, for a test setup that only exercises the pipeline "
          "(docs/gate.md#the-judge-check)")


def _measured(r: Mapping[str, Any]) -> str:
    if "auc" in r:
        return (f"ROC AUC {_n(r['auc'], digits=2)} (needs {_n(MIN_AUC, digits=2)}), margin "
                f"{_n(r['margin'], digits=2, signed=True)} (needs {_n(MIN_MARGIN, digits=2)}): P(yes) "
                f"{SIDES[r['kind']][0]} from {_n(r['min_yes'])}, {SIDES[r['kind']][1]} up to {_n(r['max_no'])}")
    return f"accuracy {_n(r['accuracy'], digits=2)} (needs {_n(MIN_ACCURACY, digits=2)})"


def _wrong(r: Mapping[str, Any]) -> str:
    if not r["wrong"]:
        return f"none: every {SIDES[r['kind']][0]} item is above every other, by too little"
    shown = [f"{w['item']!r} ({w['expected']}, " + (f"P(yes) {_n(w['p_yes'])})" if "p_yes" in w else
                                                     f"said {w['verdict']})") for w in r["wrong"][:SHOWN_WRONG]]
    more = len(r["wrong"]) - len(shown)
    return "; ".join(shown) + (f" and {more} more" if more > 0 else "")


def failure_message(check: Mapping[str, Any], judge_name: str) -> str:
    """The message of a failed check (exit 5): the judge, each failing family and language with its figures and a
    few items it got wrong, and what to try."""
    failed = [r for r in check["families"] if not r["passed"]]
    kinds = list(dict.fromkeys(r["kind"] for r in failed))
    what = " and ".join(f"{SIDES[k][0]} from {SIDES[k][1]} {k}" for k in kinds)
    parts = [f"{r['family']} ({NAMES.get(r['language'], r['language'])}): {_measured(r)}; got wrong: {_wrong(r)}"
             for r in failed]
    return (f"judge check failed: the judge {judge_name} cannot tell obvious {what} apart, so its scores would mean "
            f"nothing; nothing was scored. " + " | ".join(parts) + f". {ADVICE}")


def check_line(meta: Mapping[str, Any]) -> str | None:
    """The line a report shows about the check (terminal, Markdown, HTML), from its meta, in words for the person
    reading a CI log ("judge check passed: the judge told supported from unsupported statements apart (8 of 8 items
    right) …"; its figures: check_details); None when the run recorded none or there was nothing to check."""
    check = meta.get("judge_check")
    if not isinstance(check, Mapping):
        return None
    status = check.get("status")
    if status in ("skipped", "exempt"):
        return f"judge check {status} ({check.get('reason', '')})"
    if status == "error":
        return (f"judge check not completed: a judge error stopped it ({check.get('error', '')}); the samples' own "
                "errors decide the gate")
    if status not in ("passed", "failed"):
        return None
    rows = check.get("families", [])
    told = " and ".join(f"{SIDES[k][0]} from {SIDES[k][1]} {k}" for k in dict.fromkeys(r["kind"] for r in rows))
    items = sum(int(r.get("items", 0)) for r in rows)
    right = items - sum(len(r.get("wrong") or []) for r in rows)
    calls = f"{check.get('calls', 0)} judge call(s), {check.get('cache_hits', 0)} from the cache"
    said = "told" if status == "passed" else "could not tell"
    return (f"judge check {'passed' if status == 'passed' else 'FAILED'}: the judge {said} {told} apart ({right} of "
            f"{items} items right), in {seconds_text(check.get('seconds', 0.0))} ({calls})")


def check_details(meta: Mapping[str, Any]) -> str | None:
    """The check's figures on one line, beside check_line ("judge check figures: statements ROC AUC 1.00, P(yes)
    margin 0.71; …; to pass: AUC >= 0.75 and margin >= 0.02"); None without figures."""
    check = meta.get("judge_check")
    if not isinstance(check, Mapping) or check.get("status") not in ("passed", "failed"):
        return None
    shown, rules = [], []
    for label in dict.fromkeys(r.get("label", r["kind"]) for r in check.get("families", [])):
        rows = [r for r in check["families"] if r.get("label", r["kind"]) == label]
        if all("auc" in r for r in rows):
            shown.append(f"{label} ROC AUC {_n(min(r['auc'] for r in rows), digits=2)}, "
                         f"P(yes) margin {_n(min(r['margin'] for r in rows), digits=2)}")
            rules.append(f"AUC >= {_n(MIN_AUC, digits=2)} and margin >= {_n(MIN_MARGIN, digits=2)}")
        else:
            shown.append(f"{label} accuracy {_n(min(r.get('accuracy', 0.0) for r in rows), digits=2)}")
            rules.append(f"accuracy >= {_n(MIN_ACCURACY, digits=2)}")
    return f"judge check figures: {'; '.join(shown)} (to pass: {'; '.join(dict.fromkeys(rules))})"


# --- during a run: a graded metric whose P(yes) does not move ------------------------------------------------------

def flat_metrics(report: "Report", definitions: Mapping[str, "MetricDefinition"]) -> dict[str, str]:
    """Metric -> why it could not be evaluated, for each graded metric whose raw P(yes) was flat: at least
    FLAT_MIN_ITEMS items (over all its scored samples), all within FLAT_SPREAD of each other. Only when the judge
    check did not vouch for the judge (skipped, not completed, or not recorded): a judge that passed it can tell the
    items apart, so a flat run is the data's (every item plainly supported), and an exempt judge is there to exercise
    the pipeline."""
    if ((report.meta.get("judge_check") or {}).get("status")) in ("passed", "exempt"):
        return {}
    out = {}
    for name in report.metrics:
        d = definitions.get(name)
        if d is None or d.mode != "probability" or not d.items:
            continue
        p = [v for s in report.samples if (r := s.metrics.get(name)) is not None and r.value is not None
             for item in (r.evidence.get(d.items) or []) if isinstance(item, Mapping)
             and (v := raw_p_yes(item)) is not None]
        if len(p) >= FLAT_MIN_ITEMS and max(p) - min(p) < FLAT_SPREAD:
            mean = sum(p) / len(p)
            sd = math.sqrt(sum((v - mean) ** 2 for v in p) / len(p))
            out[name] = (f"the judge's P(yes) was flat ({_n(mean)} ± {_n(sd)} over {len(p)} items): it is not "
                         "judging (docs/gate.md#the-judge-check)")
    return out
