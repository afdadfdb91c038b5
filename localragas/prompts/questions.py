"""Generate the questions an answer would answer (answer relevancy), and flag noncommittal answers."""
from __future__ import annotations

from ..outputs import N_QUESTIONS
from .base import Prompt, tagged

INSTRUCTION = f"""Write {N_QUESTIONS} different questions that the answer below would be a direct reply to, based only on the answer.
First say whether the answer is noncommittal: true only if it is evasive, vague or refuses to answer (for example "I don't know" or "I'm not sure"); false if it states information.

Example answer: "Albert Einstein was born in Germany."
Example reply: {{"noncommittal": false, "questions": ["Where was Albert Einstein born?", "In which country was Einstein born?", "What is Albert Einstein's country of birth?"]}}
Example answer: "I don't know which country Albert Einstein was born in."
Example reply: {{"noncommittal": true, "questions": ["Where was Albert Einstein born?", "In which country was Einstein born?", "What is Albert Einstein's country of birth?"]}}
"""


def generate_questions(answer: str) -> Prompt:
    user = "\n".join([INSTRUCTION, tagged("answer", answer), '\nReply with the JSON object only, as in the examples.'])
    return Prompt("generate_questions", user)
