"""PB-space diagnostics of a trained bound RNNPB (thesis section 5.3: figures 5.1, 5.3-5.5, table 5.5).

- Trained vs recognised PBs: how far recognition lands from the PB a training sentence was
  trained with (figure 5.1).
- Binding: how close the PBs of a bound pair are, against random pairs (figure 5.3, table 5.5).
- Recognition paths: the target's perplexity in B under the PB A's recognition has reached after
  each iteration, beside the recognition gradient norm (figures 5.4 and 5.5).

And the diagnostics of issue 16 (item 1), which tell where translation is lost:
- the ceiling: test BLEU when B decodes from the PB recognised from source and reference together
  (min_p L_A + L_B, ``rnnpb_nmt.models.rnnpb.joint``), beside B decoding from the PB of the source alone;
- training pairs decoded from their stored PB against a PB recognised from the source alone;
- PB norms of trained and recognised PBs, and the binding ratio of PBs recognised in A against
  the pairs' trained PBs in B.

And issue 47's measure of the interlingua: recognise every test source in A and every reference
in B, and ask whether each sentence's nearest PB in the other language is its translation's
(bitext retrieval, ``rnnpb_nmt.metrics.bitext_retrieval``).
"""

import weakref

import numpy as np
import tensorflow as tf

from rnnpb_nmt.data.dataset import batch_spec, encode_all, make_dataset
from rnnpb_nmt.infer import plots, search
from rnnpb_nmt.metrics import bitext_retrieval, bleu
from rnnpb_nmt.models.rnnpb import joint
from rnnpb_nmt.models.rnnpb.binding import binding_quality

SHOWN = 10  # sentences (or pairs) drawn in the PCA plots, colour-matched
PATHS = 5  # test sentences whose recognition paths are drawn
# Token ids of any batch size and length: each compiled function is traced once, not per batch shape.
TOKENS = batch_spec()["src"]


def analyze(model, train_pairs, test_pairs, out_dir):
    """All figures the data allows; returns {"figures": {title: file}, "summary": {name: value}}."""
    figures, summary = {}, {}
    with_reference = [(s, r) for s, r in test_pairs if r is not None]
    if with_reference and not model.config.model.autoencode:
        summary.update(ceiling(model, with_reference))
        summary.update(interlingua(model, with_reference))
    if model.pbs is None:  # --amortize: no PB tables, no recognition paths to draw
        return {"figures": figures, "summary": summary}
    if train_pairs:
        title = "Figure 5.1: trained vs recognised PBs of training sentences"
        figures[title], distances = trained_vs_recognised(model, [s for s, _ in train_pairs], out_dir)
        summary.update(distances)
        if all(t is not None for _, t in train_pairs) and not model.config.model.autoencode:
            summary.update(stored_vs_recognised(model, train_pairs))
    if not model.config.model.autoencode:
        figures["Figure 5.3: bound PB pairs of A and B"], quality = bound_pairs(model, out_dir)
        summary.update({f"pb_{k}": v for k, v in quality.items()})
    if with_reference:
        title = "Figures 5.4/5.5: translation perplexity during recognition"
        figures[title] = recognition_paths(model, with_reference[:PATHS], out_dir)
    return {"figures": figures, "summary": summary}


def _batches(model, sources, targets=None, source_vocab=None):
    """Encoded batches of source sentences (and targets), in order, --test_batch_size at most."""
    tgt = None if targets is None else encode_all(model.vocab2, targets)
    return make_dataset(encode_all(source_vocab or model.vocab1, sources), tgt,
                        batch_size=model.config.inference.test_batch_size)


# model -> {(what, ..., its configuration): compiled function}. Tracing one costs seconds, a call
# little, and one --analyze calls each several times (the ceiling and the stored-PB rows decode
# twice each); the configuration is in the key because a function reads it when it is traced.
# The functions hold their model, so an entry lasts as long as the process (one model for the
# command line); weak keys only keep a model's id from ever naming another model's functions.
_COMPILED = weakref.WeakKeyDictionary()


def _compiled(model, key, make):
    """The compiled function ``make()`` of ``model`` for ``key``, made once per configuration."""
    functions = _COMPILED.setdefault(model, {})
    key = (key, model.config)
    if key not in functions:
        functions[key] = make()
    return functions[key]


def source_pbs(model, sources, reverse=False):
    """PBs (N, num_PB) of source sentences as translation recognises them (A alone; B alone when
    ``reverse``: sentences of B's language, as B->A translation recognises them)."""
    fn = _compiled(model, ("recognize", reverse),
                   lambda: tf.function(lambda src: model.recognize(src, reverse)["pb"], input_signature=[TOKENS]))
    vocab = model.vocab2 if reverse else model.vocab1
    return np.concatenate([fn(b["src"]).numpy() for b in _batches(model, sources, source_vocab=vocab)])


def interlingua(model, pairs):
    """Bitext retrieval between the PBs of the sources recognised in A and of their references
    recognised in B: whether one PB space holds both languages, a pair at one point."""
    sources, targets = [tuple(s) for s, _ in pairs], [tuple(t) for _, t in pairs]
    found = bitext_retrieval(source_pbs(model, sources), source_pbs(model, targets, reverse=True), sources, targets)
    return {f"retrieval_{k}": v for k, v in found.items()}


def pair_pbs(model, pairs):
    """PBs (N, num_PB) recognised from each (source, target) pair together: min_p L_A + L_B."""
    fn = _compiled(model, "joint", lambda: tf.function(lambda src, tgt: joint.joint_objective(model, src, tgt, 1.0)[1],
                                                      input_signature=[TOKENS, TOKENS]))
    batches = _batches(model, [s for s, _ in pairs], [t for _, t in pairs])
    return np.concatenate([fn(b["src"], b["tgt"]).numpy() for b in batches])


def decode_bleu(model, pbs, pairs):
    """BLEU (multi-bleu on tokenized text) of B's beam search from PBs ``pbs`` against the
    targets of ``pairs``, with the translation settings (beam, length cap from the source)."""
    inference, lm = model.config.inference, model.lm_b
    fn = _compiled(model, ("decode", pbs.shape[1]), lambda: tf.function(
        lambda pb, lengths: search.beam_search(lm.step, lm.start_state(pb), lengths, inference.beam_size,
                                               inference.length_penalty)[0],
        input_signature=[tf.TensorSpec([None, pbs.shape[1]], tf.float32), tf.TensorSpec([None], tf.int32)]))
    size, outputs = inference.test_batch_size, []
    lengths = np.maximum(1, np.ceil(inference.max_trans_ratio * np.array([len(s) for s, _ in pairs]))).astype(np.int32)
    for start in range(0, len(pairs), size):
        ids = fn(tf.constant(pbs[start:start + size], tf.float32), tf.constant(lengths[start:start + size]))
        outputs += [" ".join(model.vocab2.decode(row)) for row in ids.numpy()]
    return bleu(outputs, [" ".join(t) for _, t in pairs])


def ceiling(model, pairs):
    """Test BLEU with the PB of source and reference together (what B could do if recognition
    found the pair's PB) beside the PB of the source alone, on the same sentences."""
    return {"ceiling_sentences": len(pairs), "ceiling_bleu_pair_pb": decode_bleu(model, pair_pbs(model, pairs), pairs),
            "ceiling_bleu_source_pb": decode_bleu(model, source_pbs(model, [s for s, _ in pairs]), pairs)}


def stored_vs_recognised(model, pairs):
    """Training pairs decoded by B from their stored (trained) PB in B's table and from the PB
    recognised from the source in A; norms of both, and the binding ratio (``binding_quality``)
    of recognised PBs against the stored PBs of B: near 1, recognition lands no nearer a pair's
    own PB than another pair's."""
    stored = model.trained_pbs(range(len(pairs)), side="b")
    recognised = source_pbs(model, [s for s, _ in pairs])
    quality = binding_quality(recognised, stored)
    return {"stored_sentences": len(pairs), "stored_bleu_stored_pb": decode_bleu(model, stored, pairs),
            "stored_bleu_recognised_pb": decode_bleu(model, recognised, pairs),
            "recognised_pb_mean_norm": quality["mean_norm_a"], "stored_pb_b_mean_norm": quality["mean_norm_b"],
            "recognised_vs_stored_b_mean_distance": quality["mean_bound_distance"],
            "recognised_vs_stored_b_random_distance": quality["mean_random_distance"],
            "recognised_vs_stored_b_binding_ratio": quality["binding_ratio"]}


def _scatter_pairs(ax, first, second, labels, markers):
    """Row i of ``first`` and of ``second`` in one colour, joined by a line."""
    colours = [f"C{i % 10}" for i in range(len(first))]
    ax.scatter(first[:, 0], first[:, 1], c=colours, marker=markers[0], s=50, label=labels[0])
    ax.scatter(second[:, 0], second[:, 1], c=colours, marker=markers[1], s=50, label=labels[1])
    for (x0, y0), (x1, y1), colour in zip(first, second, colours):
        ax.plot([x0, x1], [y0, y1], color=colour, linewidth=0.8, alpha=0.6)
    ax.legend()


def trained_vs_recognised(model, sentences, out_dir):
    """PCA of the first trained PBs and the PBs recognised from the same sentences; the mean
    distance between the two over all ``sentences``, with the mean trained norm for scale."""
    trained = model.trained_pbs(range(len(sentences)))
    recognised = model.recognize_sentences(sentences)["pb"]
    n = min(SHOWN, len(sentences))
    points, explained = plots.pca(np.concatenate([trained[:n], recognised[:n]]))
    fig, (ax,) = plots.figure(f"Trained (o) and recognised (x) PBs of the first {n} training sentences", "", "")
    _scatter_pairs(ax, points[:n], points[n:], ["trained", "recognised"], "ox")
    plots.pca_axis_labels(ax, explained)
    return plots.save(fig, out_dir, "fig5_1_trained_vs_recognised.png"), {
        "trained_recognised_sentences": len(sentences),
        "trained_recognised_mean_distance": float(np.linalg.norm(trained - recognised, axis=1).mean()),
        "trained_pb_mean_norm": float(np.linalg.norm(trained, axis=1).mean())}


def bound_pairs(model, out_dir):
    """The first bound pairs (A's PB and B's PB of one training sentence pair) in one PCA plot,
    and the binding quality of the tables (``binding_quality``, over their first 2000 pairs)."""
    table_a, table_b = model.pbs.a, model.pbs.b
    n = min(SHOWN, table_a.shape[0])
    points, explained = plots.pca(np.concatenate([table_a[:n], table_b[:n]]))
    fig, (ax,) = plots.figure(f"PBs of the first {n} bound pairs: A (o) and B (s)", "", "")
    _scatter_pairs(ax, points[:n], points[n:], ["A", "B"], "os")
    plots.pca_axis_labels(ax, explained)
    return plots.save(fig, out_dir, "fig5_3_bound_pairs.png"), binding_quality(table_a, table_b)


def recognition_paths(model, pairs, out_dir):
    """For each (source, reference) pair: recognise the source in A, and after every iteration
    score the reference in B under the PB reached so far; plot that perplexity above the
    recognition gradient norm."""
    paths = model.recognize_sentences([s for s, _ in pairs])
    fig, (top, bottom) = plots.figure("Recognition in A: translation perplexity in B and gradient norm",
                                      "recognition iteration", "reference perplexity in B", rows=2)
    for i, (reference, pb_path, norms) in enumerate(zip([r for _, r in pairs], paths["pb_history"],
                                                         paths["grad_norm_history"])):
        target = np.tile(encode_all(model.vocab2, [reference])[0], (len(pb_path), 1))
        ce, tokens = model.lm_b.sentence_losses(target, pb_path.astype(np.float32))
        top.plot(np.arange(len(pb_path)), np.exp(ce.numpy() / tokens.numpy()), label=f"test sentence {i + 1}")
        bottom.plot(np.arange(1, len(norms) + 1), norms, label=f"test sentence {i + 1}")
    top.set_yscale("log")
    top.legend()
    bottom.set_ylabel("recognition gradient L2 norm")
    bottom.set_yscale("log")
    return plots.save(fig, out_dir, "fig5_4_recognition_paths.png")
