"""English question formation (McCoy, Frank & Linzen 2018): examples from a grammar, the main
and the first auxiliary of a sentence, and which auxiliary an output moved.

An example's input is a declarative sentence and a task word: ``decl`` asks for the sentence
itself, ``quest`` for the yes/no question made by moving the sentence's *main* auxiliary (the
one of its main verb phrase) to the front and ending with ``?``. In training, ``quest`` examples
are only sentences whose main auxiliary is also their first (no relative clause on the subject),
so the data cannot tell "move the main auxiliary" from "move the first"; the generalization set
is ``quest`` examples whose subject has a relative clause, where the two rules differ.

The structure comes from parsing with the grammar: auxiliaries are the words of symbols named
``Aux...``, and the main one is the auxiliary child of the start rule's verb phrase (the first
symbol under the sentence whose name starts with ``VP``), as in ``question.gr``.
"""

import random

from rnnpb_nmt.errors import UserError
from rnnpb_nmt.tasks.question_formation.grammar import words

DECL, QUEST = "decl", "quest"


def leaves(tree):
    """(preterminal symbol, whether under the main verb phrase) of each word of a derivation."""
    found = []
    entered = False  # whether the main verb phrase has been met

    def walk(node, under_vp):
        nonlocal entered
        symbol, children = node
        for child in children:
            if isinstance(child, str):
                found.append((symbol, under_vp))
                continue
            # The first VP met (in preorder) is the main one: relative clauses have no VP symbol.
            main_vp = child[0].startswith("VP") and not entered
            entered = entered or main_vp
            walk(child, under_vp or main_vp)

    walk(tree, False)
    return found


def auxiliaries(tree):
    """(main auxiliary's index or None, index of every auxiliary) among the words of a derivation."""
    tagged = leaves(tree)
    found = [i for i, (symbol, _) in enumerate(tagged) if symbol.startswith("Aux")]
    main = next((i for i in found if tagged[i][1]), None)
    return main, found


def contrasting(tree):
    """Whether the first word of a sentence's question alone tells "move the main auxiliary" from
    "move the first", as in the shared generalization set (all of its 10 000 sentences): two
    auxiliaries, the first not the main, of one preterminal (question.gr's Aux_S or Aux_P: they
    agree in number) but different words (do/don't, does/doesn't). Neither agreement nor a
    repeated word then hints at the answer; only the structure does."""
    main, found = auxiliaries(tree)
    if len(found) != 2 or main != found[1]:
        return False
    preterminals, sentence = [symbol for symbol, _ in leaves(tree)], words(tree)
    first = found[0]
    return preterminals[first] == preterminals[main] and sentence[first] != sentence[main]


def question(sentence, main):
    """The question of a declarative ``sentence`` (words ending in ``.``): its main auxiliary
    (index ``main``) moved to the front, ``?`` for the full stop."""
    return [sentence[main]] + sentence[:main] + sentence[main + 1:-1] + ["?"]


def output(sentence, task, main):
    return list(sentence) if task == DECL else question(sentence, main)


class Analysis:
    """A declarative sentence's structure, from its parse."""

    def __init__(self, grammar, sentence, where):
        tree = grammar.parse(sentence)
        if tree is None:
            raise UserError(f"{where}: the grammar does not derive {' '.join(sentence)!r}")
        self.main, self.auxiliaries = auxiliaries(tree)
        if self.main is None:
            raise UserError(f"{where}: no main auxiliary in {' '.join(sentence)!r}")
        self.first = self.auxiliaries[0]


def split_input(tokens, where):
    """(declarative sentence, task word) of an input line's tokens."""
    if len(tokens) < 2 or tokens[-1] not in (DECL, QUEST):
        raise UserError(f"{where}: an input ends with the task word {DECL} or {QUEST}")
    return tokens[:-1], tokens[-1]


# Which auxiliary an output of a generalization example deleted and which it put in front
# (McCoy et al. 2018): (name, deleted, preposed), in the order ties are named (when the two
# auxiliaries are the same word, several describe one output; the first listed wins).
CATEGORIES = (("delete_main_prepose_main", "main", "main"), ("delete_first_prepose_first", "first", "first"),
              ("delete_none_prepose_main", None, "main"), ("delete_none_prepose_first", None, "first"),
              ("delete_first_prepose_main", "first", "main"), ("delete_main_prepose_first", "main", "first"))


def category(sentence, analysis, prediction):
    """The name of the category of ``prediction`` for a ``quest`` of ``sentence``, or "other"."""
    index = {"main": analysis.main, "first": analysis.first}
    for name, deleted, preposed in CATEGORIES:
        kept = [w for i, w in enumerate(sentence[:-1]) if deleted is None or i != index[deleted]]
        if list(prediction) == [sentence[index[preposed]]] + kept + ["?"]:
            return name
    return "other"


# question.gr needs about 1.3 draws per training example and 8.6 per generalization example (a third
# of its sentences have a first auxiliary that is not the main one, and 35 % of those are
# contrasting); a grammar that needs far more has too few sentences.
DRAWS_PER_EXAMPLE = 20


def generate(grammar, size, seed, exclude=(), kind="train"):
    """``size`` distinct (input tokens, output tokens) examples drawn from ``grammar`` with ``seed``.

    ``kind`` "train" (also dev and test sets): each sentence gets ``decl`` or ``quest`` with
    equal probability, and a ``quest`` whose main auxiliary is not its first is dropped, as the
    paper's training set was made; "gen": only ``quest`` of ``contrasting`` sentences, drawn like
    the shared generalization set. Of question.gr's sentences whose first auxiliary is not the
    main one (40 000 draws), 41 % have two auxiliaries of the same word (moving the first puts the
    right word in front), 10 % a third auxiliary, and 14 % two of different number (the right one
    agrees with the subject): none of these is in the shared set, and a set with them measures
    another first-word accuracy than the one scored there. The other 35 % are contrasting.
    ``exclude``: declarative sentences (tuples) that must not occur (other sets').
    """
    rng, seen, examples = random.Random(seed), set(exclude), []
    for _ in range(DRAWS_PER_EXAMPLE * size + 1000):
        if len(examples) == size:
            return examples
        tree = grammar.sample(rng)
        sentence = words(tree)
        task = QUEST if kind == "gen" or rng.random() < 0.5 else DECL
        if tuple(sentence) in seen:
            continue
        main, found = auxiliaries(tree)
        hierarchical = main is not None and main != found[0]
        if main is None or (task == QUEST and hierarchical != (kind == "gen")):
            continue
        if kind == "gen" and not contrasting(tree):
            continue
        seen.add(tuple(sentence))
        examples.append((sentence + [task], output(sentence, task, main)))
    raise UserError(f"cannot draw {size} distinct {kind} examples from the grammar (drew {len(examples)})")
