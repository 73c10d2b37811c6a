"""Joint recognition at decode time (thesis §6.4, issue 16 item 5): rerank the beam's n-best list.

Translation recognises the PB from the source alone, and beam search then generates from it; B
never has a say in which PB it is given. Training, by contrast, fitted each pair's PB to both of
its sentences. Joint recognition asks of each hypothesis b̂ of the beam how well one PB explains
the source and b̂ together,

    J(b̂) = min_p  L_A(a | p) + λ L_B(b̂ | p)  [+ pb_prior ||p||² / 2],

and the n-best list is reranked by J, lowest first. The minimum is found by the model's own
recognition, so it works in both modes: the thesis's Adam recognition from a zero PB (its
settings and stopping test, on the joint loss), or with --amortize the source's proposal refined
by the same --refine_steps steps with the learned step sizes. B sees only the PB (and the
hypothesis it scores); nothing of the source reaches it except through p.

Why this objective, without the beam's score added: at λ → 0 the minimiser is the source's own
PB p_a and J = L_A(a | p_a) + λ L_B(b̂ | p_a) + o(λ) (envelope theorem), which orders the
hypotheses exactly as the beam's scores −L_B(b̂ | p_a) do. So λ = 0 is plain beam search (the
option off) and λ moves continuously away from it; λ = 1 is the loss training fitted a pair's PB
by. A soft-bound model's pair has two PBs; here both are one p, the hard-binding limit that
translation already assumes when B generates from A's recognised PB.

Cost: one joint recognition per hypothesis, k per sentence, run one hypothesis rank at a time so
that memory stays that of one recognition of the batch.
"""

import tensorflow as tf

from rnnpb_nmt.models.rnnpb.recognition import minimize, sentence_loss
from rnnpb_nmt.scores import NEG


def joint_objective(model, src, tgt, weight, reverse=False):
    """(J (N,), the minimising PBs (N, num_PB)) of pairs of encoded sentences ``src`` (N, Ts) of
    the source language and ``tgt`` (N, T) of the target language (each ending in ``<end>``, then
    padding), for λ = ``weight``; ``reverse``: B is the source side (B->A translation)."""
    lm_src, lm_tgt = (model.lm_b, model.lm_a) if reverse else (model.lm_a, model.lm_b)
    prior = model.config.training.pb_prior
    if model.pbs is None:  # --amortize: the source's proposal, refined on the joint loss
        proposal, refinement = (model.proposal_b, model.refinement_b) if reverse else (model.proposal_a,
                                                                                      model.refinement_a)
        pb = refinement.refine_on(lambda p: lm_src.sentence_losses(src, p)[0] + weight * lm_tgt.sentence_losses(tgt, p)[0],
                                  proposal(src), model.config.inference.refine_steps, prior, model.recognition.clip)
    else:  # the thesis: Adam recognition from a zero PB, on the joint loss
        loss_src, loss_tgt = sentence_loss(lm_src, src), sentence_loss(lm_tgt, tgt)
        start = tf.zeros([tf.shape(src)[0], lm_src.num_pb])
        pb = minimize(lambda rows, p: loss_src(rows, p) + weight * loss_tgt(rows, p), start, model.recognition)["pb"]
    objective = lm_src.sentence_losses(src, pb)[0] + weight * lm_tgt.sentence_losses(tgt, pb)[0]
    return objective + prior * 0.5 * tf.reduce_sum(tf.square(pb), axis=1), pb


def rerank(model, src, nbest, scores, reverse=False):
    """The rank (B, k), higher first, of the beam's hypotheses ``nbest`` (B, k, T) of sources
    ``src`` (B, Ts): −J for λ = --joint_rerank (``reverse``: B->A), or without it (λ = 0) their
    ``scores``. A hypothesis the beam never filled (score about ``NEG``) ranks last."""
    weight = model.config.inference.joint_rerank
    if not weight:
        return scores

    def objectives_of_rank(j):
        return joint_objective(model, src, nbest[:, j], weight, reverse)[0]

    objectives = tf.map_fn(objectives_of_rank, tf.range(tf.shape(nbest)[1]), fn_output_signature=tf.float32,
                           parallel_iterations=1)  # (k, B)
    return tf.where(scores > NEG / 2, -tf.transpose(objectives), float("-inf"))
