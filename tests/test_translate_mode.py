"""From raw text to raw text (issue 43): a run trained on raw files with Moses and SentencePiece,
tested, and used through translate mode, --query and the Python API, which all agree."""

import io
import json
import os
import subprocess
import sys
import threading

import pytest

from rnnpb_nmt import load
from rnnpb_nmt.errors import UserError

from helpers import ROOT, cli_in_process, raw_corpus, train_args, train_in_process


@pytest.fixture(scope="module")
def raw_run(demo_data, tmp_path_factory):
    """(working directory, raw data folder) of a seq-to-seq model trained on raw text for 3 epochs."""
    data = tmp_path_factory.mktemp("raw_data")
    raw_corpus(demo_data, data)
    wd = tmp_path_factory.mktemp("raw_run") / "wd"
    # in this process (no TensorFlow start-up): the tests are about the run, not its process; train_args[0] is
    # --do_training, which train_in_process gives
    train_in_process(*train_args(data, wd, "--model=encdec", "--max_epochs=3", "--learning_rate=0.01", "--beam_size=4",
                                 "--tokenize=moses", "--subword=sentencepiece", "--subword_vocab=150")[1:])
    return wd, data


def rnnpb_nmt(args, capsys, stdin=None, monkeypatch=None):
    """The command in this process: (exit status, stdout, stderr)."""
    return cli_in_process(args, capsys, stdin, monkeypatch)


@pytest.mark.slow
def test_the_run_keeps_its_preparation_and_tests_on_raw_text(raw_run, capsys):
    wd, data = raw_run
    saved = json.loads((wd / "hparams.json").read_text())
    assert (saved["tokenize"], saved["subword"], saved["subword_vocab"]) == ("moses", "sentencepiece", 150)
    assert (wd / "subword1.model").is_file() and (wd / "subword2.model").is_file()
    vocabulary = (wd / "vocab2.txt").read_text(encoding="utf-8").split("\n")
    assert any(piece.startswith("\u2581") for piece in vocabulary)
    assert rnnpb_nmt(["--do_testing", f"--test_set={data}/test.en", f"--working_dir={wd}"], capsys)[0] == 0
    stats = json.loads((wd / "testing_stats.json").read_text())
    lines = (wd / "test_trans.txt").read_text(encoding="utf-8").splitlines()
    assert len(lines) == stats["sentences"] == len((data / "test.en").read_text().splitlines())
    assert "\u2581" not in "".join(lines) and not any(line.endswith(" .") for line in lines)  # raw text
    assert stats["bleu"] >= 0 and "nrefs:1" in stats["sacrebleu_signature"]


@pytest.mark.slow
def test_translate_mode_query_and_the_api_agree_with_testing(raw_run, capsys, monkeypatch, tmp_path):
    wd, data = raw_run
    assert rnnpb_nmt(["--do_testing", f"--test_set={data}/test.en", f"--working_dir={wd}"], capsys)[0] == 0
    tested = (wd / "test_trans.txt").read_text(encoding="utf-8").splitlines()
    out = tmp_path / "out.de"
    status, _, _ = rnnpb_nmt(["translate", f"--working_dir={wd}", "-i", data / "test.en", "-o", out], capsys)
    assert status == 0 and out.read_text(encoding="utf-8").splitlines() == tested
    sources = (data / "test.en").read_text(encoding="utf-8").splitlines()
    status, answered, _ = rnnpb_nmt(["--query=-", f"--working_dir={wd}"], capsys,
                                    stdin="\n".join(sources[:5]).encode() + b"\n\n", monkeypatch=monkeypatch)
    assert answered.split("\n") == tested[:5] + ["", ""]
    status, one, _ = rnnpb_nmt([f"--query={sources[2]}", f"--working_dir={wd}"], capsys)
    assert one == tested[2] + "\n"
    model = load(str(wd))
    assert model.translate(sources[:7]) == tested[:7]
    best = model.translate(sources[:2], scores=True)
    assert [found[0].text for found in best] == tested[:2] and all(len(found) == 1 for found in best)
    with pytest.raises(UserError, match="^translate: give a list of sentences, not one string$"):
        model.translate(sources[0])


@pytest.mark.slow
def test_nbest_lines_are_best_first_with_scores_that_sum_their_symbols(raw_run, capsys):
    wd, data = raw_run
    sources = (data / "test.en").read_text(encoding="utf-8").splitlines()[:4]
    (data / "four.en").write_text("\n".join(sources) + "\n", encoding="utf-8")
    status, out, _ = rnnpb_nmt(["translate", f"--working_dir={wd}", "-i", data / "four.en", "--nbest=3",
                                "--token_scores"], capsys)
    rows = [line.split(" ||| ") for line in out.splitlines()]
    assert status == 0 and [int(r[0]) for r in rows] == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    best = load(str(wd)).translate(sources)
    for n in range(4):
        mine = rows[3 * n: 3 * n + 3]
        assert mine[0][1] == best[n]
        scores = [float(r[2]) for r in mine]
        assert scores == sorted(scores, reverse=True)  # --length_penalty 0: the beam's rank is the score
        for r in mine:
            assert sum(map(float, r[3].split())) == pytest.approx(float(r[2]), abs=2e-3)
    hypotheses = load(str(wd)).translate(sources[:1], nbest=2)[0]
    assert [h.text for h in hypotheses] == [r[1] for r in rows[:2]]


@pytest.mark.long
def test_query_from_a_pipe_answers_each_line_before_the_next_arrives(raw_run):
    wd, _ = raw_run
    proc = subprocess.Popen([sys.executable, str(ROOT / "nmt.py"), "--query=-", f"--working_dir={wd}"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    timer = threading.Timer(600, proc.kill)  # a hung translator fails the test instead of the suite
    timer.start()
    try:
        answers = []
        for line in ("The dog sees the cat.", "A man walks."):
            proc.stdin.write(line.encode() + b"\n")
            proc.stdin.flush()  # the pipe stays open: an answer now can only come line by line
            answers.append(proc.stdout.readline())
        proc.stdin.close()
        assert proc.wait() == 0 and proc.stdout.read() == b""
    finally:
        timer.cancel()
    assert all(a.endswith(b"\n") and a.strip() for a in answers)


@pytest.mark.slow
def test_a_subword_run_resumes_with_its_subword_models(raw_run, tmp_path):
    _, data = raw_run
    wd = tmp_path / "wd"
    args = train_args(data, wd, "--model=encdec", "--tokenize=moses", "--subword=sentencepiece",
                      "--subword_vocab=150", "--subword_type=bpe")[1:]  # without --do_training: train_in_process's
    train_in_process(*args, "--max_epochs=1")
    before = [(wd / name).read_bytes() for name in ("subword1.model", "vocab1.txt")]
    train_in_process(f"--working_dir={wd}", "--max_epochs=2")  # resumed as a new process would: from the directory
    assert [(wd / name).read_bytes() for name in ("subword1.model", "vocab1.txt")] == before
    assert len(json.loads((wd / "training_stats.json").read_text())["epochs"]) == 2


@pytest.mark.slow
def test_translate_mode_refusals_are_one_line_and_keep_an_existing_output(raw_run, capsys, tmp_path):
    wd, data = raw_run
    out = tmp_path / "out.txt"
    out.write_text("earlier work\n")
    for args, message in [
        (["-i", tmp_path / "missing.en", "-o", out], f"error: --input={tmp_path / 'missing.en'}: no such file"),
        (["-i", data / "test.en", "-o", data / "test.en"], "the same file as --input"),
        (["-i", data / "test.en", "--nbest=20"], "--nbest=20: must be from 1 to --beam_size=4"),
        (["-i", data / "test.en", "--nbest=0"], "--nbest=0: must be >= 1"),
    ]:
        status, _, err = rnnpb_nmt(["translate", f"--working_dir={wd}", *args], capsys)
        assert status == 1 and len(err.splitlines()) == 1 and message in err, err
    assert out.read_text() == "earlier work\n" and sorted(tmp_path.iterdir()) == [out]


def test_translation_flags_without_their_mode_are_refused(capsys, tmp_path):
    for args, message in [(["--do_testing", "--test_set=x", "--nbest=2"], "--nbest/--scores/--token_scores: only with"),
                          (["--query=hi", "-o", "x"], "--input/--output: only with --translate"),
                          (["--query=hi", "--translate"], "--query and --translate: give one")]:
        status, _, err = rnnpb_nmt([*args, f"--working_dir={tmp_path}"], capsys)
        assert status == 1 and len(err.splitlines()) == 1 and message in err, err


def test_an_output_onto_a_file_of_the_run_is_refused_before_loading(capsys, tmp_path):
    (tmp_path / "hparams.json").write_text("{}\n")  # refused before it is read: no model is needed
    status, _, err = rnnpb_nmt(["translate", f"--working_dir={tmp_path}", "-i", "-", "-o",
                                str(tmp_path / "hparams.json")], capsys)
    assert status == 1 and len(err.splitlines()) == 1 and "a file of --working_dir" in err, err
    assert (tmp_path / "hparams.json").read_text() == "{}\n"


def test_the_api_refuses_unknown_settings_in_one_line(tmp_path):
    with pytest.raises(UserError, match=r"^load: unknown setting\(s\) beam \(translation settings: .*beam_size, "):
        load(str(tmp_path), beam=3)


@pytest.mark.slow
def test_binary_input_ends_the_stream_in_one_line_after_the_lines_before_it(raw_run, capsys, monkeypatch):
    wd, _ = raw_run
    status, out, err = rnnpb_nmt(["--query=-", f"--working_dir={wd}"], capsys,
                                 stdin=b"The dog sleeps.\n\x00\x01\x02binary\nThe cat.\n", monkeypatch=monkeypatch)
    assert status == 1 and err == "error: stdin:2: binary data (a NUL byte), not text\n"
    assert len(out.splitlines()) == 1 and out.strip()


@pytest.mark.slow
def test_an_input_longer_than_training_is_warned_of_by_its_line_in_translate_mode(raw_run, capsys, tmp_path):
    wd, data = raw_run
    longest = json.loads((wd / "hparams.json").read_text())["longest1"]
    lines = (data / "test.en").read_text(encoding="utf-8").splitlines()[:3]
    (tmp_path / "in.en").write_text("\n".join([lines[0], " ".join(lines * 40), lines[1]]) + "\n", encoding="utf-8")
    status, _, err = rnnpb_nmt(["translate", f"--working_dir={wd}", "-i", tmp_path / "in.en", "-o", tmp_path / "out"],
                               capsys)
    assert status == 0 and len(err.splitlines()) == 1, err
    assert err.startswith(f"warning: {tmp_path / 'in.en'}:2: ") and f"longer than any training sentence ({longest})" in err
    assert "translated into" in err and "--max_trans_ratio=1.5" in err
    load(str(wd)).translate([" ".join(lines * 40)])  # the API leaves warnings to its caller
    assert capsys.readouterr().err == ""


@pytest.mark.slow
def test_nbest_scores_are_the_models_scores_of_those_translations(raw_run):
    import numpy as np
    import tensorflow as tf

    from rnnpb_nmt.data.dataset import encode_all

    wd, data = raw_run
    model = load(str(wd))
    source = (data / "test.en").read_text(encoding="utf-8").splitlines()[5]
    symbols = model.task.tokenize([source], "en")[0]
    found = model.translator.translate_nbest([symbols], 3)[0]
    net = model.translator.model
    src = tf.constant(np.stack([encode_all(net.vocab1, [symbols])[0]] * len(found)))
    tgt = tf.ragged.constant([list(ids) for ids in encode_all(net.vocab2, [h.tokens for h in found])]).to_tensor()
    cross_entropy, _ = net.score_targets({"src": src, "tgt": tgt, "index": tf.range(len(found))})
    assert -cross_entropy.numpy() == pytest.approx([h.score for h in found], abs=1e-3)


class _Answers:
    """A text stream that records what is written and when it is first flushed."""

    def __init__(self):
        self.text, self.flushed = "", threading.Event()

    def write(self, text):
        self.text += text

    def flush(self):
        self.flushed.set()


@pytest.mark.slow
def test_a_window_is_translated_by_length_and_answered_in_input_order_as_a_stream(raw_run, monkeypatch):
    import io
    import os

    import numpy as np

    from rnnpb_nmt.infer import streaming, translator as translator_module

    wd, data = raw_run
    model = load(str(wd), test_batch_size=4)  # windows of 32 lines, in batches of at most 4
    sources = (data / "test.en").read_text(encoding="utf-8").splitlines()[:30]
    lines = list(np.random.default_rng(0).permutation(sources + [f"{a} {b}" for a, b in zip(sources, sources[5:15])]))
    alone = [model.translate([line])[0] for line in lines]  # unsorted: each line by itself
    batched = []
    real = translator_module.evaluation_batches
    monkeypatch.setattr(translator_module, "evaluation_batches",
                        lambda src, *a, **k: batched.append([len(src[i]) for i in range(len(src))]) or real(src, *a, **k))
    out = io.StringIO()
    streaming.translate_stream(model.translator, model.task, io.BytesIO("".join(f"{x}\n" for x in lines).encode()), out)
    assert out.getvalue().splitlines() == alone
    assert max(len(window) for window in batched) == 32  # translated a window at a time, not 4 lines at a time
    assert any(window != sorted(window) for window in batched)  # of lines of shuffled lengths, sorted there
    # Streaming: the first line's answer is flushed while the input is still open.
    read_end, write_end = os.pipe()
    answers, failures = _Answers(), []

    def translate():
        try:
            with open(read_end, "rb") as source:
                streaming.translate_stream(model.translator, model.task, source, answers)
        except Exception as e:  # noqa: BLE001 (reported by the test's thread)
            failures.append(e)
    worker = threading.Thread(target=translate)
    worker.start()
    with open(write_end, "wb") as sink:
        sink.write(f"{lines[0]}\n".encode())
        sink.flush()
        assert answers.flushed.wait(300) and not failures, failures
        assert answers.text == alone[0] + "\n"
        sink.write(f"{lines[1]}\n".encode())
    worker.join(300)
    assert not failures and answers.text.splitlines() == alone[:2]


def test_the_input_is_read_at_most_a_window_ahead():
    import time

    from rnnpb_nmt.infer.streaming import batches, read_lines_as_they_come

    class Counted(io.BytesIO):
        taken = 0

        def readline(self, *args):
            Counted.taken += 1
            return super().readline(*args)

    stream = Counted(b"".join(b"line %d\n" % i for i in range(1000)))
    lines = read_lines_as_they_come(stream, ahead=5)
    deadline = time.time() + 60
    while not lines.full() and time.time() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)  # time enough to read on, were the reader not held back
    assert lines.full() and Counted.taken <= 6  # 5 waiting, 1 read and waiting for room
    assert [line for batch in batches(lines, 7) for line in batch] == [f"line {i}" for i in range(1000)]


def test_a_files_windows_are_full_whatever_the_readers_pace_and_a_pipes_take_what_has_come(tmp_path):
    import queue
    import time

    from rnnpb_nmt.infer.streaming import _EOF, _is_file, batches

    def slow_lines():  # a reader that has sent 3 lines and sends the other 7 later
        lines = queue.Queue()
        for i in range(3):
            lines.put(f"line {i}")

        def later():
            time.sleep(0.3)
            for i in range(3, 10):
                lines.put(f"line {i}")
            lines.put(_EOF)
        threading.Thread(target=later, daemon=True).start()
        return lines

    assert [len(b) for b in batches(slow_lines(), 4, fill=True)] == [4, 4, 2]
    assert [len(b) for b in batches(slow_lines(), 4)][0] == 3  # a pipe's first batch does not wait
    (tmp_path / "in.txt").write_text("a\n")
    with open(tmp_path / "in.txt", "rb") as named:
        assert _is_file(named)
    read_end, write_end = os.pipe()
    with os.fdopen(read_end, "rb") as pipe, os.fdopen(write_end, "wb"):
        assert not _is_file(pipe)
    assert not _is_file(io.BytesIO(b"a\n"))
