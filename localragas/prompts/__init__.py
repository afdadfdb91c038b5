"""Prompts, one module per family; each prompt text exists once."""
from .base import Prompt
from .claims import extract_claims
from .questions import generate_questions
from .relevance import judge_chunks
from .verdicts import verify_statements

__all__ = ["Prompt", "extract_claims", "generate_questions", "judge_chunks", "verify_statements"]
