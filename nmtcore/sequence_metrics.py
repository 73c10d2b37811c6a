"""Coarse and fine accuracy of generated sequences, as Grefenstette et al. 2015 define them (§4.3).

    coarse = #correct / #seqs
    fine   = 1/#seqs * sum_i #correct_i / |target_i|

#correct counts the sequences generated right from beginning to end; #correct_i is the number of
symbols of sequence i generated right before its first error. |target_i| includes the EOS symbol,
so pass targets with their EOS and predictions as generated, with the EOS the model emitted (a
prediction that stops early or runs on is then an error at that position, as in the paper's
greedy decoding). Fine accuracy gives partial credit where coarse gives none: it separates "wrong
near the end" from "wrong from the start".
"""


def correct_prefix(prediction, target):
    """The number of leading symbols of ``target`` that ``prediction`` gets right."""
    for i, (predicted, wanted) in enumerate(zip(prediction, target)):
        if predicted != wanted:
            return i
    return min(len(prediction), len(target))


def coarse_accuracy(predictions, targets):
    """The fraction of sequences predicted exactly."""
    pairs = _pairs(predictions, targets)
    return sum(list(p) == list(t) for p, t in pairs) / len(pairs)


def fine_accuracy(predictions, targets):
    """The mean over sequences of the fraction of the target predicted before the first error."""
    pairs = _pairs(predictions, targets)
    return sum(correct_prefix(p, t) / len(t) for p, t in pairs) / len(pairs)


def _pairs(predictions, targets):
    pairs = list(zip(predictions, targets, strict=True))
    if not pairs or not all(t for _, t in pairs):
        raise ValueError("accuracy needs at least one sequence and no empty target")
    return pairs
