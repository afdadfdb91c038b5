"""The canaries' items (run/canaries.py): obvious cases like the judge check's (run/judge_check_items.py), asked during
the run, in English and Chinese. Data only.

Per language, a context about a bridge that does not exist and statements it plainly states or plainly does not (a
contradiction, or an absurd detail it never mentions); and a question on the same bridge, its reference answer, and
chunks plainly useful for it or about something else. Each text holds the bridge's {name} and the {year} it was
finished, drawn for the run (canaries.NAMES and canaries.YEARS): so the canaries of a run on other data are other
prompts, which the judge cache cannot answer from an earlier run, while the same run again (a re-run, a resume)
draws the same ones. The unsupported statements and the irrelevant chunks share few words with the context (the
reference), so the fake judge's word-overlap heuristic separates them too; a real judge needs no such help.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CanaryTexts:
    """A family's canary texts in one language: the question, what the items are judged against (statements: the
    context; chunks: the reference answer), the yes items (supported statements, relevant chunks) and the no items."""

    question: str
    given: str
    yes: tuple[str, ...]
    no: tuple[str, ...]


STATEMENTS: dict[str, CanaryTexts] = {
    "en": CanaryTexts(
        question="What is the {name} Bridge?",
        given=("The {name} Bridge is a stone bridge in the town of Eldmoor. It was finished in {year} after six years "
               "of work. The bridge is 140 metres long and has seven arches. It was built by the engineer Clara "
               "Hollis. Thousands of people cross the bridge on foot every day."),
        yes=(
            "The {name} Bridge was finished in {year}.",
            "The {name} Bridge is a stone bridge.",
            "The {name} Bridge is in the town of Eldmoor.",
            "The {name} Bridge is 140 metres long.",
            "The {name} Bridge has seven arches.",
            "The engineer Clara Hollis built the {name} Bridge.",
            "Thousands of people cross the {name} Bridge on foot every day.",
        ),
        no=(
            "The {name} Bridge is located in Tokyo, Japan.",
            "The {name} Bridge is made entirely of glass and plastic.",
            "The {name} Bridge is more than ninety kilometres long.",
            "A famous pop singer designed the {name} Bridge last spring.",
            "Nobody has ever walked across the {name} Bridge.",
            "The {name} Bridge has a swimming pool and a cinema on top.",
            "Tickets to cross the {name} Bridge cost nine thousand dollars.",
        ),
    ),
    "zh": CanaryTexts(
        question="{name}桥是什么？",
        given=("{name}桥是埃尔德镇的一座石桥，于{year}年建成，修建历时六年。桥长140米，共有七个桥拱。它由工程师林清和"
               "主持建造。每天有数千人步行过桥。"),
        yes=(
            "{name}桥于{year}年建成。",
            "{name}桥是一座石桥。",
            "{name}桥位于埃尔德镇。",
            "{name}桥长140米。",
            "{name}桥共有七个桥拱。",
            "{name}桥由工程师林清和主持建造。",
            "每天有数千人步行经过{name}桥。",
        ),
        no=(
            "{name}桥位于日本东京。",
            "{name}桥通体由黄金铸造。",
            "{name}桥长达九十公里。",
            "一位流行歌手去年设计了{name}桥。",
            "{name}桥顶上有游泳池和电影院。",
            "过{name}桥的门票要九千美元。",
            "{name}桥每年冬天都会漂到海上。",
        ),
    ),
}

CHUNKS: dict[str, CanaryTexts] = {
    "en": CanaryTexts(
        question="When was the {name} Bridge finished?",
        given="The {name} Bridge was finished in {year}.",
        yes=(
            "The {name} Bridge, a stone bridge with seven arches, was finished in {year}.",
            "Work on the {name} Bridge took six years, and the bridge was finished in {year}.",
            "Finished in {year}, the {name} Bridge still carries people across the river.",
            "The town of Eldmoor celebrated when the {name} Bridge was finished in {year}.",
            "In {year} the builders finished the {name} Bridge after six years of work.",
        ),
        no=(
            "The Amazon is the largest rainforest on Earth and home to countless species.",
            "Mozart composed more than six hundred works, among them symphonies and operas.",
            "A chess board has sixty-four squares arranged in eight rows.",
            "Honey bees tell each other where flowers are with a waggle dance.",
            "Penguins live mostly in the Southern Hemisphere and cannot fly.",
            "A standard piano keyboard has eighty-eight black and white keys.",
            "Bread dough rises because yeast gives off carbon dioxide.",
        ),
    ),
    "zh": CanaryTexts(
        question="{name}桥是哪一年建成的？",
        given="{name}桥于{year}年建成。",
        yes=(
            "{name}桥是一座有七个桥拱的石桥，于{year}年建成。",
            "{name}桥修建历时六年，于{year}年建成。",
            "{name}桥于{year}年建成，至今仍供行人过河。",
            "{year}年{name}桥建成时，埃尔德镇举行了庆祝。",
            "经过六年施工，{name}桥终于在{year}年建成。",
        ),
        no=(
            "大熊猫主要生活于四川山区，以竹子为食。",
            "莫扎特一生创作了六百多部作品，包括交响曲和歌剧。",
            "国际象棋棋盘共有六十四个格子，排成八行八列。",
            "蜜蜂用摇摆舞告诉同伴花朵所处方位。",
            "企鹅大多生活在南半球，不会飞。",
            "标准钢琴键盘共有八十八个黑白琴键。",
            "面包面团发酵时，酵母会释放二氧化碳。",
        ),
    ),
}

# the bridge's name, drawn for each run: a first, a middle and a last part (English), two characters (Chinese)
NAME_PARTS: dict[str, tuple[tuple[str, ...], ...]] = {
    "en": (("Ar", "Bel", "Cal", "Dor", "El", "Fen", "Gal", "Hal", "Il", "Jar", "Kel", "Lor", "Mor", "Nor", "Or",
            "Pel", "Quil", "Ros", "Sel", "Tor", "Ul", "Ver", "Wen", "Yar", "Zel"),
           ("a", "e", "i", "o", "u", "an", "en", "or"),
           ("dell", "mere", "ford", "wick", "holt", "stow", "burn", "vale", "thorn", "by")),
    "zh": (("澜", "曦", "翠", "屿", "枫", "霁", "琮", "岚", "璟", "湄", "棠", "漪", "昀", "珂", "蔚", "芷", "筠", "沅",
            "琰", "岫"),) * 2,
}
YEARS = (1820, 1900)  # the year it was finished: from the first, before the second
