"""The judge calls of `localragas generate`: an item written from chunks (constrained JSON: GeneratedItem,
GeneratedLinkedItem for the multi kind, or GeneratedQuestion), the graded support of its reference by the chunks
(verify_statement, one P(yes) per sentence of the reference, the lowest kept) and whether chunks answer its question
(question_answerable, a P(yes)). Chunks that do not fit the judge's window are left out from the end (more than one)
or cut (one), with a warning."""
from __future__ import annotations

from collections.abc import Callable

from ..data.language import Scope
from ..core.reply_schemas import GeneratedItem, GeneratedLinkedItem, GeneratedQuestion
from ..prompts import Prompt, question_answerable, write_item, write_unanswerable
from ..prompts.generation import TASKS
from .sample_context import Asking
from ..core.sentences import sentences
from .support import support_probabilities
from .text import truncate
from .verdicts import ANSWERABLE_FAMILY, SUPPORT_FAMILY, graded
from .window import MIN_ITEM, YES_NO_REPLY, Window, fitted

# every prompt family generate asks: an item of each kind written, its reference's support, its answerability (the
# resume checkpoint's key holds their text: prompts.digest)
FAMILIES = (*(f"write_{kind}" for kind in TASKS), "write_unanswerable", SUPPORT_FAMILY, ANSWERABLE_FAMILY)
WRITE_REPLY = 400  # {"question": … at most 200 characters, "reference": … at most 600}
LINKED_REPLY = 550  # the same with "fact_1" and "fact_2", at most 200 characters each


def asking(judging, lang: str) -> Asking:
    """The context one generated item is asked through (the run's judging context, whose calibration its graded
    support is read through: testset.generation.support_calibration), its prompts in `lang`."""
    return Asking(judging, Scope(lang, True, lang))


def _fitted(ctx: Asking, chunks: list[str], make: Callable[[list[str]], Prompt], reply: int) -> list[str]:
    """The chunks, the last ones left out (or the only one cut) until make(chunks) fits the window with the reply."""
    return fitted(ctx, [(make(chunks), reply)], lambda: chunks, lambda w: _kept(w, chunks, make, reply))


def _kept(w: Window, chunks: list[str], make: Callable[[list[str]], Prompt], reply: int) -> tuple[list[str], str]:
    """The first chunks that fit (or the first one cut), and the note saying so."""
    kept = list(chunks)
    while len(kept) > 1 and not w.fits(make(kept), reply):
        kept.pop()
    if not w.fits(make(kept), reply):
        kept = [truncate(kept[0], max(MIN_ITEM, w.room(make([""])) - reply), w.tokens)]
    return kept, (f"the chunks did not fit {w.named}: {len(kept)} of {len(chunks)} used"
                  + (", cut" if kept[-1] not in chunks else ""))


def write(ctx: Asking, kind: str, chunks: list[str]) -> GeneratedItem | GeneratedLinkedItem | GeneratedQuestion:
    """The judge's question (and reference, but for kind unanswerable; and a fact of each chunk for kind multi)
    from the chunks."""
    lang = ctx.language.lang
    if kind == "unanswerable":
        shown = _fitted(ctx, chunks[:1], lambda c: write_unanswerable(c[0], lang), WRITE_REPLY)
        return ctx.ask(write_unanswerable(shown[0], lang), GeneratedQuestion)
    output, reply = (GeneratedLinkedItem, LINKED_REPLY) if kind == "multi" else (GeneratedItem, WRITE_REPLY)
    shown = _fitted(ctx, chunks, lambda c: write_item(kind, c, lang), reply)
    return ctx.ask(write_item(kind, shown, lang), output)


def reference_support(ctx: Asking, reference: str, chunks: list[str]) -> float:
    """P(yes) that the chunks support the reference, calibrated as faithfulness's claims are
    (judge_calls.verdicts.graded: raw when the context's calibration has no verify_statement map): the lowest over its
    sentences (each must be supported)."""
    parts = sentences(reference) or [reference]
    return min(graded(ctx, SUPPORT_FAMILY, support_probabilities(ctx, parts, chunks)).values)


def answerable_by_any(ctx: Asking, question: str, chunks: list[str]) -> float:
    """The highest P(yes) that one chunk, shown alone, states the answer (answerable, one call per chunk): a small
    judge shown several chunks at once can miss an answer one of them holds."""
    return max(answerable(ctx, question, [c]) for c in chunks)


def answerable(ctx: Asking, question: str, chunks: list[str]) -> float:
    """P(yes) that the chunks state the answer to the question, calibrated when the context's calibration has an
    ANSWERABLE_FAMILY map (fitted on chunks people marked as answering a question or not:
    `calibrate --fit FILE --family question_answerable`)."""
    lang = ctx.language.lang
    shown = _fitted(ctx, chunks, lambda c: question_answerable(c, question, lang), YES_NO_REPLY)
    return graded(ctx, ANSWERABLE_FAMILY, [ctx.p_yes(question_answerable(shown, question, lang))]).values[0]
