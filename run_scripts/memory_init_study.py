#!/usr/bin/env python3
"""Does a memory LSTM's initialisation let it learn? A small, fast study for choosing
``--deque_biases`` (and rates) before spending a 25-minute transduction cell on them.

    python3 run_scripts/memory_init_study.py copy --model deque_lstm --deque_biases per_end --seeds 1 2 3

Read-then-generate (source, separator, target, as ``rnnpb_nmt/models/memory_lstm/model.py``) on the paper's §4.1
tasks, by default at a small size: lengths 2-8 over 10 symbols, 16 units, memory width and
embeddings of 16 (``--symbols``, ``--lengths``, ``--units``, ``--embedding_size`` scale it up to the
cells' size: 128 symbols, lengths 8-64, 128 units, embeddings of 64), batches of 10 drawn fresh
at every step (the paper's setting; the cells use a fixed sample), Adam with gradient clipping at
1. Every ``--report_every`` steps and at the end it prints the training perplexity of the last 100
batches and the coarse and fine accuracy (§4.3) on 200 new sequences of the full length range,
under teacher forcing: every symbol's argmax right is the same as the greedy output right, as a
wrong symbol is where greedy search would first go astray. ``--curriculum N`` draws the first N
steps' sources from a range whose longest length grows linearly from the shortest + 4 to the
longest (not the paper's: a question of whether the depth of the memory is what takes long to
learn). The network is the toolkit's own (``memory_network``: the MemoryLSTM and its initial
biases); the rest is the smallest loop that trains it, with one embedding for source and target
symbols where the model has one each (``rnnpb_nmt/models/memory_lstm/model.py``): the controller here must tell
reading from generating by the separator alone, so its verdicts can differ from the model's
(``--separate_embeddings`` gives target symbols a table of their own, as the model does): a
verdict is a lead to check on the model's cell (there, ``--curriculum_epochs=10`` made reversal
learn slower: run_scripts/results/notes/transduction.md).

``--show_ops`` adds to each report the mean push and pop strengths on the held-out sequences in
each phase: the first and the second half of the source, the separator, the target. They show
which way a controller uses its memory, where accuracy alone only says that it fails: a
Stack-LSTM that reverses keeps the whole source (push near 1, pop near 0) and pops near 1 while
generating, pushing nothing; one that pushes half strengths blurs every read over several values,
and one that pushes while generating covers the source with what it generates.
"""

import argparse
import time
from typing import NamedTuple

import numpy as np

from rnnpb_nmt.config import Config, check_applicable, field_named
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.models.memory_lstm.options import MEMORY_LSTMS
from rnnpb_nmt.models.memory_lstm.model import memory_network
from rnnpb_nmt.tasks.transduction.synthetic import SEQUENCE_TASKS, transform
from rnnpb_nmt.train.curriculum import length_limit

import tensorflow as tf  # after the package, which quiets its start-up messages (rnnpb_nmt/__init__.py)


class Size(NamedTuple):
    """The problem and the network: source symbols, shortest and longest source, LSTM units (and
    memory width), embedding size."""

    symbols: int = 10
    shortest: int = 2
    longest: int = 8
    units: int = 16
    embedding_size: int = 16

    @property
    def separator(self):
        return self.symbols

    @property
    def end(self):
        return self.symbols + 1

    @property
    def pad(self):
        return self.symbols + 2

    def longest_at(self, step, curriculum):
        """The longest source drawn at ``step`` (1-based) under a curriculum of ``curriculum`` steps:
        the training loop's schedule (``rnnpb_nmt/train/curriculum.py``) counted in steps, not epochs, and
        from the shortest + 4, so that even the first batches hold sources of several lengths."""
        start = min(self.longest, self.shortest + 4)
        return length_limit((start, self.longest), step, curriculum)


# The default problem: small enough to train in seconds.
SMALL = Size()


def batch(task, rng, n, size=SMALL, longest=None):
    """Inputs (n, T): source, separator, target; labels (n, T): the next target symbol or <end>
    after the separator and each target symbol, -1 elsewhere. Sources of ``size.shortest`` to
    ``longest`` (default ``size.longest``) symbols."""
    lengths = rng.integers(size.shortest, (longest or size.longest) + 1, n)
    if task == "bigram_flip":
        lengths += lengths % 2
    inputs, labels = np.full((n, 2 * lengths.max() + 2), size.pad), np.full((n, 2 * lengths.max() + 2), -1)
    for i, length in enumerate(lengths):
        source = list(rng.integers(0, size.symbols, length))
        target = transform(task, source)
        sequence = source + [size.separator] + target
        inputs[i, :len(sequence)] = sequence
        labels[i, length:2 * length + 1] = target + [size.end]
    return inputs, labels


def check_size(size):
    """A one-line error for a problem the study cannot draw."""
    if not 1 <= size.shortest <= size.longest:
        raise UserError(f"--lengths {size.shortest} {size.longest}: need 1 <= SHORTEST <= LONGEST")
    if size.symbols < 1 or size.units < 1 or size.embedding_size < 1:
        raise UserError("--symbols, --units and --embedding_size must be positive")


def accuracies(right, labels):
    """Coarse and fine accuracy (§4.3) from ``right`` (n, T), whether each position's argmax is its
    label (True where there is no label): whole sequences right, and the mean fraction of each
    target (with <end>) right before its first error."""
    target = labels >= 0
    before_error = np.cumprod(right, axis=1) * target
    return right.all(axis=1).mean(), (before_error.sum(axis=1) / target.sum(axis=1)).mean()


# Where in a sequence a strength is averaged: the first and second half of the source, the
# separator, the target (after the separator).
PHASES = ("source, first half", "source, second half", "separator", "target")


def phases(inputs, size):
    """(n, T) phase numbers of ``PHASES`` for every position of ``inputs`` (-1 on padding)."""
    lengths = (inputs == size.separator).argmax(axis=1)[:, None]
    position = np.arange(inputs.shape[1])[None, :]
    phase = np.select([position < (lengths + 1) // 2, position < lengths, position == lengths,
                       position <= 2 * lengths], [0, 1, 2, 3], -1)
    return np.where(inputs == size.pad, -1, phase)


def operations_by_phase(operations, inputs, size):
    """A line of the mean push and pop strengths (``MemoryLSTM(..., operations=True)``'s (n, T, 2,
    H)) in each phase: whether the controller keeps the whole source on its memory, or only part
    of it, and whether it pops (and stops pushing) while generating."""
    phase = phases(inputs, size)
    heads = operations.shape[-1]
    ends = [""] if heads == 1 else [" (top)", " (bottom)"]  # the deque's heads, in the memory's order
    names = [f"{op}{end}" for end in ends for op in ("push", "pop")]
    cells = []
    for p, name in enumerate(PHASES):
        chosen = operations[phase == p]  # (positions, 2, H)
        means = chosen.mean(axis=0).T.reshape(-1) if len(chosen) else [np.nan] * len(names)
        cells.append(f"{name}: " + ", ".join(f"{n} {m:.2f}" for n, m in zip(names, means)))
    return "  strengths: " + "; ".join(cells)


def separate_ids(inputs, size):
    """``inputs`` with the target symbols (after the separator) moved to a second block of the
    embedding table, ``size.symbols + 3`` on: source and target symbols embedded apart, as in the
    model, where only the separator and padding were apart before."""
    return inputs + (phases(inputs, size) == 3) * (size.symbols + 3)


def study(task, model, deque_biases, seed, steps, learning_rate, log, size=SMALL, curriculum=0, report_every=0,
          show_ops=False, separate_embeddings=False):
    tf.random.set_seed(seed)
    rng = np.random.default_rng(seed)
    config = Config().replace(model=model, deque_biases=deque_biases, units=size.units, memory_width=size.units)
    embed = tf.keras.layers.Embedding((size.symbols + 3) * (2 if separate_embeddings else 1), size.embedding_size)
    memory = memory_network(config.model)
    output = tf.keras.layers.Dense(size.symbols + 2)
    optimizer = tf.keras.optimizers.Adam(learning_rate, clipnorm=1.0)

    def model_inputs(inputs):
        return separate_ids(inputs, size) if separate_embeddings else inputs

    def logits(inputs):
        return output(memory(embed(inputs), mask=inputs != size.pad)[0])

    # One trace for every length (the cells' lengths 8-64 would otherwise trace 57 times).
    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int64)] * 2)
    def train_step(inputs, labels):
        with tf.GradientTape() as tape:
            real = tf.cast(labels >= 0, tf.float32)
            losses = tf.nn.sparse_softmax_cross_entropy_with_logits(tf.maximum(labels, 0), logits(inputs))
            loss = tf.reduce_sum(losses * real) / tf.reduce_sum(real)
        variables = embed.trainable_variables + memory.trainable_variables + output.trainable_variables
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    # The sequences every report scores: their own draw, so that reporting leaves training's alone.
    held_out = batch(task, np.random.default_rng([seed, 1]), 200, size)

    def report(step):
        inputs, labels = model_inputs(held_out[0]), held_out[1]
        # One pass gives the outputs scored and the strengths shown.
        outputs, _, operations = memory(embed(inputs), mask=inputs != size.pad, operations=True)
        right = np.where(labels >= 0, tf.argmax(output(outputs), -1).numpy() == labels, True)
        coarse, fine = accuracies(right, labels)
        log(f"{task} {model} --deque_biases={deque_biases} lr {learning_rate} seed {seed}: after {step} steps "
            f"perplexity {np.exp(np.mean(losses[-100:])):.2f}, coarse {coarse:.2f}, fine {fine:.2f} "
            f"({time.time() - start:.0f} s)")
        if show_ops:
            log(operations_by_phase(operations.numpy(), held_out[0], size))

    start, losses = time.time(), []
    for step in range(1, steps + 1):
        inputs, labels = batch(task, rng, 10, size, size.longest_at(step, curriculum))
        losses.append(float(train_step(model_inputs(inputs), labels)))
        if report_every and step % report_every == 0 and step < steps:
            report(step)
    report(steps)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("task", choices=SEQUENCE_TASKS)
    # The models and biases the toolkit's configuration declares, so that the study follows it.
    parser.add_argument("--model", choices=MEMORY_LSTMS[1], default="deque_lstm")
    parser.add_argument("--deque_biases", choices=field_named("deque_biases").metadata["choices"], default="same")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--learning_rate", type=float, default=0.002)
    parser.add_argument("--symbols", type=int, default=SMALL.symbols)
    parser.add_argument("--lengths", type=int, nargs=2, metavar=("SHORTEST", "LONGEST"),
                        default=[SMALL.shortest, SMALL.longest])
    parser.add_argument("--units", type=int, default=SMALL.units, help="LSTM units and memory width")
    parser.add_argument("--embedding_size", type=int, default=SMALL.embedding_size)
    parser.add_argument("--curriculum", type=int, default=0, metavar="STEPS",
                        help="steps over which the longest source grows from the shortest + 4 to the longest")
    parser.add_argument("--report_every", type=int, default=0, metavar="STEPS")
    parser.add_argument("--show_ops", action="store_true",
                        help="with each report, the mean push and pop strengths by phase of the sequence")
    parser.add_argument("--separate_embeddings", action="store_true",
                        help="source and target symbols embedded by tables of their own, as in the model")
    args = parser.parse_args()
    size = Size(args.symbols, *args.lengths, args.units, args.embedding_size)
    try:
        check_applicable({"deque_biases": args.deque_biases}, Config().replace(model=args.model))
        check_size(size)
    except UserError as e:
        parser.error(str(e))
    for seed in args.seeds:
        study(args.task, args.model, args.deque_biases, seed, args.steps, args.learning_rate,
              lambda m: print(m, flush=True), size, args.curriculum, args.report_every, args.show_ops,
              args.separate_embeddings)


if __name__ == "__main__":
    main()
