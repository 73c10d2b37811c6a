"""The training loop: epochs, dev perplexity, early stopping, best weights, statistics."""

import collections
import json
import math
import os
import time

import numpy as np
import tensorflow as tf

from nmtcore.errors import UserError


def write_json(path, obj):
    """Write JSON atomically: a reader never sees a half-written file, even after a kill."""
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


def train(model, corpus, working_dir, log=print):
    """Train until the dev perplexity has not improved for ``early_stopping_steps`` epochs.

    The weights of the best dev epoch are saved under ``<working_dir>/best`` and are the model's
    weights when this returns. Per-epoch statistics go to ``training_stats.json``.
    """
    p = model.params
    rng = np.random.default_rng(p["seed"])
    best_manager = tf.train.CheckpointManager(tf.train.Checkpoint(model=model),
                                              os.path.join(working_dir, "best"), max_to_keep=1)
    stats = {"epochs": [], "best_epoch": None, "best_dev_perplexity": None}
    stats_path = os.path.join(working_dir, "training_stats.json")
    best, waited, started = math.inf, 0, time.time()
    for epoch in range(1, p["max_epochs"] + 1):
        t0 = time.time()
        sums, steps = collections.defaultdict(float), 0
        for kind, batch in model.epoch_batches(corpus, rng):
            terms = {k: v.numpy() for k, v in model.train_step(batch, kind).items()}
            steps += 1
            if not np.all(np.isfinite(terms["loss"])) or not np.all(np.isfinite(terms["grad_norms"])):
                raise UserError(f"training diverged: loss or gradient is not finite at epoch {epoch}, "
                                f"step {steps}; the best weights so far are in {best_manager.directory}")
            for k, v in terms.items():
                if np.ndim(v) == 0:
                    sums[k] += float(v)
        model.on_epoch_end(epoch, rng)
        train_seconds = time.time() - t0
        dev_ppl = model.dev_perplexity(corpus.dev_src, corpus.dev_tgt, p["batch_size"])
        row = {"epoch": epoch, "train_perplexity": sums["perplexity"] / max(steps, 1),
               "dev_perplexity": dev_ppl, "train_seconds": train_seconds,
               "seconds": time.time() - t0,
               **{f"mean_{k}": v / max(steps, 1) for k, v in sums.items() if k != "perplexity"}}
        improved = dev_ppl < best
        if improved:
            best, waited = dev_ppl, 0
            best_manager.save(checkpoint_number=epoch)
            stats.update(best_epoch=epoch, best_dev_perplexity=dev_ppl)
        else:
            waited += 1
        stats["epochs"].append(row)
        stats["total_seconds"] = time.time() - started
        write_json(stats_path, stats)
        log(f"epoch {epoch}: train ppl {row['train_perplexity']:.4f}  dev ppl {dev_ppl:.4f}  "
            f"{row['seconds']:.1f}s{'  (best)' if improved else ''}")
        if waited >= p["early_stopping_steps"]:
            log(f"early stopping: no dev improvement for {waited} epochs")
            break
    tf.train.Checkpoint(model=model).read(best_manager.latest_checkpoint).assert_existing_objects_matched().expect_partial()
    log(f"best epoch {stats['best_epoch']} (dev perplexity {stats['best_dev_perplexity']:.4f}), "
        f"{stats['total_seconds']:.0f}s in all")
    return stats
