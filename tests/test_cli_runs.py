"""The command line as users run it, in runs that train their own working directory: the thesis's
listings, seeds, starting over, resuming a run from before a flag existed, and bad data.

(Apart from test_cli.py, whose tests share one trained model: ``make test`` hands whole files to
its two workers, and one file of every command-line test would keep one of them busy alone.)
"""

import json
from pathlib import Path

import pytest

from helpers import SHARED_DATA, cli_in_process, run_nmt, status_in_process, train_args


def test_the_last_line_of_training_names_the_test_file_beside_the_training_file(tmp_path):
    from rnnpb_nmt.train.resume import next_step

    (tmp_path / "train.src").write_text("a\n")
    assert next_step("runs/a b", str(tmp_path / "train.src")).endswith(
        "--working_dir='runs/a b' --test_set=FILE")  # no test.src: a placeholder
    (tmp_path / "test.src").write_text("a\n")
    assert next_step("wd", str(tmp_path / "train.src")) == \
        f"the model is in wd; test it with: rnnpb-nmt --do_testing --working_dir=wd --test_set={tmp_path}/test.src"


def test_bad_data_files_give_one_line_errors(tmp_path, demo_data, capsys):
    short = tmp_path / "short.de"
    short.write_text("Nur eine Zeile .\n", encoding="utf-8")
    status, _, err = cli_in_process([*train_args(demo_data, tmp_path / "wd", "--max_epochs=1"), f"--train_set2={short}"],
                                    capsys)
    assert status == 1 and len(err.splitlines()) == 1, err  # returned, not raised: no traceback
    assert "has 400 lines but" in err and "short.de has 1" in err
    status, _, err = cli_in_process([*train_args(demo_data, tmp_path / "wd", "--max_epochs=1"),
                                     f"--dev_set1={tmp_path}/missing.en"], capsys)
    assert status == 1 and "missing.en: no such file" in err


def test_a_file_as_working_dir_gives_a_one_line_error(tmp_path, demo_data, capsys):
    (tmp_path / "wd").write_text("not a directory\n")
    status, _, err = cli_in_process(train_args(demo_data, tmp_path / "wd", "--max_epochs=1"), capsys)
    assert status == 1  # returned, not raised: no traceback
    assert err.startswith("error: ") and "wd" in err and len(err.splitlines()) == 1


def run_files(working_dir):
    """Every file of a run, but the lock file: --start_over moves it along, naming the new process."""
    return {p.relative_to(working_dir): p.read_bytes() for p in working_dir.rglob("*") if p.is_file() and p.name != ".lock"}


def test_a_directory_of_run_files_without_hparams_is_not_overwritten(demo_data, tmp_path, capsys):
    # A run's files with no hparams.json (another tool's checkpoint, a run whose hparams.json was
    # deleted): a new run there would overwrite its vocabularies and prune its checkpoints.
    wd = tmp_path / "wd"
    (wd / "best").mkdir(parents=True)
    (wd / "best" / "ckpt-7.index").write_bytes(b"weights")
    (wd / "vocab1.txt").write_text("mine\n")
    before = run_files(wd)
    small = ["--model=encdec", "--max_epochs=1", "--units=8", "--embedding_size=8"]
    status, _, err = cli_in_process(train_args(demo_data, wd, *small), capsys)
    assert status == 1 and len(err.splitlines()) == 1, err
    assert "holds vocab1.txt, best but no hparams.json" in err and "--start_over" in err
    assert run_files(wd) == before
    status, out, _ = cli_in_process([*train_args(demo_data, wd, *small), "--start_over"], capsys)
    assert status == 0 and f"the previous run is now {tmp_path / 'wd.previous-1'}" in out
    assert out.splitlines()[-1] == (f"the model is in {wd}; test it with: rnnpb-nmt --do_testing --working_dir={wd} "
                                    f"--test_set={demo_data}/test.en")
    assert run_files(tmp_path / "wd.previous-1") == before and (wd / "hparams.json").is_file()


@pytest.mark.slow
def test_start_over_moves_the_old_run_aside(demo_data, tmp_path, capsys):
    wd = tmp_path / "wd"
    small = ["--model=encdec", "--max_epochs=1", "--units=8", "--embedding_size=8"]
    assert status_in_process(*train_args(demo_data, wd, *small)) == 0  # the old run: in this process
    old = run_files(wd)
    bad = [a if not a.startswith("--train_set2") else "--train_set2=missing.de" for a in train_args(demo_data, wd)]
    status, _, err = cli_in_process([*bad, *small, "--start_over"], capsys)
    assert status == 1 and "missing.de: no such file" in err
    assert not (tmp_path / "wd.previous-1").exists()  # bad data: the old run stays where it was
    status, out, _ = cli_in_process([*train_args(demo_data, wd, *small, "--learning_rate=0.02"), "--start_over"], capsys)
    assert status == 0 and f"the previous run is now {tmp_path / 'wd.previous-1'}" in out
    assert out.splitlines()[-1] == (f"the model is in {wd}; test it with: rnnpb-nmt --do_testing --working_dir={wd} "
                                    f"--test_set={demo_data}/test.en")
    kept = tmp_path / "wd.previous-1"
    assert run_files(kept) == old
    assert json.loads((wd / "hparams.json").read_text())["learning_rate"] == 0.02


@pytest.mark.slow
def test_a_run_from_before_a_flag_existed_resumes_with_its_old_value(demo_data, tmp_path, capsys):
    wd = tmp_path / "wd"
    small = ["--model=encdec", "--units=8", "--embedding_size=8"]
    # in this process: the resumed command builds its model from the directory alone, as a new process does
    assert status_in_process(*train_args(demo_data, wd, *small, "--max_epochs=1")) == 0
    hparams = json.loads((wd / "hparams.json").read_text())
    del hparams["dev_every"]  # as written before --dev_every existed
    (wd / "hparams.json").write_text(json.dumps(hparams))
    capsys.readouterr()
    status, out, err = cli_in_process(train_args(demo_data, wd, *small, "--max_epochs=2"), capsys)
    assert status == 0, err
    assert "resuming" in out and "epoch 2: train ppl" in out and "not measured" not in out


THESIS_TRAINING = ["--do_training", "--embedding_size=128", "--units=256", "--num_layers=2", "--learning_rate=0.001",
                   "--batch_size=64", "--max_trans_ratio=1.5", "--gradient_clip=1.0", "--beam_size=10"]
LISTINGS = {  # the thesis's appendix listings, as printed
    "listing1_autoencode": ("autoenc/easy20000", "en", [
        "--early_stopping_steps=10", "--num_PB=128", "--pb_learning_rate=0.01", "--max_recog_epochs=500",
        "--model=rnnpbnmt", "--autoencode", "--bind_hard", "--binding_strength=1.0"]),
    "listing4_bound_en_de": ("easy/easy20000", "de", [
        "--early_stopping_steps=20", "--vocab1_max=30000", "--vocab2_max=30000", "--pb_learning_rate=0.01",
        "--binding_strength=1.0", "--bind_hard", "--max_recog_epochs=100", "--num_PB=1024", "--p_reset=0.10",
        "--dropout=0.40", "--model=rnnpbnmt"]),
    "listing4_seq2seq_en_de": ("easy/easy20000", "de", [
        "--early_stopping_steps=20", "--vocab1_max=30000", "--vocab2_max=30000", "--reverse_source",
        "--model=encdec"]),
}


@pytest.mark.parametrize("listing", sorted(LISTINGS))
@pytest.mark.long
@pytest.mark.shared_data
def test_thesis_listings_run_unchanged(listing, tmp_path, capsys):
    """Each listing on the thesis data, shrunk to one small epoch, trains and tests."""
    folder, target, flags = LISTINGS[listing]
    data = SHARED_DATA / folder
    wd = tmp_path / "run"
    wd.mkdir()  # the listings create their working directories first
    run_nmt(*THESIS_TRAINING, *flags, f"--train_set1={data}/train.en", f"--train_set2={data}/train.{target}",
            f"--dev_set1={data}/dev.en", f"--dev_set2={data}/dev.{target}", f"--working_dir={wd}",
            # shrunk for the test:
            "--max_epochs=1", "--units=16", "--embedding_size=8", "--batch_size=256",
            *(["--max_recog_epochs=3"] if "--model=rnnpbnmt" in flags else []))  # encdec refuses PB flags
    # (without --device=cpu, which cannot hide a GPU from a TensorFlow already running; test_cli.py runs it)
    status, out, _ = cli_in_process(["--do_testing", f"--test_set={data}/test.en", f"--working_dir={wd}"], capsys)
    stats = json.loads((wd / "testing_stats.json").read_text())
    assert status == 0 and "BLEU = " in out and stats["sentences"] == 2000
    assert stats["reference"].endswith(f"test.{target}")


@pytest.mark.long
def test_same_seed_same_run(demo_data, tmp_path, capsys):
    # Both runs new processes, as users run them, and every digit compared: a run in this process
    # is not bit for bit a new one's (TensorFlow's graph optimiser is off here, conftest.py; and
    # CI once saw a dev perplexity's 8th digit differ after other tests had run in the process).
    runs = []
    for name in ("a", "b"):
        wd = tmp_path / name
        run_nmt(*train_args(demo_data, wd, "--model=encdec", "--max_epochs=1", "--seed=5", "--dropout=0.3"))
        testing = ["--do_testing", f"--test_set={demo_data}/test.en", f"--working_dir={wd}", "--beam_size=2"]
        assert cli_in_process(testing, capsys)[0] == 0
        stats = json.loads((wd / "training_stats.json").read_text())
        runs.append(([(e["train_perplexity"], e["dev_perplexity"]) for e in stats["epochs"]],
                     (wd / "test_trans.txt").read_text()))
    assert runs[0] == runs[1]



def bad_utf8(tmp_path, demo_data):
    (tmp_path / "bad.de").write_bytes(b"\xff" + (demo_data / "train.de").read_bytes())
    return [f"--train_set2={tmp_path / 'bad.de'}"]


@pytest.mark.parametrize("failure, message", [
    (lambda tmp_path, demo_data: [f"--train_set2={tmp_path / 'missing.de'}"], "missing.de: no such file"),
    (bad_utf8, "bad.de:1: not valid UTF-8"),
    # refused by the model, once the data has been read: a memory LSTM decodes greedily
    (lambda tmp_path, demo_data: ["--model=stack_lstm"], "--beam_size=10: --model=stack_lstm"),
], ids=["missing_file", "corrupted_file", "flag_refused_late"])
def test_a_failed_start_leaves_no_new_directory_and_an_existing_one_as_it_was(tmp_path, demo_data, capsys,
                                                                            failure, message):
    flags = failure(tmp_path, demo_data)
    new = tmp_path / "new" / "wd"
    assert status_in_process(*train_args(demo_data, new, *flags)) == 1
    assert message in capsys.readouterr().err
    assert not (tmp_path / "new").exists()
    old = tmp_path / "old"
    old.mkdir()
    (old / "notes.txt").write_text("mine\n")
    assert status_in_process(*train_args(demo_data, old, *flags)) == 1
    assert run_files(old) == {Path("notes.txt"): b"mine\n"}


@pytest.mark.slow
def test_do_training_with_only_the_working_dir_continues_the_run_with_its_saved_settings(demo_data, tmp_path, capsys):
    wd = tmp_path / "wd"
    assert status_in_process(*train_args(demo_data, wd, "--model=encdec", "--units=8", "--embedding_size=8",
                                         "--max_epochs=1")) == 0
    saved = json.loads((wd / "hparams.json").read_text())
    capsys.readouterr()
    assert status_in_process("--do_training", f"--working_dir={wd}", "--units=16", "--max_epochs=2") == 1
    assert "another configuration: --units (was 8, now 16)" in capsys.readouterr().err  # a flag given is checked
    assert status_in_process("--do_training", f"--working_dir={wd}", "--max_epochs=2") == 0
    assert f"resuming {wd} after epoch 1" in capsys.readouterr().out
    assert len(json.loads((wd / "training_stats.json").read_text())["epochs"]) == 2
    assert json.loads((wd / "hparams.json").read_text()) == dict(saved, max_epochs=2)
    assert status_in_process("--do_training", f"--working_dir={wd}") == 1
    assert "already holds a trained model" in capsys.readouterr().err
