"""Using a trained model: --do_testing (translate a test set, score it), --query, and raw lines
translated with their scores (translate mode and the Python API build on ``translate_nbest_lines``)."""

import math
import os
import sys
import time
import typing

from rnnpb_nmt.data.files import write_json, write_text

TRANSLATIONS, STATS = "test_trans.txt", "testing_stats.json"


def outputs(reverse=False):
    """--do_testing's files in the working directory, (translations, statistics): test_trans.txt and
    testing_stats.json, or for --reverse_translation test_trans.reverse.txt and
    testing_stats.reverse.json, so that testing one direction keeps the other's results."""
    if not reverse:
        return TRANSLATIONS, STATS
    return tuple(name.replace(".", ".reverse.", 1) for name in (TRANSLATIONS, STATS))


def test(translator, task, test_set, working_dir, reference=None, log=print, members=None):
    """Translate ``test_set`` in the direction of ``translator`` (A->B, or B->A with a reversed one), write
    its ``outputs`` (test_trans.txt and testing_stats.json A->B), return the stats.

    The task reads the test set and its reference (a test set without one is translated but not
    scored), scores the translations (the translation task also by source length) and says what
    test_trans.txt's lines are. ``members``: the working directories of an ensemble whose vote
    ``translator`` is (``--ensemble``), recorded.
    """
    model = translator.model
    _, target_language = model.languages
    sources, references, reference = task.read_test(test_set, reference, target_language)
    started = time.time()
    hypotheses = translator.translate(sources, show_progress=True)
    stats = {"test_set": test_set, "sentences": len(sources), "testing_time": time.time() - started,
             "beam_size": model.config.inference.beam_size, "direction": model.direction,
             **({"ensemble": members} if members else {}),
             **({"averaged_epochs": list(averaged)} if (averaged := getattr(model, "averaged_epochs", ()))
                else {})}
    warn_of_long_inputs(translator, sources, [len(h) for h in hypotheses], lambda i: f"{test_set}:{i + 1}")
    lines = task.output_lines(sources, hypotheses)
    empty = sum(not line.strip() for line in lines)
    if empty:  # a model that gives up at once, or a test set unlike the training data (raw text?)
        log(f"warning: {empty} of {len(lines)} translations are empty")
        stats["empty_translations"] = empty
    translations_file, stats_file = (os.path.join(working_dir, name) for name in outputs(model.direction == "B->A"))
    write_text(translations_file, "".join(line + "\n" for line in lines))
    if references is None:
        log(f"no reference found for {test_set} (looked for {reference}); translations written, no score")
    else:
        stats.update(reference=reference, **task.score(sources, hypotheses, references, target_language))
        log(task.describe(stats))
    write_json(stats_file, stats)
    log(f"translated {len(sources)} sentences in {stats['testing_time']:.1f}s")
    return stats


class Translation(typing.NamedTuple):
    """One translation of a raw sentence: its raw text, the model's summed log-probability of it,
    and the log-probability of each output symbol and of the end."""

    text: str
    score: float
    token_scores: list


def translate_nbest_lines(translator, task, lines, nbest=1, place=None):
    """Raw sentences -> for each, its ``nbest`` translations (``Translation``) in the direction of
    ``translator``, best first; a line without words gets one empty translation.

    The task prepares the input like the training data and restores the outputs to raw text.
    With ``place`` (line index -> its name in messages, ``file:line``), lines longer than every
    training sentence are warned of (``warn_of_long_inputs``).
    """
    source_language, target_language = translator.model.languages
    tokenized = task.tokenize(lines, source_language)
    todo = [i for i, t in enumerate(tokenized) if t]
    results, produced = [[Translation("", 0.0, [])] for _ in lines], [0] * len(lines)
    found = translator.translate_nbest([tokenized[i] for i in todo], nbest) if todo else []
    for i, hypotheses in zip(todo, found):
        texts = task.detokenize([h.tokens for h in hypotheses], target_language)
        results[i] = [Translation(text, float(h.score), [float(s) for s in h.token_scores])
                      for text, h in zip(texts, hypotheses)]
        produced[i] = len(hypotheses[0].tokens)
    if place:
        warn_of_long_inputs(translator, tokenized, produced, place)
    return results


def warn_of_long_inputs(translator, sources, produced, place):
    """One line on stderr if any of ``sources`` (symbol lists, translated into ``produced`` symbols)
    is longer than every training sentence of the source side: the first such input by its ``place(index)``,
    what its translation came to beside the cap --max_trans_ratio puts on it, and the others' places.
    Nothing for a run from before the longest sentence was recorded (``longest_source`` 0)."""
    model = translator.model
    longest, ratio = model.longest_source, model.config.inference.max_trans_ratio
    long = [i for i, source in enumerate(sources) if longest and len(source) > longest]
    if not long:
        return
    first = long[0]
    cap = max(1, math.ceil(ratio * len(sources[first])))  # as the search's (Translator._search_fn)
    outcome = f"cut at the length cap --max_trans_ratio={ratio:g}" if produced[first] >= cap else \
        f"--max_trans_ratio={ratio:g} allows {cap}"
    others = [place(i) for i in long[1:]]
    shown = f"; also {', '.join(others[:5])}{f' and {len(others) - 5} more' if len(others) > 5 else ''}" if others else ""
    print(f"warning: {place(first)}: {len(sources[first])} tokens, longer than any training sentence ({longest}); "
          f"translated into {produced[first]} ({outcome}){shown}", file=sys.stderr)


def translate_lines(translator, task, lines):
    """Raw sentences -> their best raw translations, one for each (an empty one for a line without words)."""
    return [found[0].text for found in translate_nbest_lines(translator, task, lines, 1)]

