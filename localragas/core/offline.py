"""No network at evaluation time: the Hugging Face libraries are told to stay offline before any of them loads.

huggingface_hub reads these variables once, when it is first imported, so `ensure_offline()` must run before
`import sentence_transformers` / `import transformers` (localragas.judges.embeddings and any backend that loads a
model through them), and before `import mlflow` (localragas.integrations.mlflow). A value the user set explicitly is
kept (setdefault). Model loads also pass `local_files_only=True`.
"""
from __future__ import annotations

import os

OFFLINE_ENV = {
    "HF_HUB_OFFLINE": "1",  # huggingface_hub: no request to the hub, local cache and folders only
    "TRANSFORMERS_OFFLINE": "1",  # transformers: the same, for older versions
    "HF_HUB_DISABLE_TELEMETRY": "1",  # no usage pings
    "HF_HUB_DISABLE_IMPLICIT_TOKEN": "1",  # never send a stored token anywhere
    "MLFLOW_DISABLE_TELEMETRY": "true",  # mlflow (localragas.integrations.mlflow): no usage reports, read at import
}


def ensure_offline() -> None:
    for key, value in OFFLINE_ENV.items():
        os.environ.setdefault(key, value)
