"""--mixed_precision and --jit_compile, on CPU: a few training steps of a tiny model of every family that
takes them equal the plain float32 steps within a tolerance; float16's loss scaling skips the update of
a step whose gradients overflow; the other families refuse the flags in one line.

No GPU here: these check the arithmetic and the code paths, not the speed (run_scripts/gpu_check.py
is for a machine with one)."""

import json

import numpy as np
import pytest
import tensorflow as tf

from rnnpb_nmt import config as config_lib
from rnnpb_nmt.data.vocabulary import Vocabulary
from rnnpb_nmt.errors import UserError
from rnnpb_nmt import precision
from rnnpb_nmt.train.step import Trainer

from helpers import ROOT, SYNTHETIC_LEMMAS, inflection_examples, models, status_in_process, tiny_config, train_args

VOCAB = Vocabulary([f"w{i}" for i in range(30)])
# Each family's tiny configuration: the Transformer's 2 heads, the memory LSTMs' greedy search, ...
FAMILIES = {"rnnpbnmt": dict(num_train=64, max_recog_epochs=3), "encdec": {}, "deep_lstm": {},
            "transformer": dict(heads=2), "hard_attention": dict(task="inflection", feature_size=8, beam_size=1),
            "stack_lstm": dict(beam_size=1, memory_width=8)}
MIXED = ["transformer"]  # the families that take --mixed_precision
JIT = ["rnnpbnmt", "encdec", "deep_lstm", "transformer"]  # and --jit_compile
STEPS = 4


def corpus(name):
    """(vocab1, vocab2, sources, targets) of 64 pairs: random words, or for the hard-attention
    transducer (which writes step/write actions) inflection examples."""
    if name == "hard_attention":
        from test_hard_attention import encoded
        return encoded(inflection_examples(SYNTHETIC_LEMMAS[:22]))
    rng = np.random.default_rng(0)
    pairs = [[np.append(rng.integers(4, 34, rng.integers(2, 8)), 2).astype(np.int32) for _ in range(64)] for _ in "st"]
    return VOCAB, VOCAB, *pairs


def train(name, loss_scale=None, **changes):
    """(the losses of the first STEPS steps, the changes of the trainable variables over them) of a
    tiny ``name`` model (the same initial weights whatever ``changes``), trained by SGD: its updates
    are the gradients' multiples (Adam's divide by the gradients' size, so that the rounding of a
    gradient near 0 could change its update entirely). ``loss_scale``: float16's from the start."""
    vocab1, vocab2, src, tgt = corpus(name)
    tf.keras.utils.set_random_seed(3)
    config = tiny_config(model=name, optimizer="sgd", learning_rate=0.5, **FAMILIES[name], **changes)
    trainer = Trainer(models()[name](config, vocab1, vocab2))
    if loss_scale:
        trainer.loss_scale.scale.assign(loss_scale)
    before = [v.numpy() for v in trainer.model.trainable_variables]
    batches = list(trainer.dataset("parallel", src, tgt))[:STEPS]
    losses = [float(trainer.train_step(batch)["loss"]) for batch in batches]
    return np.array(losses), [v.numpy() - b for v, b in zip(trainer.model.trainable_variables, before)]


def relative_difference(updates, plain):
    """The norm of the difference between two runs' ``updates`` (every variable's change) over the
    norm of the ``plain`` run's."""
    difference = np.sqrt(sum(np.sum(np.square(a - b)) for a, b in zip(updates, plain)))
    return difference / np.sqrt(sum(np.sum(np.square(b)) for b in plain))


@pytest.mark.parametrize("name", MIXED)
def test_bfloat16_steps_match_float32(name):
    plain_losses, plain = train(name)
    losses, updates = train(name, mixed_precision="bfloat16")
    # bfloat16 keeps 8 bits of mantissa (a relative rounding of 0.4 % at each operation); the
    # variables stay float32
    np.testing.assert_allclose(losses, plain_losses, rtol=0.01)
    assert relative_difference(updates, plain) < 0.06  # measured: 3 % after 4 steps
    assert all(u.dtype == np.float32 for u in updates)


@pytest.mark.parametrize("name", MIXED)
def test_float16_steps_with_loss_scaling_match_float32(name):
    """From a loss scale at which this model's gradients fit in float16 (from 2^15 its first steps
    overflow and are skipped: the next test), every step updates, as float32's within float16's rounding."""
    plain_losses, plain = train(name)
    losses, updates = train(name, loss_scale=2.0 ** 8, mixed_precision="float16")
    assert np.all(np.isfinite(losses))
    np.testing.assert_allclose(losses, plain_losses, rtol=0.005)  # 11 bits of mantissa
    assert relative_difference(updates, plain) < 0.06  # measured: 2 % after 4 steps (bfloat16: 3 %)


@pytest.mark.parametrize("name", JIT)
def test_jit_compiled_steps_equal_the_plain_steps(name):
    plain_losses, plain = train(name)
    losses, updates = train(name, jit_compile=True)
    # XLA fuses and reorders float32 arithmetic: equal up to rounding
    np.testing.assert_allclose(losses, plain_losses, rtol=1e-4)
    assert relative_difference(updates, plain) < 1e-5


def test_a_model_is_built_in_its_precision_and_the_policy_is_restored_after():
    config = tiny_config(model="transformer", heads=2, mixed_precision="bfloat16")
    mixed = models()["transformer"](config, VOCAB, VOCAB)
    plain = models()["transformer"](config.replace(mixed_precision="none"), VOCAB, VOCAB)
    assert mixed.output_layer.compute_dtype == "bfloat16" and mixed.output_layer.kernel.dtype == tf.float32
    assert plain.output_layer.compute_dtype == "float32"
    assert tf.keras.mixed_precision.global_policy().name == "float32"


def test_a_step_whose_scaled_gradients_overflow_updates_nothing_and_halves_the_scale():
    vocab1, vocab2, src, tgt = corpus("transformer")
    trainer = Trainer(models()["transformer"](tiny_config(model="transformer", heads=2, mixed_precision="float16"),
                                              vocab1, vocab2))
    batch = next(iter(trainer.dataset("parallel", src, tgt)))
    before = [v.numpy() for v in trainer.model.trainable_variables]
    trainer.loss_scale.scale.assign(3e38)  # the scaled loss is infinite in float32 already
    outputs = trainer.train_step(batch)
    assert np.isfinite(float(outputs["loss"])) and not any(k.startswith("grad_norm") for k in outputs)
    assert all(np.array_equal(a, b.numpy()) for a, b in zip(before, trainer.model.trainable_variables))
    assert float(trainer.loss_scale.scale) == pytest.approx(1.5e38)
    assert int(trainer.optimizers[0].iterations) == 0
    trainer.loss_scale.scale.assign(2.0 ** 10)
    outputs = trainer.train_step(batch)
    assert np.isfinite(float(outputs["grad_norm_weights"])) and int(trainer.optimizers[0].iterations) == 1


def test_the_loss_scale_doubles_after_a_run_of_finite_steps(monkeypatch):
    monkeypatch.setattr(precision.DynamicLossScale, "GROWTH_STEPS", 2)
    scale = precision.DynamicLossScale()
    updates = tf.Variable(0)
    for _ in range(3):
        scale.apply(lambda: updates.assign_add(1), [tf.constant(1.0)])
    assert float(scale.scale) == 2.0 ** 16 and int(scale.finite_steps) == 1 and int(updates) == 3
    scale.apply(lambda: updates.assign_add(1), [tf.constant(1.0), tf.constant(np.inf)])
    assert float(scale.scale) == 2.0 ** 15 and int(scale.finite_steps) == 0 and int(updates) == 3


def test_unscaled_gradients_divide_dense_and_sparse_gradients_alike():
    scale = precision.DynamicLossScale()
    sparse = tf.IndexedSlices(tf.constant([[2.0 ** 15]]), tf.constant([3]), tf.constant([5, 1]))
    dense, rows, missing = scale.unscaled([tf.constant([2.0 ** 16]), sparse, None])
    assert dense.numpy().tolist() == [2.0] and rows.values.numpy().tolist() == [[1.0]] and missing is None
    assert rows.indices.numpy().tolist() == [3]


@pytest.mark.parametrize("flag, value, name", [("mixed_precision", "bfloat16", "encdec"),
                                               ("mixed_precision", "float16", "rnnpbnmt"),
                                               ("jit_compile", True, "stack_lstm")])
def test_a_family_that_cannot_refuses_the_flag_in_one_line(flag, value, name):
    with pytest.raises(UserError) as refused:
        config_lib.check_applicable({flag: value}, tiny_config(model=name))
    assert "\n" not in str(refused.value) and f"--{flag}" in str(refused.value) and f"--model={name}" in str(refused.value)


def test_the_options_are_not_kept_in_hparams_so_a_run_resumes_with_or_without_them():
    flat = tiny_config(model="transformer", mixed_precision="bfloat16", jit_compile=True).to_flat()
    assert "mixed_precision" not in flat and "jit_compile" not in flat
    assert {"mixed_precision", "jit_compile"} <= set(config_lib.names(saved=False))


@pytest.mark.slow  # the command line
@pytest.mark.parametrize("flags, message", [
    (["--model=rnnpbnmt", "--mixed_precision=bfloat16"], "--mixed_precision=bfloat16: only for --model=transformer"),
    (["--model=transformer", "--heads=2", "--mixed_precision=float16", "--distribute=mirrored"],
     "--mixed_precision=float16: not with --distribute=mirrored")])
def test_the_command_line_refuses_in_one_line(flags, message, demo_data, tmp_path, capsys):
    assert status_in_process(*train_args(demo_data, tmp_path / "run", *flags)) == 1
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "run" / "hparams.json").exists()


def gpu_check():
    import importlib.util

    spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "run_scripts" / "gpu_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_gpu_check_refuses_in_one_line_without_a_gpu(tmp_path):
    assert not tf.config.list_physical_devices("GPU")  # this machine's; the check is for one with a GPU
    with pytest.raises(SystemExit) as refused:
        gpu_check().main([f"--data={tmp_path}", f"--out={tmp_path / 'out.json'}"])
    assert str(refused.value).startswith("error: no GPU visible") and "\n" not in str(refused.value)
    assert not (tmp_path / "out.json").exists()


@pytest.mark.slow  # trains a model of two families under each of their settings
def test_the_gpu_checks_dry_run_records_every_setting_against_the_cpu(demo_data, tmp_path):
    out = tmp_path / "gpu_check.json"
    gpu_check().main([f"--data={demo_data}", "--steps=3", "--models=encdec,transformer", "--units=16",
                      "--embedding_size=8", "--batch_size=16", "--allow_cpu", f"--out={out}"])
    record = json.loads(out.read_text())
    assert record["device"] == "/CPU:0" and record["gpu"] is None
    assert set(record["models"]["encdec"]) == {"cpu_float32", "float32", "jit"}
    assert set(record["models"]["transformer"]) == {"cpu_float32", "float32", "jit", "bfloat16", "float16",
                                                    "bfloat16_jit"}
    for model in record["models"].values():
        for run in model.values():
            assert len(run["losses"]) == 3 and run["tokens_per_second"] > 0 and run["agrees"]
        # the same weights and batches on the same device: the float32 runs are the same steps
        assert model["float32"]["losses"] == model["cpu_float32"]["losses"]
