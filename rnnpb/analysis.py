"""PB-space diagnostics of a trained bound RNNPB (thesis section 5.3: figures 5.1, 5.3-5.5, table 5.5).

- Trained vs recognised PBs: how far recognition lands from the PB a training sentence was
  trained with (figure 5.1).
- Binding: how close the PBs of a bound pair are, against random pairs (figure 5.3, table 5.5).
- Recognition paths: the target's perplexity in B under the PB A's recognition has reached after
  each iteration, beside the recognition gradient norm (figures 5.4 and 5.5).
"""

import numpy as np

from nmtcore import plots
from nmtcore.data import encode_all
from rnnpb.binding import binding_quality

SHOWN = 10  # sentences (or pairs) drawn in the PCA plots, colour-matched
PATHS = 5  # test sentences whose recognition paths are drawn


def analyze(model, train_pairs, test_pairs, out_dir):
    """All figures the data allows; returns {"figures": {title: file}, "summary": {name: value}}."""
    figures, summary = {}, {}
    if train_pairs:
        title = "Figure 5.1: trained vs recognised PBs of training sentences"
        figures[title], distances = trained_vs_recognised(model, [s for s, _ in train_pairs], out_dir)
        summary.update(distances)
    if not model.config.model.autoencode:
        figures["Figure 5.3: bound PB pairs of A and B"], quality = bound_pairs(model, out_dir)
        summary.update({f"pb_{k}": v for k, v in quality.items()})
    with_reference = [(s, r) for s, r in test_pairs[:PATHS] if r is not None]
    if with_reference:
        title = "Figures 5.4/5.5: translation perplexity during recognition"
        figures[title] = recognition_paths(model, with_reference, out_dir)
    return {"figures": figures, "summary": summary}


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
