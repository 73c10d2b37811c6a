"""Every model and task resumes into the uninterrupted run: a run stopped after epoch 1, resumed
by the same command to epoch 2, equals 2 epochs at once (per-epoch perplexities to 1e-5, every
saved variable to 1e-6).

How a run stops (SIGKILL, SIGTERM, Ctrl-C, a cap of --max_epochs) does not depend on the model:
whatever stops it, the same command resumes from the epoch state checkpoint that
``training_stats.json`` names, and ``tests/test_resume.py`` covers those ways of stopping through
the command line (bound RNNPB, encdec). What a model decides is what that checkpoint holds: all it
trains (attention, memories' parameters, feature embeddings, encoders and learned refinement step
sizes, each optimiser's slots) must be in it, and whatever it draws at random must come from the
epoch's seeded generator, not from a state that a new process starts afresh. So no run here is
killed: the uninterrupted run's directory is copied as soon as epoch 1 is saved (what a SIGKILL
right then leaves), and the same command resumes the copy. The commands go through
``rnnpb_nmt.cli.main`` in this process rather than a new one each (a TensorFlow start-up each):
every command builds a new model and trainer from the working directory, as a new process does,
and nothing of the previous command's model reaches it but what the directory holds.
"""

import json
import os
import random
import shutil
import signal

import numpy as np
import pytest

from rnnpb_nmt import cli
from rnnpb_nmt.tasks.question_formation.grammar import Grammar
from rnnpb_nmt.tasks.question_formation.questions import generate
from rnnpb_nmt.train import loop as training
from rnnpb_nmt.train.mid_epoch import MID_EPOCH, POSITION, MidEpoch

from helpers import (SYNTHETIC_LEMMAS, TINY_GRAMMAR, inflection_examples, latest_variables, models, reversal_files, sides,
                     status_in_process, tasks, train_in_process, write_lines)

pytestmark = pytest.mark.slow  # trains through the command line's entry point

SMALL = ["--embedding_size=8", "--units=8", "--batch_size=8", "--seed=5"]
LAYERS = ["--num_layers=1", "--dropout=0.2"]  # dropout: a random draw of training (memory LSTMs have none)


def inflection_files(out):
    """LEMMA<TAB>FEATURES<TAB>FORM lines of the tests' synthetic rules (``helpers``)."""
    rows = ["\t".join((lemma, ",".join(tags), form)) for lemma, tags, form in inflection_examples(SYNTHETIC_LEMMAS[:10])]
    return [f"--train_set1={write_lines(out / 'train', rows[:24])}", f"--dev_set1={write_lines(out / 'dev', rows[24:])}"]


def question_files(out):
    grammar_file = write_lines(out / "tiny.gr", TINY_GRAMMAR.splitlines())
    examples = generate(Grammar.read(str(grammar_file)), 28, seed=1)
    (train_src, train_tgt), (dev_src, dev_tgt) = sides(out, "train", examples[:24]), sides(out, "dev", examples[24:])
    return [f"--grammar={grammar_file}", f"--train_set1={train_src}", f"--train_set2={train_tgt}",
            f"--dev_set1={dev_src}", f"--dev_set2={dev_tgt}"]


FILES = {"translation": reversal_files, "transduction": reversal_files, "inflection": inflection_files,
         "question_formation": question_files}
AMORTIZED = ["--model=rnnpbnmt", *LAYERS, "--num_PB=4", "--refine_steps=1", "--sigma=0.1"]
MEMORY = ["--memory_width=4", "--pop_bias=-0.5", "--beam_size=1"]
# name -> (task, flags, the start of a checkpoint key only the model's own parts have)
# One run per kind of state, each about 7 s of CPU: the stack and queue LSTMs are the deque's
# class with one head (the same variables), and a cell or attention of another kind changes the
# weights' shapes, not what the checkpoint holds.
RUNS = {
    # --teacher_forcing: a coin per batch, drawn from the epoch's generator too.
    "encdec_gru_content": ("translation", ["--model=encdec", *LAYERS, "--cell=gru", "--attention=content",
                                           "--teacher_forcing=0.5"], "model/attention"),
    # --early_stopping_metric=score: the best epoch so far, by dev score, is resumed too.
    "encdec_srn_location_questions": ("question_formation", ["--model=encdec", *LAYERS, "--cell=srn", "--attention=location",
                                                             "--attention_positions=8", "--early_stopping_metric=score"],
                                      "model/attention"),
    # McCoy et al.'s code's batches, free-running loss and word dropout (run_question_formation.py
    # --recipe their_code, whose plain SGD has no state to resume): the cycle of fixed batches goes on
    # where the last epoch stopped, and the cut free-running batches and the per-step masks resume too.
    "encdec_gru_location_their_code": ("question_formation", [
        "--model=encdec", *LAYERS, "--cell=gru", "--attention=location", "--attention_positions=8", "--attention_padding=zeros",
        "--weight_init=pytorch", "--dropout_style=decoder_words",
        "--batch_size=2",
        "--teacher_forcing=0.5", "--free_running_cut", "--batch_order=fixed", "--epoch_examples=6"],
        "model/attention"),
    # --optimizer=rmsprop (the paper's, for the memory LSTMs): its mean squares are resumed too.
    "deque_lstm": ("transduction", ["--model=deque_lstm", *MEMORY, "--deque_biases=per_end", "--deque_off_bias=-4",
                                   "--optimizer=rmsprop"],
                   "model/network/pop"),
    # Its stacked LSTM's own weights (a memory LSTM's LSTM is under model/network/lstm/), with both
    # skip connections (the layers above and the output layer read wider inputs).
    "deep_lstm": ("transduction", ["--model=deep_lstm", *LAYERS, "--skip_connections=both", "--beam_size=1"],
                  "model/network/recurrent_kernel"),
    "encdec_soft_inflection": ("inflection", ["--model=encdec", *LAYERS, "--bidirectional", "--attention=content",
                                              "--attention_style=luong", "--inflection_target=form",
                                              "--max_trans_ratio=3"], "model/attention"),
    "hard_attention": ("inflection", ["--model=hard_attention", *LAYERS, "--feature_size=4", "--beam_size=1",
                                      "--max_trans_ratio=3"], "model/feature_embedding"),
    # The authors' code's choices (issue 94): ADADELTA's two accumulators are resumed too.
    "hard_attention_authors_code": ("inflection", ["--model=hard_attention", *LAYERS, "--feature_size=4",
                                                   "--beam_size=1", "--max_trans_ratio=3", "--tie_feedback",
                                                   "--end_of_word", "--optimizer=adadelta", "--learning_rate=1"],
                                    "model/feature_embedding"),
    # B's encoder and refinement are trained only with --both_directions or --encoder_binding;
    # --refine_gradient=stop: the cheaper trace (what the checkpoint holds is the same).
    "rnnpbnmt_encoder_both_directions": ("translation", [
        *AMORTIZED, "--amortize=encoder", "--both_directions", "--self_loss=0", "--encoder_binding=1",
        "--p0_loss=0.5", "--refine_gradient=stop"], "model/refinement_b"),
    "rnnpbnmt_learned": ("translation", [*AMORTIZED, "--amortize=learned"], "model/refinement_a"),
    # Its dropout masks are drawn per element, from the epoch's generator too.
    "transformer": ("translation", ["--model=transformer", *LAYERS, "--heads=2"], "model/decoder_layers"),
    # The NMT recipe (issue 90): the scheduled rate goes on from the optimiser's restored step count.
    "transformer_recipe": ("translation", ["--model=transformer", *LAYERS, "--heads=2", "--tie_embeddings",
                                           "--label_smoothing=0.1", "--lr_schedule=rsqrt",
                                           "--warmup_steps=3"], "model/decoder_layers"),
}


def epochs(working_dir):
    return json.loads((working_dir / "training_stats.json").read_text())["epochs"]


@pytest.mark.parametrize("name", sorted(RUNS))
def test_a_run_stopped_after_an_epoch_resumes_into_the_uninterrupted_run(name, tmp_path, monkeypatch, capsys):
    task, flags, own = RUNS[name]
    data = tmp_path / "data"
    data.mkdir()
    args = [f"--task={task}", *FILES[task](data), *SMALL, *flags, "--max_epochs=2"]
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    save_epoch = training.save_epoch

    def save_and_copy(checkpoints, stats, working_dir, improved):
        save_epoch(checkpoints, stats, working_dir, improved)
        if len(stats["epochs"]) == 1:  # what a run killed right after saving epoch 1 leaves
            shutil.copytree(working_dir, parts)

    monkeypatch.setattr(training, "save_epoch", save_and_copy)
    train_in_process(*args, f"--working_dir={whole}")
    monkeypatch.undo()
    capsys.readouterr()
    train_in_process(*args, f"--working_dir={parts}")
    assert f"resuming {parts} after epoch 1" in capsys.readouterr().out

    assert [row["epoch"] for row in epochs(parts)] == [1, 2]
    for a, b in zip(epochs(whole), epochs(parts)):
        for key in ("train_perplexity", "dev_perplexity", "dev_score"):
            assert b.get(key) == pytest.approx(a.get(key), abs=1e-5), (a["epoch"], key)
    for folder in ("best", "state"):
        expected, got = latest_variables(whole, folder), latest_variables(parts, folder)
        assert expected.keys() == got.keys()
        assert any(key.startswith(own) for key in expected), sorted(expected)
        for key, value in expected.items():
            np.testing.assert_allclose(got[key], value, atol=1e-6, err_msg=f"{folder}: {key}")
    state = latest_variables(parts, "state")  # the model's own parts' Adam moments among them
    assert any(key.startswith(own) and "/.OPTIMIZER_SLOT/optimizer_0/" in key for key in state), sorted(state)


@pytest.mark.parametrize("name", ["encdec_srn_location_questions", "hard_attention"])
def test_the_dev_score_that_chose_the_best_epoch_is_the_score_testing_reports_on_dev(name, tmp_path, capsys):
    """--early_stopping_metric=score scores the dev set as --do_testing scores a test set (for
    inflection, gold forms from the dev set's oracle actions), and best/ is the epoch it chose."""
    task, flags, _ = RUNS[name]
    data = tmp_path / "data"
    data.mkdir()
    files = FILES[task](data)
    working_dir = tmp_path / "run"
    flags = [flag for flag in flags if not flag.startswith("--early_stopping_metric")]
    train_in_process(f"--task={task}", *files, *SMALL, *flags, "--early_stopping_metric=score", "--max_epochs=3",
          "--early_stopping_steps=3", f"--working_dir={working_dir}")
    stats = json.loads((working_dir / "training_stats.json").read_text())
    scores = [row["dev_score"] for row in stats["epochs"]]
    assert stats["best_epoch"] == scores.index(max(scores)) + 1
    dev = next(f.split("=", 1)[1] for f in files if f.startswith("--dev_set1="))
    assert cli.main(models(), tasks(), ["--do_testing", f"--test_set={dev}", f"--working_dir={working_dir}"]) == 0
    tested = json.loads((working_dir / "testing_stats.json").read_text())
    assert tested[tasks()[task].dev_metric] == pytest.approx(max(scores), abs=1e-9)


def stop_after_step(monkeypatch, epoch, step):
    """A Ctrl-C (SIGINT to this process, which training records until its next safe point) right
    after step ``step`` of epoch ``epoch``."""
    from rnnpb_nmt.train.step import Trainer

    train_epoch, train_step = Trainer.train_epoch, Trainer.train_step
    now = {}

    def counted_epoch(self, corpus, number, *args):
        now.update(epoch=number, steps=0)
        return train_epoch(self, corpus, number, *args)

    def counted_step(self, *args):
        outputs = train_step(self, *args)
        now["steps"] += 1
        if (now["epoch"], now["steps"]) == (epoch, step):
            os.kill(os.getpid(), signal.SIGINT)
        return outputs

    monkeypatch.setattr(Trainer, "train_epoch", counted_epoch)
    monkeypatch.setattr(Trainer, "train_step", counted_step)


def reversal_and_mono_files(out):
    """``reversal_files`` and monolingual sentences of their symbols on each side."""
    rng = random.Random(4)
    mono = [[" ".join(rng.choices("abcde", k=rng.randint(2, 6))) for _ in range(12)] for _ in range(2)]
    return [*reversal_files(out), *(f"--mono_set{side}={write_lines(out / f'mono{side}', lines)}"
                                    for side, lines in enumerate(mono, 1))]


# name -> (its files, the flags of a run stopped inside its second epoch; --batch_size=4: six steps an epoch)
MID_EPOCH_RUNS = {
    "encdec": (reversal_files, ["--model=encdec", *LAYERS, "--teacher_forcing=0.5"]),
    # Token batches: their order is drawn after the sentences' (Trainer.dataset).
    "encdec_tokens": (reversal_files, ["--model=encdec", *LAYERS, "--batch_tokens=24"]),
    # Both directions, PB tables, PB noise and resets, and --p_mono's draws among the batches,
    # which the skipped steps replay.
    "rnnpbnmt": (reversal_and_mono_files, ["--model=rnnpbnmt", *LAYERS, "--num_PB=4", "--max_recog_epochs=2",
                                           "--sigma=0.1", "--p_reset=0.2", "--p_mono=0.3"]),
}
def stop_inside_epoch_2(monkeypatch, killed):
    """Ctrl-C after step 3 of epoch 2 (``stop_after_step``), and ``killed`` made a copy of the working
    directory right after the save of step 2 (what a run killed then leaves)."""
    save = MidEpoch.save

    def save_and_copy(self, epoch, totals, seconds):
        save(self, epoch, totals, seconds)
        if (epoch, totals.steps) == (2, 2):
            shutil.copytree(os.path.dirname(self.folder), killed)

    monkeypatch.setattr(MidEpoch, "save", save_and_copy)
    stop_after_step(monkeypatch, 2, 3)


# --save_every_steps=2: between its saves, Ctrl-C after step 3 of epoch 2 saves that step.
STOPPED = ("interrupted: run the same command again to resume from step 3 of epoch 2\n", "--save_every_steps=2")


@pytest.mark.parametrize("name", sorted(MID_EPOCH_RUNS))
def test_a_run_stopped_inside_an_epoch_resumes_into_the_uninterrupted_run(name, tmp_path, monkeypatch, capsys):
    """Ctrl-C after step 3 of epoch 2 (between --save_every_steps=2's saves) saves that step, and the
    same command resumes from it into the run that was never stopped nor saved inside an epoch;
    a run killed right after the save of step 2 (its copy) resumes into it too. The epoch's save
    deletes the positions; --distribute refuses to resume them."""
    data = tmp_path / "data"
    data.mkdir()
    files, flags = MID_EPOCH_RUNS[name]
    args = [*files(data), *SMALL, "--batch_size=4", *flags, "--max_epochs=3"]
    whole, parts, killed = tmp_path / "whole", tmp_path / "parts", tmp_path / "killed"
    train_in_process(*args, f"--working_dir={whole}")
    stop_inside_epoch_2(monkeypatch, killed)
    capsys.readouterr()
    message, every = STOPPED
    assert status_in_process("--do_training", *args, f"--working_dir={parts}", every) == 130
    assert capsys.readouterr().err.endswith(message)
    monkeypatch.undo()
    assert [row["epoch"] for row in epochs(parts)] == [1]
    # Positions are resumed on one device only (rnnpb_nmt/train/mid_epoch.py); the refusal changes nothing.
    assert status_in_process("--do_training", *args, f"--working_dir={parts}", "--distribute=mirrored") == 1
    assert capsys.readouterr().err.endswith(f"{parts / MID_EPOCH / POSITION}: a position inside epoch 2 "
                                            "(--save_every_steps), which --distribute cannot resume: run the same "
                                            "command without --distribute\n")
    for working_dir, step in ((parts, 3), (killed, 2)):
        train_in_process(*args, f"--working_dir={working_dir}", every)
        assert f"resuming {working_dir} from step {step} of epoch 2" in capsys.readouterr().out
        assert_same_run(whole, working_dir)


def assert_same_run(whole, resumed):
    """The epochs' statistics (exactly) and the best and last state's variables (to 1e-6) of the run
    ``resumed`` are the uninterrupted run ``whole``'s, and no position inside an epoch is left."""
    assert not (resumed / MID_EPOCH).exists()
    assert [row["epoch"] for row in epochs(resumed)] == [row["epoch"] for row in epochs(whole)]
    for a, b in zip(epochs(whole), epochs(resumed)):
        for key in a.keys() - {"seconds", "train_seconds"}:
            assert b[key] == a[key], (a["epoch"], key)
    for folder in ("best", "state"):
        expected, got = latest_variables(whole, folder), latest_variables(resumed, folder)
        assert expected.keys() == got.keys()
        for key, value in expected.items():
            np.testing.assert_allclose(got[key], value, atol=1e-6, err_msg=f"{folder}: {key}")
