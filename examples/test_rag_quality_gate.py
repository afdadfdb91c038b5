"""A RAG quality gate as an ordinary pytest test (the Python counterpart of the article's RagQualityGateTest).

The RAG system under test is a toy written for this example, so it runs anywhere without a model: an in-memory
help centre, TF-IDF retrieval of the top chunks and an extractive "generator" that answers with the retrieved
sentences closest to the question. Swap `ToyRag` for your own service; keep the test.

    pytest examples/test_rag_quality_gate.py                       # the default local judge (minutes on a CPU)
    pytest examples/test_rag_quality_gate.py --localragas-judge fake --localragas-embedder fake   # seconds

The fake judge and embedder score by word overlap: they check the plumbing, not the quality of the answers.
"""
from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from localragas import Sample, assert_gate

# --- the RAG system under test (a toy) ----------------------------------------------------------------------------

DOCUMENTS = {
    "refunds": "Refund policy. The refund window for annual plans is 30 days. The window starts on the purchase "
               "date. Monthly plans are not refundable, but they can be cancelled at any time. "
               "Refunds are paid to the original payment method within 5 business days.",
    "storage": "Storage limits. The storage limit of the free plan is 2 GB. "
               "The storage limit of the Pro plan is 100 GB per user. "
               "Attachments larger than 250 MB cannot be uploaded on any plan.",
    "offline": "Offline mode. The apps with offline mode are the desktop app and the mobile app. "
               "Notes edited offline are synced automatically when the device reconnects. "
               "The web app has no offline mode.",
    "security": "Two-factor authentication. Two-factor authentication is turned on under Settings, Security. "
                "The supported two-factor methods are authenticator apps and hardware security keys. "
                "SMS codes are not supported.",
    "export": "Data export. The export formats for notes are Markdown and PDF. "
              "Exports of workspaces larger than 1 GB are sent as a download link by email.",
    "team": "Team plan. The Team plan price is 8 dollars per user per month. The Team plan is billed annually. "
            "Team admins manage members and shared folders in the admin console.",
    "support": "Support hours. Chat support is available from 9:00 to 18:00 CET on weekdays. "
               "Pro and Team customers also get email support at weekends.",
}

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset("a an the of to in on for and or is are be by with as at it its this that from do does can "
                  "how what which when where who my i you your".split())


def _terms(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP]


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]


@dataclass
class RagResponse:
    answer: str
    contexts: list[str]


class ToyRag:
    """TF-IDF retrieval over one chunk per document, then an extractive answer from the retrieved sentences."""

    def __init__(self, documents: dict[str, str], top_k: int = 2):
        self.chunks = list(documents.values())
        self.top_k = top_k
        tfs = [Counter(_terms(c)) for c in self.chunks]
        df = Counter(t for tf in tfs for t in tf)
        self.idf = {t: math.log((1 + len(tfs)) / (1 + n)) + 1 for t, n in df.items()}
        self.vectors = [self._vector(tf) for tf in tfs]

    def _vector(self, tf: Counter) -> dict[str, float]:
        v = {t: n * self.idf.get(t, 0.0) for t, n in tf.items()}
        norm = math.sqrt(sum(x * x for x in v.values())) or 1.0
        return {t: x / norm for t, x in v.items()}

    def retrieve(self, question: str) -> list[str]:
        q = self._vector(Counter(_terms(question)))
        scores = [sum(w * vec.get(t, 0.0) for t, w in q.items()) for vec in self.vectors]
        ranked = sorted(range(len(self.chunks)), key=lambda i: -scores[i])
        return [self.chunks[i] for i in ranked[: self.top_k]]

    def generate(self, question: str, contexts: list[str]) -> str:
        """The retrieved sentences that share the most (IDF-weighted) terms with the question."""
        wanted = set(_terms(question))
        scored = []
        for sentence in (s for c in contexts for s in _sentences(c)):
            score = sum(self.idf.get(t, 0.0) for t in set(_terms(sentence)) & wanted)
            scored.append((score, sentence))
        scored.sort(key=lambda x: -x[0])
        if not scored or scored[0][0] == 0:
            return "I do not know: the help centre does not say."
        best = scored[0][0]
        return " ".join(s for score, s in scored[:2] if score >= 0.9 * best)

    def query(self, question: str) -> RagResponse:
        contexts = self.retrieve(question)
        return RagResponse(answer=self.generate(question, contexts), contexts=contexts)


# --- the test set and the quality gate ----------------------------------------------------------------------------

# The test questions with their reference answers (usually 50-200 of them), kept in a file beside the test.
CASES = Path(__file__).with_name("help_centre_cases.jsonl")
TEST_SET = [json.loads(line) for line in CASES.read_text(encoding="utf-8").splitlines() if line.strip()]

# The article's thresholds: localragas's defaults for a calibrated judge and for verdicts=json (docs/gate.md#thresholds);
# given here so that they hold for any judge (an uncalibrated one defaults to 0.50; localragas.toml can set them too).
QUALITY_GATE = {
    "faithfulness": 0.80,       # below: answers say things the contexts do not support (hallucination risk)
    "answer_relevancy": 0.75,   # below: answers drift off-topic
    "context_recall": 0.70,     # below: retrieval misses information
    "context_precision": 0.65,  # below: retrieval noise
}


@pytest.fixture(scope="module")
def rag_service() -> ToyRag:
    return ToyRag(DOCUMENTS)


def test_rag_quality_gate_passes(rag_service, evaluate):
    # Run the RAG system on every test question: its answer and retrieved contexts go into the sample.
    samples = []
    for case in TEST_SET:
        response = rag_service.query(case["question"])
        samples.append(Sample(id=case["id"], question=case["question"], answer=response.answer,
                              contexts=response.contexts, reference=case["reference"]))

    report = evaluate(samples, thresholds=QUALITY_GATE)

    # Fails with each metric below its threshold, its mean, and the worst samples with their evidence.
    assert_gate(report)
