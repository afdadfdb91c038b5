"""What a reviewer sees of an item (localragas/report/review_view.py) and how the terminal draws it
(localragas/cli/review_terminal.py item_lines): the part of each context that best matches the item marked, the
statement marked in the answer, a long context shown first around its marked part, and data that cannot drive the
terminal."""
from __future__ import annotations

from localragas.cli.review_terminal import AROUND, LONG, item_lines
from localragas.quality.review_items import ReviewItem
from localragas.report.review_view import best_span, excerpt, find_item, item_view


def item(metric="faithfulness", text="The warranty covers parts for two years.", contexts=("",), **kw) -> ReviewItem:
    base = dict(sample_id="s1", metric=metric, index=0, kind={"faithfulness": "statement", "context_recall":
                "reference statement", "context_precision": "chunk"}[metric], text=text, key=f"s1|{metric}|0|abc",
                judge_score=0.8, judge_verdict=True, question="How long is the warranty?",
                answer="Thanks for asking. The warranty covers parts for two years.", reference="Two years.",
                contexts=tuple(contexts), chunk=0 if metric == "context_precision" else None)
    return ReviewItem(**{**base, **kw})


def test_the_sentence_sharing_most_of_the_items_words_is_marked():
    context = ("Our stores open at nine. The limited warranty covers parts and labour for two years from purchase. "
               "Returns are accepted within 30 days.")
    span, share = best_span("The warranty covers parts for two years.", context)
    assert context[span[0]:span[1]] == ("The limited warranty covers parts and labour for two years from "
                                        "purchase.")
    assert share == 1.0
    assert best_span("Shipping is free to Norway.", context) == (None, 0.0)
    assert best_span("", context) == (None, 0.0)


def test_two_adjacent_sentences_are_marked_only_when_together_they_hold_clearly_more():
    context = "The warranty lasts two years. It covers parts and labour. Stores open at nine."
    span, _ = best_span("The two-year warranty covers parts and labour.", context)
    assert context[span[0]:span[1]] == "The warranty lasts two years. It covers parts and labour."
    span, _ = best_span("The warranty lasts two years.", context)
    assert context[span[0]:span[1]] == "The warranty lasts two years."


def test_chinese_text_is_matched_character_by_character():
    context = "保修期为两年。商店九点开门。"
    span, _ = best_span("保修期两年", context)
    assert context[span[0]:span[1]] == "保修期为两年。"


def test_the_statement_is_found_in_the_answer_exactly_or_across_other_whitespace():
    answer = "Thanks for asking. The warranty covers\nparts for two years."
    start, end = find_item("The warranty covers parts for two years.", answer)
    assert answer[start:end] == "The warranty covers\nparts for two years."
    assert find_item("", answer) is None


def test_an_excerpt_is_about_the_size_asked_and_holds_the_span():
    text = "word " * 1000
    span = (2500, 2540)
    start, end = excerpt(text, span, 700)
    assert start <= span[0] and span[1] <= end and 700 <= end - start <= 760
    assert start == 0 or text[start - 1] == " "
    assert excerpt("short", None, 700) == (0, 5)
    assert excerpt(text, None, 700)[0] == 0


def test_a_faithfulness_view_has_the_question_contexts_answer_marked_and_the_statement():
    view = item_view(item(contexts=("Stores open at nine. The warranty covers parts for two years.",
                                    "Returns within 30 days.")))
    assert [p.role for p in view.passages] == ["question", "context", "context", "answer", "item"]
    context, answer = view.passages[1], view.passages[3]
    assert [context.text[a:b] for a, b in context.marks] == ["The warranty covers parts for two years."]
    assert view.passages[2].marks == ()
    assert [answer.text[a:b] for a, b in answer.marks] == ["The warranty covers parts for two years."]
    assert view.yes == "supported" and "supported by the contexts" in view.ask
    assert view.judge.startswith("the judge said supported")


def test_a_chunk_is_shown_with_what_it_was_judged_useful_for():
    view = item_view(item("context_precision", text="The warranty is two years.", contexts=("The warranty is two "
                                                                                           "years.", "Other.")))
    assert [(p.role, p.text) for p in view.passages] == [
        ("question", "How long is the warranty?"), ("reference", "Two years."), ("item", "The warranty is two years.")]
    assert "useful for the reference answer" in view.ask and view.yes == "relevant"
    no_reference = item_view(item("context_precision", text="x", contexts=("x",), reference=None))
    assert no_reference.passages[1].role == "answer" and "useful for the answer" in no_reference.ask


def test_a_long_context_is_shown_first_around_its_marked_part_and_f_shows_all_of_it():
    filler = "Filler sentence about nothing in particular. " * 60
    context = filler + "The warranty covers parts for two years. " + filler
    assert len(context) > LONG
    view = item_view(item(contexts=(context,)))
    short = "\n".join(item_lines(view, "3/50", width=100))
    assert "── 3/50 · faithfulness · sample s1 · statement 1" in short
    assert f"of {len(context):,} characters around the part that best matches the item; f: all of it" in short
    assert "»The warranty covers" in short and "two years.«" in short
    assert short.count("Filler") < context.count("Filler") and len(short) < len(context)
    assert "…" in short and AROUND < len(context)
    full = "\n".join(item_lines(view, "3/50", full=True, width=100))
    assert full.count("Filler") == context.count("Filler")


def test_a_highlight_across_lines_is_closed_at_each_lines_end_and_the_judge_shows_only_when_asked():
    context = "The warranty covers parts for two years, and it also covers the labour of the repair in full. Stop."
    view = item_view(item(text="The warranty covers parts and the labour of the repair for two years.",
                          contexts=(context,), answer=""))
    lines = item_lines(view, "1/2", width=50, color=True)
    marked = [line for line in lines if "\x1b[7m" in line]
    assert len(marked) >= 3  # the sentence is marked over three lines, each line's highlight closed on it
    assert all(line.count("\x1b[7m") == line.count("\x1b[27m") for line in marked)
    assert all(line.startswith("    \x1b[7m") for line in marked[1:])  # opened again after the margin
    assert not any("Judge:" in line for line in lines)
    assert any(line.startswith("Judge: the judge said supported (score 0.80)")
               for line in item_lines(view, "1/2", show_judge=True))


def test_control_characters_in_the_data_are_printed_escaped():
    view = item_view(item(question="How long?\x1b]0;owned\x07", contexts=("Red \x1b[31mtext\x1b[0m here.",)))
    text = "\n".join(item_lines(view, "1/1"))
    assert "\x1b" not in text and "\\x1b]0;owned\\x07" in text and "\\x1b[31m" in text
