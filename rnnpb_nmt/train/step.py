"""The Trainer: optimisers, the (distributed) training step, data order and training noise.

A model exposes its losses and variable groups; the Trainer builds its batches, draws its noise,
and updates its variables. Everything here is the same for every model, on one device or on the
replicas of a ``tf.distribute`` strategy (the one current when the Trainer is made).
"""

import itertools
import time
import zlib

import numpy as np
import tensorflow as tf

from rnnpb_nmt import precision, progress, tf_stack
from rnnpb_nmt.data.dataset import make_dataset, padded_lengths, token_batches
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.train import interrupts, schedules
from rnnpb_nmt.train.curriculum import curriculum_indices
from rnnpb_nmt.train.epoch_length import fixed_epoch, fixed_order_batches, stream_indices
from rnnpb_nmt.run_stats import EpochTotals, StepResult


def make_optimizer(name, learning_rate, variables):
    """The ``--optimizer`` of one variable group, its slots made now (outside any compiled step):
    LazyAdam as the thesis; Adam with the same settings, whose sparse (embedding-row) updates decay
    every row's moments as a dense gradient would (Keras's legacy Adam, LazyAdam's base class: the
    same slots and checkpoint keys); plain SGD, whose updates are the learning rate times the
    (clipped) gradient, as in McCoy et al.'s code; RMSProp (Tieleman and Hinton's: a running mean
    of squared gradients with decay 0.9, no momentum), as Grefenstette et al. trained the memory LSTMs;
    or ADADELTA (Zeiler 2012, with DyNet's rho 0.95 and epsilon 1e-6: Aharoni and Goldberg trained the
    hard-attention model with DyNet's; Zeiler's update is --learning_rate=1, the rate scales it)."""
    if name == "adam":
        return tf_stack.lazy_adam(learning_rate, variables)
    if name == "dense_adam":
        optimizer = tf.keras.optimizers.legacy.Adam(learning_rate=learning_rate, beta_1=0.9, beta_2=0.999, epsilon=1e-7)
    elif name == "rmsprop":
        optimizer = tf.keras.optimizers.legacy.RMSprop(learning_rate=learning_rate, rho=0.9, momentum=0.0)
    elif name == "adadelta":
        optimizer = tf.keras.optimizers.legacy.Adadelta(learning_rate=learning_rate, rho=0.95, epsilon=1e-6)
    else:
        optimizer = tf.keras.optimizers.legacy.SGD(learning_rate=learning_rate)
    optimizer._create_all_weights(variables)
    return optimizer


class Trainer:
    """Trains ``model`` with one optimiser per variable group (``model.variable_groups()``)."""

    def __init__(self, model):
        self.model, self.config = model, model.config.training
        self.strategy = tf.distribute.get_strategy()
        with self.strategy.scope():  # a mirrored generator: each replica draws its own stream
            self.rng = tf.random.Generator.from_seed(self.config.seed)
        self._optimizers, self._learning_rate_scale = None, 1.0
        self._epoch_steps = None  # the last epoch's, the next one's expected length (its progress bar)
        self._steps, self._batch_specs, self._gradient_fns = {}, {}, {}
        self._fixed_batches = None  # --batch_order=fixed's cycle, made at the first epoch
        with self.strategy.scope():
            self.loss_scale = precision.loss_scale(self.config.mixed_precision)

    @property
    def optimizers(self):
        """One optimiser per variable group, at its rate under --lr_schedule; made on first use, in
        the strategy's scope."""
        if self._optimizers is None:
            with self.strategy.scope():
                self._optimizers = [make_optimizer(self.config.optimizer, schedules.learning_rate(lr, self.config), vs)
                                    for _, vs, lr in self.model.variable_groups()]
        return self._optimizers

    def scale_learning_rates(self, scale):
        """From now on, train each variable group at its learning rate times ``scale`` (the factor
        --learning_rate_decay has reached)."""
        for optimizer, (_, _, rate) in zip(self.optimizers, self.model.variable_groups()):
            schedules.set_rate(optimizer, rate * scale)
        self._learning_rate_scale = scale

    def learning_rate_scalars(self):
        """{learning_rate/<group>: the rate the group's next step takes}, for the epoch's statistics."""
        return {f"learning_rate/{name}": rate * self._learning_rate_scale * schedules.factor(optimizer)
                for (name, _, rate), optimizer in zip(self.model.variable_groups(), self.optimizers)}

    # ----- data order and noise -------------------------------------------------------------------
    def start_epoch(self, epoch):
        """Restart the training noise from (--seed, epoch).

        An epoch then draws the same dropout masks and PB noise whether or not training was
        interrupted before it, so a resumed run is the uninterrupted one; under a tf.distribute
        strategy each replica draws its own stream from this state.
        """
        key = np.random.SeedSequence([self.config.seed, epoch]).generate_state(1, np.uint64)[0]
        self.rng.reset_from_key_counter(int(key), [0, 0])

    def dataset(self, kind, src, tgt=None, epoch=0, cycle=0, keep=None, batches=None):
        """One pass over training data of batch kind ``kind`` (the sentences numbered ``keep``, or
        all; or the given ``batches``, lists of sentence numbers), distributed over the replicas.

        The order is a permutation fixed by --seed, ``epoch``, ``cycle`` (the pass within the
        epoch, for data that is cycled) and ``kind``; with --batch_tokens, the batches made in that
        order are then shuffled by the same generator.
        """
        rng = np.random.default_rng([self.config.seed, epoch, cycle, zlib.crc32(kind.encode())])
        keep = np.arange(len(src), dtype=np.int32) if keep is None else np.asarray(keep, np.int32)
        order = rng.permutation(keep)  # the same permutation an int64 array of the numbers had
        if batches is not None:
            data = make_dataset(src, tgt, batches=batches)
        elif self.config.batch_tokens:
            batches = token_batches(padded_lengths(src, tgt), order, self.config.batch_tokens,
                                    self.strategy.num_replicas_in_sync, rng)
            data = make_dataset(src, tgt, batches=batches)
        else:
            data = make_dataset(src, tgt, batch_size=self.config.batch_size, order=order, bucket=True)
        ds = self.strategy.experimental_distribute_dataset(data)
        self._batch_specs.setdefault(kind, ds.element_spec)
        return ds

    def epoch_batches(self, corpus, epoch, rng):
        """(kind, batch) pairs of training epoch ``epoch``: shuffled parallel batches (of the pairs
        ``epoch_pairs`` names; with --batch_order=fixed the epoch's share of one fixed cycle of
        batches, ``epoch_length.fixed_epoch``), among which
        each draw is, with probability p_mono, a monolingual round instead (a batch of each of
        the model's ``monolingual_kinds`` that has data): so before each parallel batch come a
        geometric number of rounds, p_mono / (1 - p_mono) on average.

        ``rng`` is the epoch's own random generator (seeded by --seed and the epoch), so that an
        epoch's batches are the same whether or not training was interrupted before it.
        Monolingual data is cycled through (a new order each pass) for as long as the epoch lasts.
        """
        p_mono = self.config.p_mono
        monos = [(kind, data) for kind, data in (("mono1", corpus.mono1), ("mono2", corpus.mono2))
                 if data and kind in self.model.monolingual_kinds]
        mono_iterators = {kind: self._cycle(kind, data, epoch) for kind, data in monos}
        if self.config.batch_order == "fixed":
            parallel = self.dataset("parallel", corpus.train_src, corpus.train_tgt, epoch, batches=fixed_epoch(
                self.fixed_batches(corpus.train_src), epoch, self.config.epoch_examples, self.config.batch_size))
        else:
            parallel = self.dataset("parallel", corpus.train_src, corpus.train_tgt, epoch,
                                    keep=self.epoch_pairs(corpus.train_src, epoch))
        for batch in parallel:
            while p_mono > 0 and monos and rng.random() < p_mono:
                for kind, _ in monos:
                    yield kind, next(mono_iterators[kind])
            yield "parallel", batch

    def fixed_batches(self, src):
        """--batch_order=fixed's one cycle of batches of the training sources ``src``, made once."""
        if self._fixed_batches is None:
            self._fixed_batches = fixed_order_batches(padded_lengths(src), self.config.batch_size, self.config.seed)
            if not self._fixed_batches:
                raise UserError(f"--batch_order=fixed: no source length has --batch_size={self.config.batch_size} "
                                "training pairs, so there is no batch to train on")
        return self._fixed_batches

    def epoch_pairs(self, src, epoch):
        """The numbers of the training pairs (of sources ``src``) epoch ``epoch`` trains on: those
        the length curriculum keeps for it (all, without one), or with --epoch_examples its share of a
        stream through them."""
        keep = curriculum_indices(src, epoch, self.config.curriculum_epochs)
        if not self.config.epoch_examples:
            return keep
        return [keep[i] for i in stream_indices(len(keep), epoch, self.config.epoch_examples, self.config.seed)]

    def _cycle(self, kind, data, epoch):
        for cycle in itertools.count():
            yield from self.dataset(kind, data, epoch=epoch, cycle=cycle)

    # ----- the training step ----------------------------------------------------------------------
    def _replica_step(self, batch, kind):
        ctx = tf.distribute.get_replica_context()
        # Losses are sums over sentences divided by the global batch, so that replicas' gradients
        # add up to the single-device gradient.
        global_batch = ctx.all_reduce("sum", tf.cast(tf.shape(batch["index"])[0], tf.float32))
        loss, terms, grads = self._gradients(kind)(batch, global_batch)
        start, norms, updates = 0, {}, []
        for (name, vs, _), optimizer in zip(self.model.variable_groups(), self.optimizers):
            # A kind of batch may leave variables untouched (a monolingual batch, B's weights).
            pairs = [(g, v) for g, v in zip(grads[start:start + len(vs)], vs) if g is not None]
            start += len(vs)
            if not pairs:
                continue
            summed = ctx.all_reduce("sum", [g for g, _ in pairs])
            clipped, norm = tf.clip_by_global_norm(summed, self.config.gradient_clip)
            updates.append((optimizer, list(zip(clipped, [v for _, v in pairs]))))
            norms[f"grad_norm_{name}"] = norm
        self.loss_scale.apply(lambda: [optimizer.apply_gradients(pairs, experimental_aggregate_gradients=False)
                                       for optimizer, pairs in updates], list(norms.values()))
        terms = {k: ctx.all_reduce("sum", tf.reduce_sum(v)) / global_batch for k, v in terms.items()}
        return dict(terms, **norms, loss=ctx.all_reduce("sum", loss))

    def _gradients(self, kind):
        """The function of (batch, global batch size) -> (loss, terms, the gradients of every
        variable group's variables, None for those the batch does not touch) of batches of
        ``kind``: the forward and backward pass, which --jit_compile compiles with XLA. The updates
        stay outside it: an optimiser's sparse update (LazyAdam's rows) is not XLA's to compile."""
        if kind not in self._gradient_fns:
            def gradients(batch, global_batch):
                variables = [v for _, vs, _ in self.model.variable_groups() for v in vs]
                with tf.GradientTape() as tape:
                    per_sentence, extra, terms = self.model.sentence_losses(batch, kind, self.rng)
                    loss = tf.reduce_sum(per_sentence) / global_batch + extra
                    scaled = self.loss_scale.scaled(loss)
                return loss, terms, self.loss_scale.unscaled(tape.gradient(scaled, variables))
            self._gradient_fns[kind] = tf.function(gradients, jit_compile=True) if self.config.jit_compile else gradients
        return self._gradient_fns[kind]

    def train_step(self, batch, kind="parallel"):
        """One optimisation step on a batch of ``self.dataset(kind, ...)``.

        Returns scalar tensors by name (``StepResult.from_outputs`` reads them): the batch means of
        the model's loss terms, ``loss`` and the gradient norm (before clipping) of each variable
        group that the batch touched, ``grad_norm_<group>``.
        """
        if kind not in self._steps:
            def step(b):
                out = self.strategy.run(self._replica_step, args=(b, kind))
                return self.strategy.experimental_local_results(out)[0]
            self.optimizers  # noqa: B018 (creates the optimisers' slots before tracing)
            # One trace for every batch shape: the signature of the dataset of this kind.
            self._steps[kind] = tf.function(step, input_signature=[self._batch_specs[kind]])
        return self.loss_scale.reported(self._steps[kind](batch))

    def train_epoch(self, corpus, epoch, best_dir, midway=None):
        """One pass over the training data and the model's end-of-epoch hook; its TrainedEpoch.

        ``midway`` (a MidEpoch, or None): a position of this epoch it has resumed (its state, the
        noise generator's included, restored) makes the epoch go on from there: its batches are made
        again in the same order and the steps already trained skipped, and its running sums and
        seconds go on. With --save_every_steps N it saves a position every N steps, and when a stop
        (``interrupts.check``) comes between steps.

        Its progress bar expects as many steps as the last epoch had (bucketing, --p_mono and the
        curriculum vary the count a little), and shows the mean loss of the epoch so far: a
        batch's own loss jumps with its sentences' lengths."""
        resumed = midway.saved if midway and midway.saved and midway.saved.epoch == epoch else None
        totals = resumed.epoch_totals() if resumed else EpochTotals()
        started = time.time() - (resumed.seconds if resumed else 0.0)
        rng = np.random.default_rng([self.config.seed, epoch])
        if not resumed:
            self.start_epoch(epoch)
        every = self.config.save_every_steps if midway else 0
        # Skipping replays the epoch's draws (--p_mono's) too, so that the rest of it is the same.
        batches = itertools.islice(self.epoch_batches(corpus, epoch, rng), totals.steps, None)
        with progress.bar(f"epoch {epoch}", self._epoch_steps, estimated=True) as bar:
            for kind, batch in batches:
                self._check_stop(midway if every else None, epoch, totals, started)
                step = StepResult.from_outputs(self.train_step(batch, kind))
                if not step.finite:
                    raise UserError(f"training diverged: loss or gradient is not finite at epoch {epoch}, "
                                    f"step {totals.steps + 1}; the best weights so far are in {best_dir}")
                totals.add(step)
                bar.update(totals.steps, {"mean loss": totals.mean("loss")})
                if every and totals.steps % every == 0:
                    midway.save(epoch, totals, time.time() - started)
        self._epoch_steps = totals.steps
        self.model.on_epoch_end(epoch, rng)
        return totals.epoch(time.time() - started)

    @staticmethod
    def _check_stop(midway, epoch, totals, started):
        """``interrupts.check()``; with a ``midway``, a stop saves the position first, unless the
        last one saved is this one."""
        try:
            interrupts.check()
        except KeyboardInterrupt:
            if midway and totals.steps and (midway.saved is None or midway.saved.steps != totals.steps):
                midway.save(epoch, totals, time.time() - started)
            raise
