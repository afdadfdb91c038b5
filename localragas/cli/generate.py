"""The commands that close the loop: `generate` (a test set from your documents, localragas.testset.generation)
and `run-rag` (your pipeline over it, localragas.testset.rag_run). Added to the command group in localragas.cli,
whose one error-to-exit mapping they run through."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from .options import EXIT_NOT_EVALUATED, EXIT_PIPELINE_UNREACHABLE, model_options
from .output import check_outputs, checkpoint_words, note_checkpoint
from ..core.printable import printable


@click.command("generate")
@click.argument("documents", metavar="DOCS...", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--out", "-o", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Write the test set here (JSON Lines); the kept and dropped counts go to OUT.meta.json.")
@click.option("--size", "-n", type=click.IntRange(min=1), default=20, show_default=True,
              help="Items to generate (fewer when candidates are dropped and the attempts run out).")
@click.option("--top-up/--no-top-up", default=True, show_default=True,
              help="When a kind keeps fewer items than planned, fill the set up to --size from further single, "
                   "abstract, then multi candidates; --no-top-up keeps the planned mix exactly (and may keep fewer).")
@click.option("--language", type=click.Choice(("auto", "en", "zh")), default="auto", show_default=True,
              help="Language of the prompts and questions: auto (each chunk's own), en or zh.")
@click.option("--mix", metavar="KIND=SHARE[,KIND=SHARE]",
              help="Shares of the kinds single, multi, abstract, unanswerable (default "
                   "single=0.5,multi=0.25,abstract=0.15,unanswerable=0.1); a kind not named gets none.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the chunk order: same seed, same test set.")
@model_options
@click.option("--progress/--no-progress", default=True, show_default=True, help="Show progress on stderr.")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Persistent judge cache folder (default .localragas/cache, or $LOCALRAGAS_STATE_DIR/cache).")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the judge cache.")
@click.option("--resume/--no-resume", default=True, show_default=True,
              help="Keep each candidate's outcome in a checkpoint under .localragas/runs; after a crash or kill, the "
                   "same command goes on from there. Removed once the test set is written.")
def generate_cmd(documents, out, size, top_up, language, mix, seed, judge, judge_option, embedder, progress,
                 cache_dir, no_cache, resume):
    """Write a test set from DOCS (files or folders of .txt, .md, .html, .pdf, .jsonl of {id, text}): questions of
    four kinds, each checked by the judge before it is kept, in localragas's input format (answer and contexts left
    for your RAG: `localragas run-rag`). Exit 0; 2 bad input; 4 a judge error stopped the run (resumable).

    \b
    Example:
      localragas generate examples/docs --out testset.jsonl --size 20
    """
    from ..run.config import load_settings  # noqa: PLC0415
    from ..core.errors import JudgeError  # noqa: PLC0415
    from ..run.files_read import files_read  # noqa: PLC0415
    from ..testset.generation import GenerateSpec, Generation, summary_lines, summary_path  # noqa: PLC0415
    from ..core.key_values import parse_options  # noqa: PLC0415

    settings = load_settings(None)
    spec = GenerateSpec(documents=list(documents), size=size, top_up=top_up, mix=mix, seed=seed, language=language,
                        judge=judge or settings.judge,
                        judge_options=parse_options(judge_option, "--judge-option", settings.judge_options),
                        embedder=embedder or settings.embedder, cache=not no_cache, cache_dir=cache_dir,
                        resume=resume, progress=progress)
    read = settings.model_copy(update={"judge": spec.judge, "judge_options": spec.judge_options,
                                       "embedder": spec.embedder, "cache": spec.cache, "cache_dir": spec.cache_dir})
    check_outputs([*documents, *files_read(read)], **{"out": out, "out (its .meta.json)": summary_path(out)})
    run = Generation(spec)
    try:
        testset = run.run()
    except JudgeError as e:
        kept = checkpoint_words(run.checkpoint)
        click.echo(f"Error: could not generate: the judge failed ({printable(e)})"
                   + (f"; {printable(kept)}" if kept else "; no candidate was kept (--no-resume, or none finished)"),
                   err=True)
        sys.exit(EXIT_NOT_EVALUATED)
    finally:
        note_checkpoint(run.checkpoint)
    if run.resumed:
        click.echo(f"resumed: {run.resumed} candidate(s) taken from {printable(run.checkpoint.path)}", err=True)
    meta = testset.write(out)
    run.finish()
    for line in summary_lines(testset.summary):
        click.echo(printable(line))
    click.echo("wrote " + printable(f"{out}, {meta}"))


@click.command("run-rag")
@click.argument("data", metavar="TESTSET.jsonl", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--target", metavar="MODULE:FUNCTION|FILE.py:FUNCTION",
              help="Your pipeline as a Python function fn(question) -> {answer, contexts[, retrieved_context_ids]} "
                   "(fn(question, history) for conversations: the messages before the question), or a LangChain "
                   "runnable or LlamaIndex query or chat engine by its name.")
@click.option("--url", metavar="URL",
              help="Your pipeline as an HTTP endpoint: POST {question, id} (and history, for a conversation's "
                   "turn) -> {answer, contexts[, retrieved_context_ids]}.")
@click.option("--out", "-o", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Write the filled rows here (JSON Lines `eval` reads).")
@click.option("--concurrency", type=click.IntRange(min=1), default=1, show_default=True, metavar="N",
              help="Questions asked at once (threads).")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=60.0, show_default=True,
              metavar="SECONDS", help="Time limit of one call.")
@click.option("--retries", type=click.IntRange(min=0), default=2, show_default=True, metavar="N",
              help="Retries of a call that timed out, could not connect or got a 5xx (with backoff); a 4xx or a "
                   "malformed reply is not retried.")
@click.option("--max-connection-failures", type=click.IntRange(min=0), default=5, show_default=True, metavar="N",
              help="Stop the run when N rows in a row could not reach the pipeline (after their retries); the rows "
                   "done so far are written. 0: never stop.")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Show progress on stderr.")
def run_rag_cmd(data, target, url, out, concurrency, timeout, retries, max_connection_failures, progress):
    """Ask your RAG pipeline every question of TESTSET.jsonl and write its answers and contexts to OUT. A
    conversation (a row of `messages`, or `turns`) is asked turn by turn with the conversation so far and written in
    the chat format. A failed row (a conversation: a failed turn) keeps its place with `rag_error` (and is refused by
    `eval`); exit 0 when every row was answered, 4 when some
    failed (they are counted and listed), 6 when the pipeline could not be reached (the run stopped; the rows done
    so far are written), 2 on bad input.

    \b
    Example:
      localragas run-rag testset.jsonl --target examples/toy_rag.py:answer --out filled.jsonl
    """
    from ..testset.rag_run import RagRunSpec, run_rag  # noqa: PLC0415

    spec = RagRunSpec(data, target=target, url=url, concurrency=concurrency, timeout=timeout, retries=retries,
                      progress=progress, max_connection_failures=max_connection_failures)
    check_outputs([data, *spec.files_read()], out=out)
    run = run_rag(spec)
    run.write(out)
    answered = len(run.rows) - len(run.failed)
    if run.stopped:
        click.echo(f"Error: run-rag {run.stopped}: is the pipeline running and reachable? Wrote the {len(run.rows)} "
                   f"row(s) done so far ({answered} answered) to {printable(out)}; {run.not_asked} row(s) not asked. "
                   "Run again once it is up (--max-connection-failures 0 never stops).", err=True)
        sys.exit(EXIT_PIPELINE_UNREACHABLE)
    click.echo(f"run-rag: {answered} of {len(run.rows)} rows answered; wrote {printable(out)}")
    if run.failed:
        click.echo(f"run-rag: {len(run.failed)} of {len(run.rows)} rows failed (each has rag_error in "
                   f"{printable(out)}; eval refuses them):", err=True)
        for row_id, why in run.failed[:10]:
            click.echo(f"  {printable(row_id)}: {printable(why)}", err=True)
        if len(run.failed) > 10:
            click.echo(f"  … and {len(run.failed) - 10} more", err=True)
        sys.exit(EXIT_NOT_EVALUATED)
