"""Using a trained model: --do_testing (translate a test set, score it) and --query."""

import os
import sys
import time

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
             **({"ensemble": members} if members else {})}
    lines = task.output_lines(sources, hypotheses)
    write_text(os.path.join(working_dir, TRANSLATIONS), "".join(line + "\n" for line in lines))
    if references is None:
        log(f"no reference found for {test_set} (looked for {reference}); translations written, no score")
    else:
        stats.update(reference=reference, **task.score(sources, hypotheses, references, target_language))
        log(task.describe(stats))
    write_json(os.path.join(working_dir, STATS), stats)
    log(f"translated {len(sources)} sentences in {stats['testing_time']:.1f}s")
    return stats


def stdin_lines(stream):
    """The lines of a binary stream as text: LF or CRLF, a leading BOM dropped.

    Undecodable bytes become U+FFFD, so that they do not cost the other lines their translations.
    """
    lines = stream.read().decode("utf-8-sig", errors="replace").split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]


def translate_lines(translator, task, lines, reverse=False):
    """Raw sentences -> raw translations, one for each (an empty one for a line without words).

    The task tokenizes the input like the training data and detokenizes the output.
    """
    data = translator.model.config.data
    source_language, target_language = (data.lang2, data.lang1) if reverse else (data.lang1, data.lang2)
    tokenized = task.tokenize(lines, source_language)
    todo = [i for i, t in enumerate(tokenized) if t]
    outputs = [""] * len(lines)
    translated = translator.translate([tokenized[i] for i in todo], reverse=reverse)
    for i, text in zip(todo, task.detokenize(translated, target_language)):
        outputs[i] = text
    return outputs


def query(translator, task, text, reverse=False, out=sys.stdout):
    """--query: translate one sentence, or with ``text='-'`` one sentence per stdin line.

    Each input line gives exactly one output line; an empty line gives an empty line.
    """
    for line in translate_lines(translator, task, stdin_lines(sys.stdin.buffer) if text == "-" else [text], reverse):
        out.write(line + "\n")
    out.flush()
