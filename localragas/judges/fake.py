"""A scripted judge for tests: queued replies or a responder function; records every call it is asked."""
from __future__ import annotations

import json
import math
import re
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable

from pydantic import BaseModel, ValidationError

from ..core.errors import JudgeError
from ..core.reply_schemas import (MAX_CLAIM_CHARS, MAX_CLAIMS, MAX_ENTITIES, MAX_ENTITY_CHARS, MAX_REFERENCE_CHARS,
                                  Choices, Claims, Entities, GeneratedItem, GeneratedLinkedItem, GeneratedQuestion,
                                  GeneratedQuestions, Output, Rating, StandaloneQuestion, Verdicts, YesNo)
from ..prompts import Prompt
from .base import Completion, Judge, NextTokens
from .yes_no import YES_NO

Reply = dict[str, Any] | BaseModel | str | Exception
Responder = Callable[[Prompt, type[Output]], Reply]


@dataclass
class Call:
    prompt: Prompt
    output: type[Output]


class FakeJudge(Judge):
    """Replies from a queue (first in, first out), else from `responder`, else from a simple heuristic.

    A reply may be a dict, a pydantic model, a raw JSON string (to test bad replies) or an exception to raise. A
    graded verdict's reply is a YesNo ({"p_yes": …}), a rubric's a Choices ({"probabilities": …}): the fake gives it as
    the next tokens a real backend would (next_tokens), which the judging layer reads back.
    record=False keeps no `calls` (the judge `--judge fake` names: nothing reads them there, and a large run would
    hold every prompt it was asked). checked=False (a judge a test builds in code, its replies the test's script):
    exempt from the judge check (run/judge_check.py), which would ask it and record calls the test did not make;
    the judge `--judge fake` names is checked (its heuristic separates the check's items by word overlap).
    """

    def __init__(self, replies: list[Reply] | None = None, responder: Responder | None = None, name: str = "fake",
                 n_ctx: int | None = 8192, record: bool = True, checked: bool = False):
        super().__init__()
        self.record = record
        self.judge_check_exempt = None if checked else "a fake judge built in code (tests)"
        self.n_ctx = n_ctx  # as the llamacpp default, so long inputs are split as with a real judge (None: never)
        self.queue: deque[Reply] = deque(replies or [])
        self.responder = responder or heuristic_reply
        self.calls: list[Call] = []
        self.name = name
        self.fingerprint = f"fake:{name}"

    def asked(self, prompt_name: str) -> list[Prompt]:
        return [c.prompt for c in self.calls if c.prompt.name == prompt_name]

    def complete(self, prompt: Prompt, schema: dict, output: type[Output]) -> Completion:
        text = self._scripted(prompt, output)
        return Completion(text=text, prompt_tokens=len(prompt.text().split()), completion_tokens=len(text.split()))

    def next_tokens(self, prompt: Prompt, words: tuple[str, ...]) -> NextTokens:
        """The queued or responder reply for output YesNo (`words` yes/no: {"p_yes": p, …}, read as the next tokens
        "yes" with probability p and "no" with 1 - p) or Choices (a rubric's levels: {"probabilities": {level: p}, …},
        each level a next token with its p), so the judging layer reads back p. `mass` is not used. Counted as its
        other replies: the words of the prompt and of the reply's JSON."""
        output: type[YesNo | Choices] = YesNo if words == YES_NO else Choices
        text = self._scripted(prompt, output)
        try:
            reading = output.model_validate_json(text)
        except ValidationError as e:
            raise JudgeError(f"{prompt.name}: the fake judge's reply is not a {output.__name__}: "
                             f"{e.errors()[0]['msg']}") from None
        if isinstance(reading, YesNo):
            candidates = [("yes", _log(reading.p_yes)), ("no", _log(1.0 - reading.p_yes))]
        else:
            candidates = [(level, _log(p)) for level, p in reading.probabilities.items()]
        return NextTokens(candidates, prompt_tokens=len(prompt.text().split()), completion_tokens=len(text.split()))

    def _scripted(self, prompt: Prompt, output: type[Output]) -> str:
        """The next queued reply, else the responder's, as JSON text; the call recorded; an exception raised."""
        if self.record:
            self.calls.append(Call(prompt, output))
        reply = self.queue.popleft() if self.queue else self.responder(prompt, output)
        if isinstance(reply, Exception):
            raise reply if isinstance(reply, JudgeError) else JudgeError(str(reply))
        if isinstance(reply, BaseModel):
            return reply.model_dump_json()
        return reply if isinstance(reply, str) else json.dumps(reply)


def _log(p: float) -> float:
    return math.log(p) if p > 0.0 else -math.inf


# --- a deterministic heuristic, so `--judge fake` gives plausible scores without a model -----------------

_WORD = re.compile(r"[\u4e00-\u9fff]|[^\W\u4e00-\u9fff]+", re.UNICODE)  # a Chinese character counts as a word
_STOP = frozenset("a an the of to in on for and or is are was were be by with as at it its this that from".split())
_ASKING = frozenset("what which who whom whose when where why how about does do did".split())  # words of a question


def _words(text: str) -> set[str]:
    return {w for w in (m.lower() for m in _WORD.findall(text)) if w not in _STOP}


def _between(text: str, tag: str) -> list[str]:
    return [m.strip() for m in re.findall(rf"<{tag}[^>]*>\n(.*?)\n</{tag}>", text, flags=re.S)]


def _supported(statement: str, evidence: str) -> bool:
    words = _words(statement)
    return bool(words) and len(words & _words(evidence)) / len(words) >= 0.6


def _graded_share(words: set[str], evidence: str) -> float:
    """1 when most of the words are in the evidence, else under 0.5 by the share that is."""
    share = len(words & _words(evidence)) / max(len(words), 1)
    return 1.0 if words and share >= 0.6 else 0.8 * share


def _first_sentence(text: str) -> str:
    return re.split(r"(?<=[.!?。！？])\s*", text.strip(), maxsplit=1)[0]


def _key_words(sentence: str, n: int) -> list[str]:
    """The n longest words of a sentence that are not stop words (a CJK character is a word), in their order."""
    words = [w for w in _WORD.findall(sentence) if w.lower() not in _STOP]
    chosen = sorted(sorted(range(len(words)), key=lambda i: (-len(words[i]), i))[:n])
    return [words[i] for i in chosen]


def _written_item(prompt: Prompt) -> dict[str, Any]:
    """A question on key words of each context's first sentence, those sentences as its reference (generate)."""
    firsts = [_first_sentence(c) for c in _between(prompt.user, "context")]
    per = 3 if len(firsts) == 1 else 2
    keys = [w for f in firsts for w in _key_words(f, per)]
    if prompt.name == "write_unanswerable":
        words = " ".join(keys[:2])  # and foreign words: P(answerable) under UNANSWERABLE_THRESHOLD
        return {"question": f"Which {words} rules did the penguin parliament on Mars pass in the year 3021?"}
    words = " ".join(keys)
    asked = f"How does {words} work overall?" if prompt.name == "write_abstract" else f"What about {words}?"
    item = {"question": asked, "reference": " ".join(firsts)[:MAX_REFERENCE_CHARS]}
    if prompt.name == "write_multi":  # each context's first sentence as its fact
        item = {"fact_1": firsts[0][:MAX_CLAIM_CHARS], "fact_2": firsts[-1][:MAX_CLAIM_CHARS], **item}
    return item


def _custom_share(text: str) -> float:
    """A custom criterion or rubric (prompts/custom.py): the graded share of the answer's words (else the
    reference's, else the question's) in the other fields shown; a dodge of an answer shares nothing."""
    shown = {t: " ".join(_between(text, t)) for t in ("question", "answer", "reference", "context")}
    target = next(t for t in ("answer", "reference", "question", "context") if shown[t] or t == "context")
    if target == "answer" and _DODGE.search(shown["answer"]):
        return 0.0
    rest = " ".join(v for t, v in shown.items() if t != target)
    return _graded_share(_words(shown[target]) - _ASKING, rest) if rest else 1.0


def _levels(text: str) -> dict[str, Any]:
    """A rubric's level probabilities: most on the level at the custom share's place along the levels, the rest on
    its neighbours (deterministic)."""
    levels = re.findall(r"^(\d): ", text, flags=re.M)
    at = round(_custom_share(text) * (len(levels) - 1))
    weights = [4.0 if i == at else 1.0 if abs(i - at) == 1 else 0.0 for i in range(len(levels))]
    total = sum(weights)
    return {"probabilities": {k: w / total for k, w in zip(levels, weights)}, "mass": 1.0}  # rounded where read


def _standalone(text: str) -> dict[str, Any]:
    """A conversation's latest message (the last <message>) with the two longest words of the user's message before
    it that it lacks, in brackets ("And the premium tier? (basic plan)"); as written when there is none: what the
    rewrite was shown is visible in what it wrote."""
    messages = re.findall(r'<message role="(\w+)">\n(.*?)\n</message>', text, flags=re.S)
    latest = messages[-1][1]
    earlier = [content for role, content in messages[:-1] if role == "user"]
    have = _words(latest)
    words = [w for w in _WORD.findall(earlier[-1]) if w.lower() not in _STOP | _ASKING | have] if earlier else []
    keys = sorted(sorted(range(len(words)), key=lambda i: (-len(words[i]), i))[:2])
    return {"question": f"{latest} ({' '.join(words[i] for i in keys)})" if keys else latest}


# --- a conversation's questions (prompts/conversation.py) ---
_MESSAGE = re.compile(r'<message id="\d+" role="(user|assistant)">\n(.*?)\n</message>', flags=re.S)


def _said_by(text: str, role: str) -> str:
    return " ".join(body for who, body in _MESSAGE.findall(text) if who == role)


def _retained(text: str) -> float:
    """knowledge_retained: a reply that asks again for what the user said forgets it: 1 less the graded share of its
    questions' words the user's messages hold (1 for a reply that asks nothing)."""
    reply = " ".join(_between(text, "answer"))
    asked = _words(" ".join(s for s in re.split(r"(?<=[.!?。！？])\s*", reply) if s.endswith(("?", "？")))) - _ASKING
    return 1.0 - _graded_share(asked, _said_by(text, "user")) if asked else 1.0


def _addressed(text: str) -> float:
    """request_addressed: the graded share of the request's words the assistant's messages hold."""
    return _graded_share(_words(" ".join(_between(text, "request"))) - _ASKING, _said_by(text, "assistant"))


_CONVERSATION = {"knowledge_retained": _retained, "request_addressed": _addressed}


_DODGE = re.compile(r"\b(not sure|don't know|do not know|cannot answer)\b", re.I)  # a noncommittal answer
_ENTITY = re.compile(r"[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*|\d[\d,.]*\d|\d")


def heuristic_reply(prompt: Prompt, output: type[Output]) -> dict[str, Any]:
    """Sentences as claims, word overlap as verdicts (graded ones too, and whether the answer replies to a generated
    question), the answer's first sentence as questions, a follow-up with the key words of the user's message before
    it as its standalone question, capitalised words and numbers as entities, the share of question words in the
    contexts as a relevance rating; in a conversation, a reply asking again for what the user said as forgetting it
    and a request whose words the replies hold as addressed; for `generate`, questions on each context's key words
    (an unanswerable one adds words no context has) and the contexts' first sentences as references."""
    text = prompt.user
    if output in (GeneratedItem, GeneratedLinkedItem, GeneratedQuestion):
        return _written_item(prompt)
    if output is StandaloneQuestion:
        return _standalone(text)
    if output is Claims:
        answer = " ".join(_between(text, "answer"))
        sentences = [s.strip() for s in re.split(r"(?<=[.!?。！？])\s*", answer) if len(_words(s)) >= 2]
        return {"claims": [s[:MAX_CLAIM_CHARS] for s in sentences[:MAX_CLAIMS]]}
    if output is GeneratedQuestions:
        answer = " ".join(_between(text, "answer"))
        dodge = bool(_DODGE.search(answer))
        first = answer.split(".")[0][:150] or "?"
        return {"questions": [f"What about {first}?"] * 3, "noncommittal": dodge}
    if output is Entities:
        found = dict.fromkeys(e[:MAX_ENTITY_CHARS] for e in _ENTITY.findall(" ".join(_between(text, "reference"))))
        return {"entities": list(found)[:MAX_ENTITIES]}
    if output is Rating:
        question = _words(" ".join(_between(text, "question")))
        share = len(question & _words(" ".join(_between(text, "context")))) / max(len(question), 1)
        return {"rating": 2 if share >= 0.6 else 1 if share >= 0.3 else 0}
    if output is Choices:
        return _levels(text)
    if output is YesNo:  # the same rules as the verdicts below, graded under "no": p >= 0.5 exactly when they say yes
        if prompt.name.startswith("criterion:"):
            p = _custom_share(text)
        elif prompt.name == "judge_chunk":
            target = " ".join(_between(text, "reference") or _between(text, "answer") or _between(text, "question"))
            shared = len(_words(" ".join(_between(text, "context"))) & _words(target))
            p = 1.0 if shared >= 3 else shared / 6
        elif prompt.name in _CONVERSATION:
            p = _CONVERSATION[prompt.name](text)
        elif prompt.name.startswith("contradict_statement"):  # word overlap cannot tell a contradiction: never one
            p = 0.0
        elif prompt.name == "question_answerable":  # do the contexts hold the question's words?
            asked = _words(" ".join(_between(text, "question"))) - _ASKING
            p = _graded_share(asked, " ".join(_between(text, "context")))
        elif prompt.name == "check_question":  # does the answer state what the generated question asks about?
            answer = " ".join(_between(text, "answer"))
            asked = _words(" ".join(_between(text, "question"))) - _ASKING
            p = 0.0 if _DODGE.search(answer) else _graded_share(asked, answer)  # a dodge replies to nothing
        else:
            p = _graded_share(_words(" ".join(_between(text, "statement"))), " ".join(_between(text, "context")))
        return {"p_yes": round(p, 6), "mass": 1.0}
    if issubclass(output, Verdicts):
        contexts = _between(text, "context")
        if prompt.name == "entities_in_contexts":
            joined = _words(" ".join(contexts))
            flags = [bool(_words(e)) and _words(e) <= joined for e in _between(text, "entity")]
        elif prompt.name == "judge_chunks":
            target = " ".join(_between(text, "reference") or _between(text, "answer") or _between(text, "question"))
            flags = [len(_words(c) & _words(target)) >= 3 for c in contexts]
        else:
            joined = " ".join(contexts)
            flags = [_supported(s, joined) for s in _between(text, "statement")]
        return {"verdicts": [{"id": i, "verdict": "yes" if f else "no"} for i, f in enumerate(flags, 1)]}
    raise JudgeError(f"fake judge has no heuristic for {output.__name__}")
