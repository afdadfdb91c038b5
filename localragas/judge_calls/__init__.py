"""The judge-call layer: every question a metric asks the judge, each fitted into the judge's context window.
Metrics ask through here and never call the judge themselves.

- Claims (`claims_of`) and entities (`entities_of`) of a text: a long answer or reference is split at sentence ends
  into pieces (at most CLAIM_PIECE_CHARS characters, and small enough for the window), each asked on its own, so the
  MAX_CLAIMS cap of one reply never hides the claims of a long text.
- Items checked against texts (`check_items`: one JSON verdict each; `support_probabilities`: one graded P(yes) per
  item, judges/yes_no.py): in batches against groups of contexts that fit; a context longer than a group is split
  into pieces. An item counts as supported when any group supports it; its probability is its highest over groups.
- Chunks rated for a target (`chunk_flags`, `chunk_probabilities`) in groups that fit; a chunk split into pieces is
  relevant when any piece is (its probability the highest over its pieces). The contexts rated as a whole for the
  question (`context_ratings`), cut at the end when they do not fit.
- Questions generated from an answer (`questions_for`) and checked against it (`answered_probabilities`), from the
  beginning of an answer too long for the window.
- For `localragas generate` (`judge_calls.generation`, imported on its own): an item written from chunks, its
  reference's graded support by them and whether they answer its question; chunks that do not fit are left out from
  the end.
Each call is fitted by one rule, `window.fitted`: asked as it is when its prompts fit the window with room for the
reply, else split, grouped or cut, and a note added to the `warnings` list of the metric's evidence; nothing is
dropped silently. Window arithmetic is in `window`, text splitting in `text`. A judge whose window cannot hold a prompt's instructions
and one item is refused before the run (`check_window`).
"""
from .chunks import chunk_flags, chunk_probabilities, context_ratings
from .claims import claims_of, entities_of
from .questions import answered_probabilities, questions_for
from .support import check_items, support_probabilities
from .text import split_text, truncate
from .window import Window, check_window, needed_window

__all__ = ["Window", "answered_probabilities", "check_items", "check_window", "chunk_flags", "chunk_probabilities",
           "claims_of", "context_ratings", "entities_of", "needed_window", "questions_for", "split_text",
           "support_probabilities", "truncate"]
