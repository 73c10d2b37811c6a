"""The training loop: epochs, dev perplexity, early stopping, best weights, statistics."""

import collections
import json
import math
import os
import time

import numpy as np
import tensorflow as tf

from nmtcore import checkpoints, interrupts, progress
from nmtcore.errors import UserError
from nmtcore.metrics import bleu
from nmtcore.summaries import Summaries

STATS = "training_stats.json"
STATS_KEYS = {"epochs", "best_epoch", "best_dev_perplexity", "waited", "total_seconds"}


def write_json(path, obj):
    """Write JSON atomically: a reader never sees a half-written file, even after a kill."""
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


def load_stats(working_dir):
    """training_stats.json of a working directory, or None before the first epoch ended."""
    path = os.path.join(working_dir, STATS)
    if not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            stats = json.load(f)
    except ValueError as e:  # also undecodable bytes
        raise UserError(f"{path}: corrupted ({e})") from None
    if not isinstance(stats, dict) or not STATS_KEYS <= stats.keys():
        raise UserError(f"{path}: corrupted (not the statistics of a training run)")
    return stats


def is_finished(stats, params):
    """Whether a run stopped early or reached --max_epochs (then it is not resumed)."""
    return bool(stats) and (stats["waited"] >= params["early_stopping_steps"]
                            or len(stats["epochs"]) >= params["max_epochs"])


def train(model, corpus, working_dir, log=print, monitor_every=0, monitor_sentences=100):
    """Train until the dev perplexity has not improved for ``early_stopping_steps`` epochs.

    The dev perplexity is measured on epochs 1, 1 + dev_every, 1 + 2 dev_every, ...; an epoch
    without a measurement counts as one without improvement, as in the thesis's code (which
    measured every second epoch, and for a recognising model that is most of an epoch's time).

    After every epoch the whole training state (weights, PB tables, optimiser slots, early-stopping
    state) is checkpointed under ``<working_dir>/state``, and ``training_stats.json`` names that
    checkpoint; a run stopped at any point resumes from the last finished epoch when called again
    on the same working directory. The best dev epoch's weights go to ``<working_dir>/best`` and
    are the model's weights when this returns.

    Every epoch's statistics also go to TensorBoard (``<working_dir>/logs``); with
    ``monitor_every`` N, every Nth epoch adds the BLEU of the first ``monitor_sentences`` dev
    sentences, so that a model that learns perplexity but not translation shows before the end.
    """
    p = model.params
    best_manager = tf.train.CheckpointManager(tf.train.Checkpoint(model=model),
                                              os.path.join(working_dir, "best"), max_to_keep=1)
    state = tf.train.Checkpoint(model=model, **{f"optimizer_{i}": o for i, o in enumerate(model.optimizers)})
    # Two kept, so the one training_stats.json names survives a kill while the next is written.
    state_manager = tf.train.CheckpointManager(state, os.path.join(working_dir, "state"), max_to_keep=2)
    stats = load_stats(working_dir)
    if stats and stats.get("state_checkpoint"):
        # By name within this run's state/: a working directory may have been moved or renamed.
        checkpoints.read(state, os.path.join(state_manager.directory, os.path.basename(stats["state_checkpoint"])),
                         "resume")
        log(f"resuming {working_dir} after epoch {len(stats['epochs'])}")
    else:
        stats = {"epochs": [], "best_epoch": None, "best_dev_perplexity": None, "waited": 0, "total_seconds": 0.0}
    best = stats["best_dev_perplexity"] if stats["best_epoch"] else math.inf
    summaries = Summaries(working_dir)
    for epoch in range(len(stats["epochs"]) + 1, p["max_epochs"] + 1):
        measured = (epoch - 1) % p["dev_every"] == 0
        row = train_epoch(model, corpus, epoch, best_manager.directory, measured)
        row.update(model.summary_scalars())
        if monitor_every and epoch % monitor_every == 0:
            row["monitor/dev_bleu"] = dev_bleu(model, corpus, monitor_sentences)
        improved = measured and row["dev_perplexity"] < best
        if improved:
            best = row["dev_perplexity"]
            best_manager.save(checkpoint_number=epoch)
            stats.update(best_epoch=epoch, best_dev_perplexity=best, waited=0)
        else:
            stats["waited"] += 1
        stats["epochs"].append(row)
        stats["total_seconds"] += row["seconds"]
        stats["state_checkpoint"] = os.path.basename(state_manager.save(checkpoint_number=epoch))
        write_json(os.path.join(working_dir, STATS), stats)
        summaries.write_epoch(row)
        monitored = f"  dev BLEU {row['monitor/dev_bleu']:.2f}" if "monitor/dev_bleu" in row else ""
        dev = f"{row['dev_perplexity']:.4f}" if measured else "not measured"
        log(f"epoch {epoch}: train ppl {row['train_perplexity']:.4f}  dev ppl {dev}{monitored}  "
            f"{row['seconds']:.1f}s{'  (best)' if improved else ''}")
        if stats["waited"] >= p["early_stopping_steps"]:
            log(f"early stopping: no dev improvement for {stats['waited']} epochs")
            break
    best_weights = tf.train.Checkpoint(model=model)
    checkpoints.read(best_weights, best_manager.latest_checkpoint, "restore weights").expect_partial()
    log(f"best epoch {stats['best_epoch']} (dev perplexity {stats['best_dev_perplexity']:.4f}), "
        f"{stats['total_seconds']:.0f}s of training in all")
    return stats


def train_epoch(model, corpus, epoch, best_dir, measure_dev=True):
    """One pass over the parallel data, the end-of-epoch hook, and (if ``measure_dev``) the dev
    perplexity; the row has no ``dev_perplexity`` without it.

    Each term is averaged over the batches that have it (a monolingual batch has no binding).
    """
    started = time.time()
    rng = np.random.default_rng([model.params["seed"], epoch])
    sums, counts, steps = collections.defaultdict(float), collections.Counter(), 0
    model.start_epoch(epoch)
    bar = progress.bar(None, stateful=["loss"])
    for kind, batch in model.epoch_batches(corpus, epoch, rng):
        interrupts.check()
        terms = {k: float(v) for k, v in model.train_step(batch, kind).items()}
        steps += 1
        if not all(map(math.isfinite, terms.values())):
            raise UserError(f"training diverged: loss or gradient is not finite at epoch {epoch}, "
                            f"step {steps}; the best weights so far are in {best_dir}")
        sums.update({k: sums[k] + v for k, v in terms.items()})
        counts.update(terms.keys())
        bar.update(steps, [("loss", terms["loss"])])
    bar.update(steps, finalize=True)
    model.on_epoch_end(epoch, rng)
    train_seconds = time.time() - started
    dev = ({"dev_perplexity": model.dev_perplexity(corpus.dev_src, corpus.dev_tgt, model.params["test_batch_size"])}
           if measure_dev else {})
    means = {k: sums[k] / counts[k] for k in sums}
    return {"epoch": epoch, "train_perplexity": means.pop("perplexity", math.nan), **dev,
            "train_seconds": train_seconds, "seconds": time.time() - started,
            **{f"mean_{k}": v for k, v in means.items()}}


def dev_bleu(model, corpus, sentences):
    """BLEU of the first ``sentences`` dev translations, for monitoring only: the references are
    read through the target vocabulary, so their out-of-vocabulary words count as ``<unk>``."""
    sources, references = corpus.dev_src[:sentences], corpus.dev_tgt[:sentences]
    outputs, _ = model.translate_ids(sources, model.params["beam_size"], batch_size=model.params["test_batch_size"])
    return bleu([" ".join(model.vocab2.decode(o)) for o in outputs],
                [" ".join(model.vocab2.decode(r)) for r in references])
