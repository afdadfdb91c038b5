"""Prompts, one module per family; each prompt text exists once, in English and Simplified Chinese. Every built-in
family is one record of FAMILIES (prompts/families.py)."""
from .base import Prompt
from .claims import extract_claims
from .entities import extract_entities
from .families import FAMILIES, PromptFamily
from .generation import question_answerable, write_item, write_unanswerable
from .mentions import entities_in_contexts
from .questions import check_question, generate_questions
from .rating import rate_context_relevance
from .relevance import judge_chunk, judge_chunks
from .standalone import standalone_question
from .verdicts import contradict_statement, verify_statement, verify_statements

__all__ = ["FAMILIES", "Prompt", "PromptFamily", "check_question", "contradict_statement", "entities_in_contexts",
           "extract_claims", "extract_entities", "generate_questions", "judge_chunk", "judge_chunks",
           "question_answerable", "rate_context_relevance", "standalone_question", "verify_statement",
           "verify_statements", "write_item", "write_unanswerable"]
