"""Using a trained model: --do_testing (translate a test set, score BLEU) and --query."""

import os
import sys
import time

from sacremoses import MosesDetokenizer, MosesTokenizer

from nmtcore.data import read_sentences
from nmtcore.errors import UserError
from nmtcore.metrics import bleu, detokenized_bleu
from nmtcore.training import write_json


def language_of(path):
    """The language code a file name ends with (train.en -> en), as Moses tools want it."""
    suffix = os.path.splitext(path)[1][1:]
    return suffix if suffix.isalpha() and 2 <= len(suffix) <= 3 else "en"


def reference_path(test_set, target_language):
    """The reference beside a test file: test.en -> test.de for an en->de model."""
    stem, suffix = os.path.splitext(test_set)
    return stem + "." + target_language if suffix else None


def test(model, test_set, working_dir, reference=None, reverse=False, log=print):
    """Translate ``test_set``, write test_trans.txt and testing_stats.json, return the stats.

    The reference is ``reference`` or the test file's counterpart in the target language; a test
    set without a reference is translated but not scored.
    """
    p = model.params
    target_language = p["lang1"] if reverse else p["lang2"]
    reference = reference or reference_path(test_set, target_language)
    sources = read_sentences(test_set)
    references = None
    if reference and os.path.isfile(reference):
        references = read_sentences(reference)
        if len(references) != len(sources):
            raise UserError(f"{test_set} has {len(sources)} lines but its reference {reference} "
                            f"has {len(references)}")
    started = time.time()
    hypotheses = [" ".join(h) for h in model.translate(
        sources, p["beam_size"], reverse=reverse, batch_size=p["test_batch_size"], show_progress=True)]
    stats = {"test_set": test_set, "sentences": len(sources), "testing_time": time.time() - started,
             "beam_size": p["beam_size"], "direction": "B->A" if reverse else "A->B"}
    with open(os.path.join(working_dir, "test_trans.txt"), "w", encoding="utf-8") as f:
        f.writelines(h + "\n" for h in hypotheses)
    if references is None:
        log(f"no reference found for {test_set} (looked for {reference}); translations written, no BLEU")
    else:
        refs = [" ".join(r) for r in references]
        stats.update(reference=reference, bleu=bleu(hypotheses, refs))
        stats["bleu_detokenized"], stats["sacrebleu_signature"] = detokenized_bleu(hypotheses, refs, target_language)
        log(f"BLEU = {stats['bleu']:.2f} (multi-bleu on tokenized text; detokenized sacreBLEU "
            f"{stats['bleu_detokenized']:.2f})")
    write_json(os.path.join(working_dir, "testing_stats.json"), stats)
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


def translate_lines(model, lines, reverse=False):
    """Raw sentences -> raw translations, one for each (an empty one for a line without words).

    Input is Moses-tokenized (and escaped) like the training data, output detokenized.
    """
    p = model.params
    source_language, target_language = (p["lang2"], p["lang1"]) if reverse else (p["lang1"], p["lang2"])
    tokenizer, detokenizer = MosesTokenizer(lang=source_language), MosesDetokenizer(lang=target_language)
    tokenized = [tokenizer.tokenize(line, escape=True) for line in lines]
    todo = [i for i, t in enumerate(tokenized) if t]
    outputs = [""] * len(lines)
    for i, words in zip(todo, model.translate([tokenized[i] for i in todo], p["beam_size"],
                                              reverse=reverse, batch_size=p["test_batch_size"])):
        outputs[i] = detokenizer.detokenize(words)
    return outputs


def query(model, text, reverse=False, out=sys.stdout):
    """--query: translate one sentence, or with ``text='-'`` one sentence per stdin line.

    Each input line gives exactly one output line; an empty line gives an empty line.
    """
    for line in translate_lines(model, stdin_lines(sys.stdin.buffer) if text == "-" else [text], reverse):
        out.write(line + "\n")
    out.flush()
