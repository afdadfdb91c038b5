"""A conversation's own questions (docs/conversations.md), each one word back (a graded verdict, judges/yes_no.py):
does the assistant's reply stay consistent with what the user said earlier (knowledge_retained, the knowledge
retention metric), and did the assistant's replies address one request of the user's (request_addressed, the
conversation completeness metric).

The conversation is data: its user and assistant messages in order, each in a <message> tag (as the standalone
question's, prompts/standalone.py) with its number in the conversation and its role (system and tool messages are not
shown: neither is what the user said nor a reply). A message, the reply and a request have the markers of both the
conversation's tags and the built-in ones defused, so none can close its tag or fake another message or request.
The conversation comes first, so the calls about one conversation share a prefix; a step of its own begins before
every user message that follows a reply (`splits`), so the in-process judge, scoring a conversation's turns in order,
evaluates each exchange once (judges/prefix_steps.py: a later turn's prompt starts with the earlier turns' exchanges).
"""
from __future__ import annotations

from collections.abc import Sequence

from ..data.conversation_models import Message
from ..data.language import detect
from .base import ONE_WORD, TAGS, YES_NO_SYSTEMS, Prompt, closing, neutralise, tagged
from .standalone import TAG as MESSAGE

# The system prompt of a one-word verdict, naming the conversation's tags as data too.
_TAGS_NAMED = {"en": ("<entity> and <statement> tags", "<entity>, <statement>, <message> and <request> tags"),
               "zh": ("<statement> 和 <entity> 标签", "<statement>、<entity>、<message> 和 <request> 标签")}
SYSTEMS = {lang: YES_NO_SYSTEMS[lang].replace(*_TAGS_NAMED[lang]) for lang in YES_NO_SYSTEMS}
REQUEST = "request"
CONVERSATION_TAGS = (*TAGS, MESSAGE, REQUEST)  # the markers defused in a conversation's data

RETAINED = {
    "en": """Above is a conversation between a user and an assistant (its messages in order, oldest first), then the assistant's reply to the user's last message (the answer).
Decide whether the reply stays consistent with what the user said in the conversation: facts about themselves, their preferences, constraints and details they gave.
Answer "yes" if the reply agrees with everything the user said, or does not touch on it.
Answer "no" if the reply contradicts something the user said, asks again for something the user already gave, or ignores a preference or constraint the user stated (for example, suggests meat to a user who said they are vegetarian, or a $900 option to a user whose budget is $500).
Asking the user to confirm or clarify something is not forgetting it. Judge only from the conversation.""",
    "zh": """上面是用户和助手之间的一段对话（消息按顺序排列，最早的在前），然后是助手对用户最后一条消息的回复（answer）。
判断这条回复是否与用户在对话中说过的内容保持一致：用户关于自己的事实、偏好、限制条件以及提供过的细节。
如果回复与用户说过的一切相符，或者没有涉及这些内容，回答 "yes"。
如果回复与用户说过的内容矛盾、再次询问用户已经提供过的信息，或者忽视了用户说明过的偏好或限制（例如向说过自己吃素的用户推荐肉，或向预算为 500 美元的用户推荐 900 美元的选项），回答 "no"。
请用户确认或澄清某件事不算遗忘。只根据对话做判断。""",
}
ADDRESSED = {
    "en": """Above is a conversation between a user and an assistant (its messages in order, oldest first). Below is one of the user's messages (the request, with the number of its message).
Decide whether the assistant's replies addressed it.
Answer "yes" if a reply gives what the message asks for: it answers the question, does the task, or takes in what the user told it; a message that asks for nothing (a greeting, thanks) is addressed when a reply acknowledges it.
Answer "no" if no reply gives it: the message was ignored, answered only in part, or answered with something else.
Judge only from the conversation.""",
    "zh": """上面是用户和助手之间的一段对话（消息按顺序排列，最早的在前）。下面是用户的一条消息（request，带有它在对话中的编号）。
判断助手的回复是否回应了这条消息。
如果有回复给出了这条消息所要的东西：回答了问题、完成了任务，或者接收了用户告诉它的内容，回答 "yes"；不要求任何东西的消息（问候、感谢）只要有回复回应了它，就算已回应。
如果没有回复给出它：这条消息被忽略、只回答了一部分，或者答非所问，回答 "no"。
只根据对话做判断。""",
}


def _tagged(tag: str, text: str, **attrs: object) -> str:
    """Conversation data in its tag, every conversation tag's markers defused (tagged defuses its own and TAGS)."""
    return tagged(tag, neutralise(text, CONVERSATION_TAGS), **attrs)


def transcript(messages: Sequence[Message], first: int = 1) -> tuple[str, tuple[int, ...]]:
    """The messages, each tagged with its number in the conversation (from `first`: the earlier ones left out) and its
    role; and the offsets where a new step begins: before each user message that follows a reply."""
    parts: list[str] = []
    splits: list[int] = []
    at = 0
    for i, m in enumerate(messages):
        if i and m.role == "user" and messages[i - 1].role == "assistant":
            splits.append(at)
        part = _tagged(MESSAGE, m.content, id=first + i, role=m.role) + "\n"
        parts.append(part)
        at += len(part)
    return "".join(parts), tuple(splits)


def _lang(texts: Sequence[str], lang: str | None) -> str:
    return lang or detect(" ".join(texts))


def knowledge_retained(earlier: Sequence[Message], message: str, reply: str, lang: str | None = None,
                       first: int = 1) -> Prompt:
    """Does the assistant's reply to the user's `message` stay consistent with what the user said: the earlier
    messages (user and assistant, numbered from `first`), the user's message, then the reply and the question."""
    lang = _lang([reply], lang)
    shown = [*earlier, Message(role="user", content=message)]
    head, splits = transcript(shown, first)
    user = "\n".join([head + _tagged("answer", reply), "", RETAINED[lang], "", closing(lang, ONE_WORD[lang])])
    return Prompt("knowledge_retained", user, SYSTEMS[lang], splits=splits)


def request_addressed(messages: Sequence[Message], request: str, number: int, lang: str | None = None,
                      first: int = 1) -> Prompt:
    """Did the assistant's replies address the user's message number `number` (`request`)? The conversation (numbered
    from `first`) and the instructions first, shared by the calls about its requests (a step of its own), then the
    request."""
    lang = _lang([m.content for m in messages[-1:]] or [request], lang)
    head, splits = transcript(messages, first)
    shared = "\n".join([head, ADDRESSED[lang], "", ""])
    item = "\n".join([_tagged(REQUEST, request, id=number), "", closing(lang, ONE_WORD[lang])])
    return Prompt("request_addressed", shared + item, SYSTEMS[lang], splits=(*splits, len(shared)))
