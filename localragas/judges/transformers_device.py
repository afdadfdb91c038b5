"""Where the transformers judge runs: the device and the dtype that `auto` resolves to (imports torch)."""
from __future__ import annotations

from ..core.errors import ConfigError


def resolve_device(device: str, dtype: str) -> tuple[str, str]:
    """(device, dtype) for the settings: auto picks CUDA, then MPS, then CPU; bfloat16 on a GPU (float16 on a CUDA
    GPU without bf16), float32 on CPU. A named device torch does not see is a ConfigError."""
    import torch  # noqa: PLC0415 - heavy, optional

    cuda = torch.cuda.is_available()
    mps = getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available()
    if device == "auto":
        device = "cuda" if cuda else "mps" if mps else "cpu"
    elif (device == "cuda" and not cuda) or (device == "mps" and not mps):
        raise ConfigError(f"device={device} but torch {torch.__version__} sees no {device.upper()} device")
    if dtype == "auto":
        if device == "cuda":
            dtype = "bfloat16" if torch.cuda.is_bf16_supported() else "float16"
        else:
            dtype = "bfloat16" if device == "mps" else "float32"
    return device, dtype
