#!/usr/bin/env python3
"""Does a memory LSTM's initialisation let it learn? A small, fast study for choosing
``--deque_biases`` (and rates) before spending a 25-minute transduction cell on them.

    python3 run_scripts/memory_init_study.py copy --model deque_lstm --deque_biases per_end --seeds 1 2 3

Read-then-generate (source, separator, target, as ``memorylstm/model.py``) on the paper's §4.1
tasks at a small size: lengths 2-8 over 10 symbols, 16 units and memory width 16, batches of 10
drawn fresh at every step (the paper's setting; the cells use a fixed sample), Adam with gradient
clipping at 1. After ``--steps`` it prints the training perplexity of the last 100 batches and
the coarse accuracy on 200 new sequences, under teacher forcing: every symbol's argmax right is
the same as the greedy output right, as a wrong symbol is where greedy search would first go
astray. The network is the toolkit's own (``memory_network``: the MemoryLSTM and
its initial biases); the rest is the smallest loop that trains it.
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import tensorflow as tf  # noqa: E402

from memorylstm.model import memory_network  # noqa: E402
from nmtcore.config import MEMORY_LSTMS, Config, check_applicable, field_named  # noqa: E402
from nmtcore.errors import UserError  # noqa: E402
from nmtcore.synthetic import SEQUENCE_TASKS, transform  # noqa: E402

SYMBOLS, SIZE = 10, 16
SEPARATOR, END, PAD = SYMBOLS, SYMBOLS + 1, SYMBOLS + 2


def batch(task, rng, n):
    """Inputs (n, T): source, separator, target; labels (n, T): the next target symbol or <end>
    after the separator and each target symbol, -1 elsewhere."""
    lengths = rng.integers(2, 9, n)
    if task == "bigram_flip":
        lengths += lengths % 2
    inputs, labels = np.full((n, 2 * lengths.max() + 2), PAD), np.full((n, 2 * lengths.max() + 2), -1)
    for i, length in enumerate(lengths):
        source = list(rng.integers(0, SYMBOLS, length))
        target = transform(task, source)
        sequence = source + [SEPARATOR] + target
        inputs[i, :len(sequence)] = sequence
        labels[i, length:2 * length + 1] = target + [END]
    return inputs, labels


def study(task, model, deque_biases, seed, steps, learning_rate, log):
    tf.random.set_seed(seed)
    rng = np.random.default_rng(seed)
    config = Config().replace(model=model, deque_biases=deque_biases, units=SIZE, memory_width=SIZE)
    embed = tf.keras.layers.Embedding(SYMBOLS + 3, SIZE)
    memory = memory_network(config.model)
    output = tf.keras.layers.Dense(SYMBOLS + 2)
    optimizer = tf.keras.optimizers.Adam(learning_rate, clipnorm=1.0)

    def logits(inputs):
        return output(memory(embed(inputs), mask=inputs != PAD)[0])

    @tf.function
    def train_step(inputs, labels):
        with tf.GradientTape() as tape:
            real = tf.cast(labels >= 0, tf.float32)
            losses = tf.nn.sparse_softmax_cross_entropy_with_logits(tf.maximum(labels, 0), logits(inputs))
            loss = tf.reduce_sum(losses * real) / tf.reduce_sum(real)
        variables = embed.trainable_variables + memory.trainable_variables + output.trainable_variables
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    start, losses = time.time(), []
    for _ in range(steps):
        losses.append(float(train_step(*batch(task, rng, 10))))
    inputs, labels = batch(task, rng, 200)
    right = np.where(labels >= 0, tf.argmax(logits(inputs), -1).numpy() == labels, True).all(axis=1)
    log(f"{task} {model} --deque_biases={deque_biases} lr {learning_rate} seed {seed}: after {steps} steps "
        f"perplexity {np.exp(np.mean(losses[-100:])):.2f}, coarse {right.mean():.2f} ({time.time() - start:.0f} s)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("task", choices=SEQUENCE_TASKS)
    # The models and biases the toolkit's configuration declares, so that the study follows it.
    parser.add_argument("--model", choices=MEMORY_LSTMS[1], default="deque_lstm")
    parser.add_argument("--deque_biases", choices=field_named("deque_biases").metadata["choices"], default="same")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--learning_rate", type=float, default=0.002)
    args = parser.parse_args()
    try:
        check_applicable({"deque_biases": args.deque_biases}, Config().replace(model=args.model))
    except UserError as e:
        parser.error(str(e))
    for seed in args.seeds:
        study(args.task, args.model, args.deque_biases, seed, args.steps, args.learning_rate,
              lambda m: print(m, flush=True))


if __name__ == "__main__":
    main()
