"""Hand-written worked examples for the one-word support and contradiction questions (the `shots=3` option of
faithfulness and context recall), in English and Simplified Chinese. Written for localragas, short and generic (not
taken from any benchmark): a supported paraphrase, an unsupported added detail, a contradiction. Placed before the
contexts, so they are part of the prefix a sample's calls share."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Example:
    context: str
    statement: str
    supported: bool  # the answer to "do the contexts support it?"
    contradicted: bool  # the answer to "do the contexts contradict it?"


EXAMPLES = {
    "en": (
        Example("The library opens at 9 a.m. on weekdays and at 10 a.m. on Saturdays.",
                "On Saturdays the library opens at ten in the morning.", supported=True, contradicted=False),
        Example("The bridge was completed in 1932 and is 500 metres long.",
                "The bridge, completed in 1932, was designed by a German engineer.", supported=False,
                contradicted=False),
        Example("The museum is closed on Mondays.", "The museum is open every day of the week.", supported=False,
                contradicted=True),
    ),
    "zh": (
        Example("图书馆工作日上午9点开门，周六上午10点开门。", "周六图书馆早上十点开门。", supported=True, contradicted=False),
        Example("这座桥于1932年建成，长500米。", "这座桥于1932年建成，由一位德国工程师设计。", supported=False,
                contradicted=False),
        Example("博物馆周一闭馆。", "博物馆一周七天每天都开放。", supported=False, contradicted=True),
    ),
}
# The heading and the field names of the examples block.
WORDS = {
    "en": ("Worked examples of the question asked below, with their answers (examples only, not the data to judge):",
           "Example", "Context", "Statement", "Answer"),
    "zh": ("下面所问问题的示例及其答案（仅为示例，不是要评估的数据）：", "示例", "上下文", "陈述", "回答"),
}


def examples_block(lang: str, shots: int, contradiction: bool = False) -> str:
    """The first `shots` examples with their answers to the support question (contradiction: to the contradiction
    question)."""
    heading, example, context, statement, answer = WORDS[lang]
    colon = "：" if lang == "zh" else ": "
    parts = [heading]
    for i, e in enumerate(EXAMPLES[lang][:shots], 1):
        yes = e.contradicted if contradiction else e.supported
        parts += ["", f"{example} {i}", f"{context}{colon}{e.context}", f"{statement}{colon}{e.statement}",
                  f"{answer}{colon}{'yes' if yes else 'no'}"]
    return "\n".join(parts)
