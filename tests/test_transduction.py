"""The transduction task and its files: coarse/fine scoring, the generator, and the command line
from data to testing_stats.json, with its bad inputs."""

import contextlib
import io
import json
import subprocess
import sys

import pytest

from rnnpb_nmt.config import Config
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.tasks.transduction.task import TransductionTask

from helpers import ROOT, cli_in_process, run_nmt, train_in_process

from data import generate_transduction

GENERATE = ROOT / "data" / "generate_transduction.py"


def generate(out, *flags):
    """The generator run in this process: (exit status, what it wrote to stderr)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        status = generate_transduction.main([f"--out={out}", *flags])
    return status, err.getvalue()


def test_scores_are_the_papers_coarse_and_fine_accuracy_with_eos():
    targets = [["a", "b"], ["a", "b"], ["a", "b"]]
    # exact; stops one symbol early (its EOS is wrong at position 2 of 3); wrong from the start
    scores = TransductionTask().score(targets, [["a", "b"], ["a"], ["b", "b"]], targets, "tgt")
    assert scores["coarse_accuracy"] == pytest.approx(1 / 3)
    assert scores["fine_accuracy"] == pytest.approx((1 + 1 / 3 + 0) / 3)
    assert "coarse accuracy 0.3333" in TransductionTask().describe(scores)


def test_symbols_are_whitespace_separated_with_no_tokenizer():
    task = TransductionTask()
    assert task.tokenize(["x1 x&2  x'3"], "src") == [["x1", "x&2", "x'3"]]
    assert task.detokenize([["x1", "x&2"]], "tgt") == ["x1 x&2"]


def test_the_generator_writes_every_split_the_same_for_the_same_seed(tmp_path):
    flags = ["--task=reverse", "--train=20", "--dev=5", "--test=5"]
    assert generate(tmp_path / "a", *flags) == (0, "")
    # The second in a new interpreter, as a user runs it: the same files, whatever its hash seed.
    subprocess.run([sys.executable, str(GENERATE), f"--out={tmp_path / 'b'}", *flags], check=True)
    for name in ("train", "dev", "test", "test_long"):
        src, tgt = ((tmp_path / "a" / f"{name}.{side}").read_text().splitlines() for side in ("src", "tgt"))
        assert all(t.split() == s.split()[::-1] for s, t in zip(src, tgt))
        assert (tmp_path / "b" / f"{name}.src").read_text() == "\n".join(src) + "\n"
    long_lengths = [len(line.split()) for line in (tmp_path / "a" / "test_long.src").read_text().splitlines()]
    assert min(long_lengths) >= 65 and max(long_lengths) <= 128


@pytest.mark.parametrize("flags, message", [
    (["--task=sorting"], "error: --task=sorting: unknown synthetic task"),
    (["--task=copy", "--min_len=9", "--max_len=3"], "error: --min_len=9 > max_len=3"),
    (["--task=gender_conjugation", "--vocab_size=2"], "error: --vocab_size=2: gender_conjugation needs a symbol"),
])
def test_bad_generator_flags_are_one_line_errors(tmp_path, flags, message):
    status, err = generate(tmp_path / "x", *flags)
    assert status == 1 and err.startswith(message) and err.count("\n") == 1


def test_a_vocabulary_without_room_for_every_symbol_is_refused(tmp_path):
    generate(tmp_path, "--task=copy", "--train=30", "--dev=5", "--test=5", "--vocab_size=8")
    files = {f"{split}_set{side}": str(tmp_path / f"{split}.{ext}")
             for split in ("train", "dev") for side, ext in (("1", "src"), ("2", "tgt"))}
    config = Config().replace(task="transduction", vocab1_max=5)
    with pytest.raises(UserError, match=r"--vocab1_max=5: too small for the symbols of .*train.src"):
        TransductionTask().load_corpus(files, config)


@pytest.fixture(scope="module")
def copy_files(tmp_path_factory):
    out = tmp_path_factory.mktemp("copy")
    generate(out, "--task=copy", "--train=200", "--dev=20", "--test=20", "--min_len=2", "--max_len=6",
             "--test_min_len=7", "--test_max_len=9", "--vocab_size=5")
    return out


def train_flags(data, working_dir, *extra):
    return ["--do_training", "--task=transduction", f"--train_set1={data}/train.src", f"--train_set2={data}/train.tgt",
            f"--dev_set1={data}/dev.src", f"--dev_set2={data}/dev.tgt", f"--working_dir={working_dir}",
            "--embedding_size=8", "--units=16", "--batch_size=20", "--learning_rate=0.01",
            "--beam_size=1", *extra]


@pytest.mark.long  # one memory LSTM: the kinds differ only in rnnpb_nmt/layers/neural_memory.py, tested there
def test_a_memory_lstm_trains_resumes_and_tests_through_the_command_line(copy_files, tmp_path, capsys):
    model, wd = "stack_lstm", tmp_path / "wd"
    run_nmt(*train_flags(copy_files, wd, f"--model={model}", "--memory_width=8", "--max_epochs=2"))
    run_nmt(*train_flags(copy_files, wd, f"--model={model}", "--memory_width=8", "--max_epochs=4"))  # resumes
    stats = json.loads((wd / "training_stats.json").read_text())
    dev = [row["dev_perplexity"] for row in stats["epochs"]]
    assert len(dev) == 4 and dev[-1] < dev[0]
    assert json.loads((wd / "hparams.json").read_text())["task"] == "transduction"
    assert cli_in_process(["--do_testing", f"--test_set={copy_files}/test_long.src", f"--working_dir={wd}"], capsys)[0] == 0
    testing = json.loads((wd / "testing_stats.json").read_text())
    assert testing["reference"] == f"{copy_files}/test_long.tgt" and testing["sentences"] == 20
    assert 0 <= testing["coarse_accuracy"] <= testing["fine_accuracy"] <= 1
    assert len((wd / "test_trans.txt").read_text().splitlines()) == 20


def test_an_unknown_task_is_refused_by_the_flag_parser(tmp_path, copy_files, capsys):
    status, _, err = cli_in_process(train_flags(copy_files, tmp_path / "wd", "--task=sorting"), capsys)
    assert status == 2 and "--task: invalid choice: 'sorting'" in err


@pytest.mark.slow
def test_training_another_model_into_a_working_dir_is_a_one_line_error(copy_files, tmp_path, capsys):
    wd = tmp_path / "wd"
    train_in_process(*train_flags(copy_files, wd, "--model=deep_lstm", "--max_epochs=1")[1:])
    status, _, err = cli_in_process(train_flags(copy_files, wd, "--model=stack_lstm", "--max_epochs=2"), capsys)
    assert status == 1 and err.count("\n") == 1
    assert "holds an unfinished run of another configuration: --model (was 'deep_lstm', now 'stack_lstm')" in err


def fresh_corpus(data):
    task = TransductionTask(Config().replace(task="transduction", fresh_data=True))
    files = {f"{split}_set{side}": str(data / f"{split}.{ext}")
             for split in ("train", "dev") for side, ext in (("1", "src"), ("2", "tgt"))}
    return task, task.load_corpus(files, task.config)


def decoded(vocab, sequences):
    return [vocab.decode(ids) for ids in sequences]


def test_fresh_data_draws_the_same_pairs_for_an_epoch_and_new_ones_for_the_next(copy_files):
    task, corpus = fresh_corpus(copy_files)
    first, again, second = (task.epoch_corpus(corpus, epoch) for epoch in (1, 1, 2))
    sources = {epoch: decoded(corpus.vocab1, c.train_src) for epoch, c in ((1, first), (2, second))}
    assert decoded(corpus.vocab1, again.train_src) == sources[1] != sources[2]
    assert sources[1] != decoded(corpus.vocab1, corpus.train_src)  # not the file's sample
    for c in (first, second):
        assert len(c.train_src) == len(corpus.train_src) and c.dev_src is corpus.dev_src
        assert decoded(corpus.vocab2, c.train_tgt) == decoded(corpus.vocab1, c.train_src)  # copying
        assert all(2 <= len(ids) - 1 <= 6 for ids in c.train_src)  # the generator's lengths (+ <end>)
    fixed = TransductionTask(Config().replace(task="transduction"))
    assert fixed.epoch_corpus(corpus, 3) is corpus


def test_without_its_generator_or_with_too_few_symbols_fresh_data_is_refused(copy_files, tmp_path):
    for name in ("train.src", "train.tgt", "dev.src", "dev.tgt"):
        (tmp_path / name).write_text((copy_files / name).read_text())
    with pytest.raises(UserError, match=r"generator.json: missing \(data/generate_transduction.py writes it"):
        fresh_corpus(tmp_path)
    (tmp_path / "generator.json").write_text(json.dumps({"task": "copy"}))
    with pytest.raises(UserError, match=r"generator.json: not a generator's arguments"):
        fresh_corpus(tmp_path)
    spec = json.loads((copy_files / "generator.json").read_text())
    (tmp_path / "generator.json").write_text(json.dumps(dict(spec, vocab_size=6)))  # x6 is in no file
    with pytest.raises(UserError, match=r"--fresh_data: .*train.src never has x6 \(1 such symbols\)"):
        fresh_corpus(tmp_path)


@pytest.mark.slow
def test_a_fresh_data_run_stopped_after_an_epoch_resumes_into_the_uninterrupted_run(copy_files, tmp_path):
    """The epochs' pairs depend on the epoch alone: the resumed run trains on the uninterrupted one's."""
    flags = [*train_flags(copy_files, "{}", "--model=queue_lstm", "--memory_width=8", "--fresh_data")[1:]]
    runs = {}
    for name, caps in (("whole", [2]), ("resumed", [1, 2])):
        for cap in caps:
            train_in_process(*(f.format(tmp_path / name) for f in flags), f"--max_epochs={cap}")
        runs[name] = json.loads((tmp_path / name / "training_stats.json").read_text())["epochs"]
    perplexities = {name: [(row["train_perplexity"], row["dev_perplexity"]) for row in rows] for name, rows in runs.items()}
    assert len(perplexities["whole"]) == 2 and perplexities["resumed"] == perplexities["whole"]
    fixed = tmp_path / "fixed"
    train_in_process(*(f.format(fixed) for f in flags if f != "--fresh_data"), "--max_epochs=2")
    second = json.loads((fixed / "training_stats.json").read_text())["epochs"][1]
    assert second["train_perplexity"] != runs["whole"][1]["train_perplexity"]  # other pairs than the files'
