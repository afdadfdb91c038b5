"""evaluate(engine="dask") on local Dask clusters of 2 worker processes: the report is the local engine's; a worker
killed mid-run, a driver killed and re-run, a sample that kills every worker it is sent to, a worker whose judge
differs, and a scheduler that goes away (exit 8, the checkpoint kept and resumed); a server that never answers (exit
8 within the connect timeout), local:N beyond the cores (exit 2), a plain script without a __main__ guard, and
Dask's own lines hidden unless verbose."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")
import cloudpickle  # noqa: E402
import dask  # noqa: E402

from localragas import evaluate, load_samples  # noqa: E402
from localragas.core.errors import ConfigError, LocalragasError, MissingDependencyError  # noqa: E402
from localragas.judges import FakeJudge  # noqa: E402
from localragas.judges.fake import heuristic_reply  # noqa: E402
from stub_server import silent_server  # noqa: E402

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers get this module's judges by value

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples" / "rag_samples.jsonl"
RUN = {"embedder": "fake", "cache": False, "progress": False}


def samples(copies: int = 1):
    base = load_samples(EXAMPLES)[0]
    return [s.model_copy(update={"id": f"{s.id}-{k}"}) for k in range(copies) for s in base]


def slow(prompt, output):
    time.sleep(0.01)  # a judge that takes 10 ms a call: slow enough to kill something mid-run
    return heuristic_reply(prompt, output)


def poisoned(prompt, output):
    if "POISON" in prompt.text():
        os._exit(3)  # kills the worker process, as a segfaulting model would
    return heuristic_reply(prompt, output)


class OtherModelJudge(FakeJudge):
    """A fake judge whose fingerprint changes once unpickled: as a worker node with another model file would be."""

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.fingerprint = "fake:another-model-file"


def scores(report):
    return ([(s.id, {n: (m.value, m.unscored) for n, m in s.metrics.items()}) for s in report.samples],
            [(x.metric, x.mean, x.ci_low, x.ci_high) for x in report.summary], report.gate.passed,
            report.gate.model_dump(mode="json"))


def lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.is_file() else 0


@pytest.fixture(scope="module")
def cluster():
    """One cluster for the tests that need one: local:2's (2 single-threaded worker processes on 127.0.0.1, a worker
    that dies started again), started once and given by its address. The tests that retire or poison workers, or test
    how local:N starts and stops, start their own."""
    from localragas.run.dask_local import local_cluster  # noqa: PLC0415

    with local_cluster(2, verbose=False) as c, distributed.Client(c, set_as_default=False) as client:
        client.wait_for_workers(2, timeout=120)
        yield c


def test_two_workers_give_the_local_report_and_a_rerun_is_answered_from_the_cache(tmp_path, cluster):
    data = samples()
    local = evaluate(data, judge="fake", embedder="fake", progress=False, cache=False)
    first = evaluate(data, judge="fake", embedder="fake", progress=False, cache_dir=tmp_path, engine="dask",
                     address=cluster.scheduler_address)
    assert scores(first) == scores(local)
    assert [s.input for s in first.samples] == [s.input for s in local.samples]  # each sample's text, as locally
    assert [s.input.question for s in first.samples] == [x.question for x in data]
    assert first.meta["judge_check"]["status"] == local.meta["judge_check"]["status"] == "passed"
    assert first.meta["engine"]["worker_threads"] == 2 and first.meta["judge_stats"]["calls"] == \
        local.meta["judge_stats"]["calls"]
    again = evaluate(data, judge="fake", embedder="fake", progress=False, cache_dir=tmp_path, engine="dask",
                     address=cluster.scheduler_address)  # the rows the workers wrote came back into this cache
    assert again.meta["judge_stats"]["calls"] == 0 and again.meta["judge_check"]["calls"] == 0
    assert again.meta["judge_stats"]["cache_hits"] > 0 and scores(again) == scores(local)
    # the canaries (run/canaries.py): the same ones, asked by the workers in their batches, with the same answers
    canaries = [{k: v for k, v in r.meta["canaries"].items() if k != "judge_seconds"} for r in (local, first)]
    assert canaries[0] == canaries[1] and canaries[0]["status"] == "passed" and canaries[0]["calls"] > 0
    assert again.meta["canaries"]["calls"] == 0 and again.meta["canaries"]["groups"] == canaries[0]["groups"]


def test_a_worker_killed_mid_run_loses_no_sample(tmp_path, cluster):
    data = samples(3)
    local = evaluate(data, judge=FakeJudge(responder=heuristic_reply), **RUN)
    checkpoint = tmp_path / "run.jsonl"
    killed = {}
    with distributed.Client(cluster.scheduler_address, set_as_default=False) as client:
        client.wait_for_workers(2, timeout=120)  # the shared cluster's killed worker is started again

        def kill_one():
            while lines(checkpoint) < 4:
                time.sleep(0.02)
            address, pid = sorted(client.run(os.getpid).items())[0]
            killed["at"] = lines(checkpoint)
            os.kill(pid, signal.SIGKILL)

        killer = threading.Thread(target=kill_one, daemon=True)
        killer.start()
        report = evaluate(data, judge=FakeJudge(responder=slow), checkpoint=checkpoint, engine="dask",
                          address=cluster.scheduler_address, **RUN)
        killer.join(5)
    assert killed["at"] < len(data)  # killed while samples were still to score
    assert scores(report) == scores(local) and len(report.samples) == len(data)


def test_a_cluster_left_without_workers_ends_the_run_with_the_checkpoint_kept(tmp_path, monkeypatch):
    from localragas.core.errors import EngineError  # noqa: PLC0415
    from localragas.run import dask_engine  # noqa: PLC0415

    monkeypatch.setattr(dask_engine, "WATCH_SECONDS", 0.2)
    monkeypatch.setattr(dask_engine, "NO_WORKER_SECONDS", 1.0)
    checkpoint = tmp_path / "run.jsonl"
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, host="127.0.0.1", dashboard_address=None) \
            as cluster:

        def retire():
            while lines(checkpoint) < 2:
                time.sleep(0.02)
            cluster.scale(0)  # its workers preempted, and none comes back

        threading.Thread(target=retire, daemon=True).start()
        with pytest.raises(EngineError, match="has had no worker for 1 s"):
            evaluate(samples(3), judge=FakeJudge(responder=slow), checkpoint=checkpoint, engine="dask",
                     address=cluster.scheduler_address, **RUN)
    assert 2 <= lines(checkpoint) < 48


def test_a_driver_killed_mid_run_is_resumed_by_the_same_command(tmp_path):
    script = tmp_path / "drive.py"
    script.write_text(textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from localragas import evaluate, load_samples
        from localragas.judges import FakeJudge
        from localragas.judges.fake import heuristic_reply

        def slow(prompt, output):
            time.sleep(0.01)
            return heuristic_reply(prompt, output)

        if __name__ == "__main__":  # not needed by local:N (a plain script runs too: tested below)
            base = load_samples({str(EXAMPLES)!r})[0]
            data = [s.model_copy(update={{"id": f"{{s.id}}-{{k}}"}}) for k in range(3) for s in base]
            report = evaluate(data, judge=FakeJudge(responder=slow), embedder="fake", cache=False, progress=False,
                              checkpoint=sys.argv[1], engine="dask", address="local:2")
            Path(sys.argv[2]).write_text(report.model_dump_json())
    """))
    checkpoint, out = tmp_path / "run.jsonl", tmp_path / "report.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    driver = subprocess.Popen([sys.executable, str(script), str(checkpoint), str(out)], env=env,
                              start_new_session=True, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 60
        while lines(checkpoint) < 5 and driver.poll() is None and time.time() < deadline:
            time.sleep(0.02)
        os.killpg(driver.pid, signal.SIGKILL)  # the driver and its cluster, as a crashed machine
    finally:
        driver.wait(10)
    kept = lines(checkpoint)
    assert not out.exists() and 5 <= kept < 48
    subprocess.run([sys.executable, str(script), str(checkpoint), str(out)], env=env, check=True, timeout=120,
                   stderr=subprocess.DEVNULL)
    from localragas.data.schema import Report  # noqa: PLC0415

    resumed = Report.model_validate_json(out.read_text())
    assert resumed.meta["resumed_samples"] >= 5
    assert scores(resumed) == scores(evaluate(samples(3), judge=FakeJudge(responder=heuristic_reply), **RUN))


def test_a_sample_that_kills_every_worker_ends_as_its_own_error(tmp_path):
    data = samples()
    data[5] = data[5].model_copy(update={"answer": data[5].answer + " POISON pill."})
    started = time.perf_counter()
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):  # Dask's own bound: fail on the first death
        report = evaluate(data, judge=FakeJudge(responder=poisoned), engine="dask", address="local:2", **RUN)
    assert time.perf_counter() - started < 90
    bad = report.samples[5]
    assert bad.id == data[5].id and all(m.value is None and "crashed every Dask worker" in m.unscored
                                        for m in bad.metrics.values())
    others = evaluate(data[:5] + data[6:], judge=FakeJudge(responder=heuristic_reply), **RUN)
    assert [s for i, s in enumerate(scores(report)[0]) if i != 5] == scores(others)[0]
    assert report.meta["engine"]["crashed_samples"] == 1
    assert report.gate.passed is False and report.gate.evaluated is False  # the gate fails closed: exit 4


def test_a_worker_whose_judge_differs_is_refused_before_scoring(cluster):
    with pytest.raises(LocalragasError, match=r"Dask worker .* differs from this run in judge \('fake:fake' vs "
                                              r"'fake:another-model-file'\)"):
        evaluate(samples(), judge=OtherModelJudge(), engine="dask", address=cluster.scheduler_address, **RUN)


def test_the_engine_settings_are_checked_before_anything_starts(monkeypatch):
    with pytest.raises(ConfigError, match="--address local:2 is the Dask scheduler of --engine dask"):
        evaluate(samples(), judge="fake", address="local:2", **RUN)
    with pytest.raises(ConfigError, match="a Dask scheduler address is tcp://HOST:PORT"):
        evaluate(samples(), judge="fake", engine="dask", address="127.0.0.1", **RUN)
    with pytest.raises(ConfigError, match="cannot be sent to the workers.*give the judge by its catalogue name"):
        judge = FakeJudge()
        judge.lock = threading.Lock()  # as a loaded in-process model: no pickling it
        evaluate(samples(), judge=judge, engine="dask", address="local:1", **RUN)
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'localragas\[dask\]'"):
        evaluate(samples(), judge="fake", engine="dask", address="local:1", **RUN)


SLOW_WORKER = """
import time
from localragas.judges.fake import FakeJudge

if not hasattr(FakeJudge, "_fast"):  # a worker's judge that takes 10 ms a call (the preload may run twice)
    FakeJudge._fast = FakeJudge._scripted
    FakeJudge._scripted = lambda self, *args: time.sleep(0.01) or FakeJudge._fast(self, *args)
"""


def test_a_scheduler_that_goes_away_exits_8_and_the_checkpoint_resumes(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({**s.model_dump(mode="json", exclude_none=True)}) + "\n" for s in samples(6)))
    (tmp_path / "slow.py").write_text(SLOW_WORKER)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LOCALRAGAS_STATE_DIR": str(tmp_path / "state")}
    port = _free_port()
    scheduler = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                  "--port", str(port), "--no-dashboard"], env=env, stderr=subprocess.DEVNULL)
    worker = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", f"tcp://127.0.0.1:{port}",
                               "--nthreads", "1", "--no-dashboard", "--preload", str(tmp_path / "slow.py")],
                              env=env, stderr=subprocess.DEVNULL)
    runs = tmp_path / "state" / "runs"
    cmd = [sys.executable, "-m", "localragas", "eval", str(data), "--judge", "fake", "--embedder", "fake",
           "--no-cache", "--no-progress", "--no-gate", "--no-history"]
    try:
        run = subprocess.Popen([*cmd, "--engine", "dask", "--address", f"tcp://127.0.0.1:{port}"], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 60
        while not any(lines(p) >= 5 for p in runs.glob("*.jsonl")) and run.poll() is None and time.time() < deadline:
            time.sleep(0.02)
        scheduler.kill()
        _, err = run.communicate(timeout=60)
    finally:
        for p in (scheduler, worker):
            p.kill()
            p.wait(10)
    assert run.returncode == 8, err
    assert "Dask scheduler" in err and "went away" in err
    kept = sum(lines(p) for p in runs.glob("*.jsonl"))
    assert 5 <= kept < 96
    again = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)  # the local engine resumes it
    assert again.returncode == 0 and f"resumed: {kept} finished sample(s)" in again.stderr


def _bounded(seconds: float, call):
    """call() in a thread, its result; a test failure (not a hung suite) when it has not returned within seconds."""
    out = []
    worker = threading.Thread(target=lambda: out.append(call()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert out, f"still running after {seconds} s"
    return out[0]


def test_a_server_that_accepts_and_says_nothing_exits_8_within_the_connect_timeout(tmp_path):
    from cli_helpers import cli  # noqa: PLC0415

    port, server = silent_server()
    args = ("eval", EXAMPLES, "--judge", "fake", "--embedder", "fake", "--no-cache", "--no-resume", "--no-progress",
            "--out", tmp_path / "report.json", "--engine", "dask", "--address", f"tcp://127.0.0.1:{port}")
    started = time.monotonic()
    try:
        with dask.config.set({"distributed.comm.timeouts.connect": "3s"}):  # Dask's setting; 30 s unless set
            r = _bounded(60, lambda: cli(*args))
    finally:
        server.close()
    assert r.exit_code == 8, r.output
    assert f"could not reach the Dask scheduler tcp://127.0.0.1:{port} or any worker of it within 3 s" in r.output
    assert time.monotonic() - started < 30 and not (tmp_path / "report.json").exists()


def test_local_n_beyond_this_machines_cores_exits_2_before_anything_starts(tmp_path):
    from cli_helpers import cli  # noqa: PLC0415
    from localragas.run.engine_address import cores  # noqa: PLC0415

    base = ("eval", EXAMPLES, "--judge", "fake", "--embedder", "fake", "--no-cache", "--no-resume", "--no-progress",
            "--engine", "dask", "--address")
    started = time.monotonic()
    r = _bounded(30, lambda: cli(*base, "local:100000"))
    assert r.exit_code == 2, r.output
    assert f"local:100000 asks for more worker processes than this machine's {cores()} core(s)" in r.output
    assert f"give local:{cores()} at most" in r.output and "Traceback" not in r.output
    r = cli(*base, "local:00")
    assert r.exit_code == 2 and "local:N for a cluster of N worker processes" in r.output
    assert time.monotonic() - started < 20


PLAIN_SCRIPT = """
import localragas

report = localragas.evaluate({data!r}, judge="fake", embedder="fake", engine="dask", address="local:2",
                             cache=False, progress=False)
print("workers", report.meta["engine"]["worker_threads"], "samples", len(report.samples))
"""


def test_a_plain_script_without_a_main_guard_runs_on_local_workers_and_prints_no_dask_lines(tmp_path):
    """No `if __name__ == "__main__":`: local:N's workers must not import the script again (Dask's LocalCluster did:
    "Nanny failed to start"). With port 8787 taken (Dask's dashboard port) and a cluster closing, nothing of Dask's
    own is printed: no port warning, no CommClosedError."""
    import socket  # noqa: PLC0415

    script = tmp_path / "plain.py"
    script.write_text(PLAIN_SCRIPT.format(data=str(EXAMPLES)))
    dashboard = socket.socket()
    try:
        dashboard.bind(("127.0.0.1", 8787))  # another cluster's dashboard, as on a shared machine
        dashboard.listen(1)
    except OSError:
        pass  # in use already: the same for this test
    try:
        done = subprocess.run([sys.executable, str(script)], env={**os.environ, "PYTHONPATH": str(ROOT)},
                              cwd=tmp_path, capture_output=True, text=True, timeout=600)
    finally:
        dashboard.close()
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["workers", "2", "samples", "16"]
    for dask_line in ("Traceback", "Nanny", "CommClosedError", "distributed.", "8787", "Warning"):
        assert dask_line not in done.stderr, done.stderr[-3000:]


def test_verbose_shows_the_dask_clusters_own_lines(tmp_path):
    """--verbose lets Dask's log lines through (to Dask's own handlers, on stderr; here a list beside them)."""
    import logging  # noqa: PLC0415

    from cli_helpers import cli, sample_rows, write_jsonl  # noqa: PLC0415

    class Kept(logging.Handler):
        def __init__(self):
            super().__init__()
            self.names = []

        def emit(self, record):
            self.names.append(record.name)

    kept = Kept()
    dask_logger = logging.getLogger("distributed")
    dask_logger.addHandler(kept)
    data = write_jsonl(tmp_path / "d.jsonl", sample_rows(2))
    args = ("eval", data, "--judge", "fake", "--embedder", "fake", "--no-cache", "--no-resume", "--no-progress",
            "-m", "faithfulness", "--engine", "dask", "--address", "local:1")
    try:
        assert cli(*args).exit_code == 0 and not kept.names  # hidden by default
        r = cli(*args, "--verbose")
    finally:
        dask_logger.removeHandler(kept)
    assert r.exit_code == 0, r.output
    assert "distributed.scheduler" in kept.names


def _free_port() -> int:
    import socket  # noqa: PLC0415

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_worker_on_another_host_keeps_its_own_cache_and_sends_its_rows_back(tmp_path, monkeypatch):
    """No cluster: the worker's side as a plugin sets it up, on a host that is not the driver's (it must not open the
    driver's SQLite file over a network filesystem)."""
    from localragas.judges.judging import Judging  # noqa: PLC0415
    from localragas.metrics import get_metrics  # noqa: PLC0415
    from localragas.run import dask_worker  # noqa: PLC0415

    monkeypatch.setenv("LOCALRAGAS_STATE_DIR", str(tmp_path / "worker-node"))
    (tmp_path / "driver-cache").mkdir()
    metrics = get_metrics(["faithfulness"])
    job = dask_worker.Job(judge_name="fake", judge_options={}, judge=None, calibration=None,
                          prompts=None, metrics=metrics, embedder=None, cache_folder=str(tmp_path / "driver-cache"),
                          driver_host="another-host")
    dask_worker.install("run-1", cloudpickle.dumps(job))
    try:
        expected = dask_worker.fingerprint(Judging(FakeJudge(name="fake")), metrics, None)
        out = dask_worker.score_batch("run-1", expected, [(7, samples()[0])])
        mine = dask_worker._RUNS["run-1"].judging.cache
        assert mine.path == tmp_path / "worker-node" / "cache" / "judge-cache.sqlite3"
        assert [i for i, _ in out["results"]] == [7] and out["rows"]  # the rows go back to the driver's cache
        assert all(mine.get(row[0]) is not None for row in out["rows"])  # and stay in the node's own
        assert not (tmp_path / "driver-cache" / "judge-cache.sqlite3").exists()
    finally:
        dask_worker.remove("run-1")


def test_the_workers_score_with_the_calibration_in_effect(tmp_path):
    """No cluster: the run's judging context carries its calibration in effect (a family fitted under another prompt
    than the run asks left out), and a worker built from the run's job scores with that one, not the whole map."""
    from localragas.judges.calibration_map import CalibrationMap, FamilyMap  # noqa: PLC0415
    from localragas.metrics import get_metrics  # noqa: PLC0415
    from localragas.prompts.overrides import template_hashes  # noqa: PLC0415
    from localragas.run import dask_engine, dask_worker  # noqa: PLC0415
    from localragas.run.judging_context import calibration_in_effect, run_judging, with_calibration  # noqa: PLC0415

    cal = tmp_path / "cal.json"
    built_in = template_hashes(["verify_statement"])["verify_statement"]
    CalibrationMap({"verify_statement": FamilyMap(1.5, 1.0, {}, {"verify_statement": built_in})}).write(cal)
    mine = tmp_path / "mine.txt"
    mine.write_text("Say yes only when a context states the statement word for word.")
    metrics = get_metrics(["faithfulness"])
    for prompts, calibrated in ((None, True), ({"verify_statement": mine}, False)):
        judging = run_judging("fake", {"calibration": str(cal)}, prompts)
        run = with_calibration(judging, calibration_in_effect(judging, metrics))
        assert run.calibration.covers("verify_statement") is calibrated and judging.calibration.covers("verify_statement")
        dask_worker.install("run-cal", dask_engine._job(run, metrics, None))
        try:
            assert dask_worker._RUNS["run-cal"].judging.calibration.families == run.calibration.families
            out = dask_worker.score_batch("run-cal", dask_worker.fingerprint(run, metrics, None),
                                          [(0, samples()[0])])
        finally:
            dask_worker.remove("run-cal")
        faith = out["results"][0][1].metrics["faithfulness"]
        assert faith.evidence["calibrated"] is calibrated


def test_the_settings_file_chooses_the_engine(tmp_path):
    from localragas.run.evaluation import spec_from_flags  # noqa: PLC0415

    (tmp_path / "localragas.toml").write_text('engine = "dask"\naddress = "tcp://10.0.0.5:8786"\n')
    spec = spec_from_flags(str(EXAMPLES), config=tmp_path / "localragas.toml")
    assert (spec.engine, spec.address) == ("dask", "tcp://10.0.0.5:8786")
    assert spec_from_flags(str(EXAMPLES), config=tmp_path / "localragas.toml", address="local:1").address == "local:1"
