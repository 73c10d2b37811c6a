"""Using a trained model: --do_testing (translate a test set, score it), --query, and raw lines
translated with their scores (translate mode and the Python API build on ``translate_nbest_lines``)."""

import os
import time
import typing

from rnnpb_nmt.data.files import write_json, write_text

TRANSLATIONS, STATS = "test_trans.txt", "testing_stats.json"
OUTPUTS = (TRANSLATIONS, STATS)  # --do_testing's files in the working directory


def test(translator, task, test_set, working_dir, reference=None, reverse=False, log=print, members=None):
    """Translate ``test_set``, write test_trans.txt and testing_stats.json, return the stats.

    The task reads the test set and its reference (a test set without one is translated but not
    scored), scores the translations (the translation task also by source length) and says what
    test_trans.txt's lines are. ``members``: the working directories of an ensemble whose vote
    ``translator`` is (``--ensemble``), recorded.
    """
    config = translator.model.config
    target_language = config.data.lang1 if reverse else config.data.lang2
    sources, references, reference = task.read_test(test_set, reference, target_language)
    started = time.time()
    hypotheses = translator.translate(sources, reverse=reverse, show_progress=True)
    stats = {"test_set": test_set, "sentences": len(sources), "testing_time": time.time() - started,
             "beam_size": config.inference.beam_size, "direction": "B->A" if reverse else "A->B",
             **({"ensemble": members} if members else {}),
             **({"averaged_epochs": list(averaged)} if (averaged := getattr(translator.model, "averaged_epochs", ()))
                else {})}
    lines = task.output_lines(sources, hypotheses)
    empty = sum(not line.strip() for line in lines)
    if empty:  # a model that gives up at once, or a test set unlike the training data (raw text?)
        log(f"warning: {empty} of {len(lines)} translations are empty")
        stats["empty_translations"] = empty
    write_text(os.path.join(working_dir, TRANSLATIONS), "".join(line + "\n" for line in lines))
    if references is None:
        log(f"no reference found for {test_set} (looked for {reference}); translations written, no score")
    else:
        stats.update(reference=reference, **task.score(sources, hypotheses, references, target_language))
        log(task.describe(stats))
    write_json(os.path.join(working_dir, STATS), stats)
    log(f"translated {len(sources)} sentences in {stats['testing_time']:.1f}s")
    return stats


class Translation(typing.NamedTuple):
    """One translation of a raw sentence: its raw text, the model's summed log-probability of it,
    and the log-probability of each output symbol and of the end."""

    text: str
    score: float
    token_scores: list


def translate_nbest_lines(translator, task, lines, nbest=1, reverse=False):
    """Raw sentences -> for each, its ``nbest`` translations (``Translation``), best first; a line
    without words gets one empty translation.

    The task prepares the input like the training data and restores the outputs to raw text.
    """
    data = translator.model.config.data
    source_language, target_language = (data.lang2, data.lang1) if reverse else (data.lang1, data.lang2)
    tokenized = task.tokenize(lines, source_language)
    todo = [i for i, t in enumerate(tokenized) if t]
    results = [[Translation("", 0.0, [])] for _ in lines]
    found = translator.translate_nbest([tokenized[i] for i in todo], nbest, reverse=reverse) if todo else []
    for i, hypotheses in zip(todo, found):
        texts = task.detokenize([h.tokens for h in hypotheses], target_language)
        results[i] = [Translation(text, float(h.score), [float(s) for s in h.token_scores])
                      for text, h in zip(texts, hypotheses)]
    return results


def translate_lines(translator, task, lines, reverse=False):
    """Raw sentences -> their best raw translations, one for each (an empty one for a line without words)."""
    return [found[0].text for found in translate_nbest_lines(translator, task, lines, 1, reverse)]

