"""Is each retrieved chunk useful for the expected answer? (context precision)"""
from __future__ import annotations

from ..data.language import detect
from .base import ONE_WORD, REMINDER, SYSTEMS, YES_NO_SYSTEMS, Prompt, contexts_block, tagged
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
# One chunk, answered with one word (a graded verdict: judges/yes_no.py), asked after the sample's contexts: the
# contexts are the prefix every graded call on the sample shares (verify_statement's too), the instruction, question
# and target follow once per sample, and each call shows its chunk again, with its number, right before the question
# about it (ASK). Named by its number alone, the chunk was found in a list of 8 far less well: per-chunk ROC AUC 0.675
# against 0.825 on WikiQA's ranked lists (docs/research/accuracy-log.md, 2026-12-06).
ONE = {
    "en": """Above are the retrieved contexts, numbered in ranked order. Below are a question and its {target}, then one of the contexts again. Decide whether that context was useful for arriving at that {target}: "yes" if it contains information the {target} uses, "no" if it is unrelated or does not help.""",
    "zh": """上面是检索到的上下文，按排名顺序编号。下面是一个问题和它的{target}，然后再次给出其中一个上下文。判断这个上下文对得出这个{target}是否有用：如果它含有{target}用到的信息，回答 "yes"；如果它无关或没有帮助，回答 "no"。""",
}
ONE_QUESTION_ONLY = {
    "en": """Above are the retrieved contexts, numbered in ranked order. Below is a question, then one of the contexts again. Decide whether that context contains information that answers the question: "yes" if it answers the question or a part of it, "no" if it is unrelated or only mentions the same topic without answering.""",
    "zh": """上面是检索到的上下文，按排名顺序编号。下面是一个问题，然后再次给出其中一个上下文。判断这个上下文是否含有能回答这个问题的信息：如果它回答了这个问题或其中一部分，回答 "yes"；如果它无关，或只是提到同一话题却没有回答，回答 "no"。""",
}
# The question after the chunk a call shows again, naming it by its number in the contexts block; then the reply line.
ASK = {"en": "Was context {k} useful for arriving at that {target}?", "zh": "上下文 {k} 对得出这个{target}有用吗？"}
ASK_QUESTION_ONLY = {"en": "Does context {k} contain information that answers the question?",
                     "zh": "上下文 {k} 是否含有能回答这个问题的信息？"}
_TARGET_ZH = {"reference answer": "参考答案", "answer": "回答"}


def _shown(target_kind: str, lang: str) -> str:
    """How a prompt in `lang` names the target kind ("reference answer", "answer")."""
    return _TARGET_ZH.get(target_kind, target_kind) if lang == "zh" else target_kind


def _target(question: str, target: str, target_kind: str, lang: str, instructions: dict[str, str],
            question_only: dict[str, str]) -> tuple[str, list[str]]:
    """The instruction and the tagged question (and target) for target_kind "reference answer", "answer" or
    "question" (then target is empty: the question alone)."""
    if target_kind == "question":
        return question_only[lang], [tagged("question", question)]
    return instructions[lang].format(target=_shown(target_kind, lang)), [
        tagged("question", question), tagged("reference" if target_kind.startswith("reference") else "answer", target)]


def judge_chunk(question: str, target: str, target_kind: str, contexts: list[str], k: int,
                lang: str | None = None) -> Prompt:
    """Is context k (1-based) of `contexts` useful (see judge_chunks)? One word back. Cut into three steps
    (`splits`): the contexts, which every graded call on the sample shares (the prefix of verify_statement too); the
    instruction, question, target and reminder, which the sample's chunks share; and chunk k shown again with the
    question about it."""
    if not 1 <= k <= len(contexts):
        raise ValueError(f"judge_chunk: no context {k} among {len(contexts)}")
    lang = lang or detect(" ".join((question, target)))
    instruction, data = _target(question, target, target_kind, lang, ONE, ONE_QUESTION_ONLY)
    shared = contexts_block(contexts, lang) + "\n\n"
    sample = "\n".join([instruction, "", *data, "", REMINDER[lang], "", ""])
    ask = (ASK_QUESTION_ONLY[lang].format(k=k) if target_kind == "question"
           else ASK[lang].format(k=k, target=_shown(target_kind, lang)))
    item = "\n".join([tagged("context", contexts[k - 1], id=k), "", ask + (" " if lang == "en" else "") + ONE_WORD[lang]])
    return Prompt("judge_chunk", shared + sample + item, YES_NO_SYSTEMS[lang],
                  splits=(len(shared), len(shared) + len(sample)))


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
