"""Fit every judge prompt into the judge's context window; split what is too long, never drop a claim silently.

- A long answer or reference is split at sentence ends into pieces (at most CLAIM_PIECE_CHARS characters, and small
  enough for the window); claims are extracted from each piece, so the MAX_CLAIMS cap of one reply never hides the
  claims of a long text.
- Statements are verified in batches against groups of contexts that fit the window; a context longer than a group
  is split into pieces. A statement counts as supported when any group supports it.
- Context precision judges the chunks in groups that fit; a chunk split into pieces is relevant when any piece is.
- Graded verdicts (one statement or one chunk per call, judges/yes_no.py) judge groups of contexts, or pieces of a
  chunk, that fit; a statement's or chunk's probability is its highest over the groups or pieces.
- Answer relevancy generates its questions from, and checks them against, the beginning of an answer too long for
  the window.
Each split or truncation adds a line to the `warnings` list of the metric's evidence.

Token counts come from the judge (`Judge.count_tokens`: its tokenizer, or an estimate). No count is needed when a
prompt's UTF-8 size already fits: a token covers at least one byte, so a cached run never loads a model to count.
A judge whose window cannot hold a prompt's instructions and one item is refused before the run (`check_window`).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

from .errors import ConfigError
from .outputs import MAX_CLAIMS, Claims, GeneratedQuestions, YesNo, verdicts_for
from .prompts import (Prompt, check_question, entities_in_contexts, extract_claims, extract_entities,
                      generate_questions, judge_chunk, judge_chunks, rate_context_relevance, verify_statement,
                      verify_statements)

if TYPE_CHECKING:
    from .judges import Judge

OVERHEAD = 32  # chat-template tokens around the system and user messages (role markers, BOS)
TAG_TOKENS = 10  # the <context id="12"> … </context> wrapper of one item
VERDICT_TOKENS = 16  # one {"id": 12, "verdict": "yes"} in a reply
REPLY_BASE = 16  # {"verdicts": [ … ]}
YES_NO_REPLY = 4  # one word
QUESTIONS_REPLY = 256  # {"noncommittal": …, "questions": [3 questions of at most 200 characters]}
CLAIMS_REPLY_CAP = 1200
MIN_ITEM = 64  # the smallest piece of text worth judging on its own
CLAIM_PIECE_CHARS = 1500  # a longer text is split for claim extraction: one reply holds at most MAX_CLAIMS claims

T = TypeVar("T")
Count = Callable[[str], int]


def claims_reply(text: str) -> int:
    """Tokens to keep free for the claims of `text`: about its own size (claims restate it), capped."""
    return min(CLAIMS_REPLY_CAP, len(text.encode("utf-8")) // 3 + 48)


def verdicts_reply(n: int) -> int:
    return REPLY_BASE + VERDICT_TOKENS * n


class Window:
    """The judge's context window: does a prompt fit with room for its reply; how many tokens a text takes."""

    def __init__(self, judge: "Judge"):
        self.judge = judge
        self.n_ctx: int | None = getattr(judge, "n_ctx", None)

    @property
    def limited(self) -> bool:
        return self.n_ctx is not None

    def tokens(self, text: str) -> int:
        return self.judge.count_tokens(text) if text else 0

    def prompt_tokens(self, prompt: Prompt) -> int:
        return self.tokens(prompt.system) + self.tokens(prompt.user) + OVERHEAD

    def fits(self, prompt: Prompt, reply: int) -> bool:
        if self.n_ctx is None:
            return True
        limit = self.n_ctx - reply
        if len(prompt.system.encode("utf-8")) + len(prompt.user.encode("utf-8")) + OVERHEAD <= limit:
            return True  # an upper bound of the token count already fits: no tokenizer needed
        return self.prompt_tokens(prompt) <= limit

    def room(self, prompt: Prompt) -> int:
        """Tokens of the window left after this prompt (its data placeholders empty)."""
        assert self.n_ctx is not None
        return self.n_ctx - self.prompt_tokens(prompt)


# --- splitting text ------------------------------------------------------------------------------------------------

_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+|\n\s*|(?<=[。！？；：])")
_SPACE = re.compile(r"\s+")


def _cut(text: str, pattern: re.Pattern[str]) -> list[str]:
    """Split after each match, keeping every character: "".join(result) == text."""
    out, start = [], 0
    for m in pattern.finditer(text):
        if m.end() > start:
            out.append(text[start:m.end()])
            start = m.end()
    if start < len(text):
        out.append(text[start:])
    return out


def _hard_split(text: str, limit: int, count: Count) -> list[str]:
    """Cut anywhere (a run with no sentence end and no space), in windows sized from the text's own ratio."""
    out, start = [], 0
    while start < len(text):
        rest = text[start:]
        size = max(1, int(len(rest) * limit / max(count(rest), 1)))
        while size > 1 and count(rest[:size]) > limit:
            size = max(1, size * 3 // 4)
        out.append(rest[:size])
        start += size
    return out


def split_text(text: str, limit: int, count: Count = len) -> list[str]:
    """Consecutive pieces of `text`, each of at most `limit` (by `count`: characters by default, or tokens),
    cut at sentence ends, else at spaces, else anywhere. "".join(pieces) == text: nothing is dropped."""
    limit = max(1, limit)
    if count(text) <= limit:
        return [text]
    units: list[str] = []
    for sentence in _cut(text, _SENTENCE_END):
        if count(sentence) <= limit:
            units.append(sentence)
            continue
        for word in _cut(sentence, _SPACE):
            units.extend([word] if count(word) <= limit else _hard_split(word, limit, count))
    pieces: list[str] = []
    current, size = "", 0
    for unit in units:
        n = count(unit)
        if current and size + n > limit:
            pieces.append(current)
            current, size = "", 0
        current, size = current + unit, size + n
    if current:
        pieces.append(current)
    out: list[str] = []
    for piece in pieces:  # counts of joined units can exceed their sum (tokenizers): check each piece once more
        if count(piece) <= limit or len(piece) < 2:
            out.append(piece)
        else:
            mid = len(piece) // 2
            out.extend(split_text(piece[:mid], limit, count) + split_text(piece[mid:], limit, count))
    return out


def truncate(text: str, limit: int, count: Count) -> str:
    """The beginning of `text` within `limit` (cut at a sentence end or space when it can be), marked with […]."""
    head = split_text(text, max(1, limit - 4), count)[0]
    return head if head == text else head.rstrip() + " […]"


def _pack(items: Sequence[T], cost: Callable[[T], int], limit: int) -> list[list[T]]:
    """Consecutive groups of items whose costs sum to at most `limit` (an item costlier than that stands alone)."""
    groups: list[list[T]] = []
    current: list[T] = []
    used = 0
    for item in items:
        c = cost(item)
        if current and used + c > limit:
            groups.append(current)
            current, used = [], 0
        current.append(item)
        used += c
    if current:
        groups.append(current)
    return groups


def _pieces(contexts: Sequence[str], limit: int, w: Window) -> tuple[list[tuple[int, str]], list[int]]:
    """(original index, text) of every context, a context longer than `limit` tokens split into pieces; and the
    1-based numbers of the split contexts."""
    out: list[tuple[int, str]] = []
    split: list[int] = []
    for i, c in enumerate(contexts):
        if w.tokens(c) <= limit:
            out.append((i, c))
        else:
            parts = split_text(c, limit, w.tokens)
            split.append(i + 1)
            out.extend((i, p) for p in parts)
    return out, split


def _numbers(ns: list[int]) -> str:
    return ", ".join(map(str, ns[:10])) + (" …" if len(ns) > 10 else "")


# --- the four kinds of judge call, fitted ------------------------------------------------------------------------------


def extract_all_claims(judge: "Judge", text: str, question: str | None, warnings: list[str],
                       what: str = "answer") -> list[str]:
    """Claims of `text`, extracted piece by piece when it is long; cleaned, repeats across pieces dropped."""
    w = Window(judge)
    pieces = split_text(text, CLAIM_PIECE_CHARS) if len(text) > CLAIM_PIECE_CHARS else [text]
    why = f"at most {MAX_CLAIMS} claims per reply"
    if w.limited and not all(w.fits(extract_claims(p, question), claims_reply(p)) for p in pieces):
        bare = w.room(extract_claims("", None))
        if question and bare - w.tokens(question) < 4 * MIN_ITEM:
            question = truncate(question, (bare - 4 * MIN_ITEM) // 2, w.tokens)
            warnings.append(f"the question was truncated to fit the judge's context window (n_ctx={w.n_ctx}) "
                            f"for extracting the {what}'s claims")
        limit = max(MIN_ITEM, w.room(extract_claims("", question)) // 3)  # a third for the text, two for its claims
        pieces = [q for p in pieces for q in (split_text(p, limit, w.tokens)
                                              if not w.fits(extract_claims(p, question), claims_reply(p)) else [p])]
        why = f"the judge's context window, n_ctx={w.n_ctx}"
    if len(pieces) > 1:
        warnings.append(f"the {what} ({len(text)} characters) was split into {len(pieces)} pieces for claim "
                        f"extraction ({why}); claims were extracted from every piece")
    seen: dict[str, None] = {}
    for k, piece in enumerate(pieces, 1):
        got = judge.generate(extract_claims(piece, question), Claims)
        if len(got.claims) >= MAX_CLAIMS:
            where = f" (piece {k} of {len(pieces)})" if len(pieces) > 1 else ""
            warnings.append(f"the judge returned the maximum of {MAX_CLAIMS} claims for the {what}{where}: "
                            "claims beyond that may be missing")
        seen.update(dict.fromkeys(got.cleaned()))
    return list(seen)


def judge_statements(judge: "Judge", statements: list[str], contexts: list[str], warnings: list[str],
                     prompt: Callable[[list[str], list[str]], Prompt] = verify_statements) -> list[bool]:
    """For each statement, do the contexts support it? Batched over statements and grouped over contexts when one
    call would not fit; a statement is supported when any group of contexts supports it."""
    whole = prompt(statements, contexts)
    w = Window(judge)
    if w.fits(whole, verdicts_reply(len(statements))):
        return judge.generate(whole, verdicts_for(len(statements))).flags()
    room = w.room(prompt([], [])) - REPLY_BASE

    def cost(s: str) -> int:
        return w.tokens(s) + TAG_TOKENS + VERDICT_TOKENS

    batch_limit = max(MIN_ITEM, room // 3)  # a third of the window for statements and their verdicts
    limit = max(MIN_ITEM, room - max(sum(cost(s) for s in b) for b in _pack(statements, cost, batch_limit)))
    pieces, split = _pieces(contexts, limit - TAG_TOKENS, w)
    groups = _pack(pieces, lambda p: w.tokens(p[1]) + TAG_TOKENS, limit)
    flags = [False] * len(statements)
    calls = 0
    for group in groups:  # a statement supported by one group is not asked again
        pending = [i for i, f in enumerate(flags) if not f]
        for batch in _pack(pending, lambda i: cost(statements[i]), batch_limit):
            got = judge.generate(prompt([statements[i] for i in batch], [text for _, text in group]),
                                 verdicts_for(len(batch)))
            calls += 1
            for i, flag in zip(batch, got.flags()):
                flags[i] = flag
    note = (f"the contexts and statements did not fit the judge's context window (n_ctx={w.n_ctx}) in one call: "
            f"{len(statements)} statements were judged against {len(groups)} group(s) of contexts in {calls} calls; "
            "a statement counts as supported when any group supports it")
    if split:
        note += f"; context(s) {_numbers(split)} were split into pieces"
    warnings.append(note)
    return flags


def _fit_question_target(w: Window, question: str, target: str, kind: str, bare_prompt: Prompt, reply: int,
                         warnings: list[str]) -> tuple[str, str]:
    """The question and target, truncated when together they take more than half the window (the other half is
    for the chunks)."""
    assert w.n_ctx is not None
    bare = w.room(bare_prompt) - reply
    if w.tokens(question) + w.tokens(target) > bare // 2:
        q_limit = max(MIN_ITEM, bare // 8)
        if w.tokens(question) > q_limit:
            question = truncate(question, q_limit, w.tokens)
            warnings.append(f"the question was truncated to fit the judge's context window (n_ctx={w.n_ctx})")
        t_limit = max(MIN_ITEM, bare // 2 - w.tokens(question))
        if w.tokens(target) > t_limit:
            target = truncate(target, t_limit, w.tokens)
            warnings.append(f"the {kind} was truncated to fit the judge's context window (n_ctx={w.n_ctx}) "
                            "for judging chunk relevance")
    return question, target


def statement_probabilities(judge: "Judge", statements: list[str], contexts: list[str],
                            warnings: list[str]) -> list[float]:
    """For each statement, P(yes) that the contexts support it: one graded call per statement, the contexts first
    (a shared prefix). When the contexts do not fit beside a statement, they are judged in groups that fit and the
    statement gets its highest probability over the groups."""
    if not statements:
        return []
    w = Window(judge)
    prompts = [verify_statement(s, contexts) for s in statements]  # built once: checked, then asked
    if all(w.fits(p, YES_NO_REPLY) for p in prompts):
        return [judge.generate(p, YesNo).p_yes for p in prompts]
    limit = max(MIN_ITEM, min(w.room(verify_statement(s, [])) for s in statements) - YES_NO_REPLY)
    pieces, split = _pieces(contexts, limit - TAG_TOKENS, w)
    groups = _pack(pieces, lambda p: w.tokens(p[1]) + TAG_TOKENS, limit)
    probs = [max(judge.generate(verify_statement(s, [text for _, text in g]), YesNo).p_yes for g in groups)
             for s in statements]
    note = (f"the contexts did not fit the judge's context window (n_ctx={w.n_ctx}) beside a statement: each of the "
            f"{len(statements)} statements was judged against {len(groups)} group(s) of contexts; its probability "
            "is the highest over the groups")
    if split:
        note += f"; context(s) {_numbers(split)} were split into pieces"
    warnings.append(note)
    return probs


def chunk_probabilities(judge: "Judge", question: str, target: str, kind: str, contexts: list[str],
                        warnings: list[str]) -> list[float]:
    """For each chunk, P(yes) that it is useful for the target (see judge_chunk_relevance): one graded call per
    chunk. A chunk too long for the window is judged in pieces and gets its highest probability over them."""
    w = Window(judge)
    prompts = [judge_chunk(question, target, kind, c) for c in contexts]
    if all(w.fits(p, YES_NO_REPLY) for p in prompts):
        return [judge.generate(p, YesNo).p_yes for p in prompts]
    question, target = _fit_question_target(w, question, target, kind, judge_chunk("", "", kind, ""), YES_NO_REPLY,
                                            warnings)
    limit = max(MIN_ITEM, w.room(judge_chunk(question, target, kind, "")) - YES_NO_REPLY - TAG_TOKENS)
    probs, split = [], []
    for i, c in enumerate(contexts, 1):
        pieces = [c] if w.tokens(c) <= limit else split_text(c, limit, w.tokens)
        if len(pieces) > 1:
            split.append(i)
        probs.append(max(judge.generate(judge_chunk(question, target, kind, p), YesNo).p_yes for p in pieces))
    if split:
        warnings.append(f"chunk(s) {_numbers(split)} did not fit the judge's context window (n_ctx={w.n_ctx}) and "
                        "were judged in pieces (a chunk's probability is the highest over its pieces)")
    return probs


def judge_chunk_relevance(judge: "Judge", question: str, target: str, kind: str, contexts: list[str],
                          warnings: list[str]) -> list[bool]:
    """Is each chunk useful for the target? In groups of chunks when one call would not fit (a chunk split into
    pieces is relevant when any piece is)."""
    whole = judge_chunks(question, target, kind, contexts)
    w = Window(judge)
    if w.fits(whole, verdicts_reply(len(contexts))):
        return judge.generate(whole, verdicts_for(len(contexts))).flags()
    question, target = _fit_question_target(w, question, target, kind, judge_chunks("", "", kind, []), REPLY_BASE,
                                            warnings)
    limit = max(MIN_ITEM, w.room(judge_chunks(question, target, kind, [])) - REPLY_BASE)
    pieces, split = _pieces(contexts, limit - TAG_TOKENS - VERDICT_TOKENS, w)
    groups = _pack(pieces, lambda p: w.tokens(p[1]) + TAG_TOKENS + VERDICT_TOKENS, limit)
    relevant = [False] * len(contexts)
    for group in groups:
        got = judge.generate(judge_chunks(question, target, kind, [text for _, text in group]),
                             verdicts_for(len(group)))
        for (i, _), flag in zip(group, got.flags()):
            relevant[i] = relevant[i] or flag
    note = (f"the {len(contexts)} chunks did not fit the judge's context window (n_ctx={w.n_ctx}) in one call: "
            f"judged in {len(groups)} groups")
    if split:
        note += f"; chunk(s) {_numbers(split)} were split into pieces (relevant when any piece is)"
    warnings.append(note)
    return relevant


def _answer_that_fits(w: Window, answer: str, prompt: Callable[[str], Prompt], reply: int, warnings: list[str],
                      purpose: str) -> str:
    """The answer, or its beginning when prompt(answer) does not fit the window with room for the reply."""
    if w.fits(prompt(answer), reply):
        return answer
    limit = max(MIN_ITEM, w.room(prompt("")) - reply)
    warnings.append(f"the answer ({w.tokens(answer)} tokens) was truncated to its first {limit} tokens to fit "
                    f"the judge's context window (n_ctx={w.n_ctx}) for {purpose}")
    return truncate(answer, limit, w.tokens)


def questions_for(judge: "Judge", answer: str, warnings: list[str], checked: bool = False) -> GeneratedQuestions:
    """The questions an answer answers; from the beginning of an answer too long for the window. checked: the
    prompt for questions that will be checked (prompts.questions.generate_questions)."""

    def prompt(text: str) -> Prompt:
        return generate_questions(text, checked=checked)

    shown = _answer_that_fits(Window(judge), answer, prompt, QUESTIONS_REPLY, warnings, "generating questions")
    return judge.generate(prompt(shown), GeneratedQuestions)


def answered_probabilities(judge: "Judge", answer: str, questions: list[str], warnings: list[str]) -> list[float]:
    """For each question generated from the answer, P(yes) that the answer's own statements reply to it: one graded
    call per distinct question, the answer first (a shared prefix, the same text in every call: the beginning of an
    answer too long to fit beside the longest question)."""
    w = Window(judge)
    distinct = list(dict.fromkeys(questions))
    if not all(w.fits(check_question(answer, q), YES_NO_REPLY) for q in distinct):
        longest = max(distinct, key=w.tokens)
        answer = _answer_that_fits(w, answer, lambda text: check_question(text, longest), YES_NO_REPLY, warnings,
                                   "checking the generated questions")
    p = {q: judge.generate(check_question(answer, q), YesNo).p_yes for q in distinct}
    return [p[q] for q in questions]


# --- refusing a window too small -------------------------------------------------------------------------------------

# Per prompt family: the prompt with empty data, the data tokens of one item, the reply tokens for one item.
_SMALLEST: dict[str, tuple[Callable[[], Prompt], int, int]] = {
    "extract_claims": (lambda: extract_claims("", "?"), MIN_ITEM, CLAIMS_REPLY_CAP // 4),
    "verify_statements": (lambda: verify_statements([], []), 2 * (MIN_ITEM + TAG_TOKENS), verdicts_reply(1)),
    "verify_statement": (lambda: verify_statement("", []), 2 * (MIN_ITEM + TAG_TOKENS), YES_NO_REPLY),
    "extract_entities": (lambda: extract_entities(""), MIN_ITEM, CLAIMS_REPLY_CAP // 4),
    "entities_in_contexts": (lambda: entities_in_contexts([], []), 2 * MIN_ITEM + TAG_TOKENS, verdicts_reply(1)),
    "rate_context_relevance": (lambda: rate_context_relevance("?", []), 2 * MIN_ITEM + TAG_TOKENS, 16),
    "judge_chunks": (lambda: judge_chunks("?", "", "reference answer", []), 2 * MIN_ITEM + TAG_TOKENS,
                     verdicts_reply(1)),
    "judge_chunk": (lambda: judge_chunk("?", "", "reference answer", ""), 2 * MIN_ITEM + TAG_TOKENS, YES_NO_REPLY),
    "generate_questions": (lambda: generate_questions("", checked=True), MIN_ITEM, QUESTIONS_REPLY),
    "check_question": (lambda: check_question("", ""), 2 * MIN_ITEM + TAG_TOKENS, YES_NO_REPLY),
}


def needed_window(judge: "Judge", prompt_name: str) -> int:
    """Tokens a prompt family needs at least: its instructions, one item, and the reply for one item."""
    make, item, reply = _SMALLEST[prompt_name]
    return Window(judge).prompt_tokens(make()) + item + reply


def check_window(judge: "Judge", prompt_names: Sequence[str]) -> None:
    """Refuse a judge whose context window cannot hold a prompt's instructions and one item (ConfigError)."""
    n_ctx = getattr(judge, "n_ctx", None)
    if n_ctx is None:
        return
    for name in dict.fromkeys(prompt_names):
        make, item, reply = _SMALLEST[name]
        p = make()
        if len(p.system.encode("utf-8")) + len(p.user.encode("utf-8")) + OVERHEAD + item + reply <= n_ctx:
            continue  # fits by an upper bound: no tokenizer needed
        needed = needed_window(judge, name)
        if needed > n_ctx:
            raise ConfigError(
                f"the judge's context window is too small: n_ctx={n_ctx} tokens, but the {name} prompt needs at "
                f"least {needed} (its instructions, one item and the reply); raise it, e.g. "
                f"--judge-option n_ctx={max(2048, 1 << (needed - 1).bit_length())}"
            )
