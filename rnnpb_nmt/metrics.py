"""Perplexity and BLEU exactly as the thesis reports them; coarse and fine sequence accuracy as
Grefenstette et al. 2015 define them (§4.3):

    coarse = #correct / #seqs
    fine   = 1/#seqs * sum_i #correct_i / |target_i|

#correct counts the sequences generated right from beginning to end; #correct_i is the number of
symbols of sequence i generated right before its first error. |target_i| includes the EOS symbol,
so pass targets with their EOS and predictions as generated, with the EOS the model emitted (a
prediction that stops early or runs on is then an error at that position, as in the paper's
greedy decoding). Fine accuracy gives partial credit where coarse gives none: it separates "wrong
near the end" from "wrong from the start".
"""

import numpy as np
import sacrebleu


def perplexity(summed_ce, num_tokens):
    """Thesis eq. 2.19: mean over sentences of exp(summed cross-entropy / predicted tokens)."""
    summed_ce, num_tokens = np.asarray(summed_ce, np.float64), np.asarray(num_tokens, np.float64)
    return float(np.mean(np.exp(summed_ce / num_tokens)))


def bleu(hypotheses, references):
    """Moses multi-bleu.perl's score on tokenized text (what the thesis reports).

    Hypotheses and references are lists of tokenized strings. sacreBLEU with ``tokenize='none'``
    reproduces the thesis's published scores to two decimals.
    """
    return sacrebleu.corpus_bleu(hypotheses, [references], tokenize="none", force=True).score


def sacrebleu_score(hypotheses, references):
    """Standard sacreBLEU of raw (detokenized) lines, with its signature: a figure comparable
    across papers and tokenizations."""
    metric = sacrebleu.metrics.BLEU()
    return metric.corpus_score(hypotheses, [references]).score, str(metric.get_signature())


def correct_prefix(prediction, target):
    """The number of leading symbols of ``target`` that ``prediction`` gets right."""
    for i, (predicted, wanted) in enumerate(zip(prediction, target)):
        if predicted != wanted:
            return i
    return min(len(prediction), len(target))


def coarse_accuracy(predictions, targets):
    """The fraction of sequences predicted exactly."""
    pairs = paired(predictions, targets)
    return sum(list(p) == list(t) for p, t in pairs) / len(pairs)


def fine_accuracy(predictions, targets):
    """The mean over sequences of the fraction of the target predicted before the first error."""
    pairs = paired(predictions, targets)
    return sum(correct_prefix(p, t) / len(t) for p, t in pairs) / len(pairs)


def paired(predictions, targets):
    """(prediction, target) pairs of equal-length lists, at least one, with no empty target."""
    pairs = list(zip(predictions, targets, strict=True))
    if not pairs or not all(t for _, t in pairs):
        raise ValueError("accuracy needs at least one sequence and no empty target")
    return pairs
