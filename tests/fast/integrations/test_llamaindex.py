"""A LlamaIndex query engine evaluated through llama-index-core's own in-memory parts, no network: a VectorStoreIndex
with MockEmbedding and MockLLM, asked by integrations.llamaindex.collect and by `run-rag --target file.py:engine`; its
Response read by evaluate() (data/framework_outputs.py)."""
from __future__ import annotations

import json
import textwrap

import pytest

from localragas import as_samples
from localragas.core.errors import ConfigError, DatasetError

from cli_helpers import cli, write_jsonl

pytest.importorskip("llama_index.core", reason="llama-index-core is not installed (pip install 'localragas[test]')")

WARRANTY, RETURNS = "The warranty lasts two years.", "Returns are accepted within 30 days."


@pytest.fixture
def engine(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from llama_index.core import Document, VectorStoreIndex
    from llama_index.core.embeddings import MockEmbedding
    from llama_index.core.llms import MockLLM

    index = VectorStoreIndex.from_documents([Document(text=WARRANTY), Document(text=RETURNS)],
                                            embed_model=MockEmbedding(embed_dim=8))
    return index.as_query_engine(llm=MockLLM(max_tokens=4), similarity_top_k=2)


def test_collect_asks_a_llamaindex_query_engine_and_keeps_its_source_nodes(engine):
    from localragas.integrations.llamaindex import collect

    [s] = collect(engine, [{"question": "How long is the warranty?", "reference": "Two years."}])
    assert s.answer == "text text text text"  # MockLLM's reply of max_tokens words
    assert sorted(s.contexts) == sorted([WARRANTY, RETURNS]) and len(s.retrieved_context_ids) == 2
    assert s.reference == "Two years."
    with pytest.raises(ConfigError, match=r"is a retriever: it gives documents but no answer"):
        collect(engine.retriever, ["q"])
    with pytest.raises(ConfigError, match=r"expected a LlamaIndex query engine \(index.as_query_engine\(\)\), got dict"):
        collect({}, ["q"])


def test_evaluate_reads_a_llamaindex_response_given_with_its_question(engine):
    response = engine.query("How long is the warranty?")
    [s] = as_samples([{"question": "How long is the warranty?", "answer": response}])
    assert s.answer == response.response and s.contexts == [n.node.get_content() for n in response.source_nodes]
    assert s.retrieved_context_ids == [n.node.node_id for n in response.source_nodes]
    with pytest.raises(DatasetError, match="row 1: a LlamaIndex Response holds no question"):
        as_samples([response])


def test_run_rag_asks_a_llamaindex_engine_named_by_target(engine, tmp_path):
    module = tmp_path / "li_pipeline.py"
    module.write_text(textwrap.dedent(f"""
        from llama_index.core import Document, VectorStoreIndex
        from llama_index.core.embeddings import MockEmbedding
        from llama_index.core.llms import MockLLM

        index = VectorStoreIndex.from_documents([Document(text={WARRANTY!r})], embed_model=MockEmbedding(embed_dim=8))
        engine = index.as_query_engine(llm=MockLLM(max_tokens=2))
        """), encoding="utf-8")
    testset = write_jsonl(tmp_path / "testset.jsonl", [{"question": "How long is the warranty?"}])
    filled = tmp_path / "filled.jsonl"
    r = cli("run-rag", testset, "--target", f"{module}:engine", "--out", filled, "--no-progress")
    assert r.exit_code == 0 and "1 of 1 rows answered" in r.output, r.output
    [row] = [json.loads(line) for line in filled.read_text().splitlines()]
    assert row["answer"] == "text text" and row["contexts"] == [WARRANTY]


def test_a_streaming_engines_response_is_read_to_its_end(engine):
    from llama_index.core.llms import MockLLM
    from llama_index.core.query_engine import RetrieverQueryEngine

    from localragas.integrations.llamaindex import collect

    streaming = RetrieverQueryEngine.from_args(engine.retriever, llm=MockLLM(max_tokens=4), streaming=True)
    assert type(streaming.query("q")).__name__ == "StreamingResponse"
    [s] = collect(streaming, ["How long is the warranty?"])
    assert s.answer == "text text text text" and sorted(s.contexts) == sorted([WARRANTY, RETURNS])
