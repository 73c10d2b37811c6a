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


def bitext_retrieval(source_vectors, target_vectors, sources, targets):
    """How well sentence vectors of two languages find each other's translations (the Tatoeba
    similarity search of multilingual sentence embeddings, Artetxe & Schwenk 2019).

    Row i of ``source_vectors`` / ``target_vectors`` represents ``sources[i]`` / ``targets[i]``
    (any hashable sentences: strings or token tuples), a translation pair. A source repeated with
    another reference counts once (its first pair). For each source, its nearest target by cosine
    similarity is right when that target's sentence is its own translation (so identical
    translations of two sources are not errors); likewise from each target to the sources.

    Returns ``pairs`` (distinct sources), ``p_at_1_source_to_target``, ``p_at_1_target_to_source``
    and ``binding_ratio``: the mean over pairs of the Euclidean distance between a pair's two
    vectors over the median distance from its source vector to the other pairs' targets (0: each
    source sits on its own translation; about 1: no nearer its own than any other).
    """
    first = {}
    for i, sentence in enumerate(sources):
        first.setdefault(sentence, i)
    keep = sorted(first.values())
    a, b = np.asarray(source_vectors, np.float64)[keep], np.asarray(target_vectors, np.float64)[keep]
    src, tgt = [sources[i] for i in keep], [targets[i] for i in keep]
    unit = lambda x: x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
    similarity = unit(a) @ unit(b).T
    forward = np.mean([tgt[j] == tgt[i] for i, j in enumerate(similarity.argmax(axis=1))])
    backward = np.mean([src[i] == src[j] for j, i in enumerate(similarity.argmax(axis=0))])
    squared = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2 * a @ b.T
    distance = np.sqrt(np.maximum(squared, 0))
    n = len(keep)
    others = distance[~np.eye(n, dtype=bool)].reshape(n, n - 1) if n > 1 else distance
    ratio = np.mean(np.diag(distance) / np.maximum(np.median(others, axis=1), 1e-12))
    return {"pairs": n, "p_at_1_source_to_target": float(forward), "p_at_1_target_to_source": float(backward),
            "binding_ratio": float(ratio)}
