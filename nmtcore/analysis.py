"""``--analyze``: the thesis's figures and diagnostics for a trained working directory.

Writes ``<working_dir>/analysis/``: PNG figures, ``summary.json`` and ``summary.md``. Every model
gets the perplexity curves (thesis figure 5.2) and a table of its first translations; a model adds
its own figures through ``NMTModel.analyze`` (the bound RNNPB: PB space, binding, recognition).
"""

import os

import numpy as np

from nmtcore import plots
from nmtcore.data import read_sentences
from nmtcore.errors import UserError
from nmtcore.prediction import reference_path
from nmtcore.training import load_stats, write_json

SENTENCES = 10  # translations shown, and sentences in the PB figures (as in the thesis)
TRAIN_SAMPLE = 100  # training sentences recognised for the trained-vs-recognised distance


def analyze(model, working_dir, test_set=None, test_ref=None, log=print):
    """Analyse the model of ``working_dir`` on ``test_set`` (default: its dev set); returns the summary."""
    p = model.params
    out_dir = os.path.join(working_dir, "analysis")
    os.makedirs(out_dir, exist_ok=True)
    test_set = test_set or p["dev_set1"]
    reference = test_ref or (p["dev_set2"] if test_set == p["dev_set1"] else reference_path(test_set, p["lang2"]))
    test_pairs = _pairs(test_set, reference)
    stats = load_stats(working_dir)
    if stats is None:
        raise UserError(f"{working_dir}: no training statistics (training never finished an epoch)")
    figures = {"Figure 5.2: perplexity per epoch": perplexity_figure(stats, out_dir)}
    hypotheses = model.translate([s for s, _ in test_pairs[:SENTENCES]], p["beam_size"],
                                 batch_size=p["test_batch_size"])
    train_pairs = _pairs(p["train_set1"], p["train_set2"], TRAIN_SAMPLE) if os.path.isfile(p["train_set1"]) else []
    extra = model.analyze(train_pairs, test_pairs, out_dir)
    figures.update(extra["figures"])
    summary = {"working_dir": working_dir, "model": p["model"], "test_set": test_set, "reference": reference,
               "epochs": len(stats["epochs"]), "best_epoch": stats["best_epoch"],
               "best_dev_perplexity": stats["best_dev_perplexity"], **extra["summary"], "figures": figures,
               "translations": [{"source": " ".join(s), "reference": " ".join(r) if r else None,
                                 "translation": " ".join(h)} for (s, r), h in zip(test_pairs, hypotheses)]}
    write_json(os.path.join(out_dir, "summary.json"), summary)
    with open(os.path.join(out_dir, "summary.md"), "w", encoding="utf-8") as f:
        f.write(markdown(summary))
    log(f"analysis of {working_dir}: {len(figures)} figures and a summary in {out_dir}")
    return summary


def _pairs(source_path, reference_path_, limit=None):
    """(source, reference or None) token lists; a missing reference file leaves references out."""
    sources = read_sentences(source_path)[:limit]
    if not reference_path_ or not os.path.isfile(reference_path_):
        return [(s, None) for s in sources]
    return list(zip(sources, read_sentences(reference_path_)[:len(sources)]))


def perplexity_figure(stats, out_dir):
    """Thesis figure 5.2: train and dev perplexity per epoch, the best epoch marked."""
    epochs = [row["epoch"] for row in stats["epochs"]]
    fig, (ax,) = plots.figure("Train and dev perplexity per epoch", "epoch", "perplexity")
    ax.plot(epochs, [row["train_perplexity"] for row in stats["epochs"]], marker=".", label="train")
    measured = [row for row in stats["epochs"] if "dev_perplexity" in row]  # see --dev_every
    ax.plot([row["epoch"] for row in measured], [row["dev_perplexity"] for row in measured], marker=".", label="dev")
    if stats["best_epoch"]:
        ax.axvline(stats["best_epoch"], color="grey", linestyle=":", label=f"best epoch ({stats['best_epoch']})")
    ax.set_yscale("log")
    ax.legend()
    return plots.save(fig, out_dir, "fig5_2_perplexity.png")


def markdown(summary):
    """summary.md: figures, the numbers, and the translation table (thesis appendix style)."""
    lines = [f"# Analysis of `{summary['working_dir']}` ({summary['model']})", ""]
    lines += [f"![{title}]({name})\n\n*{title}*\n" for title, name in summary["figures"].items()]
    lines += ["| measure | value |", "|---|---|"]
    lines += [f"| {k} | {_number(v)} |" for k, v in summary.items() if isinstance(v, (int, float, np.floating))]
    lines += ["", f"## First translations of `{summary['test_set']}`", "",
              "| source | reference | translation |", "|---|---|---|"]
    cell = lambda text: (text or "").replace("|", "\\|")  # a "|" token would end the cell
    lines += [f"| {cell(t['source'])} | {cell(t['reference'])} | {cell(t['translation'])} |"
              for t in summary["translations"]]
    return "\n".join(lines) + "\n"


def _number(v):
    return f"{v:.4g}" if isinstance(v, float) else str(v)
