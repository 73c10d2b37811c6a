#!/usr/bin/env python3
"""The GPU check (issue 91): on a machine with a GPU, a few hundred training steps of a model of each
family, with and without --jit_compile and --mixed_precision, their losses compared with the same
steps on the CPU, and the training speed of each recorded.

    python3 run_scripts/gpu_check.py --data=../shared/data/easy/easy20000 [--steps=300] [--out=gpu_check.json]

For each model (``--models``; the hard-attention transducer is left out: it needs inflection data)
and each setting its family takes (``float32``; ``jit``; ``bfloat16``, ``float16``, ``bfloat16_jit``
for the Transformer), the same initial weights train on the same batches (the first ``--steps`` of
epoch 1) on the GPU; ``float32`` trains on the CPU too, as the reference. Per setting it records
the target tokens (``<end>`` included) per second over the steps after the first (XLA's compilation
of each new batch shape included) and over the second half, the mean loss of the last tenth of the
steps, and its relative difference from the CPU run's (``agrees``: within ``TOLERANCE``).
Writes the JSON record to ``--out`` and prints it.

Without a visible GPU it refuses, in one line, unless ``--allow_cpu`` (a dry run: every setting on
the CPU, for testing the script itself).
"""

import argparse
import json
import os
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from rnnpb_nmt import config as config_lib, registry, tf_stack  # noqa: E402
from rnnpb_nmt.data import files  # noqa: E402
from rnnpb_nmt.data.vocabulary import PAD_ID  # noqa: E402
from rnnpb_nmt.train.step import Trainer  # noqa: E402

MODELS = ("rnnpbnmt", "encdec", "stack_lstm", "deep_lstm", "transformer")
SETTINGS = {"float32": {}, "jit": dict(jit_compile=True), "bfloat16": dict(mixed_precision="bfloat16"),
            "float16": dict(mixed_precision="float16"), "bfloat16_jit": dict(mixed_precision="bfloat16", jit_compile=True)}
# How far the mean loss of the last tenth of the steps may be from the CPU's, relatively: float32 on
# a GPU rounds otherwise (TF32 matrix units on Ampere and later, other summation orders), half
# precision more; after hundreds of steps the two trajectories have drifted apart by that.
TOLERANCE = {"float32": 0.02, "jit": 0.02, "bfloat16": 0.05, "float16": 0.05, "bfloat16_jit": 0.05}
SETS = {"train_set1": "train.en", "train_set2": "train.de", "dev_set1": "dev.en", "dev_set2": "dev.de"}


def configuration(model, args):
    """A new run's configuration of ``model`` at the sizes given (the memory LSTMs decode greedily)."""
    sizes = dict(model=model, units=args.units, embedding_size=args.embedding_size, batch_size=args.batch_size,
                 lang1="en", lang2="de")
    return config_lib.Config().replace(**sizes, **({"beam_size": 1} if model.endswith("_lstm") and
                                                   model != "deep_lstm" else {}))


def settings(config):
    """The settings of ``SETTINGS`` whose flags the model of ``config`` takes."""
    return [name for name, flags in SETTINGS.items() if all(config_lib.applies(flag, config) for flag in flags)]


def train(config, corpus, steps, device):
    """{"losses": the first ``steps`` steps' losses, "tokens_per_second", "tokens_per_second_second_half"}
    of a model of ``config`` trained on ``device`` (its initial weights set by --seed)."""
    with tf.device(device):
        tf.keras.utils.set_random_seed(config.training.seed)
        trainer = Trainer(registry.models()[config.model.model](config, corpus.vocab1, corpus.vocab2))
        losses, times, tokens = [], [], []
        for kind, batch in trainer.epoch_batches(corpus, 1, np.random.default_rng(1)):
            losses.append(float(trainer.train_step(batch, kind)["loss"]))  # waits for the step
            times.append(time.perf_counter())
            tokens.append(int(np.sum(batch["tgt"].numpy() != PAD_ID)))
            if len(losses) == steps:
                break
    half = len(times) // 2
    return {"losses": losses, "tokens_per_second": _speed(times, tokens, 0),
            "tokens_per_second_second_half": _speed(times, tokens, half)}


def _speed(times, tokens, start):
    """Target tokens per second of the steps after step ``start`` (the step that ends at ``times[start]``)."""
    seconds = times[-1] - times[start]
    return sum(tokens[start + 1:]) / seconds if seconds > 0 else None


def compared(run, reference, tolerance):
    """``run`` with its losses summed up against the CPU ``reference`` run's."""
    tail = max(1, len(run["losses"]) // 10)
    mean, reference_mean = np.mean(run["losses"][-tail:]), np.mean(reference["losses"][-tail:])
    difference = abs(mean - reference_mean) / reference_mean
    return {**run, "final_mean_loss": float(mean), "relative_difference_to_cpu": float(difference),
            "agrees": bool(difference <= tolerance)}


def check_model(model, args, device):
    """The record of ``model``: its CPU reference and each setting it takes, on ``device``."""
    config = configuration(model, args)
    data_files = {flag: os.path.join(args.data, name) for flag, name in SETS.items()}
    with tempfile.TemporaryDirectory() as working_dir:
        task = registry.tasks()[config.data.task](config, working_dir)
        corpus = task.load_corpus(data_files, config)
    config = config.replace(**task.derived(data_files, corpus))
    reference = train(config, corpus, args.steps, "/CPU:0")
    record = {"cpu_float32": compared(reference, reference, 0.0)}
    for name in settings(config):
        run = train(config.replace(**SETTINGS[name]), corpus, args.steps, device)
        record[name] = compared(run, reference, TOLERANCE[name])
        print(f"{model} {name}: {record[name]['tokens_per_second']:.0f} target tokens/s, loss "
              f"{record[name]['final_mean_loss']:.3f} (CPU: {record['cpu_float32']['final_mean_loss']:.3f})", flush=True)
    return record


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True, help="a folder of train.{en,de} and dev.{en,de} (easy/easy20000)")
    parser.add_argument("--steps", type=int, default=300, help="training steps of each run")
    parser.add_argument("--models", default=",".join(MODELS), help="the models checked, comma-separated")
    parser.add_argument("--units", type=int, default=256)
    parser.add_argument("--embedding_size", type=int, default=128)
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--out", default="gpu_check.json", help="where the JSON record goes")
    parser.add_argument("--allow_cpu", action="store_true", help="without a GPU, a dry run on the CPU")
    args = parser.parse_args(argv)
    if args.steps < 2:
        parser.error(f"--steps={args.steps}: at least 2 (the first step, which compiles, is not timed)")
    gpus = tf.config.list_physical_devices("GPU")
    if not gpus and not args.allow_cpu:
        raise SystemExit("error: no GPU visible (tf.config.list_physical_devices('GPU') is empty); this check is "
                         "for a machine with one (--allow_cpu: a dry run on the CPU)")
    device = "/GPU:0" if gpus else "/CPU:0"
    result = {"stack": tf_stack.STACK, "device": device,
              "gpu": tf.config.experimental.get_device_details(gpus[0]).get("device_name") if gpus else None,
              "steps": args.steps, "tolerance": TOLERANCE,
              "models": {model: check_model(model, args, device) for model in args.models.split(",")}}
    files.write_json(args.out, result)
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
