"""The judge check's items (run/judge_check.py): obvious cases a judge that can judge never gets wrong, in English and
Chinese. Data only.

Per language, one short context and statements it plainly supports or plainly does not (a contradiction, or a
detail it never mentions that is false anyway, so a judge that leans on what it knows of the world cannot call it
supported either), asked as faithfulness and context recall ask a statement (verify_statement, verify_statements);
and one question with its reference answer and chunks that plainly are useful for it or are about something else,
asked as context precision asks a chunk (judge_chunk, judge_chunks). One context (one question) per language and
family: the calls share one prompt prefix, which an in-process judge evaluates once.

The check asks each side's items in their listed order, the two sides mixed in the order run/judge_check.py sets
(STATEMENT_ORDER, CHUNK_ORDER: no answer by position alone passes it). The unsupported statements and
the irrelevant chunks share few words with the context (the reference), so the fake judge's word-overlap heuristic
separates them too; a real judge needs no such help.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StatementItems:
    """A context and statements about it, each with whether the context supports it; the question the statements
    answer."""

    question: str
    context: str
    statements: tuple[tuple[str, bool], ...]  # (statement, supported)


@dataclass(frozen=True)
class ChunkItems:
    """A question, its reference answer and retrieved chunks, each with whether it is useful for the answer."""

    question: str
    reference: str
    chunks: tuple[tuple[str, bool], ...]  # (chunk, relevant)


STATEMENTS: dict[str, StatementItems] = {
    "en": StatementItems(
        question="What is the Eiffel Tower?",
        context=("The Eiffel Tower is an iron tower in Paris, France. It was completed in 1889 for the World's Fair. "
                 "The tower is about 330 metres tall. It was designed by the company of the engineer Gustave Eiffel. "
                 "Millions of people visit the tower every year."),
        statements=(
            ("The Eiffel Tower was completed in 1889.", True),
            ("The Eiffel Tower is located in Berlin, Germany.", False),
            ("The Eiffel Tower is in Paris.", True),
            ("The Eiffel Tower is built entirely of wood and glass.", False),
            ("The Eiffel Tower is about 330 metres tall.", True),
            ("The Eiffel Tower has a swimming pool on its roof.", False),
            ("The company of Gustave Eiffel designed the tower.", True),
            ("Gustave Eiffel was born in London in 1950.", False),
            ("Millions of people visit the Eiffel Tower every year.", True),
            ("Tickets for the Eiffel Tower cost five thousand dollars.", False),
            ("The Eiffel Tower is made of iron.", True),
            ("The Eiffel Tower is more than two kilometres high.", False),
            ("The Eiffel Tower was completed for the World's Fair.", True),
            ("Nobody has visited the Eiffel Tower since it opened.", False),
        ),
    ),
    "zh": StatementItems(
        question="故宫是什么？",
        context=("故宫位于北京市中心，是明清两代的皇家宫殿。它始建于1406年，1420年建成。故宫占地约72万平方米，"
                 "有大小宫殿七十多座。1925年起，故宫成为博物馆，向公众开放。"),
        statements=(
            ("故宫位于北京。", True),
            ("故宫位于上海浦东新区。", False),
            ("故宫是明清两代的皇家宫殿。", True),
            ("故宫里有一个水上乐园和过山车。", False),
            ("故宫于1420年建成。", True),
            ("故宫由一位意大利建筑师设计。", False),
            ("故宫占地约72万平方米。", True),
            ("故宫的门票每张售价一千美元。", False),
            ("故宫有七十多座宫殿。", True),
            ("故宫是一座现代玻璃摩天楼。", False),
            ("故宫从1925年起成为博物馆。", True),
            ("故宫每年冬季关闭整整六个月。", False),
            ("故宫始建于1406年。", True),
            ("故宫的屋顶上有一个停机坪。", False),
        ),
    ),
}

CHUNKS: dict[str, ChunkItems] = {
    "en": ChunkItems(
        question="At what temperature does water boil at sea level?",
        reference="At sea level, water boils at 100 degrees Celsius.",
        chunks=(
            ("At sea level, pure water boils at 100 degrees Celsius (212 degrees Fahrenheit).", True),
            ("The Amazon is the largest rainforest on Earth and home to countless species.", False),
            ("Water reaches its boiling point of 100 degrees Celsius under normal sea-level pressure.", True),
            ("Mozart composed more than six hundred works, among them symphonies and operas.", False),
            ("When heated to 100 degrees Celsius at sea level, water starts to boil and turns into steam.", True),
            ("A chess board has sixty-four squares arranged in eight rows.", False),
            ("Water boils at a lower temperature in the mountains; at sea level it boils at 100 degrees Celsius.",
             True),
            ("Honey bees tell each other where flowers are with a waggle dance.", False),
            ("A standard piano keyboard has eighty-eight black and white keys.", False),
        ),
    ),
    "zh": ChunkItems(
        question="在海平面，水的沸点是多少摄氏度？",
        reference="在海平面，水的沸点是100摄氏度。",
        chunks=(
            ("在标准大气压下，也就是海平面上，水的沸点是100摄氏度。", True),
            ("大熊猫主要生活于四川山区，以竹子为食。", False),
            ("水加热到100摄氏度时开始沸腾，这是海平面上水的沸点。", True),
            ("莫扎特一生创作了六百多部作品，包括交响曲和歌剧。", False),
            ("海拔越高，水的沸点越低；在海平面，水在100摄氏度沸腾。", True),
            ("国际象棋棋盘共有六十四个格子，排成八行八列。", False),
            ("在海平面的气压下，纯水的沸点为100摄氏度。", True),
            ("蜜蜂用摇摆舞告诉同伴花朵所处方位。", False),
            ("标准钢琴键盘共有八十八个黑白琴键。", False),
        ),
    ),
}
