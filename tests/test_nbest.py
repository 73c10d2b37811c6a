"""Translator.translate_nbest: each sentence's n best hypotheses, with scores and per-token scores,
in the order translate chooses by (--length_penalty; --joint_rerank's: test_joint_rerank.py)."""

import numpy as np
import pytest
import tensorflow as tf

from rnnpb_nmt.data.vocabulary import END_ID, PAD_ID, START_ID, Vocabulary
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.infer import search
from rnnpb_nmt.infer.translator import Translator
from rnnpb_nmt.models.seq2seq.model import EncoderDecoder

from helpers import models, tiny_config

SENTENCES = [["w0"], ["w1", "w0"], ["w0", "w0", "w1"], ["w1", "w1", "w0", "w1"], ["w0", "w1"]]


def translator_with(words=2, chooses_pad=False, **overrides):
    """A Translator of an untrained seq-to-seq model of ``words`` words on both sides. Few words make
    each word cheap enough for a length penalty to lengthen some outputs (test_a_length_penalty_...).
    Unless ``chooses_pad``, the model, like a trained one, never chooses <pad> or <start> (never
    targets): a <pad> mid-sentence counts in the score, but has no token to score."""
    tf.keras.utils.set_random_seed(0)
    vocab = Vocabulary([f"w{i}" for i in range(words)])
    model = EncoderDecoder(tiny_config(model="encdec", **overrides), vocab, vocab)
    if not chooses_pad:
        model.decoder_step(tf.constant([START_ID]), model.decoder_start(tf.constant([[4, END_ID]])))
        output_bias = next(v for v in model.trainable_variables if v.shape == (len(vocab),))
        output_bias.assign(tf.tensor_scatter_nd_update(output_bias, [[PAD_ID], [START_ID]], [-30.0, -30.0]))
    return Translator(model)


def rank_of(hypothesis, alpha):
    """What the search ranks ``hypothesis`` by: its score / lp(its words and <end>)."""
    return hypothesis.score / ((5 + len(hypothesis.token_scores)) / 6) ** alpha


@pytest.mark.parametrize("beam_size", [1, 4])
@pytest.mark.parametrize("alpha", [0.0, 3.0])
def test_the_first_of_the_nbest_is_the_translation_and_the_rest_follow_by_rank(beam_size, alpha):
    translator = translator_with(length_penalty=alpha)
    nbests = translator.translate_nbest(SENTENCES, beam_size, beam_size=beam_size, batch_size=2)
    translations = translator.translate(SENTENCES, beam_size=beam_size, batch_size=2)
    assert [nbest[0].tokens for nbest in nbests] == translations
    _, best_scores = translator.translate_ids([np.array(translator.model.vocab1.encode(s) + [2], np.int32)
                                               for s in SENTENCES], beam_size=beam_size)
    assert [nbest[0].score for nbest in nbests] == pytest.approx(best_scores.tolist(), abs=1e-5)
    for nbest in nbests:
        assert len(nbest) == beam_size  # at least 1 + 5 + 25 outputs: the beam filled every place
        ranks = [rank_of(h, alpha) for h in nbest]
        assert ranks == pytest.approx(sorted(ranks, reverse=True), abs=1e-5)
        for h in nbest:
            assert len(h.token_scores) == len(h.tokens) + 1
            assert sum(h.token_scores) == pytest.approx(h.score, abs=1e-4)
            assert all(s <= 0 for s in h.token_scores)


def test_a_length_penalty_changes_the_translations():
    """Longer ones: else the test above would not tell --length_penalty from none."""
    plain = translator_with().translate(SENTENCES, beam_size=4)
    penalised = translator_with(length_penalty=3.0).translate(SENTENCES, beam_size=4)
    assert plain != penalised
    assert sum(map(len, penalised)) > sum(map(len, plain))


def test_hypotheses_the_beam_never_filled_are_left_out():
    """A word of 4 possible ids (<pad>, <start>, <unk>, w0; then <end>) and at most 2 words (1.5 * 1,
    rounded up) make 1 + 4 + 16 = 21 outputs, fewer than a beam of 30."""
    nbest, = translator_with(words=1, chooses_pad=True).translate_nbest([["w0"]], 30, beam_size=30)
    assert len(nbest) == 21
    assert all(h.score > search.NEG / 2 for h in nbest)
    for h in nbest:
        assert len(h.token_scores) == len(h.tokens) + 1
        assert sum(h.token_scores) >= h.score - 1e-4
    # Those with a <pad>: one of one word, 4 + 4 - 1 of two (<pad> first, or second).
    assert sum(sum(h.token_scores) > h.score + 0.1 for h in nbest) == 1 + 4 + 4 - 1


def test_more_hypotheses_than_the_beam_keeps_are_refused_in_one_line():
    translator = translator_with(beam_size=3)
    with pytest.raises(UserError, match=r"^--nbest=4: must be from 1 to --beam_size=3 [^\n]*$"):
        translator.translate_nbest(SENTENCES, 4)
    with pytest.raises(UserError, match=r"^--nbest=2: must be from 1 to --beam_size=1 "):
        translator.translate_nbest(SENTENCES, 2, beam_size=1)
    with pytest.raises(UserError, match=r"^--nbest=0: "):
        translator.translate_nbest([], 0)
    assert translator.translate_nbest([], 3) == []


def test_a_length_penalty_and_joint_reranking_are_refused_together():
    vocab = Vocabulary(["a", "b"])
    model = models()["rnnpbnmt"](tiny_config(model="rnnpbnmt", joint_rerank=1.0, length_penalty=0.5), vocab, vocab)
    with pytest.raises(UserError, match=r"^--joint_rerank .*--length_penalty[^\n]*$"):
        Translator(model)

