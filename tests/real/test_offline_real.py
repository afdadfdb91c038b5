"""No network with the real embedder: a full `localragas eval` with MiniLM, outbound sockets blocked in the process
and the Hugging Face variables unset, tries no connection and gives the same scores twice (the offline promise,
docs/promises.md; the fast tier checks which modules may import a network library and that ensure_offline sets the
hub variables: tests/fast/project/test_robustness.py)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from localragas.core.errors import LocalragasError
from localragas.core.offline import OFFLINE_ENV
from localragas.data.schema import Report
from localragas.judges import catalogue

ROW = {"id": "a", "question": "What colour is the sky?", "contexts": ["The sky is blue on a clear day."],
       "answer": "The sky is blue.", "reference": "The sky is blue."}


GUARD = textwrap.dedent('''
    import ipaddress, json, os, socket, sys
    for key in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_TELEMETRY", "HF_HUB_DISABLE_IMPLICIT_TOKEN"):
        os.environ.pop(key, None)
    attempts = []

    def local(host):
        if host in (None, "", "localhost") or (isinstance(host, str) and host.startswith("/")):
            return True
        try:
            return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
        except ValueError:
            return False

    def blocked(what, target):
        attempts.append(f"{what} {target!r}")
        raise OSError(f"network blocked by the test: {what} {target!r}")

    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex
    real_getaddrinfo, real_create = socket.getaddrinfo, socket.create_connection

    def connect(self, address):
        if self.family == getattr(socket, "AF_UNIX", None) or local(address[0]):
            return real_connect(self, address)
        blocked("connect", address)

    def connect_ex(self, address):
        if self.family == getattr(socket, "AF_UNIX", None) or local(address[0]):
            return real_connect_ex(self, address)
        blocked("connect_ex", address)

    def getaddrinfo(host, *a, **k):
        return real_getaddrinfo(host, *a, **k) if local(host) else blocked("getaddrinfo", host)

    def create_connection(address, *a, **k):
        return real_create(address, *a, **k) if local(address[0]) else blocked("create_connection", address)

    socket.socket.connect, socket.socket.connect_ex = connect, connect_ex
    socket.getaddrinfo, socket.create_connection = getaddrinfo, create_connection

    from click.testing import CliRunner
    from localragas.cli import main

    data, out1, out2 = sys.argv[1:4]
    args = ["eval", data, "--judge", "fake", "--embedder", "minilm-l6", "--no-progress", "--no-gate", "--no-cache",
            "--no-resume"]
    runs = [CliRunner().invoke(main, [*args, "--out", out]) for out in (out1, out2)]
    import huggingface_hub.constants as hub
    print(json.dumps({"exit": [r.exit_code for r in runs], "output": runs[0].output, "attempts": attempts,
                      "env": {k: os.environ.get(k) for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")},
                      "hub_offline": hub.HF_HUB_OFFLINE, "embedder_loaded": "sentence_transformers" in sys.modules}))
''')


def test_a_full_eval_with_the_real_embedder_passes_with_the_network_blocked_and_is_deterministic(tmp_path):
    """Outbound sockets blocked (connect, connect_ex, create_connection, getaddrinfo to any non-loopback address),
    the Hugging Face variables unset: `localragas eval` with MiniLM runs twice, nothing tries to connect, the hub
    library is offline, and both runs give identical per-sample scores."""
    try:
        catalogue.path(catalogue.DEFAULT_EMBEDDER)
    except LocalragasError as e:
        pytest.fail(f"real-tier model missing: {e}")
    data = tmp_path / "d.jsonl"
    rows = [ROW, {**ROW, "id": "b", "answer": "I am not sure.", "question": "天空是什么颜色？"},
            {**ROW, "id": "c", "contexts": ["/etc/passwd", "Clouds are white."], "answer": "The sky is green."}]
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    out1, out2 = tmp_path / "r1.json", tmp_path / "r2.json"
    env = {k: v for k, v in os.environ.items() if k not in OFFLINE_ENV}
    env["LOCALRAGAS_STATE_DIR"] = str(tmp_path / "state")
    done = subprocess.run([sys.executable, "-c", GUARD, str(data), str(out1), str(out2)], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["exit"] == [0, 0], got["output"]
    assert got["attempts"] == []
    assert got["embedder_loaded"] and got["hub_offline"] is True
    assert got["env"] == {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    r1, r2 = (Report.model_validate_json(p.read_text(encoding="utf-8")) for p in (out1, out2))
    assert r1.meta["embedder"]["name"] == "minilm-l6"
    scores = [{s.id: {m: r.value for m, r in s.metrics.items()} for s in r.samples} for r in (r1, r2)]
    assert scores[0] == scores[1]
    assert all(v is not None for v in (scores[0]["a"]["answer_relevancy"], scores[0]["c"]["answer_relevancy"]))
