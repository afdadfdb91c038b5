"""What the command modules share: the exit codes (the same for every command, mapped in cli.py) and the options
that choose the models (`eval`, `calibrate`, `generate`)."""
from __future__ import annotations

import click

EXIT_GATE_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL_ERROR = 3  # never 1: CI must tell a crash from a failed gate
EXIT_NOT_EVALUATED = 4  # a broken judge, cache or embedder: never 0, and not 1 (the data may well be fine)


def model_options(fn):
    """--judge, --judge-option and --embedder: the models chosen by `eval`, `calibrate` and `generate`."""
    fn = click.option("--embedder", "-e", metavar="NAME|PATH",
                      help="Embedder (eval: for answer_relevancy; generate: linking chunks and finding duplicates): "
                           "minilm-l6 (default), a sentence-transformers folder, or 'fake'.")(fn)
    fn = click.option("--judge-option", multiple=True, metavar="KEY=VALUE",
                      help="Backend setting, e.g. n_ctx=4096, n_threads=2, n_gpu_layers=-1, seed=7. Repeatable.")(fn)
    return click.option("--judge", "-j", metavar="NAME|PATH",
                        help="Judge: a catalogue name (default qwen2.5-1.5b), a .gguf path, 'fake', or "
                             "BACKEND:MODEL.")(fn)
