"""How many of the package's modules a command loads, and how many one sample's scoring runs through (issue 49,
docs/architecture.md round 3):

    python -m research.benchmarks.module_path OUT.json -- eval examples/rag_samples.jsonl --judge fake --embedder fake \
        --limit 1 -m faithfulness --no-cache --no-resume

runs `localragas ARGS` in this process and writes OUT.json (and prints the three counts): the localragas modules loaded when it ends (`loaded`), all
modules loaded (`all_modules`), and the localragas modules whose code ran while a sample was being scored
(`on_the_path`: every Python call made inside a function named `score_sample`, by sys.setprofile; the judge check and
the canaries are not on it). `--help` works too (nothing is scored: `on_the_path` is empty).
"""
from __future__ import annotations

import json
import runpy
import sys
import threading
from pathlib import Path
from typing import Any

PACKAGE = Path(__file__).resolve().parents[2] / "localragas"


def _module_of(filename: str) -> str | None:
    """The dotted name of a file of the package, else None."""
    path = Path(filename)
    try:
        rel = path.resolve().relative_to(PACKAGE.parent)
    except ValueError:
        return None
    parts = list(rel.with_suffix("").parts)
    if parts[0] != "localragas" or path.suffix != ".py":
        return None
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def measure(args: list[str]) -> dict[str, Any]:
    """Run `localragas ARGS` here; what it loaded and what the sample's scoring ran through."""
    on_path: set[str] = set()
    depth = {"n": 0}

    def profile(frame, event, arg):  # noqa: ANN001, ARG001 - sys.setprofile's signature
        code = frame.f_code
        if event == "call":
            if code.co_name == "score_sample":
                depth["n"] += 1
            if depth["n"]:
                name = _module_of(code.co_filename)
                if name:
                    on_path.add(name)
        elif event == "return" and code.co_name == "score_sample":
            depth["n"] -= 1

    sys.setprofile(profile)
    threading.setprofile(profile)
    sys.argv = ["localragas", *args]
    try:
        runpy.run_module("localragas", run_name="__main__")
    except SystemExit as e:
        code = e.code
    else:
        code = 0
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    loaded = sorted(m for m in sys.modules if m == "localragas" or m.startswith("localragas."))
    return {"exit_code": code, "loaded": len(loaded), "all_modules": len(sys.modules),
            "on_the_path": len(on_path), "loaded_modules": loaded, "path_modules": sorted(on_path)}


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 2 or args[1] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    target = Path(args[0])
    out = measure(args[2:])
    target.write_text(json.dumps(out, indent=1), encoding="utf-8")
    print(f"exit {out['exit_code']}: {out['loaded']} localragas modules loaded ({out['all_modules']} in all), "
          f"{out['on_the_path']} on one sample's path; details in {target}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
