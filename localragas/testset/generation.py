"""`localragas generate` as a library call: a test set written by the judge from your documents, every item checked
before it is kept.

    spec = GenerateSpec(["examples/docs"], size=20, judge="fake", embedder="fake")
    testset = generate_testset(spec)
    testset.write("testset.jsonl")   # and testset.jsonl.meta.json: kept and dropped counts per kind and reason

The documents are split into chunks (localragas.testset.documents). `size` items are planned over the kinds by `mix`
(largest remainder); each kind's candidates are its chunks in an order shuffled by `seed`:
- single: one chunk, a question on a specific fact and its reference;
- multi: a chunk and the chunk most similar to it by the embedder (of another document when one is similar enough,
  MIN_LINK_SIMILARITY), a question that needs both;
- abstract: up to ABSTRACT_CHUNKS consecutive chunks of one document, a broad question and a summary as reference;
- unanswerable: a question on a chunk's topic the documents do not answer; reference UNANSWERABLE_REFERENCE, no
  reference contexts.
A candidate is kept when its question copies no COPY_WORDS-word run of its chunks (CJK: COPY_CJK_CHARS characters;
else dropped "copied_wording"), is no near-duplicate of a kept question (cosine >= DUPLICATE_SIMILARITY: "duplicate"),
and, for the answerable kinds, its reference is supported by its chunks (the calibrated P(yes) of verify_statement >=
SUPPORT_THRESHOLD for each sentence, as faithfulness scores a claim; a judge without a calibration of
verify_statement: its raw P(yes) >= UNCALIBRATED_SUPPORT_THRESHOLD, as the gate's uncalibrated thresholds: else
"reference_unsupported"), a multi item's two facts (written first, one of each chunk) are each supported by a chunk
alone, one fact in each (the same threshold: else "not_linked", a question that does not draw on both chunks), and its
chunks answer its question (P(yes) of question_answerable >= ANSWERABLE_THRESHOLD, calibrated when the judge's map
has that family, else raw: "not_answerable"), and its reference answers its question (the same check with the
reference as the only context: "reference_not_an_answer": a reference the chunks support can still miss what the
question asks); an unanswerable question is dropped ("answerable") when its chunk
or one of the NEIGHBOURS chunks most similar to it, each shown alone, answers it with P(yes) >=
UNANSWERABLE_THRESHOLD. At most ATTEMPTS_PER_ITEM candidates per planned item (ATTEMPTS_BY_KIND for multi and
unanswerable) are tried; when kinds fall short, the shortfall is then filled from the further candidates of the
TOP_UP_KINDS that kept at least one item (spec.top_up). Greedy decoding and the seeded order make a run
deterministic; each candidate's outcome is appended to a checkpoint, so a killed run resumes. A judge, cache or
embedder error stops the run (the checkpoint stays): never an item kept unchecked.
"""
from __future__ import annotations

import hashlib
import json
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..core import paths
from ..judge_calls.generation import ANSWERABLE_FAMILY, FAMILIES
from ..judge_calls.verdicts import SUPPORT_FAMILY
from .documents import CHUNK_CHARS, Chunk, load_chunks
from .plan import DEFAULT_MIX, KINDS, parse_mix, plan
from ..core.errors import ConfigError
from ..data.language import check_language, detect

SUPPORT_THRESHOLD = 0.7  # calibrated P(yes) the reference's chunks support each of its sentences
UNCALIBRATED_SUPPORT_THRESHOLD = 0.5  # the same, a judge's raw P(yes) when no calibration of verify_statement applies
ANSWERABLE_THRESHOLD = 0.5  # P(yes) the chunks state the answer (calibrated when the judge's map has the family):
# an answerable kind is kept from here
UNANSWERABLE_THRESHOLD = 0.2  # the same P(yes), for one chunk alone: an unanswerable question is dropped from here
# (kept only when each chunk checked is judged at most 20% likely to answer it: a kept "not in the documents" that
# the documents answer teaches a RAG to refuse what it should answer)
DUPLICATE_SIMILARITY = 0.9  # cosine of two questions' embeddings from which the later one is a duplicate
MIN_LINK_SIMILARITY = 0.3  # a multi-chunk partner of another document is preferred from this similarity
NEAR_COPY_SIMILARITY = 0.98  # a partner this similar is the same text, not a link
COPY_WORDS = 8  # a question with a run of this many words of its chunks copies their wording
COPY_CJK_CHARS = 12  # the same for Chinese, in characters
ABSTRACT_CHUNKS = 3
NEIGHBOURS = 3
ATTEMPTS_PER_ITEM = 3
# the kinds whose checks drop most candidates get more tries (the default judge on examples/docs: 13 of 15 multi and
# 6 of 6 unanswerable candidates dropped with 3, most of them rightly by the hand check, docs/generate.md)
ATTEMPTS_BY_KIND = {"multi": 5, "unanswerable": 5}
# When kinds fall short of their plan, the set is topped up to `size` from the further candidates of these kinds, in
# this order, each only if it kept at least one item (the kinds the default judge keeps most of first; a kind whose
# every candidate was dropped would most likely drop more; never unanswerable: a set filled with "not in the
# documents" items rewards a RAG that refuses). GenerateSpec.top_up=False (--no-top-up) keeps the planned mix.
TOP_UP_KINDS = ("single", "abstract", "multi")
UNANSWERABLE_REFERENCE = {"en": "not in the documents", "zh": "文档中没有"}
REASONS = ("copied_wording", "duplicate", "reference_unsupported", "not_linked", "not_answerable",
           "reference_not_an_answer", "answerable", "no_linked_chunk")

_TOKEN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]|[^\W\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


def support_calibration(judging):
    """The run's calibration as generate applies it: its verify_statement and question_answerable maps, each unless
    the user's prompt override changed that family since the map was fitted (as an eval run decides,
    run/judging_context.py calibration_in_effect); None when the run is uncalibrated."""
    from ..prompts.overrides import template_hashes  # noqa: PLC0415
    from ..run.judging_context import calibration_for  # noqa: PLC0415

    return calibration_for(judging, {f: template_hashes([f], judging.prompts)
                                     for f in (SUPPORT_FAMILY, ANSWERABLE_FAMILY)})


def copied_run(question: str, texts: list[str]) -> int:
    """The longest run of consecutive tokens (words; CJK characters one each) of the question found in the texts
    (longest common substring over tokens)."""
    q = [t.lower() for t in _TOKEN.findall(question)]
    best = 0
    for text in texts:
        t = [x.lower() for x in _TOKEN.findall(text)]
        prev = [0] * (len(t) + 1)
        for a in q:
            cur = [0] * (len(t) + 1)
            for j, b in enumerate(t, 1):
                if a == b:
                    cur[j] = prev[j - 1] + 1
                    best = max(best, cur[j])
            prev = cur
    return best


def linked_facts(support, threshold: float) -> tuple[tuple[int, int], list[float]]:
    """Which chunk holds each of a multi item's two facts: (chunk of fact 1, chunk of fact 2) and their supports,
    support(fact, chunk) asked lazily. Fact 1 in chunk 1 and fact 2 in chunk 2 as asked, else the other way round (a
    small judge may take its facts from the contexts in the other order); both must reach the threshold, each in its
    own chunk. When neither order does, the order with the higher weaker support."""
    asked = [support(0, 0), support(1, 1)]
    if min(asked) >= threshold:
        return (0, 1), asked
    swapped = [support(0, 1), support(1, 0)]
    return ((1, 0), swapped) if min(swapped) > min(asked) else ((0, 1), asked)


@dataclass(frozen=True)
class GenerateSpec:
    """Everything one `generate` run depends on."""

    documents: list[Path]  # files or folders; a str is taken as a path
    size: int = 20
    mix: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_MIX))
    seed: int = 0
    language: str = "auto"  # auto: each item in its (first) chunk's language
    judge: Any = None  # a catalogue name, path, 'fake', BACKEND:MODEL, or a Judge; None: the default judge
    judge_options: dict[str, Any] = field(default_factory=dict)  # with a Judge, only calibration (as evaluate's)
    embedder: Any = None  # a name, folder, 'fake', or an Embedder; None: the default embedder
    cache: bool = True
    cache_dir: Path | None = None
    resume: bool = True  # a checkpoint under .localragas/runs, removed when the test set is written
    progress: bool | None = None
    chunk_chars: int = CHUNK_CHARS
    top_up: bool = True  # fill a kind's shortfall from TOP_UP_KINDS' further candidates, up to `size` items

    def __post_init__(self) -> None:
        object.__setattr__(self, "documents", [Path(p) for p in self.documents])
        object.__setattr__(self, "mix", parse_mix(self.mix))
        object.__setattr__(self, "language", check_language(self.language))
        if not isinstance(self.size, int) or self.size < 1:
            raise ConfigError(f"size must be a whole number >= 1, not {self.size!r}")


@dataclass
class Testset:
    """The kept rows (localragas's input format, answer and contexts empty) and the summary of the run."""

    rows: list[dict[str, Any]]
    summary: dict[str, Any]

    def write(self, out: str | Path) -> Path:
        """The rows as JSON Lines at `out` and the summary at `out`.meta.json (both written atomically)."""
        from ..core.atomic_write import write_atomic  # noqa: PLC0415

        out = Path(out)
        write_atomic(out, (json.dumps(r, ensure_ascii=False) + "\n" for r in self.rows))
        meta = summary_path(out)
        write_atomic(meta, json.dumps(self.summary, ensure_ascii=False, indent=2) + "\n")
        return meta


def summary_path(out: str | Path) -> Path:
    return Path(f"{out}.meta.json")


def attempts(kind: str) -> int:
    """Candidates tried per planned item of a kind."""
    return ATTEMPTS_BY_KIND.get(kind, ATTEMPTS_PER_ITEM)


class _Corpus:
    """The chunks, their embeddings and documents: partners for multi-chunk items, neighbours of a question."""

    def __init__(self, chunks: list[Chunk], embedder):
        self.chunks, self.embedder = chunks, embedder
        self.vectors = embedder.embed([c.text for c in chunks])
        self.documents: dict[str, list[int]] = {}
        for i, c in enumerate(chunks):
            self.documents.setdefault(c.document, []).append(i)

    def partner(self, i: int) -> int | None:
        """The chunk most similar to chunk i: of another document when one reaches MIN_LINK_SIMILARITY, else of any;
        never a near copy. None when there is no other chunk."""
        sims = self.vectors @ self.vectors[i]
        others = [j for j in range(len(self.chunks)) if j != i and sims[j] < NEAR_COPY_SIMILARITY]
        if not others:
            return None
        elsewhere = [j for j in others if self.chunks[j].document != self.chunks[i].document
                     and sims[j] >= MIN_LINK_SIMILARITY]
        return max(elsewhere or others, key=lambda j: (sims[j], -j))

    def nearest(self, vector: np.ndarray, n: int) -> list[int]:
        sims = self.vectors @ vector
        return sorted(range(len(self.chunks)), key=lambda j: (-sims[j], j))[:n]

    def candidates(self, kind: str, seed: int) -> list[list[int]]:
        """The chunk indices of each candidate of a kind, in the seeded order."""
        rng = random.Random(f"{seed}:{kind}")
        if kind == "abstract":
            windows = [ids[s:s + ABSTRACT_CHUNKS] for ids in self.documents.values()
                       for s in range(0, len(ids), ABSTRACT_CHUNKS)]
            rng.shuffle(windows)
            return windows
        order = list(range(len(self.chunks)))
        rng.shuffle(order)
        return [[i] for i in order]


class Generation:
    """One run of a spec: run() returns the Testset; finish() removes the checkpoint once it is written."""

    def __init__(self, spec: GenerateSpec):
        self.spec = spec
        self.checkpoint = None
        self.resumed = 0

    def run(self) -> "Testset":
        from ..judges import Judge  # noqa: PLC0415
        from ..run.judging_context import run_judging  # noqa: PLC0415

        spec = self.spec
        chunks = load_chunks(spec.documents, spec.chunk_chars)
        judging = run_judging(spec.judge, spec.judge_options)  # the run's; a Judge given is never changed
        try:
            with judging.cached(spec.cache, spec.cache_dir if spec.cache else None):
                return self._run(chunks, judging)
        finally:
            if self.checkpoint is not None:
                self.checkpoint.release()
            if not isinstance(spec.judge, Judge):
                judging.judge.close()

    def finish(self) -> None:
        if self.checkpoint is not None:
            self.checkpoint.remove()

    def _run(self, chunks: list[Chunk], judging) -> Testset:
        from ..run.checkpoint import RecordCheckpoint, run_key  # noqa: PLC0415
        from ..prompts.digest import prompts_digest  # noqa: PLC0415
        from ..judges.embeddings import CachedEmbedder, Embedder, get_embedder  # noqa: PLC0415
        from ..run.progress import progress_for  # noqa: PLC0415

        spec = self.spec
        embedder = spec.embedder if isinstance(spec.embedder, Embedder) else get_embedder(spec.embedder)
        if judging.cache is not None and not isinstance(embedder, CachedEmbedder):
            embedder = CachedEmbedder(embedder, judging.cache)
        digest = hashlib.sha256(json.dumps([[c.id, c.text] for c in chunks]).encode("utf-8")).hexdigest()
        done: dict[str, dict] = {}
        if spec.resume:
            key = run_key("generate", digest, spec.size, spec.mix, spec.seed, spec.language, judging.scoring_fingerprint,
                          embedder.describe(), spec.chunk_chars, prompts_digest(FAMILIES))
            self.checkpoint = RecordCheckpoint(paths.runs_dir() / f"generate-{key}.jsonl")
            self.checkpoint.lock()  # until run() ends: another live run of it is refused, not resumed
            done = self.checkpoint.load()
        corpus = _Corpus(chunks, embedder)
        wanted = plan(spec.size, spec.mix)
        state = _State(corpus, judging, embedder, spec.language)
        candidates = {kind: corpus.candidates(kind, spec.seed) for kind in KINDS}
        tried: Counter[str] = Counter()

        def fill(kind: str, goal: int, limit: int, bar) -> None:
            """Try the kind's next candidates, in their seeded order, until it keeps `goal` items or has tried
            `limit` (a candidate's index is its checkpoint key, so a top-up resumes like the first pass)."""
            while state.kept[kind] < goal and tried[kind] < min(limit, len(candidates[kind])):
                k = tried[kind]
                tried[kind] += 1
                key = f"{kind}/{k}"
                record = done.get(key)
                if record is not None:  # the checkpoint's name holds the chunks, every setting and the prompts
                    self.resumed += 1
                else:
                    record = state.attempt(kind, candidates[kind][k])
                    if self.checkpoint is not None:
                        self.checkpoint.append(key, record)
                if state.take(kind, record):
                    bar.advance(f"{kind}: {record['row']['id']}")

        with progress_for(spec.size, spec.progress, unit="items", verb="generating") as bar:
            for kind in KINDS:
                fill(kind, wanted[kind], wanted[kind] * attempts(kind), bar)
            if spec.top_up:
                for kind in TOP_UP_KINDS:
                    short = spec.size - sum(state.kept.values())
                    if short <= 0:
                        break
                    if not state.kept[kind]:
                        continue  # a kind the mix leaves out, or whose every candidate was dropped, does not fill it
                    before, rows_before = state.kept[kind], len(state.rows)
                    fill(kind, state.kept[kind] + short, (wanted[kind] + short) * attempts(kind), bar)
                    state.topped_up[kind] += state.kept[kind] - before
                    for row in state.rows[rows_before:]:
                        row["meta"]["topped_up"] = True  # beyond the kind's plan: a reader can tell the mix moved
        return Testset(state.rows, state.summary(spec, wanted, chunks, judging, embedder, self.resumed))


class _State:
    """The items kept so far (rows and question vectors, for duplicates) and the outcome of every candidate."""

    def __init__(self, corpus: _Corpus, judging, embedder, language: str):
        from ..run.judging_context import with_calibration  # noqa: PLC0415

        self.corpus, self.embedder, self.language = corpus, embedder, language
        self.calibration = support_calibration(judging)
        self.judging = with_calibration(judging, self.calibration)  # items asked with the calibration in effect
        self.calibrated = self.calibration is not None and self.calibration.covers(SUPPORT_FAMILY)
        self.support_threshold = SUPPORT_THRESHOLD if self.calibrated else UNCALIBRATED_SUPPORT_THRESHOLD
        self.answerable_calibrated = self.calibration is not None and self.calibration.covers(ANSWERABLE_FAMILY)
        self.rows: list[dict[str, Any]] = []
        self.vectors: list[np.ndarray] = []
        self.kept: Counter[str] = Counter()
        self.topped_up: Counter[str] = Counter()  # of `kept`, the items kept beyond the kind's plan
        self.dropped: dict[str, Counter[str]] = {k: Counter() for k in KINDS}
        self.dropped_items: list[dict[str, Any]] = []

    def _vector(self, question: str) -> np.ndarray:
        return self.embedder.embed([question])[0]

    def take(self, kind: str, record: dict[str, Any]) -> bool:
        """Count a candidate's outcome; True when it was kept."""
        if record["status"] == "kept":
            self.rows.append(record["row"])
            self.vectors.append(self._vector(record["row"]["question"]))
            self.kept[kind] += 1
            return True
        self.dropped[kind][record["reason"]] += 1
        self.dropped_items.append({k: record[k] for k in ("kind", "reason", "chunk_ids", "question", "checks")
                                   if k in record})
        return False

    def attempt(self, kind: str, indices: list[int]) -> dict[str, Any]:
        """One candidate written and checked: {"status": "kept", "row": …} or {"status": "dropped", "reason": …}."""
        from ..judge_calls.generation import (answerable, answerable_by_any, asking,  # noqa: PLC0415
                                              reference_support, write)
        from ..data.sample_record import content_id  # noqa: PLC0415

        corpus = self.corpus
        if kind == "multi":
            partner = corpus.partner(indices[0])
            if partner is None:
                return {"status": "dropped", "reason": "no_linked_chunk", "kind": kind,
                        "chunk_ids": [corpus.chunks[indices[0]].id]}
            indices = [indices[0], partner]
        chunks = [corpus.chunks[i] for i in indices]
        texts = [c.text for c in chunks]
        lang = self.language if self.language != "auto" else detect(texts[0])
        ctx = asking(self.judging, lang)
        got = write(ctx, kind, texts)
        question = " ".join(got.question.split())
        base = {"kind": kind, "chunk_ids": [c.id for c in chunks], "question": question}

        def dropped(reason: str, **checks: Any) -> dict[str, Any]:
            return {"status": "dropped", "reason": reason, **base, "checks": checks}

        run = copied_run(question, texts)
        if run >= (COPY_CJK_CHARS if lang == "zh" else COPY_WORDS):
            return dropped("copied_wording", copied_run=run)
        vector = self._vector(question)
        if self.vectors:
            sims = np.stack(self.vectors) @ vector
            best = int(np.argmax(sims))
            if sims[best] >= DUPLICATE_SIMILARITY:
                return dropped("duplicate", similarity=round(float(sims[best]), 4), of=self.rows[best]["id"])
        if kind == "unanswerable":
            near = list(dict.fromkeys([indices[0], *corpus.nearest(vector, NEIGHBOURS)]))
            p = answerable_by_any(ctx, question, [corpus.chunks[i].text for i in near])
            checks = {"answerable": round(p, 4), "checked_against": [corpus.chunks[i].id for i in near]}
            if p >= UNANSWERABLE_THRESHOLD:
                return dropped("answerable", **checks)
            reference, ref_chunks = UNANSWERABLE_REFERENCE[lang], []
        else:
            reference = " ".join(got.reference.split())
            support = reference_support(ctx, reference, texts)
            if support < self.support_threshold:
                return dropped("reference_unsupported", reference=reference, reference_support=round(support, 4))
            checks: dict[str, Any] = {"reference_support": round(support, 4)}
            if kind == "multi":  # each chunk must hold one of the facts alone, or the question does not need both
                facts = [" ".join(got.fact_1.split()), " ".join(got.fact_2.split())]
                checks["facts"] = facts
                order, values = linked_facts(lambda f, c: reference_support(ctx, facts[f], [texts[c]]),
                                             self.support_threshold)
                checks["fact_support"] = [round(v, 4) for v in values]
                checks["fact_chunks"] = [chunks[c].id for c in order]
                if min(values) < self.support_threshold:
                    return dropped("not_linked", reference=reference, **checks)
            p = answerable(ctx, question, texts)
            checks["answerable"] = round(p, 4)
            if p < ANSWERABLE_THRESHOLD:
                return dropped("not_answerable", reference=reference, **checks)
            r = answerable(ctx, question, [reference])
            checks["reference_answers"] = round(r, 4)
            if r < ANSWERABLE_THRESHOLD:
                return dropped("reference_not_an_answer", reference=reference, **checks)
            ref_chunks = chunks
        row = {"id": content_id(question), "question": question, "answer": "", "contexts": [],
               "reference": reference, "reference_contexts": [c.text for c in ref_chunks],
               "reference_context_ids": [c.id for c in ref_chunks],
               "meta": {"kind": kind, "chunk_ids": base["chunk_ids"], "language": lang, **checks,
                        **({"warnings": ctx.warnings} if ctx.warnings else {})}}
        return {"status": "kept", **base, "row": row}

    def summary(self, spec: GenerateSpec, wanted: dict[str, int], chunks: list[Chunk], judging, embedder,
                resumed: int) -> dict[str, Any]:
        by_kind = {k: {"wanted": wanted[k], "kept": self.kept[k], "topped_up": self.topped_up[k],
                       "dropped": dict(sorted(self.dropped[k].items()))}
                   for k in KINDS}
        reasons = Counter()
        for c in self.dropped.values():
            reasons.update(c)
        return {
            "kept": sum(self.kept.values()), "dropped": sum(reasons.values()), "size": spec.size,
            "by_kind": by_kind, "dropped_by_reason": dict(sorted(reasons.items())),
            "topped_up": sum(self.topped_up.values()), "top_up": spec.top_up,
            "seed": spec.seed, "mix": spec.mix, "language": spec.language,
            "documents": [str(p) for p in spec.documents], "chunks": len(chunks),
            "documents_read": len({c.document for c in chunks}),
            "judge": judging.describe(), "judge_stats": judging.stats.as_dict(), "embedder": embedder.describe(),
            "resumed_candidates": resumed,
            "thresholds": {"support": self.support_threshold, "support_calibrated": self.calibrated,
                           "answerable": ANSWERABLE_THRESHOLD, "unanswerable": UNANSWERABLE_THRESHOLD,
                           "answerable_calibrated": self.answerable_calibrated,
                           "duplicate_similarity": DUPLICATE_SIMILARITY, "copy_words": COPY_WORDS,
                           "copy_cjk_chars": COPY_CJK_CHARS},
            "dropped_items": self.dropped_items,
        }


def generate_testset(spec: GenerateSpec) -> Testset:
    """Run a spec to its test set, as `localragas generate` does (without writing it); the checkpoint is removed."""
    run = Generation(spec)
    testset = run.run()
    run.finish()
    return testset


def summary_lines(summary: dict[str, Any]) -> list[str]:
    """The kept and dropped counts of a run, per kind and per reason, as printed by `localragas generate`."""
    def n(count: int, noun: str) -> str:
        return f"{count} {noun}{'' if count == 1 else 's'}"
    lines = [f"generate: kept {summary['kept']} of {summary['size']} wanted ({n(summary['dropped'], 'candidate')} "
             f"dropped; {n(summary['chunks'], 'chunk')} of {n(summary['documents_read'], 'document')})",
             f"  {'kind':<13} {'wanted':>6} {'kept':>5} {'dropped':>7}  reasons"]
    for kind, c in summary["by_kind"].items():
        reasons = ", ".join(f"{r} {n}" for r, n in c["dropped"].items())
        row = f"  {kind:<13} {c['wanted']:>6} {c['kept']:>5} {sum(c['dropped'].values()):>7}  {reasons}"
        lines.append(row.rstrip())
    if summary.get("topped_up"):
        filled = ", ".join(f"{k} {c['topped_up']}" for k, c in summary["by_kind"].items() if c.get("topped_up"))
        lines.append(f"  topped up: {summary['topped_up']} item(s) beyond the plan ({filled}), for the kinds that fell "
                     "short")
    if summary["dropped_by_reason"]:
        lines.append("  dropped by reason: " + ", ".join(f"{r} {n}" for r, n in summary["dropped_by_reason"].items()))
    return lines
