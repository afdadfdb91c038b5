"""scripts/setup.sh installs the CPU build of PyTorch when there is no NVIDIA GPU (PyPI's torch on Linux x86_64 is the
multi-GB CUDA build) and says which build it installed and why. Run as written with the stand-ins of
setup_helpers.py; `nvidia-smi` is a stand-in on PATH (one that lists a GPU, one that fails as it does on a
machine without a driver), or absent."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from setup_helpers import Checkout

CPU_INDEX = "--extra-index-url https://download.pytorch.org/whl/cpu"


@pytest.fixture
def checkout(tmp_path) -> Checkout:
    return Checkout(tmp_path)


def _nvidia_smi(tmp_path: Path, script: str) -> str:
    """A PATH with an nvidia-smi stand-in first."""
    bin_dir = tmp_path / "gpu-bin"
    bin_dir.mkdir()
    (bin_dir / "nvidia-smi").write_text("#!/usr/bin/env bash\n" + script)
    (bin_dir / "nvidia-smi").chmod(0o755)
    return f"{bin_dir}{os.pathsep}{os.environ['PATH']}"


def _torch_installs(checkout: Checkout) -> list[str]:
    return [line for line in checkout.log() if line.startswith("torch ")]


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="this machine has nvidia-smi")
def test_without_nvidia_smi_the_cpu_build_is_installed_and_named(checkout):
    r = checkout.setup()
    assert r.returncode == 0, r.stdout + r.stderr
    install, deps = _torch_installs(checkout)
    assert "torch==2.13.0" in install and CPU_INDEX in install and "--no-deps" in install
    assert "torch==2.13.0" in deps and "--extra-index-url" not in deps  # its dependencies from the default index
    assert "==> PyTorch 2.13.0 (cpu build: no NVIDIA GPU found)" in r.stdout
    assert "installed PyTorch 2.13.0+cpu: the CPU build (no NVIDIA GPU found)" in r.stdout


def test_nvidia_smi_without_a_working_driver_is_no_gpu(checkout, tmp_path):
    path = _nvidia_smi(tmp_path, "echo 'NVIDIA-SMI has failed because it could not communicate with the driver'\n"
                                 "exit 9\n")
    r = checkout.setup(PATH=path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert CPU_INDEX in _torch_installs(checkout)[0]
    assert "installed PyTorch 2.13.0+cpu: the CPU build (no NVIDIA GPU found)" in r.stdout


def test_a_gpu_gets_the_cuda_build_and_says_so(checkout, tmp_path):
    path = _nvidia_smi(tmp_path, "echo 'GPU 0: NVIDIA L4 (UUID: GPU-0)'\n")
    r = checkout.setup(PATH=path)
    assert r.returncode == 0, r.stdout + r.stderr
    (install,) = _torch_installs(checkout)
    assert "torch==2.13.0" in install and "--extra-index-url" not in install
    assert "installed PyTorch 2.13.0: a CUDA 12.8 build (nvidia-smi lists a GPU)" in r.stdout


def test_the_choice_can_be_forced_and_a_leftover_cuda_build_is_warned_about(checkout, tmp_path):
    path = _nvidia_smi(tmp_path, "echo 'GPU 0: NVIDIA L4 (UUID: GPU-0)'\n")
    r = checkout.setup(PATH=path, LOCALRAGAS_TORCH="cpu")
    assert CPU_INDEX in _torch_installs(checkout)[0]
    assert "installed PyTorch 2.13.0+cpu: the CPU build (LOCALRAGAS_TORCH=cpu)" in r.stdout

    (checkout.state / "torch").write_text("2.13.0 12.8\n")  # a CUDA build pip keeps from an earlier install
    (checkout.root / ".venv" / "bin" / "python").write_text(
        (checkout.root / ".venv" / "bin" / "python").read_text().replace(
            'echo "2.13.0+cpu None"; else echo "2.13.0 12.8"; fi >"$state/torch"', ':; fi'))
    r = checkout.setup(LOCALRAGAS_TORCH="cpu")
    assert "installed PyTorch 2.13.0: a CUDA 12.8 build (LOCALRAGAS_TORCH=cpu)" in r.stdout
    assert "warning: the venv holds a CUDA build of PyTorch" in r.stderr and "--force-reinstall" in r.stderr

    r = checkout.setup(LOCALRAGAS_TORCH="rocm")
    assert r.returncode == 2 and "LOCALRAGAS_TORCH must be cpu or cuda, got 'rocm'" in r.stderr
