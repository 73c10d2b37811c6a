"""Typed configuration of a run: model, training, inference and data sections.

Each section is a frozen dataclass; each field's metadata (help text, valid range, choices)
generates its command-line flag (``rnnpb_nmt.cli``), so a hyperparameter is declared once. A run's
``hparams.json`` keeps the flat form the thesis's scripts and older working directories have
(``Config.to_flat`` / ``Config.from_flat``): one key per field, whatever its section.

Frozen, so that nothing changes a run's settings along the way: a changed setting is a new
``Config`` (``Config.replace``), e.g. the translation settings given again at test time.
"""

import dataclasses
import typing

from rnnpb_nmt import registry
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.options import NO_LEGACY, option



class Readers:
    """The --model names that read a core field, as their families declare (``READS`` in their
    options modules): the values of an ``only=("model", Readers(field))``, in family order."""

    def __init__(self, field):
        self.field = field

    def _names(self):
        return tuple(name for module in registry.option_modules() for name, fields in getattr(module, "READS", {}).items()
                     if self.field in fields)

    def __iter__(self):
        return iter(self._names())

    def __contains__(self, name):
        return name in self._names()

    def __getitem__(self, i):
        return self._names()[i]

    def __repr__(self):
        return f"Readers({self.field!r}: {'|'.join(self)})"


def _declared(name):
    """The one value of ``name`` (DEFAULT_MODEL, DEFAULT_TASK) that an options module declares."""
    values = [getattr(m, name) for m in registry.option_modules() if hasattr(m, name)]
    if len(values) != 1:
        raise ValueError(f"{name}: {len(values)} options modules declare one; exactly one must")
    return values[0]


@dataclasses.dataclass(frozen=True)
class _ModelCore:
    """What the network is (thesis section 5.2.4's baseline as defaults)."""

    model: str = option(_declared("DEFAULT_MODEL"), "model type (docs/models/)")
    # Runs from before presets existed gave every flag themselves.
    preset: str = option("none", "a named configuration (rnnpb-nmt --help lists them; rnnpb_nmt/models/*/presets.py): "
                                 "its flags' values, which flags given beside it replace", legacy="none")
    embedding_size: int = option(128, "word embedding size", 1, 1e5)
    units: int = option(256, "LSTM units per layer", 1, 1e5)
    # Models of --num_layers recurrent layers with --dropout (a memory LSTM has one controller, no dropout).
    num_layers: int = option(2, "LSTM layers", 1, 100, only=("model", Readers("num_layers")))
    autoencode: bool = option(False, "one RNNPB is both A and B")
    # Dropout 1 would drop every input.
    dropout: float = option(0.0, "dropout on every LSTM layer's inputs", 0, 1, high_open=True,
                             only=("model", Readers("dropout")))

@dataclasses.dataclass(frozen=True)
class _TrainingCore:
    """How the network is trained."""

    learning_rate: float = option(0.001, "network weights' learning rate", 0, 10, low_open=True)
    optimizer: str = option("adam", "adam (LazyAdam, as the thesis: an embedding row's moments move only in the "
                                    "batches that use it), dense_adam (Adam: every row's moments decay every step, "
                                    "as OpenNMT-tf and most NMT toolkits), sgd (plain stochastic gradient descent, as "
                                    "McCoy et al.'s question-formation code), rmsprop (as Grefenstette et al.'s "
                                    "memory LSTMs) or adadelta (Zeiler's ADADELTA, rho 0.95, epsilon 1e-6, as Aharoni & "
                                    "Goldberg's hard-attention model; Zeiler's own step is --learning_rate=1)",
                            choices=("adam", "dense_adam", "sgd", "rmsprop", "adadelta"), legacy="adam")
    batch_size: int = option(64, "sentences per training batch", 1, 1e6)
    batch_tokens: int = option(
        0, "token batching: batches of sentences of similar lengths whose padded size (sentences x the longest "
           "source or target, <end> included) is at most N tokens, in place of --batch_size sentences; under "
           "--distribute N is the whole step's, shared by the replicas; a sentence longer than N is a batch of its own "
           "(0: off; rnnpb_nmt/data/dataset.py token_batches)", 0, 1e9, legacy=0)
    gradient_clip: float = option(1.0, "global-norm clip (1e9: no clipping, the gradients left bit for bit as they are "
                                       "below that norm)", 0, 1e9, low_open=True)
    early_stopping_steps: int = option(20, "epochs without dev improvement before stopping", 1, 1e6)
    early_stopping_metric: str = option(
        "perplexity", "what chooses the best epoch and stops training: the dev perplexity, or the task's dev score "
        "(score: BLEU, coarse accuracy, accuracy or full-sentence accuracy, of the dev set translated with "
        "--beam_size; a tie is no improvement)", choices=("perplexity", "score"), legacy="perplexity")
    early_stopping_ties: str = option(
        "first", "which of the epochs tied at the best dev measure is the best epoch (its weights in best/): the "
                 "first, or the last, as McCoy et al.'s question-formation code; a tie counts as an epoch without "
                 "improvement either way", choices=("first", "last"), legacy="first")
    learning_rate_decay: float = option(
        1.0, "multiply every learning rate by this after --decay_patience epochs without dev improvement, and again "
             "after each further --decay_patience (reduce on plateau, as JoeyNMT's and fairseq's schedulers; 1: "
             "constant rates)", 0, 1, low_open=True, legacy=1.0)
    decay_patience: int = option(2, "epochs without dev improvement before each --learning_rate_decay", 1, 1e6,
                                 legacy=2)
    # Smoothing 1 would train towards the uniform distribution alone.
    label_smoothing: float = option(
        0.0, "train towards (1 - e) x the gold word + e x the uniform distribution over the vocabulary (Szegedy et "
             "al. 2016, as Vaswani et al. 2017 at 0.1): the training loss, and the training perplexity logged from "
             "it, are the smoothed cross-entropy; dev perplexity, recognition and search never are (0: off)",
        0, 1, high_open=True, legacy=0.0)
    lr_schedule: str = option(
        "constant", "the learning rate over training steps: constant (--learning_rate), or rsqrt: rising linearly "
                    "to --learning_rate over --warmup_steps steps, then falling as 1/sqrt(step) (Vaswani et al. "
                    "2017's shape with its peak given, as fairseq's inverse_sqrt); --learning_rate_decay multiplies "
                    "either", choices=("constant", "rsqrt"), legacy="constant")
    warmup_steps: int = option(4000, "--lr_schedule=rsqrt: training steps of the linear warm-up", 1, 1e9, legacy=4000,
                               only=("lr_schedule", ("rsqrt",)))
    max_epochs: int = option(200, "upper bound on epochs", 1, 1e6)
    min_epochs: int = option(0, "early stopping ends no run before this many epochs (McCoy et al.'s code: 150 000 "
                                "pairs, 30 epochs of --epoch_examples=5000)", 0, 1e6, legacy=0)
    epoch_examples: int = option(
        0, "an epoch is this many training pairs, the next of a stream through them pass after pass (each pass "
           "in its own order), so that the dev measurement, early stopping and checkpoints come every N pairs "
           "(0: an epoch is one pass; rnnpb_nmt/train/epoch_length.py)", 0, 1e9, legacy=0)
    batch_order: str = option(
        "shuffled", "the training batches: shuffled (--batch_size pairs of similar lengths from length buckets, in a "
                    "new order every pass) or fixed (McCoy et al.'s question-formation code: --batch_size pairs of one "
                    "source length, a length's last unfinished batch left out, the batches shuffled once by --seed "
                    "and then cycled in that order for the whole run; rnnpb_nmt/train/epoch_length.py)",
        choices=("shuffled", "fixed"), legacy="shuffled")
    curriculum_epochs: int = option(
        0, "a length curriculum: epoch e < N trains only on the pairs whose source is at most shortest + "
           "(longest - shortest) * e / N long, epoch N and later on all (0: every pair from the start; "
           "rnnpb_nmt/train/curriculum.py)", 0, 1e6, legacy=0)
    dev_every: int = option(1, "measure the dev perplexity every Nth epoch, and the last (the thesis's code: 2)", 1, 1e6,
                            legacy=1)
    keep_checkpoints: int = option(
        0, "keep the weights of the last N finished epochs and of the N best by the dev measure (as best/'s; an "
           "epoch without a dev measurement counts only as last) in <working_dir>/epochs, for --average_checkpoints "
           "(0: none, only best/ and state/)", 0, 1e6, legacy=0)
    save_every_steps: int = option(
        0, "every N training steps inside an epoch, and when training is stopped (Ctrl-C, SIGTERM), save the "
           "training state and the position in the epoch (<working_dir>/mid_epoch), so that the same command resumes "
           "from that step into the uninterrupted run (0: only at the end of each epoch; not saved; not with "
           "--distribute; rnnpb_nmt/train/mid_epoch.py)", 0, 1e9, saved=False)
    # Run-time options of the hardware, as --distribute: a run resumes with or without them (its
    # checkpoints hold float32 variables either way), so hparams.json does not keep them.
    mixed_precision: str = option(
        "none", "compute in float16 or bfloat16, variables in float32 (Keras's mixed precision policy; float16 with "
                "dynamic loss scaling; logits and losses in float32), for GPUs with fast half-precision matrix "
                "units; training and its dev measurements, not testing (not saved; rnnpb_nmt/precision.py)",
        choices=("none", "float16", "bfloat16"), saved=False, only=("model", Readers("mixed_precision")))
    jit_compile: bool = option(
        False, "compile the training step's forward and backward pass with XLA (once per batch shape; the "
               "optimisers' updates stay outside it; not saved)", saved=False, only=("model", Readers("jit_compile")))
    # p_mono 1 would never draw a parallel batch, so no epoch would end.
    p_mono: float = option(0.0, "monolingual batch probability", 0, 1, high_open=True)
    seed: int = option(1234, "random seed", 0, 2**32 - 1)  # numpy's seeds are unsigned 32-bit
    monitor_every: int = option(0, "every N epochs, log a small dev BLEU to TensorBoard (0: never; not saved)", 0, 1e6,
                                saved=False)
    monitor_sentences: int = option(100, "dev sentences the monitoring BLEU uses (not saved)", 1, 1e8, saved=False)


@dataclasses.dataclass(frozen=True)
class _InferenceCore:
    """Translation and recognition; may be given again at test time."""

    beam_size: int = option(10, "beam width (1 = greedy)", 1, 1000)
    max_trans_ratio: float = option(1.5, "max output length / source length", 0, 100, low_open=True)
    test_batch_size: int = option(256, "sentences translated at once", 1, 1e6)
    joint_rerank: float = option(0.0, "bound RNNPB, beam search: rerank the n-best by joint recognition, min_p "
                                      "L_A(a|p) + joint_rerank * L_B(b|p) (0: off; not saved)", 0, 1e6,
                                 saved=False)
    # At most 10, so that lp(Y) of outputs of thousands of words stays well within float32.
    length_penalty: float = option(0.0, "beam search: rank hypotheses by summed log-probability / lp(Y), GNMT's "
                                        "length penalty lp(Y) = ((5 + |Y|) / 6)^α, |Y| counting <end> (0: summed "
                                        "log-probabilities, as the thesis; greedy search is unaffected; not saved)",
                                   0, 10, saved=False)
    average_checkpoints: int = option(
        0, "translate with the element-wise mean of the weights of N epochs that --keep_checkpoints kept, chosen by "
           "--average_of (0: best/'s weights; not saved)", 0, 1e6, saved=False)
    average_of: str = option("last", "which kept epochs --average_checkpoints averages: the last N finished, or the N "
                                     "best by the dev measure that chose best/ (not saved)",
                             choices=("last", "best"), saved=False)


@dataclasses.dataclass(frozen=True)
class _DataCore:
    """The files a model was trained on, and what follows from them."""

    # Runs from before tasks existed were of the default task (translation).
    task: str = option(_declared("DEFAULT_TASK"), "what the data is and how it is scored (docs/tasks.md)",
                       legacy=_declared("DEFAULT_TASK"))
    train_set1: typing.Optional[str] = option(None, "tokenized text, one sentence per line")
    train_set2: typing.Optional[str] = option(None, "tokenized text, one sentence per line")
    dev_set1: typing.Optional[str] = option(None, "tokenized text, one sentence per line")
    dev_set2: typing.Optional[str] = option(None, "tokenized text, one sentence per line")
    mono_set1: typing.Optional[str] = option(None, "tokenized text, one sentence per line")
    mono_set2: typing.Optional[str] = option(None, "tokenized text, one sentence per line")
    vocab1_max: typing.Optional[int] = option(None, "source vocabulary size", 1, 1e8)
    vocab2_max: typing.Optional[int] = option(None, "target vocabulary size", 1, 1e8)
    prepare_workers: int = option(
        0, "worker processes that read and tokenize the data files, each a part of a file at a time, when a run "
           "prepares its corpus (0: as many as the machine has CPUs, at most 4; 1: in this process; the corpus is "
           "the same whatever the number; not saved; rnnpb_nmt/data/parts.py)", 0, 1024, saved=False)
    lang1: str = option("en", "source language code", flag=False)
    lang2: str = option("en", "target language code", flag=False)
    # Row counts the models size their PB tables by.
    num_train: int = option(0, "training sentence pairs", flag=False)
    num_mono1: int = option(0, "monolingual source sentences", flag=False)
    num_mono2: int = option(0, "monolingual target sentences", flag=False)
    # What testing and translate mode warn of inputs beyond (0: not known, a run from before issue 93).
    longest1: int = option(0, "symbols of the longest source training sentence", flag=False, legacy=0)
    longest2: int = option(0, "symbols of the longest target training sentence", flag=False, legacy=0)


def _section(name, core):
    """A section's class: the core's fields, then those of the ``<name>Options`` classes that the
    model families and tasks declare (``rnnpb_nmt.registry.option_modules``), in their order."""
    declared = [getattr(m, f"{name}Options") for m in registry.option_modules() if hasattr(m, f"{name}Options")]
    # A dataclass collects its bases' fields from the last base to the first: the core's come first.
    section = dataclasses.make_dataclass(f"{name}Config", [], bases=(*reversed(declared), core), frozen=True)
    section.__doc__, section.__module__ = core.__doc__, __name__
    return section


ModelConfig = _section("Model", _ModelCore)
TrainingConfig = _section("Training", _TrainingCore)
InferenceConfig = _section("Inference", _InferenceCore)
DataConfig = _section("Data", _DataCore)
SECTIONS = {"model": ModelConfig, "training": TrainingConfig, "inference": InferenceConfig, "data": DataConfig}


def fields(section):
    return dataclasses.fields(section)


def names(**metadata):
    """The flat names of the fields whose metadata has these values, in section order: ``flag=True``
    the flags, ``flag=False`` the values a run derives, ``saved=False`` the run-time options."""
    return [f.name for section in SECTIONS.values() for f in fields(section)
            if all(f.metadata[key] == value for key, value in metadata.items())]


def flag_type(field):
    """The Python type of a field's values (``Optional[int]`` -> ``int``)."""
    kind = field.type
    args = [a for a in typing.get_args(kind) if a is not type(None)]
    return args[0] if args else kind


def _section_of():
    return {f.name: name for name, section in SECTIONS.items() for f in fields(section)}


@dataclasses.dataclass(frozen=True)
class Config:
    """The four sections of a run's configuration."""

    model: ModelConfig = ModelConfig()
    training: TrainingConfig = TrainingConfig()
    inference: InferenceConfig = InferenceConfig()
    data: DataConfig = DataConfig()

    @classmethod
    def from_flat(cls, flat):
        """The configuration a flat dict (hparams.json, or flags) gives; missing keys take their
        defaults. Use ``from_saved`` for a working directory's file."""
        section_of = _section_of()
        parts = {name: {} for name in SECTIONS}
        for key, value in flat.items():
            if key in section_of:
                parts[section_of[key]][key] = value
        return cls(**{name: SECTIONS[name](**values) for name, values in parts.items()})

    @classmethod
    def from_saved(cls, flat, source):
        """The configuration of a saved hparams.json (``source`` names it in errors): a key it lacks
        takes its ``legacy`` value, or the file is corrupted. Keys no field has are ignored."""
        values = dict(flat)
        for section in SECTIONS.values():
            for f in fields(section):
                if f.name not in values and f.metadata["saved"]:
                    if f.metadata["legacy"] is NO_LEGACY:
                        raise UserError(f"{source}: corrupted (no {f.name!r})")
                    values[f.name] = f.metadata["legacy"]
                elif f.name in values:
                    _check_saved(f, values[f.name], source)
        return cls.from_flat(values)

    def to_flat(self):
        """The saved form: one key per saved field, in section order."""
        return {f.name: getattr(getattr(self, name), f.name)
                for name, section in SECTIONS.items() for f in fields(section) if f.metadata["saved"]}

    def replace(self, **flat):
        """A copy with the named fields (flat names) changed."""
        section_of = _section_of()
        unknown = set(flat) - set(section_of)
        if unknown:
            raise KeyError(f"no configuration field {sorted(unknown)}")
        changes = {}
        for key, value in flat.items():
            changes.setdefault(section_of[key], {})[key] = value
        return dataclasses.replace(self, **{name: dataclasses.replace(getattr(self, name), **values)
                                            for name, values in changes.items()})


def _check_saved(field, value, source):
    """A UserError naming hparams.json (``source``) when a saved value is not one its field can hold:
    a file edited by hand would otherwise fail deep inside TensorFlow."""
    kind, name = flag_type(field), field.name
    if value is None:
        fits = field.default is None or type(None) in typing.get_args(field.type)
    elif isinstance(value, bool):  # a bool is an int to isinstance, never a number here
        fits = kind is bool
    else:
        fits = isinstance(value, (int, float) if kind is float else kind)  # a hand edit may write 1 for 1.0
    if not fits:
        raise UserError(f"{source}: corrupted ({name}={value!r} is not of type {kind.__name__})")
    choices = field.metadata["choices"]
    if value is not None and choices is not None and value not in choices:
        raise UserError(f"{source}: corrupted ({name}={value!r}: not one of {', '.join(map(repr, choices))})")
    try:
        check_range(name, value, field)
    except UserError as e:
        raise UserError(f"{source}: corrupted ({str(e).removeprefix('--')})") from None


def check_range(name, value, field):
    """A UserError naming the flag when ``value`` is outside the field's valid range."""
    m = field.metadata
    if value is None or m["low"] is None:
        return
    low, high = m["low"], m["high"]
    too_low = value <= low if m["low_open"] else value < low
    if too_low or value > high or value != value:
        raise UserError(f"--{name}={value}: must be {'>' if m['low_open'] else '>='} {low:g} and <= {high:g}")
    if m["high_open"] and value >= high:
        raise UserError(f"--{name}={value}: must be below {high:g}")


def check_ranges(values):
    """Check every configuration value of ``values`` (flat names) against its field's range."""
    for section in SECTIONS.values():
        for f in fields(section):
            if f.name in values:
                check_range(f.name, values[f.name], f)


def field_named(name):
    return next(f for section in SECTIONS.values() for f in fields(section) if f.name == name)


def requirements(name):
    """The (field, values) conditions under which field ``name`` matters, outermost first: for a
    field declared with ``only=("a", (1,))`` where ``a`` has ``only=("model", ("m",))``, that is
    ``[("model", ("m",)), ("a", (1,))]``."""
    chain, only = [], field_named(name).metadata["only"]
    while only:
        chain.insert(0, only)
        only = field_named(only[0]).metadata["only"]
    return chain


def applies(name, config):
    """Whether the run of ``config`` reads field ``name``."""
    flat = config.to_flat()
    return all(flat[key] in values for key, values in requirements(name))


def _as_flag(name, value):
    return f"--{name}" if value is True else f"--{name}={value}"


def check_applicable(given, config):
    """A UserError for the first of ``given`` (flat names: the flags given) that has a value other
    than its default and that the run of ``config`` does not read (``only=``): without it, one
    family's flag given to another family's model (attention to a model without any) would be
    silently ignored. Likewise for a flag that --batch_order=fixed leaves no room for."""
    for section in SECTIONS.values():
        for f in fields(section):
            if f.name in given and given[f.name] != f.default and not applies(f.name, config):
                chain = requirements(f.name)
                needed = " ".join(f"--{key}={'|'.join(values)}" for key, values in chain)
                run = " ".join(_as_flag(key, config.to_flat()[key]) for key, _ in chain)
                raise UserError(f"{_as_flag(f.name, given[f.name])}: only for {needed} (this run: {run}); "
                                "it would be ignored")
    flat = config.to_flat()
    for name in ("batch_tokens", "curriculum_epochs", "fresh_data") if flat["batch_order"] == "fixed" else ():
        if flat.get(name):
            raise UserError(f"{_as_flag(name, flat[name])}: not with --batch_order=fixed, whose batches are "
                            "--batch_size pairs of one source length, made once, in one order for the whole run")
