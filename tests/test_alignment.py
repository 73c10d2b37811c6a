"""The character alignment and the step/write oracle of the hard-attention model."""

import pytest
from hypothesis import given, strategies as st

from rnnpb_nmt.tasks.inflection.alignment import EARLY, STEP, align, alignment_actions, levenshtein

from helpers import oracle_actions, replay

WORDS = st.text(alphabet="abcäé\u0301ʼ", max_size=9)


def test_the_papers_figure_3_examples_give_the_papers_actions():
    """legte -> lege: t is deleted by two consecutive steps; flog -> fliege: o becomes ie by two
    writes after the step onto o (Aharoni & Goldberg §5.1)."""
    s = STEP
    assert oracle_actions("legte", "lege") == [s, "l", s, "e", s, "g", s, s, "e"]
    assert oracle_actions("flog", "fliege") == [s, "f", s, "l", s, "i", "e", s, "g", "e"]


def test_a_prefix_is_written_before_the_first_step_and_a_suffix_after_the_last():
    assert oracle_actions("ab", "geab") == ["g", "e", STEP, "a", STEP, "b"]
    assert oracle_actions("ab", "abs") == [STEP, "a", STEP, "b", "s"]


def test_levenshtein_distances_by_hand():
    assert levenshtein("kitten", "sitting") == 3
    assert levenshtein("", "abc") == 3
    assert levenshtein("flaw", "lawn") == 2
    assert levenshtein("same", "same") == 0


@given(WORDS, WORDS)
def test_replaying_the_oracle_writes_the_form_with_a_pointer_that_only_moves_on(lemma, form):
    """Every input character is stepped onto exactly once, in order, and every output
    character written: the pointer goes 0, 1, ..., len(lemma), never back nor further."""
    written, pointers = replay(lemma, oracle_actions(lemma, form))
    assert "".join(written) == form
    assert pointers[0] == 0 and pointers[-1] == len(lemma)
    assert all(0 <= b - a <= 1 for a, b in zip(pointers, pointers[1:]))


@given(WORDS, WORDS)
def test_the_alignment_is_a_minimum_edit_alignment_of_the_two_words(lemma, form):
    columns = align(lemma, form)
    assert "".join(a for a, _ in columns if a) == lemma and "".join(b for _, b in columns if b) == form
    assert sum(a != b for a, b in columns) == levenshtein(lemma, form)


def test_replay_refuses_a_step_past_the_last_character():
    """The replaying tests above rely on it: an oracle stepping too far fails them."""
    with pytest.raises(ValueError, match="past the last character"):
        replay("a", [STEP, STEP])


def test_early_insertions_put_the_infinitives_zu_before_the_stem_where_the_default_puts_it_after():
    """crpalign's tie-breaking (notes/inflection.md, 2026-12-06): abzupfet -> abzuzupfen, the inserted
    zu after the particle ab; the default copies the stem's zu first. A pair without ties: the same."""
    columns = [(a, a) for a in "ab"], [(None, b) for b in "zu"], [(a, a) for a in "zupfe"], [("t", "n")]
    early, late = columns[0] + columns[1] + columns[2], columns[0] + columns[2][:2] + columns[1] + columns[2][2:]
    assert align("abzupfet", "abzuzupfen", insertions=EARLY) == early + columns[3]
    assert align("abzupfet", "abzuzupfen") == late + columns[3]
    assert align("ab", "abs", insertions=EARLY) == align("ab", "abs") == [("a", "a"), ("b", "b"), (None, "s")]
    # a substitution and an insertion, tied: the insertion first (the default: last)
    assert align("xay", "xbcy", insertions=EARLY) == [("x", "x"), (None, "b"), ("a", "c"), ("y", "y")]
    assert align("xay", "xbcy") == [("x", "x"), ("a", "b"), (None, "c"), ("y", "y")]


def writes_before_each_step(actions):
    """How many characters an action sequence has written before each of its steps."""
    written, counts = 0, []
    for action in actions:
        if action == STEP:
            counts.append(written)
        else:
            written += 1
    return counts


@given(WORDS, WORDS)
def test_early_insertions_give_a_minimum_edit_alignment_that_writes_no_later_than_the_default(lemma, form):
    early, late = align(lemma, form, insertions=EARLY), align(lemma, form)
    assert sum(a != b for a, b in early) == sum(a != b for a, b in late) == levenshtein(lemma, form)
    written, pointers = replay(lemma, alignment_actions(early))
    assert "".join(written) == form and pointers[-1] == len(lemma)
    before_early, before_late = (writes_before_each_step(alignment_actions(c)) for c in (early, late))
    assert all(e >= d for e, d in zip(before_early, before_late))
