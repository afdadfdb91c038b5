"""scripts/setup.sh's llama-cpp-python wheel: cached in a folder keyed by the exact CPU flags and build flags it was
compiled for, smoke-tested in a subprocess after it is installed (import + the native library's system info) and
again once the models are there (one token with a pulled judge). A wheel that fails (e.g. killed by SIGILL: built
for instructions this CPU lacks) is deleted and compiled again from source once; if that fails too, setup stops.

The whole script runs here, as written, in a copy of the checkout whose .venv/bin/python and .venv/bin/localragas are
stand-ins: pip wheel writes a fake wheel whose first line says how it behaves (`good`; `crash`: dies of SIGILL on
import; `crash-on-token`: dies when it evaluates a token), its second the build flags; pip install copies it to
`installed` (kept, as pip keeps an installed version, unless --force-reinstall; its sha256 stands for pip's record of
the wheel it was installed from), pip install torch records the CUDA build, or the CPU one when PyTorch's CPU index is
added (test_setup_torch.py), and the smoke test (`python -c`) behaves as the installed wheel says. The stand-ins:
fast/setup_helpers.py. Nothing is compiled, downloaded or run for real."""
from __future__ import annotations

import pytest

from setup_helpers import AVX2, AVX512, OLD_CPU, QWEN_GGUF, Checkout


@pytest.fixture
def checkout(tmp_path) -> Checkout:
    return Checkout(tmp_path)


def test_first_run_compiles_installs_and_smoke_tests_then_a_rerun_reuses_the_cached_wheel(checkout):
    r = checkout.setup()
    assert r.returncode == 0, r.stdout + r.stderr
    assert len(checkout.builds()) == 1
    (wheel,) = checkout.wheels()
    gguf = checkout.root / "models" / QWEN_GGUF  # the default judge: the one model setup pulls by default
    assert [line for line in checkout.log() if line.startswith("smoke")] == ["smoke import", f"smoke {gguf}"]
    assert f"install {wheel}" in checkout.log()

    r = checkout.setup()
    assert r.returncode == 0, r.stdout + r.stderr
    assert checkout.builds() == [] and checkout.wheels() == [wheel]  # nothing compiled again
    assert f"installed from {wheel} already" in r.stdout and f"install {wheel}" not in checkout.log()
    assert f"smoke {gguf}" in checkout.log()


def test_a_venv_holding_another_build_of_the_same_version_gets_the_cached_one(checkout):
    assert checkout.setup().returncode == 0
    (checkout.state / "installed").write_text("crash")  # e.g. installed by hand from an AVX-512 wheel
    r = checkout.setup()
    assert r.returncode == 0, r.stdout + r.stderr
    assert checkout.builds() == [] and (checkout.state / "installed").read_text().startswith("good\n")
    assert "smoke test failed" not in r.stderr


def test_a_cached_wheel_that_dies_of_sigill_is_deleted_compiled_again_and_setup_goes_on(checkout):
    assert checkout.setup().returncode == 0
    (wheel,) = checkout.wheels()
    wheel.write_text("crash")  # e.g. compiled on a machine with AVX-512 and copied here
    r = checkout.setup()
    assert r.returncode == 0, r.stdout + r.stderr
    assert "smoke test failed (killed by SIGILL, Illegal instruction" in r.stderr
    assert "deleting the cached wheel" in r.stderr
    assert len(checkout.builds()) == 1
    assert checkout.wheels() == [wheel] and wheel.read_text().startswith("good\n")
    assert (checkout.state / "installed").read_text().startswith("good\n")
    assert checkout.log()[-1] == f"smoke {checkout.root / 'models' / QWEN_GGUF}"


def test_a_wheel_that_dies_only_on_a_token_is_caught_after_the_models_are_pulled(checkout):
    assert checkout.setup().returncode == 0
    (wheel,) = checkout.wheels()
    wheel.write_text("crash-on-token")  # imports, prints its system info, dies in the first matrix product
    r = checkout.setup()
    assert r.returncode == 0, r.stdout + r.stderr
    assert "smoke test failed (killed by SIGILL" in r.stderr
    assert len(checkout.builds()) == 1 and wheel.read_text().startswith("good\n")


def test_a_wheel_that_still_fails_after_one_rebuild_stops_setup_with_a_clear_message(checkout):
    assert checkout.setup().returncode == 0
    (wheel,) = checkout.wheels()
    wheel.write_text("crash")
    r = checkout.setup(build="crash")
    assert r.returncode == 1
    assert "fails its smoke test even freshly compiled (killed by SIGILL" in r.stderr
    assert "-DGGML_AVX2=ON" in r.stderr  # the build flags, to check against the CPU
    assert len(checkout.builds()) == 1  # compiled again once, not in a loop
    assert checkout.wheels() == []  # no failing wheel is left in the cache
    assert "setup took" not in r.stdout  # stopped before the models step


def test_the_cache_folder_is_keyed_by_the_exact_cpu_flags_and_build_flags(checkout):
    assert checkout.setup(cpu=AVX512).returncode == 0
    (avx512,) = checkout.wheels()
    assert avx512.parent.name.startswith("llama-cpp-python-0.3.36-avx512-")
    assert "-DGGML_AVX512=ON" in checkout.builds()[0]
    recorded = (avx512.parent / "build.txt").read_text()
    assert "avx512_bf16" in recorded and "-DGGML_AVX512=ON" in recorded

    # the same CPU with its flags in another order: the same folder, nothing compiled
    assert checkout.setup(cpu=" ".join(reversed(AVX512.split()))).returncode == 0
    assert checkout.builds() == []

    # a CPU without AVX-512 never takes the AVX-512 wheel: a folder of its own, compiled for it
    assert checkout.setup(cpu=AVX2).returncode == 0
    assert len(checkout.builds()) == 1 and "-DGGML_AVX512" not in checkout.builds()[0]
    avx2 = [w for w in checkout.wheels() if w != avx512]
    assert len(avx2) == 1 and avx2[0].parent.name.startswith("llama-cpp-python-0.3.36-avx2-")
    assert f"install {avx2[0]}" in checkout.log()

    # without AVX at all: every x86 extension llama.cpp would turn on by itself is off
    assert checkout.setup(cpu=OLD_CPU).returncode == 0
    (build,) = checkout.builds()
    assert all(f"-DGGML_{x}=OFF" in build for x in ("SSE42", "AVX", "AVX2", "FMA", "F16C", "BMI2"))
    assert len({w.parent for w in checkout.wheels()}) == 3
