import collections
import math

import numpy as np
import pytest

from rnnpb_nmt.metrics import bitext_retrieval, bleu, perplexity


def test_perplexity_hand_computed():
    # Sentence 1: 2 tokens, summed CE 2 -> e^1; sentence 2: 4 tokens, CE 4 ln 3 -> 3.
    assert perplexity([2.0, 4 * math.log(3)], [2, 4]) == pytest.approx((math.e + 3) / 2)


def multi_bleu(hyps, refs):
    """multi-bleu.perl, written out: corpus n-gram precisions, brevity penalty on total lengths."""
    matches, totals, hyp_len, ref_len = [0] * 4, [0] * 4, 0, 0
    for h, r in zip(hyps, refs):
        h, r = h.split(), r.split()
        hyp_len, ref_len = hyp_len + len(h), ref_len + len(r)
        for n in range(1, 5):
            hc = collections.Counter(tuple(h[i:i + n]) for i in range(len(h) - n + 1))
            rc = collections.Counter(tuple(r[i:i + n]) for i in range(len(r) - n + 1))
            matches[n - 1] += sum(min(c, rc[g]) for g, c in hc.items())
            totals[n - 1] += max(len(h) - n + 1, 0)
    if min(matches) == 0:
        return 0.0
    log_precision = sum(math.log(m / t) for m, t in zip(matches, totals)) / 4
    bp = min(0.0, 1 - ref_len / hyp_len)
    return 100 * math.exp(bp + log_precision)


def test_bleu_is_multi_bleu_on_tokenized_text():
    refs = ["Der Hund sieht die Katze .", "Ich weiß , dass er schläft .", "Das Haus ist alt ."]
    hyps = ["Der Hund sieht eine Katze .", "Ich weiß , dass er läuft .", "Das Haus ist sehr alt ."]
    assert bleu(hyps, refs) == pytest.approx(multi_bleu(hyps, refs), abs=1e-6)
    assert bleu(refs, refs) == pytest.approx(100.0)
    short = ["Der Hund .", "Ich weiß , dass er schläft .", "Das Haus ist alt ."]
    assert bleu(short, refs) == pytest.approx(multi_bleu(short, refs), abs=1e-6)


def test_bitext_retrieval_on_constructed_vectors():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(5, 8))
    sources, targets = ["s0", "s1", "s2", "s3", "s4"], ["t0", "t1", "t2", "t3", "t4"]
    exact = bitext_retrieval(a, a, sources, targets)
    assert exact == pytest.approx({"pairs": 5, "p_at_1_source_to_target": 1.0, "p_at_1_target_to_source": 1.0,
                                   "binding_ratio": 0.0}, abs=1e-6)
    # Targets 0 and 1 swapped: those two sources find the other's translation, both ways.
    swapped = bitext_retrieval(a, a[[1, 0, 2, 3, 4]], sources, targets)
    assert swapped["p_at_1_source_to_target"] == swapped["p_at_1_target_to_source"] == 0.6
    distance = np.linalg.norm(a[:, None] - a[None, [1, 0, 2, 3, 4]], axis=2)
    own = np.diag(distance)
    others = [np.median(np.delete(distance[i], i)) for i in range(5)]
    assert swapped["binding_ratio"] == pytest.approx(np.mean(own / others))
    # Identical translations of two sources are not errors; a source repeated with another
    # reference counts once (its first pair).
    same = bitext_retrieval(a, a[[1, 0, 2, 3, 4]], sources, ["t", "t", "t2", "t3", "t4"])
    assert same["p_at_1_source_to_target"] == 1.0
    repeated = bitext_retrieval(np.vstack([a, a[:1]]), np.vstack([a, a[1:2]]), sources + ["s0"], targets + ["t1"])
    assert repeated == pytest.approx(exact, abs=1e-6)
    # Cosine: a vector's length does not matter, its direction does.
    assert bitext_retrieval(a, 3 * a, sources, targets)["p_at_1_source_to_target"] == 1.0
