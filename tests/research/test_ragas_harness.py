"""research.benchmarks.ragas_harness, what vs_ragas and ragas_agreement share, without ragas or a model: both (and
backends) import it and not each other, their --help works, and its helpers that need no bench venv, server or model
behave."""
from __future__ import annotations

import importlib
import inspect
import socket
import sys
from pathlib import Path

import pytest

from research.benchmarks import ragas_harness as harness


@pytest.mark.parametrize("name", ["vs_ragas", "ragas_agreement", "backends"])
def test_the_scripts_use_the_harness_and_not_each_other(name):
    module = importlib.import_module(f"research.benchmarks.{name}")
    source = inspect.getsource(module)
    assert all(other not in source for other in ("import vs_ragas", "import ragas_agreement", "vs_ragas import",
                                                 "ragas_agreement import"))
    shared = {"vs_ragas": ("LlamaServer", "drive_child", "ensure_bench_venv", "resolve_judge", "on_sigterm"),
              "ragas_agreement": (), "backends": ("free_port",)}[name]
    assert all(getattr(module, n) is getattr(harness, n) for n in shared)
    assert name != "ragas_agreement" or module.harness is harness


@pytest.mark.parametrize("name", ["vs_ragas", "ragas_agreement", "backends"])
def test_help(name, monkeypatch, capsys):
    module = importlib.import_module(f"research.benchmarks.{name}")
    monkeypatch.setattr(sys, "argv", [f"{name}.py", "--help"])
    with pytest.raises(SystemExit) as e:
        module.parse_args(["--help"]) if hasattr(module, "parse_args") else module.main()
    assert e.value.code == 0 and capsys.readouterr().out.startswith("usage:")


def test_a_free_port_is_a_loopback_port_nobody_holds():
    port = harness.free_port()
    assert 0 < port < 65536
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))


def test_the_server_command_serves_the_gguf_with_its_own_chat_template(tmp_path):
    server = harness.LlamaServer(Path("py"), Path("m.gguf"), "judge", 8192, 2, tmp_path / "server.log")
    assert server.command() == ["py", "-m", "llama_cpp.server", "--model", "m.gguf", "--model_alias", "judge",
                                "--host", "127.0.0.1", "--port", "0", "--n_ctx", "8192", "--n_threads", "2"]
    assert server.url == "http://127.0.0.1:0"


def test_the_child_environment_is_offline_and_untracked(monkeypatch):
    monkeypatch.setenv("SOMETHING", "kept")
    env = harness.child_env()
    assert env["SOMETHING"] == "kept" and env["HF_HUB_OFFLINE"] == env["TRANSFORMERS_OFFLINE"] == "1"
    assert env["RAGAS_DO_NOT_TRACK"] == "true"


def test_a_missing_bench_venv_is_built_not_reused(tmp_path):
    assert harness.venv_python(tmp_path) == tmp_path / "bin" / "python"
    assert harness.probe_bench_venv(tmp_path / "none") is None


def test_a_judge_is_a_gguf_path_or_a_catalogue_name(tmp_path):
    p = tmp_path / "own-judge.gguf"
    p.write_bytes(b"GGUF")
    assert harness.resolve_judge(str(p)) == (p, "own-judge")
    with pytest.raises(SystemExit, match="neither a catalogue judge nor a GGUF file"):
        harness.resolve_judge(str(tmp_path / "missing.gguf"))


def test_the_child_is_the_file_beside_the_harness_and_imports_nothing_of_the_checkout():
    source = harness.CHILD_SCRIPT.read_text()  # it runs by path in the bench venv, where neither is installed
    assert harness.CHILD_SCRIPT.parent == Path(harness.__file__).parent
    imports = [line.split()[1] for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert imports and not [m for m in imports if m.split(".")[0] in ("localragas", "research")]


def test_the_child_asks_for_a_restart_and_is_told_the_server_url(tmp_path, monkeypatch):
    """The protocol with the ragas child: RESTART on its stdout restarts the server, READY URL answers on its
    stdin; a failing child stops the run."""
    child = tmp_path / "child.py"
    child.write_text(
        "import argparse, sys\n"
        "p = argparse.ArgumentParser(); [p.add_argument(a) for a in ('--jobs', '--out', '--server')]\n"
        "a = p.parse_args()\n"
        "print('RESTART', flush=True)\n"
        "ready = sys.stdin.readline().strip()\n"
        "open(a.out, 'w').write(a.jobs + ' ' + a.server + ' ' + ready)\n"
        "sys.exit(int(open(a.jobs).read()))\n")
    monkeypatch.setattr(harness, "CHILD_SCRIPT", child)

    class Server:
        url, restarts = "http://127.0.0.1:1", 0

        def restart(self):
            self.restarts += 1
            self.url = "http://127.0.0.1:2"

    jobs, out, server = tmp_path / "jobs.json", tmp_path / "out.jsonl", Server()
    jobs.write_text("0")
    harness.drive_child(Path(sys.executable), server, jobs, out)
    assert server.restarts == 1
    assert out.read_text() == f"{jobs} http://127.0.0.1:1 READY http://127.0.0.1:2"
    jobs.write_text("3")
    with pytest.raises(SystemExit, match="the ragas child failed with exit code 3"):
        harness.drive_child(Path(sys.executable), Server(), jobs, out)


def test_the_tokens_the_server_evaluated_are_read_from_its_timings_after_the_run_began(tmp_path):
    from research.benchmarks import vs_ragas

    log = tmp_path / "server.log"
    earlier = "llama_perf_context_print: prompt eval time =  10.00 ms /   999 tokens (  0.01 ms per token)\n"
    run = ("Llama.generate: 120 prefix-match hit, remaining 30 prompt tokens to eval\n"
           "llama_perf_context_print: prompt eval time =  50.12 ms /    30 tokens (  1.67 ms per token)\n"
           "llama_perf_context_print:        eval time = 100.00 ms /     9 runs   ( 11.11 ms per token)\n"
           "llama_perf_context_print: prompt eval time = 210.00 ms /   150 tokens (  1.40 ms per token)\n"
           "llama_perf_context_print:        eval time =  20.00 ms /     2 runs   ( 10.00 ms per token)\n")
    log.write_text(earlier + run)
    got = vs_ragas.server_evaluated(log, len(earlier.encode()))
    assert got == {"prompt": 180, "generated": 11, "requests": 2}
    result = {"ragas": {"evaluated": got},
              "localragas": {"records": [{"evaluated_tokens": 100}, {"evaluated_tokens": 50}]}}
    assert vs_ragas.evaluated_per_sample(result, 2) == {"ragas": 95.5, "localragas": 75.0}


def test_localragas_tokens_evaluated_leave_out_the_prompt_tokens_kept_from_earlier_calls():
    from research.benchmarks import vs_ragas

    stats = {"calls": 3, "prompt_tokens": 900, "cached_tokens": 600, "completion_tokens": 12}
    record = vs_ragas._localragas_record("s1", "faithfulness", 1.0, stats, None, None)
    assert record["evaluated_tokens"] == 312 and record["prompt_tokens"] == 900
