"""``rnnpb-nmt export`` (issue 44): each exportable kind of model, trained tiny, exported greedy and with a
beam, translates in a fresh process that imports only TensorFlow exactly as the command line does;
``ExportedModel`` keeps ``rnnpb_nmt.load``'s contract; what cannot be exported is refused in one line."""

import json
import re
import os
import subprocess
import sys
import threading

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings, strategies as st

from rnnpb_nmt import load
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.serving import export
from rnnpb_nmt.serving.exported import ExportedModel, prepared, restored
from rnnpb_nmt.tasks.base import Task

from helpers import (ROOT, SYNTHETIC_LEMMAS, cli_in_process, inflection_examples, raw_corpus, train_in_process,
                     untrained_working_dir, write_lines)

TINY = ROOT / "tests" / "fixtures" / "tiny_corpus"
SMALL = ["--embedding_size=8", "--units=16", "--num_layers=1", "--batch_size=16", "--learning_rate=0.01", "--seed=5"]
AMORTIZED = ["--model=rnnpbnmt", "--num_PB=4", "--refine_steps=1", "--refine_gradient=stop", "--sigma=0.1"]
# kind -> (corpus, flags); every kind is exported with --beam_size=1 (greedy) and 3.
KINDS = {
    "encdec": ("tokenized", ["--model=encdec", "--attention=none", "--tokenize=none"]),
    "encdec_content": ("tokenized", ["--model=encdec", "--attention=content"]),  # pretokenized: Moses outside
    "rnnpb_learned": ("tokenized", [*AMORTIZED, "--amortize=learned"]),
    # The demo's bound model: the PB an encoder's final state (read backwards), the language models' initial state.
    "rnnpb_encoder": ("tokenized", [*AMORTIZED, "--amortize=encoder", "--both_directions", "--proposal_output=state",
                                    "--pb_input=state", "--proposal_reverse", "--num_PB=32"]),
    # The bound model with Transformer language models (issue 90), both directions; its proposal pooled by
    # the slots' queries, whose weights the default mean pooling does not have; output layers tied.
    "rnnpb_transformer": ("tokenized", [*AMORTIZED, "--amortize=encoder", "--both_directions",
                                        "--language_model=transformer", "--heads=2", "--num_PB=8", "--pb_slots=2",
                                        "--pb_pool=attention", "--embedding_size=16", "--tie_embeddings"]),
    "hard_attention": ("inflection", ["--task=inflection", "--model=hard_attention", "--feature_size=4",
                                      "--max_trans_ratio=3"]),
    "moses_sentencepiece": ("raw", ["--model=encdec", "--attention=content", "--tokenize=moses",
                                    "--subword=sentencepiece", "--subword_vocab=60", "--max_epochs=15"]),  # pieces: slower
}
BEAMS = (1, 3)


def corpus_flags(kind, folder):
    """The --*_set flags of a corpus, and the test lines of each direction (A->B, B->A)."""
    if kind == "inflection":  # the tests' synthetic rules, 40 lemmas: 100 training examples, 20 dev
        rows = ["\t".join((lemma, ",".join(tags), form)) for lemma, tags, form in inflection_examples(SYNTHETIC_LEMMAS[:40])]
        for name, part in (("train", rows[:100]), ("dev", rows[100:])):
            write_lines(folder / name, part)
        return [f"--train_set1={folder / 'train'}", f"--dev_set1={folder / 'dev'}"], \
            ([row.rsplit("\t", 1)[0] for row in rows[100:]] + ["zzä\tnum=PL"], None)
    source = TINY
    if kind == "raw":
        raw_corpus(TINY, folder)
        source = folder
    flags = [f"--{part}_set{n}={source}/{part}.{lang}" for part in ("train", "dev") for n, lang in ((1, "en"), (2, "de"))]
    extra = ["", "zzz qqq !"]  # a line without words, and unknown words
    return flags, tuple((source / f"test.{lang}").read_text(encoding="utf-8").splitlines() + extra for lang in ("en", "de"))


@pytest.fixture(scope="module", params=sorted(KINDS))
def exported(request, tmp_path_factory):
    """(kind, working directory, {beam size: export}, lines of each direction) of a tiny model."""
    kind, (corpus, flags) = request.param, KINDS[request.param]
    folder = tmp_path_factory.mktemp(kind)
    files, lines = corpus_flags(corpus, folder)
    wd = folder / "wd"
    train_in_process(*files, f"--working_dir={wd}", *SMALL, "--max_epochs=5", *flags)  # a kind's own --max_epochs wins
    exports = {k: folder / f"export-{k}" for k in BEAMS}
    for k, out in exports.items():
        assert export.main([f"--working_dir={wd}", f"--out={out}", f"--beam_size={k}"]) == 0
    return kind, wd, exports, lines


# The fresh process: TensorFlow (and tensorflow_text, whose SentencePiece ops a graph may hold) only. It answers
# each line of requests [(export, signature, lines)] with a line, so that one TensorFlow start-up serves every kind.
LOADER = """
import json, sys
import tensorflow as tf
import tensorflow_text  # noqa
for requests in sys.stdin:
    answers = []
    for path, signature, lines in json.loads(requests):
        model = tf.saved_model.load(path)
        out = model.signatures[signature](text=tf.constant(lines, tf.string))
        answers.append({k: v.numpy().tolist() for k, v in out.items()})
    assert "rnnpb_nmt" not in sys.modules
    print(json.dumps(answers, default=lambda b: b.decode("utf-8")), flush=True)
"""


@pytest.fixture(scope="module")
def in_plain_tensorflow(tmp_path_factory):
    """A function giving the loader's answers to [(export, signature, lines)], from a new interpreter outside
    the repository (one for the module: the kinds' exports are loaded side by side, as a server may)."""
    err = tmp_path_factory.mktemp("loader") / "stderr"
    with open(err, "w") as stderr:
        proc = subprocess.Popen([sys.executable, "-c", LOADER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=stderr, text=True, cwd="/", env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))

    def answers(requests):
        timer = threading.Timer(600, proc.kill)  # a hung loader fails the test instead of the suite
        timer.start()
        try:
            proc.stdin.write(json.dumps(requests) + "\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
        finally:
            timer.cancel()
        assert line, err.read_text()[-3000:]
        return json.loads(line)

    try:
        yield answers
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=600) == 0, err.read_text()[-3000:]


def directions(signatures, lines):
    """(reverse, lines) of each direction an export translates."""
    return [(reverse, lines[reverse]) for reverse in (False, True) if export.SIGNATURES[reverse] in signatures]


def command_line(wd, k, reverse, lines, capsys, monkeypatch):
    """The command line's ``k`` best (translation, score) of each line (``--query=- --nbest=k --scores``,
    whose scores have 4 decimals)."""
    command = ["--query=-", f"--working_dir={wd}", f"--beam_size={k}", f"--nbest={k}", "--scores"]
    status, out, _ = cli_in_process(command + ["--reverse_translation"] * reverse, capsys,
                                    stdin="\n".join(lines).encode() + b"\n", monkeypatch=monkeypatch)
    assert status == 0
    found = [[] for _ in lines]
    for line in out.splitlines():
        number, text, score = line.split(" ||| ")
        found[int(number)].append((text, float(score)))
    return found


@pytest.mark.long
def test_an_export_translates_in_plain_tensorflow_as_the_command_line(exported, in_plain_tensorflow, capsys,
                                                                     monkeypatch):
    kind, wd, exports, lines = exported
    info = {k: json.loads((out / export.INFO).read_text()) for k, out in exports.items()}
    signatures = info[1]["signatures"]
    assert ("reverse" in signatures) == kind.startswith("rnnpb")  # the bound model translates both ways
    languages = {reverse: signatures[export.SIGNATURES[reverse]] for reverse, _ in directions(signatures, lines)}
    requests = [(str(exports[k]), export.SIGNATURES[reverse],
                 [prepared(line, info[k]["outside"], languages[reverse]["source"]) for line in text])
                for k in BEAMS for reverse, text in directions(signatures, lines)]
    answers, said = iter(in_plain_tensorflow(requests)), set()
    for k in BEAMS:
        for reverse, text in directions(signatures, lines):
            out = next(answers)
            got = [[(restored(out["translations"][i][j], info[k]["outside"], languages[reverse]["target"]),
                     out["scores"][i][j]) for j in range(out["hypotheses"][i])] for i in range(len(text))]
            expected = command_line(wd, k, reverse, text, capsys, monkeypatch)
            assert [[t for t, _ in found] for found in got] == [[t for t, _ in found] for found in expected]
            np.testing.assert_allclose([s for found in got for _, s in found], [s for found in expected for _, s in found],
                                       rtol=0, atol=1e-4)
            said |= {t for found in got for t, _ in found}
    assert len({i["version"] for i in info.values()}) == 1  # the same weights: the same version
    assert len(said - {""}) >= 3  # the tiny models say something


@pytest.mark.long
def test_the_exported_model_keeps_the_python_apis_contract(exported):
    kind, wd, exports, lines = exported
    served, trained = ExportedModel(str(exports[3])), load(str(wd), beam_size=3)
    assert (served.name, served.beam_size, served.reversible) == ("wd", 3, trained.translator.model.reversible)
    for reverse, text in directions(served.info["signatures"], lines):
        assert served.translate(text, reverse=reverse) == trained.translate(text, reverse=reverse)
        for nbest in (1, 3):
            ours, theirs = (m.translate(text, nbest=nbest, scores=True, reverse=reverse) for m in (served, trained))
            assert [[t.text for t in f] for f in ours] == [[t.text for t in f] for f in theirs]
            for mine, other in zip((t for f in ours for t in f), (t for f in theirs for t in f)):
                assert mine.score == pytest.approx(other.score, rel=1e-5, abs=1e-4)
                np.testing.assert_allclose(mine.token_scores, other.token_scores, rtol=1e-5, atol=1e-4)
                assert sum(mine.token_scores) == pytest.approx(mine.score, abs=1e-4)
    with pytest.raises(UserError, match=r"^--nbest=4: must be from 1 to --beam_size=3 "):
        served.translate(lines[0], nbest=4)
    with pytest.raises(UserError, match="^translate: give a list of sentences, not one string$"):
        served.translate(lines[0][0])
    if kind == "hard_attention":  # the graph checks its input as parse_line does
        with pytest.raises(UserError, match=r"^translate: a line is not LEMMA<TAB>FEATURES \(a non-empty lemma, "):
            served.translate([lines[0][0], "ab"])
    if not served.reversible:
        with pytest.raises(UserError, match="^--reverse_translation: model .* translates one way only$"):
            served.translate(lines[0], reverse=True)


def test_the_thesiss_recognition_is_refused_in_one_line(tmp_path, capsys):
    untrained_working_dir(tmp_path / "wd", TINY, model="rnnpbnmt")
    status, out, err = cli_in_process(["export", f"--working_dir={tmp_path / 'wd'}", f"--out={tmp_path / 'e'}"], capsys)
    assert status == 1 and err.startswith("error: export: --model=rnnpbnmt without --amortize recognises each source")
    assert err.count("\n") == 1 and not (tmp_path / "e").exists() and os.listdir(tmp_path) == ["wd"]


def test_an_out_that_holds_anything_and_a_missing_run_are_refused_in_one_line(tmp_path, capsys):
    untrained_working_dir(tmp_path / "wd", TINY, model="encdec")
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "work.txt").write_text("mine")
    (tmp_path / "file").write_text("mine")
    for out in ("taken", "file"):
        status, _, err = cli_in_process(["export", f"--working_dir={tmp_path / 'wd'}", f"--out={tmp_path / out}"], capsys)
        assert status == 1 and err == f"error: --out={tmp_path / out}: already exists and is not empty (an export " \
                                      "never overwrites; give a new directory)\n"
    assert (tmp_path / "taken" / "work.txt").read_text() == "mine" and (tmp_path / "file").read_text() == "mine"
    status, _, err = cli_in_process(["export", f"--working_dir={tmp_path / 'none'}", f"--out={tmp_path / 'e'}"], capsys)
    assert status == 1 and err == f"error: --working_dir={tmp_path / 'none'}: no such directory\n"
    (tmp_path / "wd" / "hparams.json").write_text("{")
    status, _, err = cli_in_process(["export", f"--working_dir={tmp_path / 'wd'}", f"--out={tmp_path / 'e'}"], capsys)
    assert status == 1 and err.startswith(f"error: {tmp_path / 'wd' / 'hparams.json'}: corrupted") and err.count("\n") == 1
    assert sorted(os.listdir(tmp_path)) == ["file", "taken", "wd"]  # nothing half-written left behind
    status, _, err = cli_in_process(["export", f"--working_dir={tmp_path / 'wd'}"], capsys)
    assert status == 2 and "--out" in err and err.count("\n") == 1


@pytest.mark.slow  # traces a search
def test_a_failed_write_leaves_no_export_and_nothing_half_written(tmp_path, capsys, monkeypatch):
    untrained_working_dir(tmp_path / "wd", TINY, model="encdec")

    def full_disk(module, path, signatures):
        assert os.path.basename(path).startswith(".e.tmp-")  # beside --out, hidden
        (tmp_path / path / "saved_model.pb").write_text("half")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tf.saved_model, "save", full_disk)
    status, _, err = cli_in_process(["export", f"--working_dir={tmp_path / 'wd'}", f"--out={tmp_path / 'e'}",
                                     "--beam_size=1"], capsys)
    assert status == 1 and err == f"error: {tmp_path / 'e'}: cannot write (No space left on device)\n"
    assert os.listdir(tmp_path) == ["wd"]


def test_a_task_with_python_only_preparation_is_refused_and_a_non_export_is_not_loaded(tmp_path):
    class Lowercasing(Task):
        def tokenize(self, lines, language):
            return [line.lower().split() for line in lines]

    Lowercasing.__abstractmethods__ = frozenset()
    task = Lowercasing(untrained_working_dir(tmp_path / "wd", TINY, model="encdec").config)
    with pytest.raises(UserError, match=r"^export: --task=translation prepares its text in Python only "):
        export.text_preparation(task)
    with pytest.raises(UserError, match=rf"^{tmp_path / 'wd'}: not an rnnpb-nmt export \(no "):
        ExportedModel(str(tmp_path / "wd"))



@pytest.mark.parametrize("content, message", [
    (b"[]", "corrupted (not a JSON object)"),
    (b"{}", "corrupted (no 'name', 'version', "),
    (json.dumps({key: None for key in export.INFO_KEYS}).encode(), "corrupted (its signatures lack "),
])
def test_a_damaged_export_json_is_a_one_line_error(tmp_path, content, message):
    (tmp_path / export.INFO).parent.mkdir(parents=True)
    (tmp_path / export.INFO).write_bytes(content)
    with pytest.raises(UserError, match=re.escape(f"{tmp_path / export.INFO}: {message}")):
        ExportedModel(str(tmp_path))


WHITESPACE = [chr(c) for c in range(0x3001) if chr(c).isspace()] + ["\u200b", "\ufeff"]  # and two that are not


@settings(deadline=None)  # the first call compiles the graph's regular expression
@given(st.lists(st.text(st.one_of(st.characters(), st.sampled_from(WHITESPACE))), max_size=4))
def test_the_graphs_word_splitting_is_pythons_str_split(lines):
    words = export.split_words(tf.constant(lines, tf.string))
    assert [[w.decode("utf-8") for w in row] for row in words.to_list()] == [line.split() for line in lines]
    assert [t.decode("utf-8") for t in export.join_words(words).numpy()] == [" ".join(line.split()) for line in lines]


def test_each_languages_subword_model_survives_saving(tmp_path):
    """The SentencePiece models of the two languages stay two after a SavedModel is loaded: each
    language's pieces are joined by its own model (pieces of words the other model never saw
    would keep their "▁" marks)."""
    from rnnpb_nmt.data.text import TextPipeline, _train_model

    corpora = {"en": [["the", "teacher", "sees", "a", "small", "dog"]] * 20,
               "de": [["der", "lehrer", "sieht", "einen", "kleinen", "hund"]] * 20}
    pipeline = TextPipeline("pretokenized", "sentencepiece", [_train_model(c, 30, "unigram") for c in corpora.values()])
    module = tf.Module()
    module.text = export._PipelineText(pipeline, ("en", "de"))
    spec = tf.RaggedTensorSpec([None, None], tf.string)
    module.join = {language: tf.function(lambda pieces, language=language: module.text.graph_detokenize(pieces, language),
                                         input_signature=[spec]) for language in corpora}
    tf.saved_model.save(module, str(tmp_path / "m"))
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    for side, (language, sentences) in enumerate(corpora.items(), 1):
        pieces = pipeline.symbols(sentences[0], side)
        assert any("▁" in p and p != "▁" for p in pieces)
        joined = loaded.join[language](tf.ragged.constant([pieces])).numpy()[0].decode()
        assert joined == " ".join(sentences[0])
