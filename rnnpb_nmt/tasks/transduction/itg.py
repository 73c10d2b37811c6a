"""The two synchronous grammars (ITGs) of Grefenstette et al. 2015 §4.2, and sampling from them.

A rule rewrites a nonterminal into a sequence of symbols on the source side and into the same
symbols, possibly reordered, on the target side; terminals are pairs of words, one per side. A
derivation is a tree; its source and target strings are read off the same tree, so every target
follows from its source by the grammar's paired rules. ``derive`` samples a tree, ``yields``
reads the strings: tests build the paper's example trees by hand and read them with ``yields``.

Two versions of each. ``svo_sov`` and ``gender_conjugation`` are reconstructions from §4.2's
descriptions and its two sample pairs, made when the paper's grammars (its Table 1, Appendix C,
which the project's copy of the paper lacks) were not at hand; the recorded transduction cells
were trained on them. Their rule probabilities are ours, tuned by hand so that source lengths
8-128 are roughly uniform (``tests/test_synthetic.py`` measures the histogram). ``svo_sov_paper``
and ``gender_conjugation_paper`` are the paper's Table 1, rule for rule and with its
probabilities, as printed in the full version of the paper (arXiv 1506.02516, Appendix C). Both
versions derive the two samples exactly (``tests/test_synthetic.py``):

    si1 vi28 oi5 oi7 si15 rpi si19 vi16 oi10 oi24 ||| so1 oo5 oo7 so15 rpo so19 vo16 oo10 oo24 vo28
    we11 the en19 and the em17 ||| wg11 das gn19 und der gm17

Where they differ: the paper's relative clause is ``S rp S V``, with no object of its own (ours:
``rp S v O``), so a clause's verb can come right before the main verb; its subjects and objects
may be sequences of nouns and clauses (ours: a subject is one noun, with or without a clause);
its gender sentences join noun phrases by "or" as well as "and", two at a time. Its
probabilities make short sentences far more likely than long ones (the text says the lengths
were "relatively uniform"; the table's numbers do not give that), and its word classes have
about 100 / k words each for k classes: ``--vocab_size=100``. Table 1 names the gender grammar's
nouns me/mg, fe/fg, ne/ng; the sample (and these grammars) em/gm, ef/gf, en/gn: names only.
"""

import bisect
from itertools import accumulate
from typing import NamedTuple


class Rule(NamedTuple):
    """``prob``: its probability among its nonterminal's rules; ``source``: the symbols;
    ``order``: the target side, as positions in ``source``."""

    prob: float
    source: tuple
    order: tuple


class WordClass(NamedTuple):
    """A terminal-generating nonterminal: its k-th word is ``{source}{k}`` / ``{target}{k}``."""

    source: str
    target: str


class Word(NamedTuple):
    """A fixed word pair (a function word)."""

    source: str
    target: str


def straight(prob, *symbols):
    """A rule whose target keeps the source order."""
    return Rule(prob, symbols, tuple(range(len(symbols))))


# Subject-verb-object to subject-object-verb: the main verb moves over its (unbounded) object;
# relative clauses (rp S V O) keep their order, as in the paper's sample. An object is a sequence
# of nouns that may end in a subject-like noun with its relative clause, which is how the
# sample's object "oi5 oi7 si15 rpi ..." is built.
SVO_SOV = {
    "A": [Rule(1.0, ("S", "v", "O"), (0, 2, 1))],
    "S": [straight(0.5, "s"), straight(0.5, "s", "RC")],
    "O": [straight(0.005, "o"), straight(0.99, "o", "O"), straight(0.005, "S")],
    "RC": [straight(1.0, "rp", "S", "v", "O")],
    "s": WordClass("si", "so"), "v": WordClass("vi", "vo"), "o": WordClass("oi", "oo"),
    "rp": Word("rpi", "rpo"),
}

# Genderless to gendered articles: sentences NP V NP or NP V (the paper's "(NP/(V/NP)) or
# (NP/V)"), a noun phrase being nouns joined by "and"; each source noun has a genderless article
# ("the", "a") that the target replaces by the one of the noun's gender (der/die/das,
# ein/eine/ein). The paper's sample is a V NP constituent.
GENDER = {
    "A": [straight(1.0, "NP", "VP")],
    "VP": [straight(0.7, "V", "NP"), straight(0.3, "V")],
    "NP": [straight(0.03, "N"), straight(0.97, "N", "and", "NP")],
    "N": [straight(1 / 3, "Nm"), straight(1 / 3, "Nf"), straight(1 / 3, "Nn")],
    "Nm": [straight(0.5, "the_m", "M"), straight(0.5, "a_m", "M")],
    "Nf": [straight(0.5, "the_f", "F"), straight(0.5, "a_f", "F")],
    "Nn": [straight(0.5, "the_n", "Nt"), straight(0.5, "a_n", "Nt")],
    "V": WordClass("we", "wg"), "M": WordClass("em", "gm"), "F": WordClass("ef", "gf"),
    "Nt": WordClass("en", "gn"),
    "and": Word("and", "und"),
    "the_m": Word("the", "der"), "the_f": Word("the", "die"), "the_n": Word("the", "das"),
    "a_m": Word("a", "ein"), "a_f": Word("a", "eine"), "a_n": Word("a", "ein"),
}

# The paper's Table 1 (a): only the main verb moves; a relative clause (subject, rp, subject,
# verb) keeps its order wherever it is.
SVO_SOV_PAPER = {
    "A": [Rule(1.0, ("S", "v", "O"), (0, 2, 1))],
    "S": [straight(1 / 5, "S", "S"), straight(1 / 5, "S", "rp", "S", "v"), straight(3 / 5, "s")],
    "O": [straight(1 / 5, "O", "O"), straight(1 / 5, "S", "rp", "S", "v"), straight(3 / 5, "o")],
    "s": WordClass("si", "so"), "v": WordClass("vi", "vo"), "o": WordClass("oi", "oo"),
    "rp": Word("rpi", "rpo"),
}

# The paper's Table 1 (b): B is a clause or phrase, V a verb with or without its noun phrases;
# an article with its noun is N (the table's S).
GENDER_PAPER = {
    "A": [straight(1.0, "B")],
    "B": [straight(1 / 4, "B", "or", "B"), straight(1 / 4, "N", "and", "N"), straight(1 / 2, "B", "V")],
    "V": [straight(3 / 4, "W", "B"), straight(1 / 4, "W")],
    "N": [straight(1 / 6, "the_m", "M"), straight(1 / 6, "the_f", "F"), straight(1 / 6, "the_n", "Nt"),
          straight(1 / 6, "a_m", "M"), straight(1 / 6, "a_f", "F"), straight(1 / 6, "a_n", "Nt")],
    "W": WordClass("we", "wg"), "M": WordClass("em", "gm"), "F": WordClass("ef", "gf"),
    "Nt": WordClass("en", "gn"),
    **{name: GENDER[name] for name in ("and", "the_m", "the_f", "the_n", "a_m", "a_f", "a_n")},
    "or": Word("or", "oder"),
}

GRAMMARS = {"svo_sov": SVO_SOV, "gender_conjugation": GENDER,
            "svo_sov_paper": SVO_SOV_PAPER, "gender_conjugation_paper": GENDER_PAPER}


def word_classes(grammar):
    """The terminal-generating nonterminals, which share the vocabulary equally (§4.2)."""
    return [name for name, entry in grammar.items() if isinstance(entry, WordClass)]


class TooLong(Exception):
    """A derivation outgrew its length budget (it would be rejected anyway)."""


def uniforms(rng, block=4096):
    """``rng.random()`` again and again, drawn ``block`` at a time: the same numbers in the same order
    (numpy draws a block as that many single draws), so the same pairs as one call per number, which
    cost half of the drawing time of SVO->SOV. ``rng`` is left up to a block further on."""
    while True:
        yield from rng.random(block).tolist()


def derive(grammar, draws, class_size, max_len, symbol="A"):
    """Sample a derivation tree of ``symbol``, each word class having ``class_size`` words, one
    number of ``draws`` (``uniforms``) per choice.

    A tree is (symbol, rule index, children) for a nonterminal, (symbol, k) for the k-th word of a
    word class and (symbol,) for a fixed word. Raises ``TooLong`` as soon as it has more than
    ``max_len`` words, so that a long derivation costs no more than the budget.
    """
    # A rule is chosen by one uniform draw through cumulative probabilities.
    cumulative = {sym: list(accumulate(rule.prob for rule in entry)) for sym, entry in grammar.items()
                  if isinstance(entry, list)}
    words = 0

    def grow(sym):
        nonlocal words
        choices = cumulative.get(sym)
        if choices is None:
            words += 1
            if words > max_len:
                raise TooLong
            return (sym, 1 + int(next(draws) * class_size)) if isinstance(grammar[sym], WordClass) else (sym,)
        index = min(bisect.bisect(choices, next(draws) * choices[-1]), len(choices) - 1)
        return sym, index, [grow(child) for child in grammar[sym][index].source]

    return grow(symbol)


def yields(grammar, tree):
    """The (source words, target words) of a derivation tree."""
    entry = grammar[tree[0]]
    if isinstance(entry, WordClass):
        return [f"{entry.source}{tree[1]}"], [f"{entry.target}{tree[1]}"]
    if isinstance(entry, Word):
        return [entry.source], [entry.target]
    parts = [yields(grammar, child) for child in tree[2]]
    source = [w for src, _ in parts for w in src]
    target = [w for i in entry[tree[1]].order for w in parts[i][1]]
    return source, target
