"""The ragas side of research.benchmarks.vs_ragas. Runs in .localragas/bench-venv (ragas never enters the project
venv), by path: it imports neither localragas nor research.

Started by bench_vs_ragas.py, not by hand. It reads a job file (samples, metric names, judge alias, embedder folder,
timeout), scores one (sample, metric) at a time with ragas 0.4.3 against the llama.cpp server and appends one JSON
line per run to the output file: seconds, judge tokens from the server's replies, calls, value, failures.
research/benchmarks/ragas_agreement.py drives it the same way (one job per labelled row).

Protocol with the parent, on this process's original stdout / stdin: after a run that failed, the child writes
`RESTART` and waits for `READY <server url>`, so that a generation abandoned by a timed-out client cannot slow the
next measurement. Everything else a library prints goes to stderr.
"""
from __future__ import annotations

import os

for _key, _value in {"RAGAS_DO_NOT_TRACK": "true", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}.items():
    os.environ.setdefault(_key, _value)

import argparse  # noqa: E402
import asyncio  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

warnings.filterwarnings("ignore", category=DeprecationWarning)  # ragas 0.4 flags its LangChain path as deprecated

from langchain_core.callbacks import BaseCallbackHandler  # noqa: E402
from langchain_core.exceptions import OutputParserException  # noqa: E402
from langchain_core.output_parsers import PydanticOutputParser  # noqa: E402
from langchain_huggingface import HuggingFaceEmbeddings  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402
from ragas.dataset_schema import SingleTurnSample  # noqa: E402
from ragas.embeddings import LangchainEmbeddingsWrapper  # noqa: E402
from ragas.llms import LangchainLLMWrapper  # noqa: E402
from ragas.metrics import (  # noqa: E402
    ContextRelevance,
    Faithfulness,
    LLMContextPrecisionWithoutReference,
    LLMContextPrecisionWithReference,
    LLMContextRecall,
    ResponseRelevancy,
)
from ragas.run_config import RunConfig  # noqa: E402


class JudgeUsage(BaseCallbackHandler):
    """Judge calls and tokens of the current run, read from the llama.cpp server's replies (`usage`)."""

    run_inline = True

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.calls = self.errors = self.truncated = 0
        self.prompt_tokens = self.completion_tokens = 0

    def on_llm_end(self, response, **kwargs: Any) -> None:
        self.calls += 1
        usage = (response.llm_output or {}).get("token_usage") or {}
        prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
        if prompt is None:  # fall back to the message's usage metadata
            meta = [getattr(g, "message", None) for gens in response.generations for g in gens]
            metas = [m.usage_metadata for m in meta if m is not None and getattr(m, "usage_metadata", None)]
            prompt = sum(m.get("input_tokens", 0) for m in metas)
            completion = sum(m.get("output_tokens", 0) for m in metas)
        self.prompt_tokens += prompt or 0
        self.completion_tokens += completion or 0
        for gens in response.generations:
            for g in gens:
                reason = (g.generation_info or {}).get("finish_reason")
                if reason is None and getattr(g, "message", None) is not None:
                    reason = g.message.response_metadata.get("finish_reason")
                self.truncated += reason == "length"

    def on_llm_error(self, error: BaseException, **kwargs: Any) -> None:
        self.errors += 1


class ParseFailures:
    """Counts judge replies that ragas's output parser rejected (each one makes ragas ask the judge to fix it)."""

    count = 0

    @classmethod
    def install(cls) -> None:
        original = PydanticOutputParser.parse

        def counting_parse(self, text: str):
            try:
                return original(self, text)
            except OutputParserException:
                cls.count += 1
                raise

        PydanticOutputParser.parse = counting_parse


def build_metrics(url: str, model: str, timeout: float, usage: JudgeUsage, embeddings) -> dict[str, Any]:
    """ragas's metrics as its docs set them up for a LangChain chat model; a fresh HTTP client each time."""
    chat = ChatOpenAI(base_url=f"{url}/v1", api_key="none", model=model, temperature=0, timeout=timeout,
                      callbacks=[usage])
    # bypass_n: the llama.cpp server ignores `n`, so answer relevancy's 3 questions must be 3 requests.
    llm = LangchainLLMWrapper(chat, bypass_n=True)
    metrics = {
        "faithfulness": Faithfulness(llm=llm),
        "answer_relevancy": ResponseRelevancy(llm=llm, embeddings=embeddings),
        "context_precision": LLMContextPrecisionWithReference(llm=llm),
        "context_precision_without_reference": LLMContextPrecisionWithoutReference(llm=llm),
        "context_recall": LLMContextRecall(llm=llm),
        # question-only judgement of the contexts (0/1/2 from two prompts, / 2): used by ragas_agreement.py
        # for retrieval-only rows (no answer, no reference), which ragas's context precision cannot score
        "context_relevance": ContextRelevance(llm=llm),
    }
    run_config = RunConfig(timeout=int(timeout))  # what ragas.evaluate() does before scoring
    for metric in metrics.values():
        metric.init(run_config)
    return metrics


def pick_metric(metrics: dict[str, Any], name: str, sample: dict) -> Any:
    if name == "context_precision" and not sample.get("reference"):
        return metrics["context_precision_without_reference"]
    return metrics[name]


async def score_one(metric: Any, sample: dict, timeout: float, usage: JudgeUsage) -> dict:
    """One (sample, metric) run the way ragas.evaluate() runs each of its jobs, timed on its own."""
    usage.reset()
    parse_before = ParseFailures.count
    started = time.perf_counter()
    value, error = None, None
    try:
        value = await metric.single_turn_ascore(SingleTurnSample(**sample), timeout=timeout)
    except asyncio.TimeoutError:
        error = f"TimeoutError: no result within {timeout:.0f} s"
    except Exception as e:  # noqa: BLE001 - a benchmark records failures and goes on
        error = f"{type(e).__name__}: {str(e)[:500]}"
    seconds = time.perf_counter() - started
    value = None if value is None else float(value)
    is_nan = value is not None and math.isnan(value)
    truncated = f"{usage.truncated} judge replies stopped at the token limit (finish_reason=length)"
    return {
        "seconds": round(seconds, 3), "calls": usage.calls + usage.errors,
        "prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
        "value": None if is_nan else value, "nan": is_nan, "parse_errors": ParseFailures.count - parse_before,
        "exception": error, "note": truncated if usage.truncated else None,
        "ragas_metric": type(metric).__name__, "failed_requests": usage.errors,
    }


def wait_for_restart(protocol) -> str:
    """Ask the parent to restart the server; returns its new URL."""
    protocol.write("RESTART\n")
    protocol.flush()
    reply = sys.stdin.readline().split()
    if not reply or reply[0] != "READY":
        raise SystemExit("the parent did not restart the server")
    return reply[1]


async def run(job: dict, out_path: Path, url: str, protocol) -> None:
    usage = JudgeUsage()
    embeddings = LangchainEmbeddingsWrapper(HuggingFaceEmbeddings(model_name=job["embedder"]))
    embeddings.embed_query("warm up")  # load the model now, not inside the first timed run
    metrics = build_metrics(url, job["model"], job["timeout"], usage, embeddings)
    runs = job["jobs"]
    with open(out_path, "a", encoding="utf-8") as out:
        for i, item in enumerate(runs, 1):
            metric = pick_metric(metrics, item["metric"], item["sample"])
            record = {"sample": item["key"], "metric": item["metric"],
                      **await score_one(metric, item["sample"], job["timeout"], usage)}
            out.write(json.dumps(record) + "\n")
            out.flush()
            value = "NaN" if record["value"] is None else f"{record['value']:.2f}"
            tokens = record["prompt_tokens"] + record["completion_tokens"]
            error = f", error: {record['exception'][:160]}" if record["exception"] else ""
            print(f"[ragas] {i}/{len(runs)} {item['metric']} {item['key']}: {record['seconds']:.1f} s, "
                  f"{tokens} tokens, {record['calls']} calls, value {value}, parse errors {record['parse_errors']}"
                  f"{error}", file=sys.stderr, flush=True)
            if record["exception"] and i < len(runs):
                url = wait_for_restart(protocol)
                metrics = build_metrics(url, job["model"], job["timeout"], usage, embeddings)


def main() -> None:
    p = argparse.ArgumentParser(description="ragas side of bench_vs_ragas.py (started by it, not by hand)")
    p.add_argument("--jobs", type=Path, required=True, help="job file written by bench_vs_ragas.py")
    p.add_argument("--out", type=Path, required=True, help="JSON Lines file the records are appended to")
    p.add_argument("--server", required=True, help="URL of the llama.cpp server")
    args = p.parse_args()
    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # whatever a library prints goes to stderr, not into the protocol
    sys.stdout = sys.stderr
    ParseFailures.install()
    asyncio.run(run(json.loads(args.jobs.read_text()), args.out, args.server, protocol))


if __name__ == "__main__":
    main()
