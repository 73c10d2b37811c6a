"""A training run: epochs, dev perplexity, early stopping, checkpoints and statistics."""

import contextlib
import dataclasses
import functools
import math
import os
import time

from rnnpb_nmt.data.files import write_json
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.infer.translator import Translator
from rnnpb_nmt.metrics import bleu
from rnnpb_nmt.run_stats import STATS, EpochRecord, RunStatistics, load_stats
from rnnpb_nmt.train import interrupts
from rnnpb_nmt.train.checkpoints import RunCheckpoints
from rnnpb_nmt.train.mid_epoch import MidEpoch
from rnnpb_nmt.train.summaries import Summaries


def is_finished(stats, config):
    """Whether a run (its RunStatistics, or None) stopped early or reached --max_epochs (then it is not resumed)."""
    t = config.training
    return stats is not None and (stops_early(stats, t) or len(stats.epochs) >= t.max_epochs)


def stops_early(stats, training):
    """Whether early stopping ends a run (its RunStatistics) here: --early_stopping_steps epochs without
    dev improvement, and at least --min_epochs trained."""
    return stats.waited >= training.early_stopping_steps and len(stats.epochs) >= training.min_epochs


def train(trainer, corpus, working_dir, task=None, log=print):
    """Train until the dev measure has not improved for ``early_stopping_steps`` epochs (and at
    least ``min_epochs`` were trained; a tie is no improvement, though with --early_stopping_ties=last
    the tied epoch becomes the best); each epoch on the ``task``'s ``epoch_corpus`` (``corpus``
    itself, unless the task draws new pairs), a pass over it or its --epoch_examples pairs.

    The dev perplexity is measured on epochs 1, 1 + dev_every, 1 + 2 dev_every, ... and on epoch
    --max_epochs, so that the epochs trained after the last measurement are not left unweighed (and
    a best/ of an early epoch tested in silence); an epoch without a measurement counts as one
    without improvement, as in the thesis's code (which measured every second epoch, and for a
    recognising model that is most of an epoch's time).
    With --early_stopping_metric=score the measured epochs also translate the dev set, and the
    ``task``'s score of it (``dev_score``) decides instead: a model can reach its best outputs
    before its best perplexity (McCoy et al. stopped question formation on dev accuracy).

    After every epoch the whole training state (weights, PB tables, optimiser slots, early-stopping
    state) is checkpointed under ``<working_dir>/state``, and ``training_stats.json`` names that
    checkpoint; a run stopped at any point resumes from the last finished epoch when called again
    on the same working directory, or with --save_every_steps from the last step saved inside the
    next epoch (``rnnpb_nmt.train.mid_epoch``). The best dev epoch's weights go to
    ``<working_dir>/best`` and are the model's weights when this returns. With --keep_checkpoints N,
    ``<working_dir>/epochs`` keeps the weights of the epochs ``kept_epochs`` names, for
    --average_checkpoints. Returns the run's RunStatistics.

    Every epoch's statistics also go to TensorBoard (``<working_dir>/logs``); with
    --monitor_every N, every Nth epoch adds the BLEU of the first --monitor_sentences dev
    sentences, so that a model that learns perplexity but not translation shows before the end.
    """
    model, t = trainer.model, trainer.config
    keep = functools.partial(kept_epochs, keep=t.keep_checkpoints, metric=t.early_stopping_metric,
                             ties=t.early_stopping_ties) \
        if t.keep_checkpoints else None
    checkpoints = RunCheckpoints(working_dir, model, trainer.optimizers, keep)
    midway = MidEpoch(working_dir, model, trainer.optimizers, trainer.rng)
    translator = Translator(model)
    stats = resumed(checkpoints, midway, working_dir, log)
    scorer = (lambda: dev_score(translator, task, corpus)) if t.early_stopping_metric == "score" else None
    summaries = Summaries(working_dir)
    for epoch in range(len(stats.epochs) + 1, t.max_epochs + 1):
        measured = (epoch - 1) % t.dev_every == 0 or epoch == t.max_epochs
        epoch_corpus = task.epoch_corpus(corpus, epoch) if task else corpus
        scale = stats.learning_rate_scale
        trainer.scale_learning_rates(scale)
        with stopped_at(midway):
            record = epoch_row(trainer, translator, epoch_corpus, epoch, checkpoints.best_dir, measured, scorer, midway)
        improved = measured and improves(record, stats, t.early_stopping_metric)
        tied = measured and t.early_stopping_ties == "last" and ties(record, stats, t.early_stopping_metric)
        stats = decayed(stats.after_epoch(record, improved, tied), t)
        save_epoch(checkpoints, stats, working_dir, improved or tied)
        midway.discard()  # after the epoch's save, which supersedes its positions
        summaries.write_epoch(record)
        log(epoch_line(record, stats.best_epoch == epoch))
        if stats.learning_rate_scale != scale:
            log(f"learning rates x {t.learning_rate_decay:g} from here: no dev improvement for {stats.waited} epochs")
        if stops_early(stats, t):
            log(f"early stopping: no dev improvement for {stats.waited} epochs")
            break
    checkpoints.restore_best()
    log(f"best epoch {stats.best_epoch} (dev perplexity {stats.best_dev_perplexity:.4f}), "
        f"{stats.total_seconds:.0f}s of training in all")
    return stats


def resumed(checkpoints, midway, working_dir, log):
    """The RunStatistics to go on from: those of the run in ``working_dir`` (its last finished epoch's
    state restored, then the state of a position saved inside the next epoch, if any, which
    ``midway`` keeps for the epoch to resume from), or new ones."""
    stats = load_stats(working_dir)
    finished = stats is not None and stats.state_checkpoint
    if finished:
        checkpoints.restore_state(stats.state_checkpoint)
    else:
        stats = RunStatistics()
    position = midway.resume(len(stats.epochs) + 1)
    if position:
        log(f"resuming {working_dir} from {position.where()}")
    elif finished:
        log(f"resuming {working_dir} after epoch {len(stats.epochs)}")
    return stats


@contextlib.contextmanager
def stopped_at(midway):
    """Inside, a stop (Ctrl-C, SIGTERM) after a position of the epoch was saved says, as
    ``interrupts.Stopped``, that the same command resumes from there."""
    try:
        yield
    except KeyboardInterrupt:
        if midway.saved is None:
            raise
        raise interrupts.Stopped(midway.saved.where()) from None


def decayed(stats, training):
    """``stats`` (after an epoch) with the learning rates of the epochs to come multiplied by
    --learning_rate_decay if that epoch made --decay_patience, or a multiple of it, epochs without
    dev improvement. Kept in the statistics, so that a resumed run trains at the rates the
    uninterrupted one would."""
    if training.learning_rate_decay == 1 or stats.waited == 0 or stats.waited % training.decay_patience:
        return stats
    return dataclasses.replace(stats, learning_rate_scale=stats.learning_rate_scale * training.learning_rate_decay)


# --early_stopping_metric -> (the epoch row's measure it compares, whether larger is better)
DEV_MEASURES = {"perplexity": ("dev_perplexity", False), "score": ("dev_score", True)}


def improves(row, stats, metric):
    """Whether a measured epoch's ``row`` beats the best epoch of ``stats`` by ``metric``; a tie
    does not, so that the first epoch to reach a score stays the best (the one trained least), unless
    --early_stopping_ties=last makes it the best (``ties``).
    Both are read by training_stats.json's keys, which name the measures (an EpochRecord and
    RunStatistics, or the file's objects)."""
    key, larger = DEV_MEASURES[metric]
    best = best_measure(stats, metric)
    return row[key] > best if larger else row[key] < best


def ties(row, stats, metric):
    """Whether a measured epoch's ``row`` equals the best epoch of ``stats`` by ``metric`` (before a best
    epoch, nothing ties: not even an infinite dev perplexity the stand-in's infinity would equal)."""
    return stats["best_epoch"] is not None and row[DEV_MEASURES[metric][0]] == best_measure(stats, metric)


def best_measure(stats, metric):
    """The best epoch's dev measure by ``metric``, or the worst possible one before a measured epoch."""
    key, larger = DEV_MEASURES[metric]
    if stats["best_epoch"] is None:
        return -math.inf if larger else math.inf
    return stats["epochs"][stats["best_epoch"] - 1][key]


def last_epochs(records, n):
    """The last ``n`` epochs of ``records`` (training_stats.json's rows, in order)."""
    return [row["epoch"] for row in records[max(len(records) - n, 0):]]


def best_epochs(records, n, metric, ties="first"):
    """The ``n`` epochs of ``records`` with the best dev measure by ``metric``, best first, a tie going
    to the earlier epoch, or with ``ties`` "last" the later, as training chose best/ (its epoch is the
    first); an epoch that did not measure it (--dev_every) is none of them."""
    key, larger = DEV_MEASURES[metric]
    measured = [row for row in records if row.get(key) is not None]
    later = -1 if ties == "last" else 1
    ranked = sorted(measured, key=lambda row: (-row[key] if larger else row[key], later * row["epoch"]))
    return [row["epoch"] for row in ranked[:n]]


def kept_epochs(records, keep, metric, ties="first"):
    """The epochs whose weights --keep_checkpoints=``keep`` keeps: the last ``keep`` and the ``keep``
    best by ``metric`` (``ties`` as ``best_epochs``), so that --average_checkpoints up to ``keep`` finds
    either. A function of the records alone: a resumed run, which has the uninterrupted run's records,
    keeps its epochs."""
    return sorted({*last_epochs(records, keep), *best_epochs(records, keep, metric, ties)})


def dev_score(translator, task, corpus):
    """The ``task``'s score (its ``dev_metric``) of the dev set translated with --beam_size. The
    references are read through the target vocabulary: for translation, their out-of-vocabulary
    words count as ``<unk>`` (the other tasks refuse such words in training data)."""
    model = translator.model
    outputs, _ = translator.translate_ids(corpus.dev_src)
    sources, hypotheses, references = ([vocab.decode(ids) for ids in side] for vocab, side in (
        (model.vocab1, corpus.dev_src), (model.vocab2, outputs), (model.vocab2, corpus.dev_tgt)))
    return task.score(sources, hypotheses, references, model.config.data.lang2)[task.dev_metric]


def save_epoch(checkpoints, stats, working_dir, best):
    """Save the epoch just trained (the last record of ``stats``): its weights as the best if
    ``best`` (it is the new best epoch), its weights in ``epochs/`` if ``checkpoints`` keeps epochs,
    its whole state, then the statistics naming that state; then delete the kept epochs' weights that
    are kept no longer.

    In that order, a save that fails (a full disk) leaves training_stats.json naming the previous
    epoch's complete state, which ``state/`` keeps beside the next, and the epochs kept after it;
    so it stops with a UserError naming the file, and the same command resumes after the previous
    epoch.
    """
    epoch = stats.epochs[-1].epoch
    try:
        if best:
            checkpoints.save_best(epoch)
        if checkpoints.keep:
            checkpoints.save_epoch(epoch)
        write_json(os.path.join(working_dir, STATS), stats.saved_as(checkpoints.save_state(epoch)).to_json())
    except UserError as e:
        raise UserError(f"{e}; epoch {epoch} was not saved: run the same command again, once the file can be "
                        f"written, to resume after epoch {epoch - 1}") from None
    if checkpoints.keep:
        checkpoints.prune_epochs(stats.epochs)


def epoch_row(trainer, translator, corpus, epoch, best_dir, measure_dev=True, scorer=None, midway=None):
    """Train one epoch (from a position ``midway`` resumed, and saving positions in it: see
    ``Trainer.train_epoch``), then (if ``measure_dev``) measure the dev perplexity, and with a
    ``scorer`` the dev score; the epoch's EpochRecord, which has neither without it. Its
    ``seconds`` are the training's (of a resumed epoch, before the stop too) and the dev
    measurement's (not --monitor_every's BLEU)."""
    trained = trainer.train_epoch(corpus, epoch, best_dir, midway)
    started = time.time()
    # A Ctrl-C while training stops between dev batches too (rnnpb_nmt.train.interrupts).
    dev_perplexity = (translator.dev_perplexity(corpus.dev_src, corpus.dev_tgt, after_batch=interrupts.check)
                      if measure_dev else None)
    score = scorer() if measure_dev and scorer else None
    seconds = trained.seconds + time.time() - started
    model_scalars = {**trainer.learning_rate_scalars(), **translator.model.summary_scalars()}
    t = trainer.config
    monitored = t.monitor_every and epoch % t.monitor_every == 0
    return EpochRecord.of(epoch, trained, seconds, dev_perplexity=dev_perplexity, dev_score=score,
                          model_scalars=model_scalars,
                          dev_bleu=dev_bleu(translator, corpus, t.monitor_sentences) if monitored else None)


def epoch_line(record, best):
    """The line an epoch logs."""
    monitored = f"  dev BLEU {record.dev_bleu:.2f}" if record.dev_bleu is not None else ""
    monitored += f"  dev score {record.dev_score:.4f}" if record.dev_score is not None else ""
    dev = f"{record.dev_perplexity:.4f}" if record.dev_perplexity is not None else "not measured"
    return (f"epoch {record.epoch}: train ppl {record.train_perplexity:.4f}  dev ppl {dev}{monitored}  "
            f"{record.seconds:.1f}s{'  (best)' if best else ''}")


def dev_bleu(translator, corpus, sentences):
    """BLEU of the first ``sentences`` dev translations, for monitoring only: the references are
    read through the target vocabulary, so their out-of-vocabulary words count as ``<unk>``."""
    sources, references = corpus.dev_src[:sentences], corpus.dev_tgt[:sentences]
    outputs, _ = translator.translate_ids(sources)
    vocab = translator.model.vocab2
    return bleu([" ".join(vocab.decode(o)) for o in outputs], [" ".join(vocab.decode(r)) for r in references])
