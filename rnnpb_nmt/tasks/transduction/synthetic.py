"""The five synthetic transduction tasks of Grefenstette et al. 2015 §4, as (source, target) pairs.

    copy                target = source                              (§4.1 sequence copying)
    reverse             target = source reversed                     (§4.1 sequence reversal)
    bigram_flip         a1 a2 a3 a4 ... -> a2 a1 a4 a3 ...; even lengths (§4.1 bigram flipping)
    svo_sov             verb moved over its object                   (§4.2, grammar in rnnpb_nmt.tasks.transduction.itg)
    gender_conjugation  genderless articles -> gendered ones         (§4.2, grammar in rnnpb_nmt.tasks.transduction.itg)

The two §4.2 tasks come twice: as above, from our reconstruction of the grammars (the recorded
cells'), and as ``svo_sov_paper`` and ``gender_conjugation_paper``, from the paper's own Table 1.

Tokens are strings, so that pairs go straight into the toolkit's text files: the §4.1 tasks draw
symbols x1 .. x{vocab_size} uniformly with replacement, the source length uniformly from
[min_len, max_len]; the grammars name their words as in the paper's samples (si1, vo28, rpi,
the, das, ...), each word class having vocab_size // (number of classes) words (§4.2), and a
derivation is kept only when its source length is within [min_len, max_len] (§4.2's rejection;
``TRAIN_LENGTHS`` and ``TEST_LENGTHS`` are the paper's ranges). Targets have no EOS or separator:
those belong to the model's input pipeline, like the <end> of every corpus the toolkit reads.

Everything is drawn from ``numpy.random.default_rng(seed)``: the same arguments give the same
pairs. A directory of files written by ``data/generate_transduction.py`` also holds
``generator.json``, the arguments its training pairs were drawn with, so that training can draw
fresh pairs of the same kind every epoch (``--fresh_data``: ``epoch_pairs``).
"""

import json
import os

import numpy as np

from rnnpb_nmt.data.files import write_json
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.tasks.transduction import itg

# The paper's source lengths (§4.1, §4.3): test sequences are longer than any seen in training.
TRAIN_LENGTHS, TEST_LENGTHS = (8, 64), (65, 128)
SEQUENCE_TASKS = ("copy", "reverse", "bigram_flip")
TASKS = SEQUENCE_TASKS + tuple(itg.GRAMMARS)
# Derivations tried per pair found before the length range is declared out of the grammar's
# reach (the paper's ranges need about 3 per pair from our grammars; from the paper's own gender
# grammar, whose long sentences are rare, about 700 per test_long pair).
MAX_TRIES_PER_PAIR = 10000
GENERATOR_FILE = "generator.json"
# The seed stream of the fresh pairs of an epoch: (seed, FRESH_STREAM, epoch). The written files
# draw from (seed, 0) to (seed, 3) (train, dev, test, test_long), so no epoch repeats one of them.
FRESH_STREAM = 4
GENERATOR_KEYS = ("task", "seed", "min_len", "max_len", "vocab_size")


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
    pairs, tries, draws = [], 0, itg.uniforms(rng)
    while len(pairs) < n:
        if tries >= MAX_TRIES_PER_PAIR * (len(pairs) + 1):
            raise UserError(f"min_len={min_len}, max_len={max_len}: the grammar almost never makes such lengths")
        tries += 1
        try:
            source, target = itg.yields(grammar, itg.derive(grammar, draws, class_size, max_len))
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


def alphabet(task, vocab_size=128):
    """(source symbols, target symbols): every symbol ``generate(task, ..., vocab_size)`` can draw."""
    if task in SEQUENCE_TASKS:
        symbols = {f"x{k}" for k in range(1, vocab_size + 1)}
        return symbols, symbols
    grammar = itg.GRAMMARS[task]
    class_size = vocab_size // len(itg.word_classes(grammar))
    sides = set(), set()
    for entry in grammar.values():
        if isinstance(entry, itg.WordClass):
            for side, stem in zip(sides, entry):
                side.update(f"{stem}{k}" for k in range(1, class_size + 1))
        elif isinstance(entry, itg.Word):
            for side, word in zip(sides, entry):
                side.add(word)
    return sides


def write_generator(directory, spec):
    """Keep ``spec`` ({GENERATOR_KEYS}: the arguments the training pairs were drawn with) beside
    the files in ``directory``, for ``read_generator``."""
    write_json(os.path.join(directory, GENERATOR_FILE), {key: spec[key] for key in GENERATOR_KEYS})


def read_generator(directory):
    """The spec ``write_generator`` kept in ``directory``; a UserError naming the file if it is
    missing or not one."""
    path = os.path.join(directory, GENERATOR_FILE)
    try:
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
    except FileNotFoundError:
        raise UserError(f"{path}: missing (data/generate_transduction.py writes it beside the files it "
                        "writes; --fresh_data draws pairs as it says)") from None
    except (OSError, ValueError) as e:
        raise UserError(f"{path}: unreadable ({e})") from None
    if not isinstance(spec, dict) or set(spec) != set(GENERATOR_KEYS):
        raise UserError(f"{path}: not a generator's arguments (keys {', '.join(GENERATOR_KEYS)})")
    try:
        check(spec["task"], 0, spec["min_len"], spec["max_len"], spec["vocab_size"])
    except (UserError, TypeError) as e:
        raise UserError(f"{path}: {e}") from None
    return spec


def epoch_pairs(spec, n, epoch):
    """``n`` new training pairs for epoch ``epoch`` (1-based), drawn as ``spec`` (``read_generator``)
    drew the training file's: the same for the same epoch, so a resumed run trains on the pairs the
    uninterrupted one did, and the same for every initialisation of a cell."""
    return generate(spec["task"], n, spec["min_len"], spec["max_len"], seed=[spec["seed"], FRESH_STREAM, epoch],
                    vocab_size=spec["vocab_size"])
