"""Question formation: the grammar reader and parser, the data generator, and the task's scores
and prediction files."""

import json
import random
import subprocess
import sys

import pytest

from rnnpb_nmt.errors import UserError
from rnnpb_nmt.infer import prediction
from rnnpb_nmt.tasks.question_formation import questions
from rnnpb_nmt.tasks.question_formation.grammar import Grammar, words
from rnnpb_nmt.tasks.question_formation.task import QuestionFormationTask

from helpers import ROOT, SHARED_DATA, TINY_GRAMMAR, cli_in_process, models, tiny_config, translator_of

from data import generate_questions  # the repository root is on pytest's pythonpath (pytest.ini)

GENERATE = ROOT / "data" / "generate_questions.py"
QUESTIONS = SHARED_DATA / "question_formation"


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "tiny.gr"
    path.write_text(TINY_GRAMMAR)
    return path


@pytest.mark.parametrize("line,message", [
    ("1\tS", "expected WEIGHT<TAB>LEFT<TAB>RIGHT, got 2"), ("x\tS\tNP", "weight 'x' is not a number"),
    ("-1\tS\tNP", "must be a finite number >= 0"), ("1\tS\t ", "got 2"),
    ("1\tA B\tNP", "must be one symbol")])
def test_a_bad_rule_is_one_error_naming_file_and_line(tmp_path, line, message):
    path = tmp_path / "bad.gr"
    path.write_text(f"1\tROOT\tS .\n\n{line}\n")
    with pytest.raises(UserError, match=f"^{path}:3: .*{message}"):
        Grammar.read(str(path))


def test_missing_and_empty_grammars_are_errors(tmp_path):
    (tmp_path / "empty.gr").write_text("\n\n")
    with pytest.raises(UserError, match="no rules"):
        Grammar.read(str(tmp_path / "empty.gr"))
    with pytest.raises(UserError, match="no such file"):
        Grammar.read(str(tmp_path / "none.gr"))


def test_the_main_auxiliary_is_the_verb_phrases_not_the_relative_clauses(tiny):
    grammar = Grammar.read(str(tiny))
    sentence = "the newt who does sleep doesn't see some yak .".split()
    main, found = questions.auxiliaries(grammar.parse(sentence))
    assert (main, found) == (5, [3, 5])
    assert " ".join(questions.question(sentence, main)) == "doesn't the newt who does sleep see some yak ?"
    assert questions.auxiliaries(grammar.parse("the yak does see the newt who doesn't sleep .".split()))[0] == 2
    assert grammar.parse("the newt sleep does .".split()) is None


@pytest.mark.parametrize("kind", ["train", "gen"])
def test_generated_sentences_are_derived_and_questions_move_the_main_auxiliary(tiny, kind):
    grammar = Grammar.read(str(tiny))
    examples = questions.generate(grammar, 30, seed=4, kind=kind)
    assert len({tuple(source) for source, _ in examples}) == 30
    for source, target in examples:
        sentence, task = questions.split_input(source, "example")
        tree = grammar.parse(sentence)
        assert tree is not None and words(tree) == sentence
        main, found = questions.auxiliaries(tree)
        if task == questions.DECL:
            assert kind == "train" and target == sentence
            continue
        # The main auxiliary up front, the rest in order; in training it is also the first.
        assert target == [sentence[main]] + sentence[:main] + sentence[main + 1:-1] + ["?"]
        assert (main == found[0]) == (kind == "train")
        # A generalization example's first word tells the rules apart: the first auxiliary is another word.
        assert kind == "train" or sentence[found[0]] != sentence[main]


AGREEMENT = """1\tROOT\tS .

1\tS\tNP_S VP_S
1\tS\tNP_P VP_P
1\tNP_S\tthe N_S
1\tNP_S\tthe N_S RC_S
1\tNP_P\tthe N_P
1\tNP_P\tthe N_P RC_P
1\tVP_S\tAux_S sleep
1\tVP_S\tAux_S see NP_O
1\tVP_P\tAux_P sleep
1\tVP_P\tAux_P see NP_O
1\tNP_O\tthe N_S
1\tNP_O\tthe N_S RC_S
1\tRC_S\twho Aux_S sleep
1\tRC_S\twho the N_S Aux_S see
1\tRC_S\twho the N_P Aux_P see
1\tRC_P\twho Aux_P sleep
1\tRC_P\twho the N_P Aux_P see
1\tRC_P\twho the N_S Aux_S see
1\tAux_S\tdoes
1\tAux_S\tdoesn't
1\tAux_P\tdo
1\tAux_P\tdon't
1\tN_S\tnewt
1\tN_S\tyak
1\tN_P\tnewts
1\tN_P\tyaks
"""


def test_generalization_sentences_have_two_auxiliaries_of_one_number_but_different_words(tmp_path):
    # As every sentence of the shared generalization set: the first word of the question then
    # tells the two rules apart by structure alone, not by agreement with the subject, nor by
    # being the same word either way.
    path = tmp_path / "agreement.gr"
    path.write_text(AGREEMENT)
    grammar = Grammar.read(str(path))
    seen = set()
    for source, _ in questions.generate(grammar, 30, seed=2, kind="gen"):
        tree = grammar.parse(source[:-1])
        main, found = questions.auxiliaries(tree)
        symbols = {questions.leaves(tree)[i][0] for i in found}
        assert len(found) == 2 and main == found[1] and len(symbols) == 1
        assert source[found[0]] != source[main]
        seen |= symbols
    assert seen == {"Aux_S", "Aux_P"}
    # The grammar does derive the other kinds, which the generator left out.
    rng = random.Random(0)
    trees = [grammar.sample(rng) for _ in range(300)]
    kinds = {(len(found), len({questions.leaves(t)[i][0] for i in found}))
             for t in trees for main, found in [questions.auxiliaries(t)] if main != found[0]}
    assert (2, 2) in kinds and any(n == 3 for n, _ in kinds)


def test_generation_is_deterministic_and_leaves_out_excluded_sentences(tiny):
    grammar = Grammar.read(str(tiny))
    first = questions.generate(grammar, 20, seed=1)
    assert questions.generate(grammar, 20, seed=1) == first
    assert questions.generate(grammar, 20, seed=2) != first
    excluded = {tuple(source[:-1]) for source, _ in first[:10]}
    again = questions.generate(grammar, 20, seed=1, exclude=excluded)
    assert not excluded & {tuple(source[:-1]) for source, _ in again}
    with pytest.raises(UserError, match="cannot draw 1000 distinct"):
        questions.generate(grammar, 1000, seed=1)


def generate(*flags):
    """The generator as a user runs it, in a new interpreter."""
    return subprocess.run([sys.executable, str(GENERATE), *map(str, flags)], capture_output=True, text=True)


def generated(*flags):
    """The generator's exit status, run in this process (its files are what is tested, not its process)."""
    return generate_questions.main([str(flag) for flag in flags])


def test_the_generator_writes_line_aligned_sets_without_shared_or_repeated_sentences(tiny, tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "question.gr").write_text(TINY_GRAMMAR)
    taken = "the newt who does sleep does sleep ."
    (shared / "question.gen-covered").write_text(f"{taken} quest\n")
    assert generated(f"--out={tmp_path / 'out'}", f"--data_dir={shared}", "--train=30", "--dev=5", "--test=5",
                     "--gen=5", "--seed=3") == 0
    seen = []
    for name, size in [("train", 30), ("dev", 5), ("test", 5), ("gen", 5)]:
        src = (tmp_path / "out" / f"{name}.src").read_text().splitlines()
        tgt = (tmp_path / "out" / f"{name}.tgt").read_text().splitlines()
        assert len(src) == len(tgt) == size
        seen += [line.rsplit(" ", 1)[0] for line in src]
    assert len(set(seen)) == len(seen) and taken not in seen
    again = generate(f"--out={tmp_path / 'again'}", f"--data_dir={shared}", "--train=30", "--dev=5", "--test=5",
                     "--gen=5", "--seed=3")  # in a new interpreter: the same files
    assert again.returncode == 0
    assert (tmp_path / "again" / "train.src").read_text() == (tmp_path / "out" / "train.src").read_text()


def test_a_bad_grammar_is_a_one_line_error_of_the_generator(tmp_path, capsys):
    (tmp_path / "bad.gr").write_text("1\tROOT\tS .\none\tS\tNP\n")
    assert generated(f"--out={tmp_path / 'out'}", f"--grammar={tmp_path / 'bad.gr'}", f"--data_dir={tmp_path}") == 1
    assert capsys.readouterr().err == f"error: {tmp_path / 'bad.gr'}:2: weight 'one' is not a number\n"


def test_a_bad_grammar_is_a_one_line_error_of_training_before_a_run_is_written(tmp_path, capsys):
    """nmt.py --grammar: a malformed rule names file and line, before the run's files are written."""
    (tmp_path / "bad.gr").write_text("1\tROOT\tS .\n1\tS\n")
    for name in ("train", "dev"):
        (tmp_path / f"{name}.src").write_text("the newt does sleep . quest\n")
        (tmp_path / f"{name}.tgt").write_text("does the newt sleep ?\n")
    files = [f"--{name}_set{n}={tmp_path / name}.{ext}" for name in ("train", "dev") for n, ext in ((1, "src"), (2, "tgt"))]
    status, out, err = cli_in_process(["--do_training", "--task=question_formation", f"--grammar={tmp_path / 'bad.gr'}",
                                       "--model=encdec", *files, f"--working_dir={tmp_path / 'wd'}"], capsys)
    assert status == 1 and out == ""
    assert err == f"error: {tmp_path / 'bad.gr'}:2: expected WEIGHT<TAB>LEFT<TAB>RIGHT, got 2 tab-separated fields\n"
    assert not (tmp_path / "wd" / "hparams.json").exists()


@pytest.mark.shared_data
def test_the_shared_grammar_gives_the_shared_dev_outputs():
    grammar = Grammar.read(str(QUESTIONS / "question.gr"))
    for line in (QUESTIONS / "question.dev").read_text().splitlines():
        source, target = (side.split() for side in line.split("\t"))
        sentence, task = questions.split_input(source, "dev")
        main, found = questions.auxiliaries(grammar.parse(sentence))
        assert questions.output(sentence, task, main) == target
        assert task == questions.DECL or main == found[0]  # docs/tasks.md: quest only where main is first


def task_of(grammar):
    return QuestionFormationTask(tiny_config(task="question_formation", grammar=str(grammar)))


def test_scores_count_whole_outputs_first_words_and_which_auxiliary_moved(tiny):
    sources = [s.split() + ["quest"] for s in ["the newt who does sleep doesn't sleep .",
                                               "the yak who doesn't sleep does see the newt .",
                                               "the yak who does sleep does sleep .",
                                               "the newt does sleep ."]]
    references = [s.split() for s in ["doesn't the newt who does sleep sleep ?",
                                      "does the yak who doesn't sleep see the newt ?",
                                      "does the yak who does sleep sleep ?", "does the newt sleep ?"]]
    hypotheses = [s.split() for s in ["doesn't the newt who does sleep sleep ?",  # move main
                                      "doesn't the yak who sleep does see the newt ?",  # move first
                                      "does the yak who does sleep does sleep ?",  # delete none, prepose (either)
                                      "does the newt ?"]]
    scores = task_of(tiny).score(sources, hypotheses, references, "tgt")
    assert scores["full_sentence_accuracy"] == 0.25 and scores["first_word_accuracy"] == 0.75
    assert scores["quest"]["sentences"] == 4 and "decl" not in scores
    assert scores["categorised"] == 3
    assert scores["categories"]["delete_main_prepose_main"] == pytest.approx(1 / 3)
    assert scores["categories"]["delete_first_prepose_first"] == pytest.approx(1 / 3)
    assert scores["categories"]["delete_none_prepose_main"] == pytest.approx(1 / 3)  # ties: the first listed
    assert sum(scores["categories"].values()) == pytest.approx(1)


def test_test_files_with_outputs_beside_them_or_in_them_and_covered_ones_without(tiny, tmp_path):
    task = task_of(tiny)
    (tmp_path / "t.src").write_text("the newt does sleep . quest\n")
    (tmp_path / "t.tgt").write_text("does the newt sleep ?\n")
    (tmp_path / "tabbed").write_text("the newt does sleep . decl\tthe newt does sleep .\n")
    (tmp_path / "covered").write_text("the newt who does sleep doesn't sleep . quest\n")
    assert task.read_test(str(tmp_path / "t.src"), None, "tgt")[1] == [["does", "the", "newt", "sleep", "?"]]
    assert task.read_test(str(tmp_path / "tabbed"), None, "tgt")[:2] == (
        [["the", "newt", "does", "sleep", ".", "decl"]], [["the", "newt", "does", "sleep", "."]])
    sources, references, _ = task.read_test(str(tmp_path / "covered"), None, "tgt")
    assert sources == ["the newt who does sleep doesn't sleep . quest".split()] and references is None
    (tmp_path / "mixed").write_text("the newt does sleep . decl\tthe newt does sleep .\nthe newt does sleep . quest\n")
    with pytest.raises(UserError, match="mixed:2: no TAB"):
        task.read_test(str(tmp_path / "mixed"), None, "tgt")
    (tmp_path / "notask").write_text("the newt does sleep .\n")
    with pytest.raises(UserError, match="notask:1: an input ends with the task word"):
        task.read_test(str(tmp_path / "notask"), None, "tgt")
    ungrammatical = "the newt sleep does . quest".split()
    with pytest.raises(UserError, match="the grammar does not derive"):
        task.score([ungrammatical], [ungrammatical], [ungrammatical], "tgt")
    with pytest.raises(UserError, match="needs --grammar"):
        QuestionFormationTask(tiny_config(task="question_formation")).grammar()


def test_testing_on_inputs_only_writes_input_tab_prediction_in_input_order_and_no_score(tiny, tmp_path):
    from rnnpb_nmt.data.vocabulary import Vocabulary
    grammar = Grammar.read(str(tiny))
    examples = questions.generate(grammar, 40, seed=1) + questions.generate(grammar, 10, seed=2, kind="gen")
    vocab = Vocabulary.build([s for s, _ in examples] + [t for _, t in examples])
    config = tiny_config(model="encdec", task="question_formation", grammar=str(tiny), beam_size=2)
    translator = translator_of(models()["encdec"](config, vocab, vocab))
    covered = tmp_path / "gen-covered"
    covered.write_text("".join(" ".join(s) + "\n" for s, _ in examples[40:]))
    stats = prediction.test(translator, QuestionFormationTask(config), str(covered), str(tmp_path), log=lambda _: None)
    lines = (tmp_path / prediction.TRANSLATIONS).read_text().splitlines()
    assert [line.split("\t")[0] for line in lines] == covered.read_text().splitlines()
    assert all(line.count("\t") == 1 for line in lines)
    written = json.loads((tmp_path / prediction.STATS).read_text())
    assert "full_sentence_accuracy" not in written and "categorised" not in stats  # withheld gold: scored outside


@pytest.mark.slow
def test_an_attention_model_trains_tests_and_answers_queries_through_the_command_line(tiny, tmp_path, capsys,
                                                                                    monkeypatch):
    data = tmp_path / "data"
    shared = tmp_path / "shared"
    shared.mkdir()
    assert generated(f"--out={data}", f"--grammar={tiny}", f"--data_dir={shared}", "--train=40", "--dev=8",
                     "--test=8", "--gen=8") == 0
    wd = tmp_path / "wd"
    status, _, err = cli_in_process([
        "--do_training", "--task=question_formation", f"--grammar={tiny}", "--model=encdec", "--cell=gru",
        "--attention=content", "--embedding_size=8", "--units=8", "--num_layers=1", "--batch_size=8",
        "--max_epochs=1", "--beam_size=2", f"--train_set1={data}/train.src", f"--train_set2={data}/train.tgt",
        f"--dev_set1={data}/dev.src", f"--dev_set2={data}/dev.tgt", f"--working_dir={wd}"], capsys)
    assert status == 0, err
    saved = json.loads((wd / "hparams.json").read_text())
    assert (saved["cell"], saved["attention"], saved["grammar"]) == ("gru", "content", str(tiny))
    covered = tmp_path / "gen-covered"
    covered.write_text((data / "gen.src").read_text())
    assert cli_in_process(["--do_testing", f"--test_set={covered}", f"--working_dir={wd}"], capsys)[0] == 0
    assert "full_sentence_accuracy" not in json.loads((wd / "testing_stats.json").read_text())
    # the generator's own gen set:
    assert cli_in_process(["--do_testing", f"--test_set={data}/gen.src", f"--working_dir={wd}"], capsys)[0] == 0
    assert json.loads((wd / "testing_stats.json").read_text())["categorised"] == 8
    lines = (wd / "test_trans.txt").read_text().splitlines()
    assert [line.split("\t")[0] for line in lines] == covered.read_text().splitlines()
    status, answer, _ = cli_in_process(["--query=-", f"--working_dir={wd}"], capsys,
                                       stdin=b"the newt does sleep . quest\n\n", monkeypatch=monkeypatch)
    assert status == 0 and answer.count("\n") == 2
