"""The inflection task: LEMMA<TAB>FEATURES<TAB>FORM files, their vocabularies and outputs (Unicode
byte-exact), bad lines, scoring, and the command line from files to predictions."""

import json

import pytest

from rnnpb_nmt.config import Config
from rnnpb_nmt.data.vocabulary import Vocabulary
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.tasks.inflection.alignment import STEP
from rnnpb_nmt.tasks.inflection.task import InflectionTask, read_examples, source_symbols, split_source

from helpers import SHARED_DATA, cli_in_process

# Arabic script and transliteration, Georgian, Navajo with precomposed and combining accents.
SAMPLE = [
    ("kitāb", "pos=N,num=PL", "kutub"),
    ("كتاب", "pos=N,num=PL", "كتب"),
    ("ქალაქი", "pos=N,case=DAT,num=SG", "ქალაქს"),
    ("áʼázhoozh", "pos=N,arg=ARGAC3S,per=4,num={DU/PL}", "yíʼázhoozh"),
    ("a\u0301ʼa\u0301zhoozh", "pos=N,per=4", "yi\u0301ʼa\u0301zhoozh"),
]
SIGMORPHON = SHARED_DATA / "inflection" / "sigmorphon2016"


def write_lines(path, rows, ending="\n"):
    path.write_bytes("".join("\t".join(row) + ending for row in rows).encode("utf-8"))
    return str(path)


def corpus_of(tmp_path, rows, **config):
    files = {"train_set1": write_lines(tmp_path / "train", rows), "dev_set1": write_lines(tmp_path / "dev", rows)}
    return InflectionTask().load_corpus(files, Config().replace(task="inflection", **config))


def saved_and_loaded(vocab, path):
    vocab.save(str(path))
    return Vocabulary.load(str(path))


def test_unicode_survives_reading_vocabularies_and_output_byte_exact(tmp_path):
    """Lines in, through the encoded corpus and its vocabularies written to disk and read back,
    out as the shared task's output lines: the same bytes."""
    loaded = corpus_of(tmp_path, SAMPLE)
    vocab1, vocab2 = (saved_and_loaded(v, tmp_path / f"vocab{n}.txt") for n, v in ((1, loaded.vocab1), (2, loaded.vocab2)))
    sources = [vocab1.decode(ids) for ids in loaded.train_src]
    actions = [vocab2.decode(ids) for ids in loaded.train_tgt]
    lines = InflectionTask().output_lines(sources, actions)
    assert [line.encode("utf-8") for line in lines] == ["\t".join(row).encode("utf-8") for row in SAMPLE]
    assert "\u0301" in vocab1.itos and "[num={DU/PL}]" in vocab1.itos and STEP in vocab2.itos


def test_a_source_is_code_points_then_one_symbol_per_feature():
    symbols = source_symbols("ab\u0301", ["pos=N", "num=PL"])
    assert symbols == ["a", "b", "\u0301", "[pos=N]", "[num=PL]"]
    assert split_source(symbols) == ("ab\u0301", "pos=N,num=PL")


def test_crlf_lines_read_like_lf(tmp_path):
    rows = [("gehen", "pos=V", "ging")]
    assert read_examples(write_lines(tmp_path / "a", rows, "\r\n")) == [("gehen", ["pos=V"], "ging")]


@pytest.mark.parametrize("line, message", [
    ("gehen\tpos=V", r"train:2: 2 tab-separated column\(s\), expected 3 \(LEMMA<TAB>FEATURES<TAB>FORM\)$"),
    ("gehen\tpos=V\tging\tx", r"train:2: 4 tab-separated column\(s\), expected 3"),
    ("gehen\tpos=V,,num=SG\tging", r"train:2: empty feature tag in 'pos=V,,num=SG'"),
    ("gehen\t\tging", r"train:2: empty feature tag in ''"),
    ("\tpos=V\tging", r"train:2: empty lemma"),
    ("gehen\tpos=V\t", r"train:2: empty form"),
    ("", r"train:2: 1 tab-separated column\(s\)"),
    ("geh\ren\tpos=V\tging", r"train:2: a carriage return inside the line"),
])
def test_bad_training_lines_are_one_line_errors_naming_file_and_line(tmp_path, line, message):
    (tmp_path / "train").write_text("gehen\tpos=V\tging\n" + line + "\n", encoding="utf-8")
    with pytest.raises(UserError, match=message):
        InflectionTask().load_corpus({"train_set1": str(tmp_path / "train"), "dev_set1": str(tmp_path / "train")},
                                     Config().replace(task="inflection"))


def test_a_test_file_is_covered_or_not_and_a_reference_must_match_it(tmp_path):
    task = InflectionTask()
    covered = write_lines(tmp_path / "test-covered", [row[:2] for row in SAMPLE])
    full = write_lines(tmp_path / "test", SAMPLE)
    sources, gold, _ = task.read_test(covered, None, "und")
    assert gold is None and sources == [source_symbols(lemma, tags.split(",")) for lemma, tags, _ in SAMPLE]
    assert task.read_test(full, None, "und")[1] == [list(form) for _, _, form in SAMPLE]
    assert task.read_test(covered, full, "und")[1:] == ([list(form) for _, _, form in SAMPLE], full)
    with pytest.raises(UserError, match=r"test:1: not the lemma and features of .*test-covered:1$"):
        task.read_test(covered, write_lines(tmp_path / "test", SAMPLE[::-1]), "und")
    mixed = write_lines(tmp_path / "mixed", [SAMPLE[0], SAMPLE[1][:2]])
    with pytest.raises(UserError, match=r"mixed:2: no FORM column, unlike line 1"):
        task.read_test(mixed, None, "und")


@pytest.mark.parametrize("aligner", ["levenshtein", "corpus"])
def test_end_of_word_ends_every_oracle_with_a_step_onto_the_end_position(aligner):
    """--end_of_word: the oracle's actions are the alignment's, then one step (onto the end position
    the hard-attention model adds after the lemma), so the steps are one more than the lemma's
    characters and the form written is the same."""
    train = [("fliegen", [], "flog"), ("sagen", [], "gesagt"), ("lieben", [], "liebte")]
    plain, ended = (InflectionTask._target(train, Config().replace(aligner=aligner, end_of_word=flag).data)
                    for flag in (False, True))
    for lemma, _, form in train:
        assert ended(lemma, form) == plain(lemma, form) + [STEP]
        assert ended(lemma, form).count(STEP) == len(lemma) + 1
        assert "".join(a for a in ended(lemma, form) if a != STEP) == form


def test_scores_are_exact_match_accuracy_and_mean_levenshtein_distance_without_steps():
    outputs = [[STEP, "g", STEP, "i", "n", "g"], ["g", "a", "n", "g"], ["x"]]
    scores = InflectionTask().score([["x"]] * 3, outputs, [list("ging"), list("ging"), list("ab")], "und")
    assert scores == {"accuracy": pytest.approx(1 / 3), "mean_levenshtein": pytest.approx((0 + 1 + 2) / 3)}
    assert InflectionTask().describe(scores) == "accuracy 0.3333, mean Levenshtein distance 1.0000"


def test_files_of_other_tasks_are_refused_in_one_line(tmp_path):
    files = {"train_set1": write_lines(tmp_path / "t", SAMPLE), "dev_set1": str(tmp_path / "t"),
             "train_set2": str(tmp_path / "t")}
    with pytest.raises(UserError, match=r"^--train_set2: the inflection task reads lemma, features and form from one"):
        InflectionTask().load_corpus(files, Config())


def test_a_vocabulary_without_room_for_every_symbol_is_refused(tmp_path):
    with pytest.raises(UserError, match=r"--vocab2_max=3: too small for the symbols of .*train"):
        corpus_of(tmp_path, SAMPLE, vocab2_max=3)


@pytest.mark.shared_data
@pytest.mark.parametrize("language", ["arabic", "georgian", "navajo"])
def test_shared_task_files_survive_reading_vocabularies_and_output_byte_exact(tmp_path, language):
    task, prefix = InflectionTask(), SIGMORPHON / f"{language}-task1-"
    loaded = task.load_corpus({"train_set1": f"{prefix}train", "dev_set1": f"{prefix}dev"},
                              Config().replace(task="inflection"))
    vocab1, vocab2 = (saved_and_loaded(v, tmp_path / f"vocab{n}.txt") for n, v in ((1, loaded.vocab1), (2, loaded.vocab2)))
    lines = task.output_lines([vocab1.decode(s) for s in loaded.train_src], [vocab2.decode(t) for t in loaded.train_tgt])
    assert "".join(line + "\n" for line in lines).encode("utf-8") == (prefix.parent / f"{prefix.name}train").read_bytes()
    covered = f"{prefix}test-covered"
    sources, gold, _ = task.read_test(covered, None, "und")
    assert gold is None
    out = task.output_lines(sources, [["x"]] * len(sources))
    assert [line.rsplit("\t", 1)[0] for line in out] == open(covered, encoding="utf-8").read().splitlines()


def train_flags(train, dev, working_dir, *extra):
    return ["--do_training", "--task=inflection", "--model=hard_attention", f"--train_set1={train}",
            f"--dev_set1={dev}", f"--working_dir={working_dir}", "--embedding_size=8", "--units=8",
            "--feature_size=4", "--num_layers=1", "--batch_size=4", "--beam_size=1", "--max_trans_ratio=3",
            *extra]


@pytest.mark.slow  # trains through the command line's entry point (in this process: no TensorFlow start-up each)
def test_train_resume_then_predict_a_covered_file_in_input_order_and_score_a_full_one(tmp_path, capsys):
    train = write_lines(tmp_path / "train", SAMPLE)
    covered = write_lines(tmp_path / "test-covered", [row[:2] for row in SAMPLE[::-1]])
    wd = tmp_path / "wd"
    assert cli_in_process(train_flags(train, train, wd, "--max_epochs=1"), capsys)[0] == 0
    vocabularies = [(wd / f"vocab{n}.txt").read_bytes() for n in (1, 2)]
    status, out, _ = cli_in_process(train_flags(train, train, wd, "--max_epochs=2"), capsys)
    assert status == 0 and "resuming" in out
    assert [(wd / f"vocab{n}.txt").read_bytes() for n in (1, 2)] == vocabularies
    assert len(json.loads((wd / "training_stats.json").read_text())["epochs"]) == 2
    assert cli_in_process(["--do_testing", f"--test_set={covered}", f"--working_dir={wd}"], capsys)[0] == 0
    lines = (wd / "test_trans.txt").read_bytes().decode("utf-8").split("\n")
    assert lines[-1] == "" and len(lines) == len(SAMPLE) + 1
    assert [line.rsplit("\t", 1)[0] for line in lines[:-1]] == ["\t".join(row[:2]) for row in SAMPLE[::-1]]
    assert "accuracy" not in json.loads((wd / "testing_stats.json").read_text())
    assert cli_in_process(["--do_testing", f"--test_set={covered}",
                           f"--test_ref={write_lines(tmp_path / 'gold', SAMPLE[::-1])}", f"--working_dir={wd}"], capsys)[0] == 0
    stats = json.loads((wd / "testing_stats.json").read_text())
    assert 0 <= stats["accuracy"] <= 1 and stats["mean_levenshtein"] >= 0 and stats["sentences"] == len(SAMPLE)


def test_training_without_a_dev_file_or_with_a_second_side_is_a_one_line_error(tmp_path, capsys):
    train = write_lines(tmp_path / "train", SAMPLE)
    flags = train_flags(train, train, tmp_path / "wd")
    for bad, message in ((flags[:4] + flags[5:], "error: --do_training needs --dev_set1"),
                         (flags + [f"--train_set2={train}"], "error: --train_set2: the inflection task reads")):
        status, _, err = cli_in_process(bad, capsys)
        assert status == 1 and err.startswith(message) and err.count("\n") == 1


def test_query_lines_are_lemma_tab_features_and_answers_are_forms():
    task = InflectionTask()
    assert task.tokenize(["ab\tpos=V,num=PL"], "und") == [["a", "b", "[pos=V]", "[num=PL]"]]
    assert task.detokenize([[STEP, "a", "s", STEP]], "und") == ["as"]
    with pytest.raises(UserError, match=r"^--query: 1 tab-separated column\(s\), expected 2 \(LEMMA<TAB>FEATURES\)$"):
        task.tokenize(["ab"], "und")
