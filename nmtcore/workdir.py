"""What a working directory holds, and how a trained model is saved to and loaded from it.

    hparams.json         every model hyperparameter and the data it was trained on
    vocab1.txt vocab2.txt  source and target vocabularies, one word per line, id = line number
    best/                TensorFlow checkpoint of the best dev epoch's weights (and PB tables)
    state/               the last epoch's full training state (with optimiser slots), for resuming
    training_stats.json  per-epoch train/dev perplexity, loss terms and seconds, early-stopping state
    logs/                TensorBoard event files of training
    test_trans.txt testing_stats.json   written by --do_testing
    analysis/            written by --analyze
    .lock                held by the training process (nmtcore/lock.py)
"""

import json
import os

from nmtcore.checkpoints import RunCheckpoints
from nmtcore.config import Config, check_applicable
from nmtcore.errors import UserError
from nmtcore.files import write_json
from nmtcore.vocabulary import Vocabulary

HPARAMS = "hparams.json"


def is_trained(working_dir):
    return os.path.isfile(os.path.join(working_dir, HPARAMS))


def for_worker(working_dir, strategy):
    """Where this process keeps its training run: ``working_dir`` on the chief or a single process,
    ``<working_dir>.worker-N`` on worker N of a multi-worker run. TensorFlow requires every worker
    to save the checkpoints; they hold the same numbers, but two writers of one file corrupt it."""
    resolver = getattr(strategy, "cluster_resolver", None)
    if resolver is None or resolver.task_type in (None, "chief"):
        return working_dir
    if resolver.task_type == "worker" and resolver.task_id == 0 and "chief" not in resolver.cluster_spec().as_dict():
        return working_dir
    return f"{os.path.normpath(working_dir)}.{resolver.task_type}-{resolver.task_id}"


def set_aside(working_dir):
    """Rename a working directory to ``<working_dir>.previous-N`` (the first free N) and return
    that name: --start_over never deletes a run, it moves it out of the way."""
    base = os.path.normpath(working_dir)
    n = 1
    while os.path.exists(f"{base}.previous-{n}"):
        n += 1
    os.rename(base, f"{base}.previous-{n}")
    return f"{base}.previous-{n}"


def save_setup(working_dir, config, vocab1, vocab2):
    """Write what is needed to rebuild the model: hyperparameters and vocabularies."""
    os.makedirs(working_dir, exist_ok=True)
    vocab1.save(os.path.join(working_dir, "vocab1.txt"))
    vocab2.save(os.path.join(working_dir, "vocab2.txt"))
    write_json(os.path.join(working_dir, HPARAMS), config.to_flat())


def load_config(working_dir, models):
    """The ``Config`` of a working directory's hparams.json (one from before a hyperparameter
    existed gets the value it was trained with); ``models`` are the known --model names."""
    path = os.path.join(working_dir, HPARAMS)
    if not os.path.isdir(working_dir):
        raise UserError(f"--working_dir={working_dir}: no such directory")
    if not os.path.isfile(path):
        raise UserError(f"{path} missing: --working_dir holds no trained model (train with --do_training)")
    try:
        with open(path, encoding="utf-8") as f:
            params = json.load(f)
    except (ValueError, UnicodeDecodeError) as e:
        raise UserError(f"{path}: corrupted ({e})") from None
    if not isinstance(params, dict) or "model" not in params:
        raise UserError(f"{path}: corrupted (no model type)")
    if params["model"] not in models:
        raise UserError(f"{path}: corrupted (unknown model {params['model']!r})")
    return Config.from_saved(params, path)


def load_vocabularies(working_dir):
    return (Vocabulary.load(os.path.join(working_dir, "vocab1.txt")),
            Vocabulary.load(os.path.join(working_dir, "vocab2.txt")))


def load_ensemble(working_dirs, models, overrides=None):
    """The models of an ensemble's members (``--ensemble``), each as ``load_model`` gives it.

    Refused in one line naming the directory: one without a trained model, one named twice (it
    would vote twice), members trained on different tasks (their outputs are not comparable).
    Models and vocabularies may differ: each member reads and writes with its own.
    """
    seen = set()
    for working_dir in working_dirs:
        if not is_trained(working_dir):
            raise UserError(f"--ensemble: {working_dir} holds no trained model (no {HPARAMS})")
        if os.path.realpath(working_dir) in seen:
            raise UserError(f"--ensemble: {working_dir} is named twice (each member votes once)")
        seen.add(os.path.realpath(working_dir))
    first, task = working_dirs[0], load_config(working_dirs[0], models).data.task
    for working_dir in working_dirs[1:]:
        other = load_config(working_dir, models).data.task
        if other != task:
            raise UserError(f"--ensemble: {working_dir} was trained on --task={other}, {first} on --task={task}")
    return [load_model(working_dir, models, overrides) for working_dir in working_dirs]


def load_model(working_dir, models, overrides=None):
    """Rebuild the model of ``working_dir`` with its best weights.

    ``models`` maps --model names to classes; ``overrides`` replaces inference-time settings
    (beam size, recognition iterations, ...) given on the command line; one the model does not
    read (``--refine_steps`` without ``--amortize``) is refused.
    """
    config = load_config(working_dir, models).replace(**(overrides or {}))
    check_applicable(overrides or {}, config)
    vocab1, vocab2 = load_vocabularies(working_dir)
    model = models[config.model.model](config, vocab1, vocab2)
    RunCheckpoints(working_dir, model).restore_best()
    return model
