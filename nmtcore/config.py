"""Typed configuration of a run: model, training, inference and data sections.

Each section is a frozen dataclass; each field's metadata (help text, valid range, choices)
generates its command-line flag (``nmtcore.cli``), so a hyperparameter is declared once. A run's
``hparams.json`` keeps the flat form the thesis's scripts and older working directories have
(``Config.to_flat`` / ``Config.from_flat``): one key per field, whatever its section.

Frozen, so that nothing changes a run's settings along the way: a changed setting is a new
``Config`` (``Config.replace``), e.g. the translation settings given again at test time.
"""

import dataclasses
import typing

from nmtcore.errors import UserError

_NO_LEGACY = object()


def option(default, help, low=None, high=None, low_open=False, high_open=False, choices=None,
           legacy=_NO_LEGACY, flag=True, saved=True, only=None):
    """A configuration field.

    ``low``/``high`` bound a number (``*_open``: the bound itself is invalid); ``legacy`` is the
    value a working directory written before the field existed used (without one, such a
    directory's hparams.json is corrupted); ``flag=False`` for values derived from the data,
    ``saved=False`` for run-time options that hparams.json does not keep. ``only=(field, values)``:
    the field matters only to runs whose ``field`` is one of ``values`` (and that field's own
    ``only``, if any, holds); given to another run, a value other than the default would be silently
    ignored, so it is refused (``check_applicable``).
    """
    return dataclasses.field(default=default, metadata=dict(
        help=help, low=low, high=high, low_open=low_open, high_open=high_open, choices=choices,
        legacy=legacy, flag=flag, saved=saved, only=only))


# Which runs read a field (``only=``): the models and settings that use it.
ENCDEC, MEMORY_LSTMS = ("model", ("encdec",)), ("model", ("stack_lstm", "queue_lstm", "deque_lstm"))
# Models of --num_layers recurrent layers with --dropout (a memory LSTM has one controller, no dropout).
STACKED = ("model", ("rnnpbnmt", "encdec", "deep_lstm", "hard_attention"))
AMORTIZED = ("amortize", ("encoder", "learned"))


@dataclasses.dataclass(frozen=True)
class ModelConfig:
    """What the network is (thesis section 5.2.4's baseline as defaults)."""

    model: str = option("rnnpbnmt", "model type")
    embedding_size: int = option(128, "word embedding size", 1, 1e5)
    units: int = option(256, "LSTM units per layer", 1, 1e5)
    num_layers: int = option(2, "LSTM layers", 1, 100, only=STACKED)
    num_PB: int = option(128, "PB vector size", 1, 1e5)
    binding_strength: float = option(1.0, "soft binding strength alpha", 0, 1e9)
    bind_hard: bool = option(False, "share one PB table")
    autoencode: bool = option(False, "one RNNPB is both A and B")
    reverse_source: bool = option(False, "reverse encoder input", only=ENCDEC)
    # Dropout 1 would drop every input.
    dropout: float = option(0.0, "dropout on every LSTM layer's inputs", 0, 1, high_open=True, only=STACKED)
    sigma: float = option(0.0, "PB noise std", 0, 1e3)
    no_pb_dropout: bool = option(
        False, "rnnpbnmt: --dropout drops word inputs and hidden units but never PB components (the thesis's "
        "Keras input dropout, and ours by default, drops PB components at layer 1's input too)", legacy=False,
        only=("model", ("rnnpbnmt",)))
    amortize: str = option(
        "none", "where a sentence's PB comes from: none (the thesis: a trained PB per training sentence, Adam "
        "recognition at test time); encoder (an LSTM encoder per language proposes it and --refine_steps "
        "differentiable steps refine it, in training as at test time); learned (one learned PB, refined so)",
        choices=("none", "encoder", "learned"), legacy="none", only=("model", ("rnnpbnmt",)))
    refine_step_size: float = option(0.1, "--amortize: initial per-dimension step size of the refinement "
                                          "(learned)", 0, 1e3, low_open=True, legacy=0.1, only=AMORTIZED)
    # The seq-to-seq model's (encdec) recurrent unit and attention (McCoy et al. 2018); older runs
    # are LSTMs without attention.
    cell: str = option("lstm", "encdec: recurrent unit of encoder and decoder: lstm, gru, srn (Elman)",
                       choices=("lstm", "gru", "srn"), legacy="lstm", only=ENCDEC)
    attention: str = option("none", "encdec: attention over the encoder outputs: none (the decoder starts from the "
                            "encoder's final states only), location (weights from the decoder state over source "
                            "positions), content (weights from the decoder state and each encoder output)",
                            choices=("none", "location", "content"), legacy="none", only=ENCDEC)
    attention_style: str = option(
        "bahdanau", "encdec with attention: bahdanau (the previous word and decoder state weigh the encoder outputs; "
        "their sum joins the decoder's input: McCoy et al.) or luong (the new top decoder state weighs them; "
        "tanh(W [state; sum]) is the output: Luong et al. 2015's global attention, Aharoni & Goldberg's soft model)",
        choices=("bahdanau", "luong"), legacy="bahdanau", only=("attention", ("location", "content")))
    bidirectional: bool = option(False, "encdec: a bidirectional encoder (forward and backward stacks; the decoder "
                                        "starts from the forward one's final states)", legacy=False, only=ENCDEC)
    attention_positions: int = option(64, "--attention=location: source positions (words + <end>) it can weigh; "
                                      "later positions get no weight", 1, 1e5, legacy=64,
                                      only=("attention", ("location",)))
    # The memory LSTMs' (stack_lstm, queue_lstm, deque_lstm); older runs have no memory.
    memory_width: int = option(256, "memory LSTMs: width m of the stack/queue/deque values (the paper: 256)",
                               1, 1e5, legacy=256, only=MEMORY_LSTMS)
    pop_bias: float = option(-1.0, "memory LSTMs: initial bias of the pop strengths (negative: pop little "
                             "at first)", -1e3, 1e3, legacy=-1.0, only=MEMORY_LSTMS)
    deque_biases: str = option(
        "same", "deque_lstm: initial push/pop biases of its two ends: same (each pushes at bias 0 and pops at "
        "--pop_bias) or per_end (the top pushes at 0 and pops at -3, the bottom pushes at -3 and pops at "
        "--pop_bias: at first the deque acts as a queue, whose bottom reads older pushes, not only its last few)",
        choices=("same", "per_end"), legacy="same", only=("model", ("deque_lstm",)))
    # The hard-attention transducer's; older runs have no features.
    feature_size: int = option(100, "hard_attention: size of the features' vector, the sum of one embedding per "
                                    "feature (the paper concatenates 20 per feature)", 1, 1e5, legacy=100,
                                only=("model", ("hard_attention",)))

    def __post_init__(self):
        if self.autoencode:  # one model is A and B, so there is one PB table
            object.__setattr__(self, "bind_hard", True)


@dataclasses.dataclass(frozen=True)
class TrainingConfig:
    """How the network is trained."""

    learning_rate: float = option(0.001, "network weights' learning rate", 0, 10, low_open=True)
    optimizer: str = option("adam", "adam (LazyAdam, as the thesis), sgd (plain stochastic gradient descent, as "
                                    "McCoy et al.'s question-formation code) or rmsprop (as Grefenstette et al.'s "
                                    "memory LSTMs)", choices=("adam", "sgd", "rmsprop"), legacy="adam")
    pb_learning_rate: float = option(0.01, "PB learning rate (training and recognition)", 0, 1e3, low_open=True)
    batch_size: int = option(64, "sentences per training batch", 1, 1e6)
    gradient_clip: float = option(1.0, "global-norm clip", 0, 1e9, low_open=True)
    early_stopping_steps: int = option(20, "epochs without dev improvement before stopping", 1, 1e6)
    early_stopping_metric: str = option(
        "perplexity", "what chooses the best epoch and stops training: the dev perplexity, or the task's dev score "
        "(score: BLEU, coarse accuracy, accuracy or full-sentence accuracy, of the dev set translated with "
        "--beam_size; a tie is no improvement)", choices=("perplexity", "score"), legacy="perplexity")
    max_epochs: int = option(200, "upper bound on epochs", 1, 1e6)
    curriculum_epochs: int = option(
        0, "a length curriculum: epoch e < N trains only on the pairs whose source is at most shortest + "
           "(longest - shortest) * e / N long, epoch N and later on all (0: every pair from the start; "
           "nmtcore/curriculum.py)", 0, 1e6, legacy=0)
    dev_every: int = option(1, "measure the dev perplexity every Nth epoch (the thesis's code: 2)", 1, 1e6,
                            legacy=1)
    p_reset: float = option(0.0, "per-epoch PB reset probability", 0, 1)
    # p_mono 1 would never draw a parallel batch, so no epoch would end.
    p_mono: float = option(0.0, "monolingual batch probability", 0, 1, high_open=True)
    double_shared_updates: bool = option(
        False, "as the thesis's code: a variable A and B share (the hard-bound PB table; every weight under "
        "--autoencode) gets two LazyAdam updates per step", legacy=False)
    pb_prior: float = option(0.0, "Gaussian prior on PBs: adds pb_prior * ||p||^2 / 2 to each sentence's loss "
                                  "in training and in recognition (MAP recognition)", 0, 1e6, legacy=0.0)
    refine_gradient: str = option("full", "--amortize: full (differentiate through the refinement steps) or "
                                          "stop (treat each step's gradient as a constant: cheaper)",
                                  choices=("full", "stop"), legacy="full", only=AMORTIZED)
    encoder_binding: float = option(0.0, "--amortize=encoder: beta of beta * ||E_A(a) - E_B(b)||^2 / 2, which "
                                         "trains B's encoder for B->A translation", 0, 1e9, legacy=0.0,
                                   only=("amortize", ("encoder",)))
    p0_loss: float = option(0.0, "--amortize: weight of B's loss from the unrefined proposal, L_B(b | p0)", 0, 1e6,
                            legacy=0.0, only=AMORTIZED)
    self_loss: float = option(
        1.0, "--amortize, parallel pairs: weight of each language model's loss of its own sentence from the PB "
        "refined on it (A's of the source; with --both_directions also B's of the target); 0: a language model "
        "learns to generate only from the other language's PBs, as translation uses it", 0, 1e6, legacy=1.0,
        only=AMORTIZED)
    both_directions: bool = option(
        False, "--amortize: also train B->A on every pair (B's refined PB of the target generates the source in "
        "A), so that one model translates both ways", legacy=False, only=AMORTIZED)
    teacher_forcing: float = option(
        1.0, "--model=encdec: the probability that a training batch's decoder reads the target's previous words; "
        "otherwise it reads its own previous greedy predictions (McCoy et al.'s code: 0.5)", 0, 1, legacy=1.0,
        only=ENCDEC)
    seed: int = option(1234, "random seed", 0, 2**32 - 1)  # numpy's seeds are unsigned 32-bit
    monitor_every: int = option(0, "every N epochs, log a small dev BLEU to TensorBoard (0: never; not saved)", 0, 1e6,
                                saved=False)
    monitor_sentences: int = option(100, "dev sentences the monitoring BLEU uses (not saved)", 1, 1e8, saved=False)


@dataclasses.dataclass(frozen=True)
class InferenceConfig:
    """Translation and recognition; may be given again at test time."""

    beam_size: int = option(10, "beam width (1 = greedy)", 1, 1000)
    max_trans_ratio: float = option(1.5, "max output length / source length", 0, 100, low_open=True)
    max_recog_epochs: int = option(100, "recognition iteration cap", 1, 1e6)
    recog_stop: str = option("early", "recognition stopping: early (epsilon/patience), fixed, grad_norm",
                             choices=("early", "fixed", "grad_norm"))
    recog_patience: int = option(3, "early: iterations without improvement", 1, 1e6)
    recog_epsilon: float = option(1e-4, "early: smallest improvement that counts", 0, 1e9)
    recog_grad_threshold: float = option(1.0, "grad_norm: stop below this gradient L2 norm", 0, 1e9)
    # Working directories from before --recog_clip clipped at --gradient_clip, as None still does.
    recog_clip: typing.Optional[float] = option(
        None, "clip each sentence's recognition gradient to this L2 norm (default: --gradient_clip)", 0, 1e9,
        low_open=True, legacy=None)
    test_batch_size: int = option(256, "sentences translated at once", 1, 1e6)
    refine_steps: int = option(0, "--amortize: refinement steps of the proposed PB (training uses the saved "
                                  "value; a test may run others)", 0, 1000, legacy=0, only=AMORTIZED)
    joint_rerank: float = option(0.0, "bound RNNPB, beam search: rerank the n-best by joint recognition, min_p "
                                      "L_A(a|p) + joint_rerank * L_B(b|p) (0: off; not saved)", 0, 1e6,
                                 saved=False)


@dataclasses.dataclass(frozen=True)
class DataConfig:
    """The files a model was trained on, and what follows from them."""

    task: str = option("translation", "what the data is and how it is scored: translation (BLEU), "
                       "transduction (coarse/fine accuracy), inflection (LEMMA<TAB>FEATURES<TAB>FORM files; accuracy, "
                       "mean Levenshtein distance), question_formation (full-sentence and first-word accuracy, which "
                       "auxiliary moved)", legacy="translation")
    train_set1: typing.Optional[str] = option(None, "tokenized text, one sentence per line")
    train_set2: typing.Optional[str] = option(None, "tokenized text, one sentence per line")
    dev_set1: typing.Optional[str] = option(None, "tokenized text, one sentence per line")
    dev_set2: typing.Optional[str] = option(None, "tokenized text, one sentence per line")
    mono_set1: typing.Optional[str] = option(None, "tokenized text, one sentence per line")
    mono_set2: typing.Optional[str] = option(None, "tokenized text, one sentence per line")
    vocab1_max: typing.Optional[int] = option(None, "source vocabulary size", 1, 1e8)
    vocab2_max: typing.Optional[int] = option(None, "target vocabulary size", 1, 1e8)
    inflection_target: str = option(
        "actions", "--task=inflection: what a model learns to write: actions (the form's characters and <step> "
        "actions, for --model=hard_attention) or form (the form's characters only: a soft-attention model)",
        choices=("actions", "form"), legacy="actions", only=("task", ("inflection",)))
    grammar: typing.Optional[str] = option(None, "--task=question_formation: the grammar (question.gr) whose "
                                           "parses give each input's main and first auxiliary", legacy=None,
                                           only=("task", ("question_formation",)))
    lang1: str = option("en", "source language code", flag=False)
    lang2: str = option("en", "target language code", flag=False)
    # Row counts the models size their PB tables by.
    num_train: int = option(0, "training sentence pairs", flag=False)
    num_mono1: int = option(0, "monolingual source sentences", flag=False)
    num_mono2: int = option(0, "monolingual target sentences", flag=False)

    FILES = ("train_set1", "train_set2", "dev_set1", "dev_set2", "mono_set1", "mono_set2")


SECTIONS = {"model": ModelConfig, "training": TrainingConfig, "inference": InferenceConfig, "data": DataConfig}


def fields(section):
    return dataclasses.fields(section)


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
                    if f.metadata["legacy"] is _NO_LEGACY:
                        raise UserError(f"{source}: corrupted (no {f.name!r})")
                    values[f.name] = f.metadata["legacy"]
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
    """The (field, values) conditions under which field ``name`` matters, outermost first:
    ``refine_steps`` -> ``[("model", ("rnnpbnmt",)), ("amortize", ("encoder", "learned"))]``."""
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
    than its default and that the run of ``config`` does not read (``only=``): without it,
    ``--model=rnnpbnmt --attention=content`` would train a model without attention."""
    for section in SECTIONS.values():
        for f in fields(section):
            if f.name in given and given[f.name] != f.default and not applies(f.name, config):
                chain = requirements(f.name)
                needed = " ".join(f"--{key}={'|'.join(values)}" for key, values in chain)
                run = " ".join(_as_flag(key, config.to_flat()[key]) for key, _ in chain)
                raise UserError(f"{_as_flag(f.name, given[f.name])}: only for {needed} (this run: {run}); "
                                "it would be ignored")
