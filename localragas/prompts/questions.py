"""Generate the questions an answer would answer (answer relevancy), and flag noncommittal answers."""
from __future__ import annotations

from ..outputs import N_QUESTIONS
from .base import Prompt, tagged

INSTRUCTION = f"""Write {N_QUESTIONS} different questions that the answer below would be a direct reply to.
Each question must be one short sentence a user might ask, based only on the answer.
Also say whether the answer is noncommittal: true if it is evasive, vague or refuses to answer (for example "I don't know" or "I'm not sure"), false otherwise.

Example answer: "Albert Einstein was born in Germany."
Example reply: {{"questions": ["Where was Albert Einstein born?", "In which country was Einstein born?", "What is Albert Einstein's country of birth?"], "noncommittal": false}}
"""


def generate_questions(answer: str) -> Prompt:
    user = "\n".join([INSTRUCTION, tagged("answer", answer), '\nReply as {"questions": [...], "noncommittal": true or false}.'])
    return Prompt("generate_questions", user)
