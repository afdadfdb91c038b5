"""Is each statement supported by the retrieved contexts? (faithfulness claims, context-recall statements; with
the reference or the answer as the only "context": factual and answer correctness, noise sensitivity)"""
from __future__ import annotations

from ..data.language import detect
from .base import ONE_WORD, SYSTEMS, YES_NO_SYSTEMS, Prompt, closing, contexts_block, numbered, tagged
from .support_examples import examples_block

INSTRUCTIONS = {
    "en": """Above are the retrieved contexts. For each numbered statement below, decide whether the contexts support it.
Answer "yes" only if the contexts state the statement or it follows directly from them.
Answer "no" if the contexts contradict it, or if it adds any detail (a number, date, name, property) the contexts do not give.
Do not use your own knowledge.""",
    "zh": """上面是检索到的上下文。对下面每条编号的陈述，判断上下文是否支持它。
只有当上下文说了这条陈述，或者它能从上下文直接推出时，才回答 "yes"。
如果上下文与它矛盾，或者它添加了上下文没有给出的任何细节（数字、日期、名称、属性），回答 "no"。
不要使用你自己的知识。""",
}
INSTRUCTION = INSTRUCTIONS["en"]
# The same test for a single statement, answered with one word (a graded verdict: judges/yes_no.py).
ONE = {
    "en": """Above are the retrieved contexts. Decide whether the contexts support the statement below.
Answer "yes" only if the contexts state the statement or it follows directly from them.
Answer "no" if the contexts contradict it, or if it adds any detail (a number, date, name, property) the contexts do not give.
Do not use your own knowledge.""",
    "zh": """上面是检索到的上下文。判断上下文是否支持下面这条陈述。
只有当上下文说了这条陈述，或者它能从上下文直接推出时，才回答 "yes"。
如果上下文与它矛盾，或者它添加了上下文没有给出的任何细节（数字、日期、名称、属性），回答 "no"。
不要使用你自己的知识。""",
}
# A second wording of the same test (`phrasings=2` of faithfulness and context recall: the two P(yes) averaged).
REWORDED = {
    "en": """Above are the retrieved contexts. Read the statement below and check it against them.
Could someone who has read only these contexts confirm that the statement is true? Answer "yes" if they could.
Answer "no" if the contexts say otherwise, or if any part of the statement (a number, date, name, property) is not in them.
Do not use your own knowledge.""",
    "zh": """上面是检索到的上下文。阅读下面这条陈述，并对照上下文核对它。
一个只读过这些上下文的人能否确认这条陈述是真的？如果能，回答 "yes"。
如果上下文的说法不同，或者陈述的任何部分（数字、日期、名称、属性）不在上下文中，回答 "no"。
不要使用你自己的知识。""",
}
# The opposite question, answered with one word (`question=both` of faithfulness and context recall): its P(yes)
# counts against the statement.
CONTRADICT = {
    "en": """Above are the retrieved contexts. Decide whether the contexts contradict the statement below.
Answer "yes" only if the contexts say something that cannot be true together with the statement (a different number, date, name or fact about the same thing).
Answer "no" if the contexts agree with it, or if they do not mention it.
Do not use your own knowledge.""",
    "zh": """上面是检索到的上下文。判断上下文是否与下面这条陈述矛盾。
只有当上下文所说的内容与这条陈述不可能同时成立（关于同一事物的数字、日期、名称或事实不同）时，才回答 "yes"。
如果上下文与它一致，或者上下文没有提到它，回答 "no"。
不要使用你自己的知识。""",
}

# Content-free statements (`baseline=content_free` of faithfulness and context recall): asked the support question
# against a sample's contexts, their P(yes) is the judge's leaning to say "yes" to those contexts whatever the
# statement, which each statement's P(yes) is then adjusted by (asking/ways.py; Zhao et al. 2021, "Calibrate before
# use"). Two, so that no one wording's own quirk is the baseline.
NULL_STATEMENTS = {"en": ("N/A", "It is so."), "zh": ("不适用", "是这样。")}

# What a statement is read with (`lead=preceding` of faithfulness and context recall): the sample's question and the
# sentences before it in its text, shown before the statement so that a short answer ("No.") or a pronoun reads as
# meant. Only the statement is judged.
LEAD_NOTE = {
    "en": "The statement is part of a longer text. What that text answers and its sentences before the statement are "
          "shown first, only to make clear what the statement means. Judge only the statement.",
    "zh": "这条陈述是一段较长文本的一部分。下面先列出该文本所回答的问题和它在这条陈述之前的句子，只是为了看清这条陈述的意思。只判断这条陈述。",
}


# "one verdict per context" in the reply line of a prompt whose items are the contexts themselves
PER_CONTEXT = {"en": "one per context, ", "zh": "每个上下文一个，"}


def reply_line(lang: str, n: int, per: str = "") -> str:
    """The reply format of a yes/no verdict prompt: exactly n verdicts in order (`per`: e.g. PER_CONTEXT[lang])."""
    if lang == "zh":
        return f'按 {{"verdicts": [{{"id": 1, "verdict": "yes" 或 "no"}}, ...]}} 的格式回复，恰好 {n} 个判断，{per}按顺序排列。'
    return f'Reply as {{"verdicts": [{{"id": 1, "verdict": "yes" or "no"}}, ...]}} with exactly {n} verdicts, {per}in order.'


def verdicts_prompt(name: str, instructions: dict[str, str], tag: str, items: list[str], contexts: list[str],
                    lang: str | None = None) -> Prompt:
    """A yes/no verdict per numbered item against the retrieved contexts (the contexts first: a shared prefix)."""
    lang = lang or detect(" ".join(items))
    user = "\n".join(
        [
            contexts_block(contexts, lang),
            "",
            instructions[lang],
            "",
            numbered(tag, items),
            "",
            closing(lang, reply_line(lang, len(items))),
        ]
    )
    return Prompt(name, user, SYSTEMS[lang])


def verify_statements(statements: list[str], contexts: list[str], lang: str | None = None) -> Prompt:
    return verdicts_prompt("verify_statements", INSTRUCTIONS, "statement", statements, contexts, lang)


def verify_statement(statement: str, contexts: list[str], lang: str | None = None, shots: int = 0,
                     lead: tuple[str, str] = ("", "")) -> Prompt:
    """Do the contexts support this one statement? One word back; the contexts first, so the calls for one sample's
    statements share a prefix, a step of its own (`splits`): the in-process judge evaluates it once per sample
    (judges/prefix_steps.py), a server that caches prompts likewise. `shots`: worked examples before the contexts;
    `lead`: the question and the text before the statement, shown with it (one_word_prompt)."""
    return one_word_prompt("verify_statement", ONE, statement, contexts, lang, shots, lead=lead)


def verify_statement_reworded(statement: str, contexts: list[str], lang: str | None = None, shots: int = 0,
                              lead: tuple[str, str] = ("", "")) -> Prompt:
    """verify_statement's question in other words (the same layout, the same examples)."""
    return one_word_prompt("verify_statement_reworded", REWORDED, statement, contexts, lang, shots, lead=lead)


def contradict_statement(statement: str, contexts: list[str], lang: str | None = None, shots: int = 0,
                         lead: tuple[str, str] = ("", "")) -> Prompt:
    """Do the contexts contradict this one statement? The layout of verify_statement (the contexts first)."""
    return one_word_prompt("contradict_statement", CONTRADICT, statement, contexts, lang, shots, contradiction=True,
                           lead=lead)


def one_word_prompt(name: str, instructions: dict[str, str], statement: str, contexts: list[str],
                    lang: str | None, shots: int = 0, contradiction: bool = False,
                    lead: tuple[str, str] = ("", "")) -> Prompt:
    """A one-word yes/no question about one statement against the contexts: the worked examples (`shots` of them,
    answered for the support question or the contradiction one; their prompt family is named NAME_Nshot), the
    contexts and the instructions first (the prefix the calls for one sample's statements share), then the statement
    and the reply line. `lead`: (question, preceding text) shown before the statement with LEAD_NOTE when either is
    set (after the shared prefix: the calls still share it); the plain layout when both are empty."""
    lang = lang or detect(statement)
    examples = [examples_block(lang, shots, contradiction), ""] if shots else []
    shared = "\n".join([*examples, contexts_block(contexts, lang), "", instructions[lang], "", ""])
    shown = [tagged(tag, text) for tag, text in zip(("question", "text_before"), lead) if text.strip()]
    read_with = [LEAD_NOTE[lang], *shown, ""] if shown else []
    item = "\n".join([*read_with, tagged("statement", statement), "", closing(lang, ONE_WORD[lang])])
    return Prompt(f"{name}_{shots}shot" if shots else name, shared + item, YES_NO_SYSTEMS[lang],
                  splits=(len(shared),))
