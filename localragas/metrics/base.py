"""The Metric shape and the metric registry."""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

from .. import budget
from ..errors import ConfigError
from ..schema import MetricResult, Sample

if TYPE_CHECKING:
    from ..embeddings import Embedder
    from ..judges import Judge


class Metric(ABC):
    name: str
    needs: tuple[str, ...]  # sample fields the metric reads
    uses_embedder: bool = False
    higher_is_better: bool = True
    definition: str
    problem: str  # what a low score means for the RAG system (gate messages)
    prompts: tuple[str, ...] = ()  # prompt families it asks the judge (checked against the judge's context window)

    @abstractmethod
    def score(self, sample: Sample, judge: "Judge", embedder: "Embedder | None" = None) -> MetricResult:
        """Score one sample; return MetricResult.unscored_because(reason) when it cannot be scored."""


def claims_of(judge: "Judge", text: str, question: str | None = None, warnings: list[str] | None = None,
              what: str = "answer") -> list[str]:
    """Atomic claims of a text, asked of the judge (faithfulness: the answer; context recall: the reference).

    A long text is split into pieces, each asked separately (localragas.budget); each split is noted in `warnings`.
    """
    return budget.extract_all_claims(judge, text, question, [] if warnings is None else warnings, what)


def supported(judge: "Judge", statements: list[str], contexts: list[str], warnings: list[str] | None = None) -> list[bool]:
    """For each statement, do the contexts support it? No contexts: nothing is supported, no call.

    One call, or several when the contexts and statements do not fit the judge's context window (localragas.budget).
    """
    if not contexts:
        return [False] * len(statements)
    return budget.judge_statements(judge, statements, contexts, [] if warnings is None else warnings)


def with_warnings(result: MetricResult, warnings: list[str]) -> MetricResult:
    """The result with the splits and truncations that shaped it listed in its evidence (`warnings`)."""
    if warnings:
        result.evidence["warnings"] = list(warnings)
    return result


_REGISTRY: dict[str, Metric] = {}
ORDER = ("faithfulness", "answer_relevancy", "context_precision", "context_recall")


def register(metric: Metric) -> Metric:
    _REGISTRY[metric.name] = metric
    return metric


def all_metrics() -> dict[str, Metric]:
    from . import answer_relevancy, context_precision, context_recall, faithfulness  # noqa: F401,PLC0415

    return {n: _REGISTRY[n] for n in sorted(_REGISTRY, key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n))}


def get_metrics(names: list[str] | None = None) -> list[Metric]:
    known = all_metrics()
    if not names:
        return list(known.values())
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ConfigError(f"unknown metric(s) {', '.join(unknown)}; valid: {', '.join(known)}")
    return [known[n] for n in dict.fromkeys(names)]
