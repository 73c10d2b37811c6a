"""The five synthetic transduction tasks of Grefenstette et al. 2015 §4, as (source, target) pairs.

    copy                target = source                              (§4.1 sequence copying)
    reverse             target = source reversed                     (§4.1 sequence reversal)
    bigram_flip         a1 a2 a3 a4 ... -> a2 a1 a4 a3 ...; even lengths (§4.1 bigram flipping)
    svo_sov             verb moved over its object                   (§4.2, grammar in rnnpb_nmt.tasks.transduction.itg)
    gender_conjugation  genderless articles -> gendered ones         (§4.2, grammar in rnnpb_nmt.tasks.transduction.itg)

Tokens are strings, so that pairs go straight into the toolkit's text files: the §4.1 tasks draw
symbols x1 .. x{vocab_size} uniformly with replacement, the source length uniformly from
[min_len, max_len]; the grammars name their words as in the paper's samples (si1, vo28, rpi,
the, das, ...), each word class having vocab_size // (number of classes) words (§4.2), and a
derivation is kept only when its source length is within [min_len, max_len] (§4.2's rejection;
``TRAIN_LENGTHS`` and ``TEST_LENGTHS`` are the paper's ranges). Targets have no EOS or separator:
those belong to the model's input pipeline, like the <end> of every corpus the toolkit reads.

Everything is drawn from ``numpy.random.default_rng(seed)``: the same arguments give the same
pairs.
"""

import os

import numpy as np

from rnnpb_nmt.errors import UserError
from rnnpb_nmt.tasks.transduction import itg

# The paper's source lengths (§4.1, §4.3): test sequences are longer than any seen in training.
TRAIN_LENGTHS, TEST_LENGTHS = (8, 64), (65, 128)
SEQUENCE_TASKS = ("copy", "reverse", "bigram_flip")
TASKS = SEQUENCE_TASKS + tuple(itg.GRAMMARS)
# Derivations tried per pair found before the length range is declared out of the grammar's
# reach (the paper's ranges need about 3 per pair).
MAX_TRIES_PER_PAIR = 1000


def transform(task, source):
    """The deterministic target of a §4.1 source sequence."""
    if task == "copy":
        return list(source)
    if task == "reverse":
        return source[::-1]
    flipped = []
    for first, second in zip(source[0::2], source[1::2]):
        flipped += [second, first]
    return flipped


def generate(task, n, min_len, max_len, seed, vocab_size=128):
    """``n`` (source tokens, target tokens) pairs of ``task`` with source lengths in
    [``min_len``, ``max_len``], from ``vocab_size`` content symbols. Bad arguments raise UserError."""
    check(task, n, min_len, max_len, vocab_size)
    rng = np.random.default_rng(seed)
    if task in SEQUENCE_TASKS:
        return [sequence_pair(task, rng, min_len, max_len, vocab_size) for _ in range(n)]
    return grammar_pairs(itg.GRAMMARS[task], rng, n, min_len, max_len, vocab_size)


def check(task, n, min_len, max_len, vocab_size):
    """Refuse arguments that would loop forever or make no sense, naming the argument."""
    if task not in TASKS:
        raise UserError(f"task={task}: unknown synthetic task (one of {', '.join(TASKS)})")
    if n < 0:
        raise UserError(f"n={n}: the number of pairs cannot be negative")
    if min_len < 1:
        raise UserError(f"min_len={min_len}: must be at least 1")
    if min_len > max_len:
        raise UserError(f"min_len={min_len} > max_len={max_len}")
    if task == "bigram_flip" and min_len == max_len and min_len % 2:
        raise UserError(f"min_len=max_len={min_len}: bigram_flip needs an even length")
    classes = len(itg.word_classes(itg.GRAMMARS[task])) if task in itg.GRAMMARS else 1
    if vocab_size < classes:
        raise UserError(f"vocab_size={vocab_size}: {task} needs a symbol for each of its {classes} word classes")


def sequence_pair(task, rng, min_len, max_len, vocab_size):
    """One §4.1 pair: a uniform length (an even one for bigram_flip), uniform symbols."""
    if task == "bigram_flip":
        length = 2 * int(rng.integers((min_len + 1) // 2, max_len // 2 + 1))
    else:
        length = int(rng.integers(min_len, max_len + 1))
    source = [f"x{k}" for k in rng.integers(1, vocab_size + 1, size=length)]
    return source, transform(task, source)


def grammar_pairs(grammar, rng, n, min_len, max_len, vocab_size):
    """Rejection sampling: derivations outside the length range are dropped."""
    class_size = vocab_size // len(itg.word_classes(grammar))
    pairs, tries = [], 0
    while len(pairs) < n:
        if tries >= MAX_TRIES_PER_PAIR * (len(pairs) + 1):
            raise UserError(f"min_len={min_len}, max_len={max_len}: the grammar almost never makes such lengths")
        tries += 1
        try:
            source, target = itg.yields(grammar, itg.derive(grammar, rng, class_size, max_len))
        except itg.TooLong:
            continue
        if len(source) >= min_len:
            pairs.append((source, target))
    return pairs


def write(pairs, directory, name):
    """Write ``pairs`` to ``directory/name.src`` and ``directory/name.tgt``, one space-separated
    sequence per line, line i of one the translation of line i of the other: the format of the
    toolkit's --train_set1/--train_set2 (and dev, test) files. Returns the two paths."""
    os.makedirs(directory, exist_ok=True)
    paths = [os.path.join(directory, f"{name}.{side}") for side in ("src", "tgt")]
    for side, path in enumerate(paths):
        with open(path, "w", encoding="utf-8") as f:
            f.writelines(" ".join(pair[side]) + "\n" for pair in pairs)
    return paths
