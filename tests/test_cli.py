"""The command line as users run it: training, testing, querying, and its errors."""

import json

import numpy as np
import pytest
import tensorflow as tf
from sacremoses import MosesDetokenizer, MosesTokenizer

from nmtcore import workdir
from nmtcore.data import encode_all, read_sentences
from nmtcore.metrics import bleu

from helpers import SHARED_DATA, models, run_nmt, train_args, translator_of


def test_training_writes_a_complete_working_directory(trained_encdec):
    for name in ("hparams.json", "vocab1.txt", "vocab2.txt", "training_stats.json"):
        assert (trained_encdec / name).is_file()
    stats = json.loads((trained_encdec / "training_stats.json").read_text())
    assert len(stats["epochs"]) == 4
    row = stats["epochs"][0]
    assert row["train_perplexity"] > 1 and row["dev_perplexity"] > 1 and row["seconds"] > 0
    assert stats["epochs"][-1]["train_perplexity"] < row["train_perplexity"]
    assert stats["best_dev_perplexity"] == min(r["dev_perplexity"] for r in stats["epochs"])
    assert not list(trained_encdec.rglob("*.pkl")) and not list(trained_encdec.rglob("*.pickle"))


def test_testing_writes_translations_and_bleu(trained_encdec, demo_data):
    proc = run_nmt("--do_testing", "--device=cpu", f"--test_set={demo_data}/test.en", f"--working_dir={trained_encdec}")
    stats = json.loads((trained_encdec / "testing_stats.json").read_text())
    hyps = (trained_encdec / "test_trans.txt").read_text(encoding="utf-8").split("\n")[:-1]
    refs = [" ".join(s) for s in read_sentences(demo_data / "test.de")]
    assert len(hyps) == len(refs) == stats["sentences"]
    assert stats["bleu"] == pytest.approx(bleu(hyps, refs))
    assert stats["testing_time"] > 0 and f"BLEU = {stats['bleu']:.2f}" in proc.stdout


def test_restored_model_translates_like_the_command_line(trained_encdec, demo_data):
    run_nmt("--do_testing", f"--test_set={demo_data}/test.en", f"--working_dir={trained_encdec}")
    first = (trained_encdec / "test_trans.txt").read_text()
    run_nmt("--do_testing", f"--test_set={demo_data}/test.en", f"--working_dir={trained_encdec}")
    assert (trained_encdec / "test_trans.txt").read_text() == first
    model = workdir.load_model(str(trained_encdec), models())
    again = [" ".join(t) for t in translator_of(model).translate(read_sentences(demo_data / "test.en"), beam_size=10)]
    assert "\n".join(again) + "\n" == first


def test_beam_ten_is_at_least_as_probable_as_greedy(trained_encdec, demo_data):
    model = workdir.load_model(str(trained_encdec), models())
    src = encode_all(model.vocab1, read_sentences(demo_data / "test.en"))
    translator = translator_of(model)
    _, greedy = translator.translate_ids(src, beam_size=1)
    _, beam = translator.translate_ids(src, beam_size=10)
    assert np.mean(beam) >= np.mean(greedy)
    assert np.all(beam >= greedy - 1e-4)  # a wider beam may only find more probable outputs here


def test_query_tokenizes_translates_and_detokenizes(trained_encdec):
    model = workdir.load_model(str(trained_encdec), models())
    expected = {}
    for text in ("The old man sees a dog.", "I know that a cat runs."):
        words = MosesTokenizer(lang="en").tokenize(text, escape=True)
        expected[text] = MosesDetokenizer(lang="de").detokenize(translator_of(model).translate([words], beam_size=10)[0])
    proc = run_nmt("--query=The old man sees a dog.", f"--working_dir={trained_encdec}")
    assert proc.stdout == expected["The old man sees a dog."] + "\n"
    proc = run_nmt("--query=-", f"--working_dir={trained_encdec}",
                   stdin="The old man sees a dog.\n\nI know that a cat runs.\n")
    assert proc.stdout.split("\n") == [expected["The old man sees a dog."], "", expected["I know that a cat runs."], ""]


NO_FILES = ["--train_set1=a", "--train_set2=b", "--dev_set1=c", "--dev_set2=d"]


@pytest.mark.parametrize("flags, message", [
    (["--do_testing", "--test_set=README.md"], "hparams.json missing"),
    (["--do_testing", "--test_set=x.en"], "--test_set=x.en: no such file"),
    (["--do_training", "--do_testing", "--test_set=README.md", "--test_ref=x.de"], "--test_ref=x.de: no such file"),
    (["--do_testing", "--bogus_flag=1"], "unrecognized arguments: --bogus_flag=1"),
    (["--query=hi", "--beam_size=0"], "--beam_size=0: must be >= 1"),
    (["--do_training", "--p_reset=2", "--train_set1=a"], "--p_reset=2.0: must be >= 0 and <= 1"),
    (["--do_training", "--batch_size=0"], "--batch_size=0: must be >= 1"),
    (["--do_training", "--seed=-1"], "--seed=-1: must be >= 0"),
    (["--query=hi", "--recog_clip=0"], "--recog_clip=0.0: must be > 0"),
    (["--do_training", "--dropout=1"], "--dropout=1.0: must be below 1"),
    (["--do_training", "--p_mono=1"], "--p_mono=1.0: must be below 1"),
    (["--query=hi", "--refine_steps=-1"], "--refine_steps=-1: must be >= 0"),
    (["--do_training", "--amortize=tables"], "argument --amortize: invalid choice: 'tables'"),
    (["--do_training", "--train_set1=a"], "--do_training needs --train_set2"),
    (["--do_testing"], "--do_testing needs --test_set"),
    (["--units=8"], "nothing to do"),
    # Flags the model does not read: refused before any data is read (the files named here do not exist).
    (["--do_training", "--model=rnnpbnmt", "--attention=content", *NO_FILES],
     "--attention=content: only for --model=encdec (this run: --model=rnnpbnmt); it would be ignored"),
    (["--do_training", "--model=encdec", "--refine_steps=2", *NO_FILES],
     "--refine_steps=2: only for --model=rnnpbnmt --amortize=encoder|learned"),
    (["--do_training", "--model=deep_lstm", "--task=transduction", "--memory_width=8", *NO_FILES],
     "--memory_width=8: only for --model=stack_lstm|queue_lstm|deque_lstm"),
])
def test_bad_flags_and_empty_working_dir_give_one_line_errors(tmp_path, flags, message):
    proc = run_nmt(*flags, f"--working_dir={tmp_path}", check=False)
    assert proc.returncode != 0
    assert message in proc.stderr and "Traceback" not in proc.stderr


def test_a_flag_the_tested_model_does_not_read_is_refused(trained_encdec):
    proc = run_nmt("--query=hi", "--refine_steps=2", f"--working_dir={trained_encdec}", check=False)
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1 and proc.stdout == ""
    assert "--refine_steps=2: only for --model=rnnpbnmt --amortize=encoder|learned (this run: --model=encdec" in proc.stderr


def test_a_run_given_a_flag_before_such_flags_were_refused_resumes_with_it_or_without_it(tmp_path):
    """A deep_lstm trained with --memory_width=128 (as the transduction experiments gave it, before
    flags a model does not read were refused) resumes by its command and by it without the flag."""
    from nmtcore.cli import check_resumable
    from nmtcore.config import Config
    from nmtcore.errors import UserError
    from nmtcore.files import write_json

    old = {"model": "deep_lstm", "task": "transduction", "memory_width": 128, "train_set1": "a", "train_set2": "b"}
    write_json(str(tmp_path / "hparams.json"), Config.from_flat(old).to_flat())
    for given in (old, {k: v for k, v in old.items() if k != "memory_width"}):
        assert check_resumable(str(tmp_path), models(), Config.from_flat(given), given).model.memory_width == 128
    other = dict(old, memory_width=64)
    with pytest.raises(UserError, match="^--memory_width=64: only for --model=stack_lstm"):
        check_resumable(str(tmp_path), models(), Config.from_flat(other), other)
    other = dict(old, model="stack_lstm")
    with pytest.raises(UserError, match=r"another configuration: --model \(was 'deep_lstm', now 'stack_lstm'\)"):
        check_resumable(str(tmp_path), models(), Config.from_flat(other), other)


@pytest.mark.skipif(bool(tf.config.list_physical_devices("GPU")), reason="this machine has a GPU")
def test_device_gpu_without_a_gpu_is_refused(tmp_path):
    proc = run_nmt("--query=hi", "--device=gpu", f"--working_dir={tmp_path}", check=False)
    assert proc.returncode == 1 and "--device=gpu: TensorFlow sees no GPU" in proc.stderr


@pytest.mark.slow
def test_bad_data_files_give_one_line_errors(tmp_path, demo_data):
    short = tmp_path / "short.de"
    short.write_text("Nur eine Zeile .\n", encoding="utf-8")
    proc = run_nmt(*train_args(demo_data, tmp_path / "wd", "--max_epochs=1"), f"--train_set2={short}", check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "has 400 lines but" in proc.stderr and "short.de has 1" in proc.stderr
    proc = run_nmt(*train_args(demo_data, tmp_path / "wd", "--max_epochs=1"), f"--dev_set1={tmp_path}/missing.en",
                   check=False)
    assert proc.returncode == 1 and "missing.en: no such file" in proc.stderr


@pytest.mark.slow
def test_a_file_as_working_dir_gives_a_one_line_error(tmp_path, demo_data):
    (tmp_path / "wd").write_text("not a directory\n")
    proc = run_nmt(*train_args(demo_data, tmp_path / "wd", "--max_epochs=1"), check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("error: ") and "wd" in proc.stderr and len(proc.stderr.splitlines()) == 1


def test_existing_model_is_never_overwritten(trained_encdec, demo_data):
    # Not --do_testing's outputs, nor the lock file, which names the last process that trained or tried to.
    before = {p: p.read_bytes() for p in trained_encdec.rglob("*") if p.is_file()
              and p.name not in ("test_trans.txt", "testing_stats.json", ".lock")}
    same = ["--model=encdec", "--reverse_source", "--max_epochs=4", "--learning_rate=0.01"]  # as the fixture
    proc = run_nmt(*train_args(demo_data, trained_encdec, *same), check=False)
    assert proc.returncode == 1 and "already holds a trained model" in proc.stderr
    proc = run_nmt(*train_args(demo_data, trained_encdec, "--model=rnnpbnmt"), check=False)
    assert proc.returncode == 1 and "another configuration: --model" in proc.stderr
    assert {p: p.read_bytes() for p in before} == before


def run_files(working_dir):
    """Every file of a run, but the lock file: --start_over moves it along, naming the new process."""
    return {p.relative_to(working_dir): p.read_bytes() for p in working_dir.rglob("*") if p.is_file() and p.name != ".lock"}


@pytest.mark.slow
def test_start_over_moves_the_old_run_aside(demo_data, tmp_path):
    wd = tmp_path / "wd"
    small = ["--model=encdec", "--max_epochs=1", "--units=8", "--embedding_size=8"]
    run_nmt(*train_args(demo_data, wd, *small))
    old = run_files(wd)
    bad = [a if not a.startswith("--train_set2") else "--train_set2=missing.de" for a in train_args(demo_data, wd)]
    proc = run_nmt(*bad, *small, "--start_over", check=False)
    assert proc.returncode == 1 and "missing.de: no such file" in proc.stderr
    assert not (tmp_path / "wd.previous-1").exists()  # bad data: the old run stays where it was
    proc = run_nmt(*train_args(demo_data, wd, *small, "--learning_rate=0.02"), "--start_over")
    assert f"the previous run is now {tmp_path / 'wd.previous-1'}" in proc.stdout
    kept = tmp_path / "wd.previous-1"
    assert run_files(kept) == old
    assert json.loads((wd / "hparams.json").read_text())["learning_rate"] == 0.02


@pytest.mark.slow
def test_a_run_from_before_a_flag_existed_resumes_with_its_old_value(demo_data, tmp_path):
    wd = tmp_path / "wd"
    small = ["--model=encdec", "--units=8", "--embedding_size=8"]
    run_nmt(*train_args(demo_data, wd, *small, "--max_epochs=1"))
    hparams = json.loads((wd / "hparams.json").read_text())
    del hparams["dev_every"]  # as written before --dev_every existed
    (wd / "hparams.json").write_text(json.dumps(hparams))
    proc = run_nmt(*train_args(demo_data, wd, *small, "--max_epochs=2"))
    assert "resuming" in proc.stdout and "epoch 2: train ppl" in proc.stdout and "not measured" not in proc.stdout


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
@pytest.mark.slow
@pytest.mark.shared_data
def test_thesis_listings_run_unchanged(listing, tmp_path):
    """Each listing on the thesis data, shrunk to one small epoch, trains and tests."""
    folder, target, flags = LISTINGS[listing]
    data = SHARED_DATA / folder
    wd = tmp_path / "run"
    wd.mkdir()  # the listings create their working directories first
    run_nmt(*THESIS_TRAINING, *flags, f"--train_set1={data}/train.en", f"--train_set2={data}/train.{target}",
            f"--dev_set1={data}/dev.en", f"--dev_set2={data}/dev.{target}", f"--working_dir={wd}",
            # shrunk for the test:
            "--max_epochs=1", "--units=16", "--embedding_size=8", "--batch_size=256", "--max_recog_epochs=3")
    proc = run_nmt("--do_testing", "--device=cpu", f"--test_set={data}/test.en", f"--working_dir={wd}")
    stats = json.loads((wd / "testing_stats.json").read_text())
    assert "BLEU = " in proc.stdout and stats["sentences"] == 2000
    assert stats["reference"].endswith(f"test.{target}")


@pytest.mark.slow
def test_same_seed_same_run(demo_data, tmp_path):
    runs = []
    for name in ("a", "b"):
        wd = tmp_path / name
        run_nmt(*train_args(demo_data, wd, "--model=encdec", "--max_epochs=1", "--seed=5", "--dropout=0.3"))
        run_nmt("--do_testing", f"--test_set={demo_data}/test.en", f"--working_dir={wd}", "--beam_size=2")
        stats = json.loads((wd / "training_stats.json").read_text())
        runs.append(([(e["train_perplexity"], e["dev_perplexity"]) for e in stats["epochs"]],
                     (wd / "test_trans.txt").read_text()))
    assert runs[0] == runs[1]

