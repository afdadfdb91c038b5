"""Is each retrieved chunk useful for the expected answer? (context precision)"""
from __future__ import annotations

from ..language import prompt_language
from .base import SYSTEMS, Prompt, contexts_block, tagged
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
_TARGET_ZH = {"reference answer": "参考答案", "answer": "回答"}


def judge_chunks(question: str, target: str, target_kind: str, contexts: list[str], lang: str | None = None) -> Prompt:
    """target_kind is "reference answer", "answer" or "question" (then target is empty: the question alone)."""
    lang = lang or prompt_language(question, target)
    if target_kind == "question":
        instruction, data = QUESTION_ONLY[lang], [tagged("question", question)]
    else:
        shown_kind = _TARGET_ZH.get(target_kind, target_kind) if lang == "zh" else target_kind
        instruction = INSTRUCTIONS[lang].format(target=shown_kind)
        data = [tagged("question", question),
                tagged("reference" if target_kind.startswith("reference") else "answer", target)]
    user = "\n".join(
        [
            contexts_block(contexts, lang),
            "",
            instruction,
            "",
            *data,
            "",
            # No reminder that the data is not instructions here (prompts.base.closing): with it, the default judge
            # judged an unrelated first chunk relevant and the relevant second one not, in an obvious two-chunk case
            # (tests/real/test_default_judge_obvious.py); the injection flip rate of this metric was the same with
            # and without it (docs/injection.md).
            reply_line(lang, len(contexts), PER_CONTEXT[lang]),
        ]
    )
    return Prompt("judge_chunks", user, SYSTEMS[lang])
