"""Perplexity and BLEU exactly as the thesis reports them."""

import numpy as np
import sacrebleu
from sacremoses import MosesDetokenizer


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


def detokenized_bleu(hypotheses, references, lang):
    """Standard sacreBLEU on detokenized text, with its signature, as a comparable second figure."""
    detok = MosesDetokenizer(lang=lang)
    hyps = [detok.detokenize(h.split()) for h in hypotheses]
    refs = [detok.detokenize(r.split()) for r in references]
    metric = sacrebleu.metrics.BLEU()
    return metric.corpus_score(hyps, [refs]).score, str(metric.get_signature())
