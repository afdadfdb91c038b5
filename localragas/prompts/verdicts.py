"""Is each statement supported by the retrieved contexts? (faithfulness claims, context-recall statements; with
the reference or the answer as the only "context": factual and answer correctness, noise sensitivity)"""
from __future__ import annotations

from ..data.language import detect
from .base import ONE_WORD, SYSTEMS, YES_NO_SYSTEMS, Prompt, closing, contexts_block, numbered, tagged

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

# A conversation's turn: what the user said up to it, shown as one more passage beside the retrieved contexts (a
# statement that only repeats the user is not a hallucination: docs/conversations.md, "Turn faithfulness: the rule").
USER_WORDS = {"en": "What the user said in this conversation:", "zh": "用户在本次对话中说过的话："}


def user_passage(said: list[str], lang: str) -> str:
    """The user's messages, in order, under the label that says whose words they are."""
    return "\n".join([USER_WORDS[lang], *(f"- {text.strip()}" for text in said)])


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


def verify_statement(statement: str, contexts: list[str], lang: str | None = None) -> Prompt:
    """Do the contexts support this one statement? One word back; the contexts first, so the calls for one sample's
    statements share a prefix, a step of its own (`splits`): the in-process judge evaluates it once per sample
    (judges/prefix_steps.py), a server that caches prompts likewise."""
    return one_word_prompt("verify_statement", ONE, statement, contexts, lang)


def contradict_statement(statement: str, contexts: list[str], lang: str | None = None) -> Prompt:
    """Do the contexts contradict this one statement? The layout of verify_statement (the contexts first)."""
    return one_word_prompt("contradict_statement", CONTRADICT, statement, contexts, lang)


def one_word_prompt(name: str, instructions: dict[str, str], statement: str, contexts: list[str],
                    lang: str | None) -> Prompt:
    """A one-word yes/no question about one statement against the contexts: the contexts and the instructions first
    (the prefix the calls for one sample's statements share), then the statement and the reply line."""
    lang = lang or detect(statement)
    shared = "\n".join([contexts_block(contexts, lang), "", instructions[lang], "", ""])
    item = "\n".join([tagged("statement", statement), "", closing(lang, ONE_WORD[lang])])
    return Prompt(name, shared + item, YES_NO_SYSTEMS[lang], splits=(len(shared),))
