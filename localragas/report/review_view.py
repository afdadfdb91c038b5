"""What a reviewer sees of one item of a run (`localragas review`, docs/spot-checks.md): the question, the texts the
judge read, the item marked where it sits, and the one question put to the person. Both front ends draw the same
view: the terminal (cli/review_terminal.py) and the served page (report/review_page.py, whose script draws it with
textContent only).

Where the judge's evidence names no span, the part of each context that best matches the item is found here
(`best_span`: the sentence, or two adjacent ones, sharing the most of the item's words) and marked, so a long context
can be shown around it first.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from ..core.sentences import sentences
from ..quality.review_items import ReviewItem

Span = tuple[int, int]  # [start, end) character offsets into a passage's text

# The question put to the reviewer per metric: "yes" is the label 1 (supported / relevant), "no" the label 0.
ASK = {
    "faithfulness": "Is this statement of the answer supported by the contexts? (y: every part of it can be read in "
                    "them; n: some of it is not there or contradicted)",
    "context_recall": "Is this statement of the reference answer supported by the contexts? (y: the contexts say it; "
                      "n: they do not)",
    "context_precision": "Is this retrieved chunk useful for the {target}? (y: it holds information the {target} "
                         "uses; n: unrelated, or does not help)",
}
YES_NO = {"faithfulness": ("supported", "not supported"), "context_recall": ("supported", "not supported"),
          "context_precision": ("relevant", "not relevant")}

_CJK = "\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af"
_TOKEN = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+")  # a CJK character alone, else a run of letters and digits
_STOP = frozenset("a an and are as at be by for from has have in is it its of on or that the this to was were with "
                  "which who".split())
MIN_SHARE = 0.34  # a span is marked when it holds at least this share of the item's words (and two of them)
PAIR_GAIN = 0.15  # two sentences are marked rather than one when they hold this much more of the item's words


def _tokens(text: str) -> set[str]:
    return {t for t in (m.group().lower() for m in _TOKEN.finditer(text)) if t not in _STOP}


def _sentence_spans(text: str) -> list[Span]:
    """Each sentence of the text (core/sentences.py) with its offsets in it."""
    out, at = [], 0
    for s in sentences(text):
        start = text.find(s, at)
        if start < 0:
            continue
        out.append((start, start + len(s)))
        at = start + len(s)
    return out


def best_span(item: str, text: str) -> tuple[Span | None, float]:
    """The span of `text` that holds the largest share of the item's words, and that share: a sentence, or two
    adjacent sentences when together they hold PAIR_GAIN more of them; the shorter on a tie. (None, share) when the
    share is below MIN_SHARE or fewer than two words (one, for a one-word item) are shared."""
    want = _tokens(item)
    if not want or not text.strip():
        return None, 0.0
    spans = _sentence_spans(text) or [(0, len(text))]
    best: tuple[float, int, Span, float] | None = None  # (share less the pair's cost, -length, span, share)
    for i, (start, _) in enumerate(spans):
        for extra, (_, end) in enumerate(spans[i:i + 2]):
            share = len(want & _tokens(text[start:end])) / len(want)
            key = (share - PAIR_GAIN * extra, start - end, (start, end), share)
            if share and (best is None or key[:2] > best[:2]):
                best = key
    if best is None:
        return None, 0.0
    span, share = best[2], best[3]
    if share < MIN_SHARE or round(share * len(want)) < (1 if len(want) == 1 else 2):
        return None, share
    return span, share


def find_item(item: str, text: str) -> Span | None:
    """Where the item stands in the answer or reference: the exact text (whitespace aside), else its best span."""
    if not item.strip() or not text:
        return None
    exact = text.find(item.strip())
    if exact >= 0:
        return exact, exact + len(item.strip())
    words = [re.escape(w) for w in item.split()]
    m = re.search(r"\s+".join(words), text) if words else None
    if m:
        return m.start(), m.end()
    return best_span(item, text)[0]


def excerpt(text: str, span: Span | None, chars: int) -> Span:
    """The part of `text` of about `chars` characters shown first: around the span (centred on it, and all of it
    when it is longer), or the beginning without one; widened to whole words. The whole text when it is no longer."""
    if len(text) <= chars:
        return 0, len(text)
    if span is None:
        start, end = 0, chars
    else:
        width = max(chars, span[1] - span[0])
        start = max(0, min((span[0] + span[1] - width) // 2, len(text) - width))
        end = start + width
    for _ in range(30):  # back to the start of a word, forward to the end of one (not past 30 characters)
        if start > 0 and not text[start - 1].isspace():
            start -= 1
        if end < len(text) and not text[end].isspace():
            end += 1
    return start, end


@dataclass(frozen=True)
class Passage:
    """One text shown: its title, the text, the spans marked in it and what it is (question, context, answer,
    reference, item)."""

    title: str
    text: str
    marks: tuple[Span, ...] = ()
    role: str = "context"


@dataclass(frozen=True)
class ItemView:
    """An item as a reviewer sees it: a heading, the passages in order, the question put to them, the words for
    yes and no, and the judge's verdict (shown only with --show-judge)."""

    key: str
    metric: str
    sample_id: str
    heading: str
    passages: tuple[Passage, ...]
    ask: str
    yes: str
    no: str
    judge: str

    def as_dict(self) -> dict[str, Any]:
        """The view as JSON data (the served page embeds it)."""
        return asdict(self)


def _target(item: ReviewItem) -> tuple[str, str]:
    """What a chunk was judged useful for (metrics/context_precision.py): the reference, else the answer, else the
    question itself."""
    if item.reference:
        return "reference answer", item.reference
    if (item.answer or "").strip():
        return "answer", item.answer or ""
    return "question", ""


def _contexts(item: ReviewItem) -> list[Passage]:
    n = len(item.contexts)
    out = []
    for k, text in enumerate(item.contexts, 1):
        span, _ = best_span(item.text, text)
        out.append(Passage(f"Context {k} of {n}", text, (span,) if span else (), "context"))
    return out


def judge_text(item: ReviewItem) -> str:
    yes, no = YES_NO.get(item.metric, ("yes", "no"))
    return f"the judge said {yes if item.judge_verdict else no} (score {item.judge_score:.2f})"


def item_view(item: ReviewItem) -> ItemView:
    """The view of one item (quality/review_items.py ReviewItem)."""
    yes, no = YES_NO.get(item.metric, ("yes", "no"))
    heading = f"{item.metric} · sample {item.sample_id} · {item.kind} {item.index + 1}"
    passages = [Passage("Question", item.question, (), "question")]
    if item.metric == "context_precision":
        what, target = _target(item)
        if target:
            passages.append(Passage(what[0].upper() + what[1:], target, (), "reference" if item.reference else
                                    "answer"))
        k = (item.chunk if item.chunk is not None else item.index) + 1
        passages.append(Passage(f"Chunk {k} of {len(item.contexts)} (retrieved at rank {k})", item.text, (), "item"))
        ask = ASK["context_precision"].format(target=what)
    else:
        whole, role = ((item.reference or "", "reference") if item.metric == "context_recall"
                       else (item.answer or "", "answer"))
        passages.extend(_contexts(item))
        if whole:
            where = find_item(item.text, whole)
            title = "Reference answer" if role == "reference" else "Answer"
            passages.append(Passage(title + (" (the statement marked)" if where else ""), whole,
                                    (where,) if where else (), role))
        passages.append(Passage(item.kind[0].upper() + item.kind[1:], item.text, (), "item"))
        ask = ASK.get(item.metric, "Is this item right? (y / n)")
    return ItemView(key=item.key, metric=item.metric, sample_id=item.sample_id, heading=heading,
                    passages=tuple(passages), ask=ask, yes=yes, no=no, judge=judge_text(item))
