"""``--analyze``: the thesis's figures and diagnostics for a trained working directory.

Writes ``<working_dir>/analysis/`` (or ``--analysis_dir``): PNG figures, ``summary.json`` and
``summary.md``. Every model gets the perplexity curves (thesis figure 5.2) and a table of its first
translations; a model adds its own figures through ``NMTModel.analyze`` (the bound RNNPB: PB space,
binding, recognition).
"""

import os

import numpy as np

from rnnpb_nmt.data.dataset import read_sentences
from rnnpb_nmt.data.files import write_json, write_text
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.infer import plots
from rnnpb_nmt.run_stats import load_stats

FOLDER, SUMMARY = "analysis", "summary.json"  # <working_dir>/analysis/summary.json; the figures go beside it
SENTENCES = 10  # translations shown, and sentences in the PB figures (as in the thesis)
TRAIN_SAMPLE = 100  # training sentences recognised for the trained-vs-recognised distance


def analyze(translator, task, working_dir, test_set=None, test_ref=None, out_dir=None, log=print):
    """Analyse the model of ``working_dir`` on ``test_set`` (default: its dev set) into ``out_dir``
    (default: ``<working_dir>/analysis``); returns the summary."""
    model = translator.model
    data = model.config.data
    out_dir = out_dir or os.path.join(working_dir, FOLDER)
    os.makedirs(out_dir, exist_ok=True)
    test_set = test_set or data.dev_set1
    sources, references, reference = task.read_test(
        test_set, test_ref or (data.dev_set2 if test_set == data.dev_set1 else None), data.lang2)
    test_pairs = list(zip(sources, references or [None] * len(sources)))
    stats = load_stats(working_dir)
    if stats is None:
        raise UserError(f"{working_dir}: no training statistics (training never finished an epoch)")
    figures = {"Figure 5.2: perplexity per epoch": perplexity_figure(stats, out_dir)}
    hypotheses = translator.translate([s for s, _ in test_pairs[:SENTENCES]])
    train_pairs = _pairs(data.train_set1, data.train_set2, TRAIN_SAMPLE) if os.path.isfile(data.train_set1) else []
    extra = model.analyze(train_pairs, test_pairs, out_dir)
    figures.update(extra["figures"])
    summary = {"working_dir": working_dir, "model": model.config.model.model, "test_set": test_set,
               "reference": reference,
               "epochs": len(stats["epochs"]), "best_epoch": stats["best_epoch"],
               "best_dev_perplexity": stats["best_dev_perplexity"], **extra["summary"], "figures": figures,
               "translations": [{"source": " ".join(s), "reference": " ".join(r) if r else None,
                                 "translation": " ".join(h)} for (s, r), h in zip(test_pairs, hypotheses)]}
    write_json(os.path.join(out_dir, SUMMARY), summary)
    write_text(os.path.join(out_dir, "summary.md"), markdown(summary))
    log(f"analysis of {working_dir}: {len(figures)} figures and a summary in {out_dir}")
    return summary


def _pairs(source_path, target_path, limit):
    """The first ``limit`` (source, target) token-list pairs; a missing target file leaves targets out."""
    sources = read_sentences(source_path)[:limit]
    if not target_path or not os.path.isfile(target_path):
        return [(s, None) for s in sources]
    return list(zip(sources, read_sentences(target_path)[:len(sources)]))


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
