"""Claims and entities of a text, asked of the judge piece by piece when the text is long: one reply holds at most
MAX_CLAIMS claims (MAX_ENTITIES entities), so a long text's are never hidden by that cap."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.reply_schemas import MAX_CLAIMS, Claims, Entities
from ..prompts import Prompt, extract_claims, extract_entities
from .text import split_text, truncate
from .window import CLAIM_PIECE_CHARS, MIN_ITEM, Window, claims_reply, fitted

if TYPE_CHECKING:
    from .sample_context import Scoring


def _prompt(ctx: "Scoring", text: str, question: str | None) -> Prompt:
    """The claims prompt for `text`, in the language its claims are written in."""
    return extract_claims(text, question, lang=ctx.language.text_language(text))


def claims_of(ctx: "Scoring", text: str, question: str | None,
              what: str = "answer") -> list[str]:
    """Claims of `text`, extracted piece by piece when it is long; cleaned, repeats across pieces dropped."""
    pieces = split_text(text, CLAIM_PIECE_CHARS) if len(text) > CLAIM_PIECE_CHARS else [text]
    pieces, question, why = fitted(ctx, ((_prompt(ctx, p, question), claims_reply(p)) for p in pieces),
                                   lambda: (pieces, question, f"at most {MAX_CLAIMS} claims per reply"),
                                   lambda w: _window_pieces(ctx, w, pieces, question, what))
    if len(pieces) > 1:
        ctx.warn(f"the {what} ({len(text)} characters) was split into {len(pieces)} pieces for claim "
                 f"extraction ({why}); claims were extracted from every piece")
    seen: dict[str, None] = {}
    for k, piece in enumerate(pieces, 1):
        got = ctx.ask(_prompt(ctx, piece, question), Claims)
        if len(got.claims) >= MAX_CLAIMS:
            where = f" (piece {k} of {len(pieces)})" if len(pieces) > 1 else ""
            ctx.warn(f"the judge returned the maximum of {MAX_CLAIMS} claims for the {what}{where}: "
                     "claims beyond that may be missing")
        seen.update(dict.fromkeys(got.cleaned()))
    return list(seen)


def _window_pieces(ctx: "Scoring", w: Window, pieces: list[str], question: str | None, what: str
                   ) -> tuple[tuple[list[str], str | None, str], None]:
    """The pieces split further until each fits the window beside its claims, the question cut first when it leaves
    too little room (noted); and why the text was split (the note, when it was, comes after: claims_of)."""
    bare = w.room(_prompt(ctx, "", None))
    if question and bare - w.tokens(question) < 4 * MIN_ITEM:
        question = truncate(question, (bare - 4 * MIN_ITEM) // 2, w.tokens)
        ctx.warn(f"the question was truncated to fit {w.named} for extracting the {what}'s claims")
    limit = max(MIN_ITEM, w.room(_prompt(ctx, "", question)) // 3)  # a third for the text, two for its claims
    pieces = [q for p in pieces for q in (split_text(p, limit, w.tokens)
                                          if not w.fits(_prompt(ctx, p, question), claims_reply(p)) else [p])]
    return (pieces, question, f"the judge's context window, n_ctx={w.n_ctx}"), None


def entities_of(ctx: "Scoring", reference: str) -> list[str]:
    """The reference's entities; a long reference is asked piece by piece (as claims are)."""
    pieces = split_text(reference, CLAIM_PIECE_CHARS)
    if len(pieces) > 1:
        ctx.warn(f"the reference ({len(reference)} characters) was split into {len(pieces)} pieces for entity "
                 "extraction; entities were extracted from every piece")
    seen: dict[str, str] = {}
    for piece in pieces:
        for e in ctx.ask(extract_entities(piece, lang=ctx.language.text_language(piece)), Entities).cleaned():
            seen.setdefault(e.casefold(), e)
    return list(seen.values())
