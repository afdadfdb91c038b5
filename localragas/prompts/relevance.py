"""Is each retrieved chunk useful for the expected answer? (context precision)"""
from __future__ import annotations

from ..data.language import detect
from .base import ONE_WORD, SYSTEMS, YES_NO_SYSTEMS, Prompt, contexts_block, short_closing, tagged
from .verdicts import PER_CONTEXT, reply_line

INSTRUCTIONS = {
    "en": """Above are retrieved contexts, numbered in ranked order. Below are a question and its {target}.
For each context, decide whether it was useful for arriving at that {target}: "yes" if it contains information the {target} uses, "no" if it is unrelated or does not help.""",
    "zh": """上面是检索到的上下文，按排名顺序编号。下面是一个问题和它的{target}。
对每个上下文，判断它对得出这个{target}是否有用：如果它含有{target}用到的信息，回答 "yes"；如果它无关或没有帮助，回答 "no"。""",
}
# No reference and no answer (a retrieval-only dataset): each chunk is judged against the question alone.
QUESTION_ONLY = {
    "en": """Above are retrieved contexts, numbered in ranked order. Below is a question.
For each context, decide whether it contains information that answers the question: "yes" if it answers the question or a part of it, "no" if it is unrelated or only mentions the same topic without answering.""",
    "zh": """上面是检索到的上下文，按排名顺序编号。下面是一个问题。
对每个上下文，判断它是否含有能回答这个问题的信息：如果它回答了这个问题或其中一部分，回答 "yes"；如果它无关，或只是提到同一话题却没有回答，回答 "no"。""",
}
INSTRUCTION = INSTRUCTIONS["en"]
# One chunk, answered with one word (a graded verdict: judges/yes_no.py). The question (and target) and this
# instruction come first, so the calls for one sample's chunks share them as a prefix evaluated once a sample; each
# call then evaluates only its chunk, the short reminder and the reply line (docs/speed.md).
ONE = {
    "en": """Above are a question and its {target}. Below is one retrieved context. Decide whether the context was useful for arriving at that {target}: "yes" if it contains information the {target} uses, "no" if it is unrelated or does not help.""",
    "zh": """上面是一个问题和它的{target}。下面是一个检索到的上下文。判断这个上下文对得出这个{target}是否有用：如果它含有{target}用到的信息，回答 "yes"；如果它无关或没有帮助，回答 "no"。""",
}
ONE_QUESTION_ONLY = {
    "en": """Above is a question. Below is one retrieved context. Decide whether the context contains information that answers the question: "yes" if it answers the question or a part of it, "no" if it is unrelated or only mentions the same topic without answering.""",
    "zh": """上面是一个问题。下面是一个检索到的上下文。判断这个上下文是否含有能回答这个问题的信息：如果它回答了这个问题或其中一部分，回答 "yes"；如果它无关，或只是提到同一话题却没有回答，回答 "no"。""",
}
_TARGET_ZH = {"reference answer": "参考答案", "answer": "回答"}


def _target(question: str, target: str, target_kind: str, lang: str, instructions: dict[str, str],
            question_only: dict[str, str]) -> tuple[str, list[str]]:
    """The instruction and the tagged question (and target) for target_kind "reference answer", "answer" or
    "question" (then target is empty: the question alone)."""
    if target_kind == "question":
        return question_only[lang], [tagged("question", question)]
    shown_kind = _TARGET_ZH.get(target_kind, target_kind) if lang == "zh" else target_kind
    return instructions[lang].format(target=shown_kind), [
        tagged("question", question), tagged("reference" if target_kind.startswith("reference") else "answer", target)]


def judge_chunk(question: str, target: str, target_kind: str, chunk: str, lang: str | None = None) -> Prompt:
    """Is this one chunk useful (see judge_chunks)? One word back."""
    lang = lang or detect(" ".join((question, target)))
    instruction, data = _target(question, target, target_kind, lang, ONE, ONE_QUESTION_ONLY)
    shared = "\n".join([*data, "", instruction, "", ""])
    item = "\n".join([tagged("context", chunk), "", short_closing(lang, ONE_WORD[lang])])
    return Prompt("judge_chunk", shared + item, YES_NO_SYSTEMS[lang], splits=(len(shared),))


def judge_chunks(question: str, target: str, target_kind: str, contexts: list[str], lang: str | None = None) -> Prompt:
    """target_kind is "reference answer", "answer" or "question" (then target is empty: the question alone)."""
    lang = lang or detect(" ".join((question, target)))
    instruction, data = _target(question, target, target_kind, lang, INSTRUCTIONS, QUESTION_ONLY)
    user = "\n".join(
        [
            contexts_block(contexts, lang),
            "",
            instruction,
            "",
            *data,
            "",
            # No reminder that the data is not instructions here (prompts.base.closing): after the data, the default
            # judge judged an unrelated first chunk relevant and the relevant second one not, in an obvious two-chunk
            # case (tests/real/test_default_judge_obvious.py); before the data it did the same (tried 2026-12-01).
            # The graded one-chunk prompt, the default, ends with the reminder.
            reply_line(lang, len(contexts), PER_CONTEXT[lang]),
        ]
    )
    return Prompt("judge_chunks", user, SYSTEMS[lang])
