"""run_scripts/run_question_formation.py: which restart is the median, what a cell runs and records
(with stand-ins for training and testing), how results_table.py shows it beside the paper's
medians, its command line's refusals, and (slow) two restarts of a tiny cell trained resumably
through the command line."""

import json
import os
import sys
from pathlib import Path

import pytest

from rnnpb_nmt import cli, config
from rnnpb_nmt.tasks.question_formation import questions
from rnnpb_nmt.tasks.question_formation.grammar import Grammar

from helpers import ROOT, TINY_GRAMMAR, ScriptsInProcess, models

import budgeted_runs
import question_experiments
import results_table
import run_question_formation as runner


QUESTION_HEADER_LINE = results_table.question_header(scored=True)[0]


def restart(seed, gen_first_word, dev_full=0.5):
    return {"seed": seed, "gen": {"first_word_accuracy": gen_first_word}, "dev": {"full_sentence_accuracy": dev_full}}


def test_the_median_restart_is_the_middle_one_by_generalization_first_word_accuracy():
    assert runner.median_restart([restart(1, 0.2), restart(2, 0.9), restart(3, 0.5)])["seed"] == 3
    # an even number: the lower of the two middle ones; the figures are the paper's medians of each
    four = [restart(1, 0.625, 0.5), restart(2, 0.125, 0.25), restart(3, 0.875, 1.0), restart(4, 0.375, 0.75)]
    assert runner.medians(four) == {"dev_full_sentence_accuracy": 0.625, "gen_first_word_accuracy": 0.5, "restart": 4}
    # equal first-word accuracies: ordered by dev full-sentence accuracy, then by seed
    assert runner.median_restart([restart(1, 0.5, 0.9), restart(2, 0.5, 0.2), restart(3, 0.5, 0.6)])["seed"] == 3
    assert runner.median_restart([restart(2, 0.5), restart(1, 0.5)])["seed"] == 1


def shared_sets(folder, size=6):
    """A shared folder of the tiny grammar: question.gr, question.dev (INPUT<TAB>OUTPUT) and the two
    covered files (inputs only) of ``size`` lines each, drawn as the real ones are; the covered inputs."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "question.gr").write_text(TINY_GRAMMAR)
    grammar = Grammar.read(str(folder / "question.gr"))
    dev, test, gen = (questions.generate(grammar, size, seed=f"shared-{i}", kind=kind)
                      for i, kind in enumerate(("train", "train", "gen")))
    (folder / "question.dev").write_text("".join(f"{' '.join(s)}\t{' '.join(t)}\n" for s, t in dev))
    covered = {}
    for name, examples in (("test", test), ("gen", gen)):
        covered[name] = [" ".join(s) for s, _ in examples]
        (folder / f"question.{name}-covered").write_text("".join(line + "\n" for line in covered[name]))
    return covered


def flag(command, name):
    return next(a.split("=", 1)[1] for a in command if a.startswith(f"--{name}="))


class FakeRuns:
    """Stand-ins for training (writes training_stats.json; seed 2 runs out of time) and for a
    --do_testing run (each prediction is the seed; first-word accuracy on gen from ``gen``)."""

    def __init__(self, gen):
        self.gen, self.trained, self.tested = gen, [], []

    def train_within_budget(self, command, working_dir, budget, log):
        self.trained.append((command, budget))
        os.makedirs(working_dir, exist_ok=True)
        Path(working_dir, "training_stats.json").write_text(json.dumps(
            {"epochs": [{"seconds": 60}] * 2, "best_epoch": 2, "best_dev_perplexity": 1.2, "total_seconds": 120}))
        return "time budget" if working_dir.endswith("seed2") else "finished"

    def run_test(self, command, working_dir, name):
        test_set, seed = flag(command, "test_set"), int(os.path.basename(working_dir)[4:])
        self.tested.append((os.path.basename(test_set), seed, name))
        inputs = [line.split("\t")[0] for line in Path(test_set).read_text().splitlines()]
        Path(working_dir, f"test_trans_{name}.txt").write_text("".join(f"{i}\tseed{seed}\n" for i in inputs))
        return {"test_set": test_set, "sentences": len(inputs), "testing_time": 1.0,
                "full_sentence_accuracy": seed / 10, "first_word_accuracy": self.gen[seed]}


def fake_cell(tmp_path, monkeypatch, gen, **stopping):
    covered = shared_sets(tmp_path / "shared")
    runs = FakeRuns(gen)
    monkeypatch.setattr(budgeted_runs, "subprocess", ScriptsInProcess())  # the data generator: no new process
    monkeypatch.setattr(runner, "train_within_budget", runs.train_within_budget)
    monkeypatch.setattr(runner, "run_test", runs.run_test)
    monkeypatch.setattr(runner, "machine", lambda: "M")
    monkeypatch.setattr(runner, "GENERATE", "--seed=1 --train=20 --dev=4 --test=4 --gen=4".split())
    cell = runner.run_cell("gru_location", len(gen), str(tmp_path / "shared"), str(tmp_path / "work"), 600, print,
                           results=str(tmp_path / "results"), **stopping)
    return cell, runs, covered


def test_a_cell_trains_and_tests_each_restart_and_keeps_the_median_restarts_predictions(tmp_path, monkeypatch):
    cell, runs, covered = fake_cell(tmp_path, monkeypatch, {1: 0.3, 2: 0.7, 3: 0.5})
    data = tmp_path / "work" / "question_formation" / "data"
    assert all((data / f"{name}.{side}").is_file() for name in ("train", "dev", "gen") for side in ("src", "tgt"))
    assert [(flag(c, "seed"), flag(c, "working_dir"), budget) for c, budget in runs.trained] == [
        (str(n), str(tmp_path / "work" / "question_formation" / "gru_location.authors.layers" / f"seed{n}"), 600)
        for n in (1, 2, 3)]  # the default: the main table's protocol, the authors' stopping and the layers recipe
    command = runs.trained[0][0]
    assert {"--cell=gru", "--attention=location", "--units=256", "--embedding_size=256", "--dropout=0.1",
            "--task=question_formation", "--early_stopping_metric=score", "--early_stopping_steps=3",
            "--epoch_examples=5000", "--decoder_input=combined", "--embedding_init=normal"} <= set(command)
    assert (flag(command, "grammar"), flag(command, "train_set1"), flag(command, "dev_set2")) == (
        str(tmp_path / "shared" / "question.gr"), str(data / "train.src"), str(data / "dev.tgt"))
    assert runs.tested == [(file, seed, name) for seed in (1, 2, 3) for file, name in (
        ("question.dev", "dev"), ("gen.src", "gen"), ("question.test-covered", "test_covered"),
        ("question.gen-covered", "gen_covered"))]
    assert cell["median"] == {"dev_full_sentence_accuracy": 0.2, "gen_first_word_accuracy": 0.5, "restart": 3}
    assert [(r["seed"], r["stopped"], r["dev"]["full_sentence_accuracy"], r["gen"]["first_word_accuracy"])
            for r in cell["restarts"]] == [(1, "finished", 0.1, 0.3), (2, "time budget", 0.2, 0.7),
                                           (3, "finished", 0.3, 0.5)]
    assert cell["restarts"][0]["dev"]["test_seconds"] == 1.0 and "test_set" not in cell["restarts"][0]["dev"]
    for name in ("test", "gen"):
        kept = tmp_path / "results" / "question_formation" / f"gru_location.authors.layers.{name}.tsv"
        assert kept.read_text().splitlines() == [f"{line}\tseed3" for line in covered[name]]
        assert cell["predictions"][name] == os.path.relpath(kept, ROOT)
    assert cell["restarts"][1]["test_covered"]["sentences"] == len(covered["test"])
    assert "--data_dir=" in cell["generate_command"] and cell["generate_command"].split()[0] == runner.shown([sys.executable])


def test_every_restarts_predictions_are_kept_under_the_runs_name_when_asked_and_only_the_medians_by_default(
        tmp_path, monkeypatch):
    default, _, _ = fake_cell(tmp_path / "default", monkeypatch, {1: 0.3, 2: 0.7, 3: 0.5})
    folder = tmp_path / "default" / "results" / "question_formation"
    assert not any("predictions" in r for r in default["restarts"]) and not (folder / "gru_location.authors.layers").exists()
    assert sorted(os.listdir(folder)) == ["gru_location.authors.layers.gen.tsv", "gru_location.authors.layers.test.tsv"]
    cell, _, covered = fake_cell(tmp_path, monkeypatch, {1: 0.3, 2: 0.7, 3: 0.5}, every_restart=True)
    folder = tmp_path / "results" / "question_formation"
    for restart in cell["restarts"]:
        seed = f"seed{restart['seed']}"
        for name in ("test", "gen"):
            kept = folder / "gru_location.authors.layers" / f"{seed}.{name}.tsv"
            assert kept.read_text().splitlines() == [f"{line}\t{seed}" for line in covered[name]]
            assert restart["predictions"][name] == os.path.relpath(kept, ROOT)
    # the median restart's files as without the option
    assert cell["predictions"] == {name: os.path.relpath(folder / f"gru_location.authors.layers.{name}.tsv", ROOT)
                                   for name in ("test", "gen")}
    assert (folder / "gru_location.authors.layers.test.tsv").read_text().splitlines()[0].endswith("\tseed3")


@pytest.mark.parametrize("argv, every_restart", [([], False), (["--every_restart"], True)])
def test_the_command_line_keeps_every_restarts_predictions_only_when_asked(argv, every_restart, tmp_path, monkeypatch):
    shared_sets(tmp_path / "shared")
    runs = []
    monkeypatch.setattr(sys, "argv", ["run_question_formation.py", "gru_none", "--data", str(tmp_path / "shared"), *argv])
    monkeypatch.setattr(runner, "run_cell", lambda *a, **k: runs.append(k) or {})
    monkeypatch.setattr(runner, "record", lambda cell, note: None)
    runner.main()
    assert [k["every_restart"] for k in runs] == [every_restart]


def test_restarts_trained_two_at_a_time_are_recorded_as_one_at_a_time(tmp_path, monkeypatch):
    one, runs_one, _ = fake_cell(tmp_path, monkeypatch, {1: 0.3, 2: 0.7, 3: 0.5})
    two, runs_two, _ = fake_cell(tmp_path, monkeypatch, {1: 0.3, 2: 0.7, 3: 0.5}, jobs=2)
    assert two == one and two["median"]["restart"] == 3
    assert sorted(runs_two.trained) == sorted(runs_one.trained) and len(runs_two.trained) == 3


def test_a_recorded_cell_replaces_its_earlier_one_and_sits_beside_the_papers_medians(tmp_path, monkeypatch):
    cell, _, _ = fake_cell(tmp_path, monkeypatch, {1: 0.3, 2: 0.7})
    for recorded, note in ((cell, "old"), (dict(cell, cell="srn_none"), ""), (cell, "Why.")):
        runner.record(recorded, note, results=str(tmp_path))
    cells = json.loads((tmp_path / "question_formation.json").read_text())
    assert [(c["cell"], c["note"]) for c in cells] == [("srn_none", ""), ("gru_location", "Why.")]
    lines = results_table.question_formation_table(cells[1:], {})
    row = next(line for line in lines if line.startswith("| gru_location |"))
    assert [c.strip() for c in row.strip("|").split("|")][1:] == [
        "2", "**0.150** (0.100–0.200)", "**0.500** (0.300–0.700)", "–", "0.770", "0.780", "2.0 (2.0)", "2 (2), 2 (2)*",
        "seed1"]  # the medians over the restarts and their ranges
    assert next(line for line in lines if line.startswith("| srn_none |")) == (
        "| srn_none | not run yet | – | – | – | 0.000 | 0.490 | – | – | – |")
    text = "\n".join(lines)
    assert cell["restarts"][1]["train_command"] in text and cell["restarts"][0]["gen_covered"]["test_command"] in text
    assert "Why." in text and "gru_location.authors.layers.test.tsv" in text


def test_the_perplexity_criterion_trains_records_and_shows_its_cells_apart(tmp_path, monkeypatch):
    by_score, _, _ = fake_cell(tmp_path / "score", monkeypatch, {1: 0.1}, stopping="score", recipe="adam")
    cell, runs, covered = fake_cell(tmp_path, monkeypatch, {1: 0.3}, stopping="perplexity", recipe="adam")
    command = runs.trained[0][0]
    assert "--early_stopping_steps=2" in command and not any(a.startswith("--early_stopping_metric") for a in command)
    assert flag(command, "working_dir") == str(tmp_path / "work" / "question_formation" / "gru_location" / "seed1")
    kept = tmp_path / "results" / "question_formation" / "gru_location.test.tsv"
    assert kept.read_text().splitlines() == [f"{line}\tseed1" for line in covered["test"]]
    assert cell["stopping"] == "perplexity" and by_score["stopping"] == "score"
    old = {key: value for key, value in cell.items() if key != "stopping"}  # recorded before the choice existed
    for recorded, note in ((old, ""), (by_score, ""), (cell, "again")):
        runner.record(recorded, note, results=str(tmp_path))
    cells = json.loads((tmp_path / "question_formation.json").read_text())
    assert [(c["cell"], c.get("stopping"), c["note"]) for c in cells] == [
        ("gru_location", "score", ""), ("gru_location", "perplexity", "again")]
    lines = results_table.question_formation_table(cells[::-1], {})
    rows = [line for line in lines if line.startswith("| gru_location |")]
    # the main table's (no cell of its protocol: "not run yet"), then the others in PROTOCOLS' order
    assert [row.split("|")[4].strip() for row in rows] == ["–", "**0.100**", "**0.300**"]
    text = "\n".join(lines)
    assert text.index("`gru_location (--stopping score --recipe adam)`") < text.index(
        "`gru_location (--stopping perplexity --recipe adam)`")


def test_the_authors_criterion_measures_every_5000_pairs_and_shows_its_cells_apart(tmp_path, monkeypatch):
    """McCoy et al.'s code: dev accuracy every 1000 batches of 5, 3 measurements' patience, no stop
    before 150 000 pairs, the last of tied measurements kept; its --max_epochs replaces the cells' own."""
    cell, runs, _ = fake_cell(tmp_path, monkeypatch, {1: 0.4}, stopping="authors", recipe="adam")
    command = runs.trained[0][0]
    assert {"--early_stopping_metric=score", "--early_stopping_steps=3", "--early_stopping_ties=last",
            "--epoch_examples=5000", "--min_epochs=30", "--max_epochs=200"} <= set(command)
    assert [a for a in command if a.startswith("--max_epochs=")] == ["--max_epochs=200"]
    assert flag(command, "working_dir") == str(tmp_path / "work" / "question_formation" / "gru_location.authors" / "seed1")
    runner.record(cell, "", results=str(tmp_path))
    cells = json.loads((tmp_path / "question_formation.json").read_text())
    lines = results_table.question_formation_table(cells, {})
    note = results_table.protocol_paragraph(cells, ("authors", "adam"))
    assert note.startswith(question_experiments.STOPPING_NOTES["authors"])
    assert lines[lines.index(note) + 4].startswith("| gru_location | 1 | **0.100** | **0.400** |")
    assert (tmp_path / "results" / "question_formation" / "gru_location.authors.gen.tsv").is_file()


def test_the_authors_recipe_trains_as_their_code_and_its_cells_are_recorded_and_shown_apart(tmp_path, monkeypatch):
    """--recipe sgd: plain SGD on batches of 5 (0.005 on our batch-mean loss = their 0.001 on a summed
    one), no clipping, teacher forcing on half the batches, replacing TRAINING's flags of those names;
    a cell of that recipe replaces only its own protocol's record and has its own table."""
    adam, _, _ = fake_cell(tmp_path / "adam", monkeypatch, {1: 0.2}, stopping="authors", recipe="adam")
    cell, runs, _ = fake_cell(tmp_path, monkeypatch, {1: 0.6}, stopping="authors", recipe="sgd")
    command = runs.trained[0][0]
    assert {"--optimizer=sgd", "--batch_size=5", "--learning_rate=0.005", "--gradient_clip=1e9",
            "--teacher_forcing=0.5", "--epoch_examples=5000", "--min_epochs=30"} <= set(command)
    assert [a for a in command if a.startswith(("--batch_size=", "--learning_rate="))] == [
        "--batch_size=5", "--learning_rate=0.005"]
    assert flag(command, "working_dir") == str(
        tmp_path / "work" / "question_formation" / "gru_location.authors.sgd" / "seed1")
    assert (tmp_path / "results" / "question_formation" / "gru_location.authors.sgd.test.tsv").is_file()
    for recorded, note in ((adam, ""), (cell, "old"), (cell, "again")):
        runner.record(recorded, note, results=str(tmp_path))
    cells = json.loads((tmp_path / "question_formation.json").read_text())
    assert [(c["stopping"], c["recipe"], c["note"]) for c in cells] == [("authors", "adam", ""), ("authors", "sgd", "again")]
    lines = results_table.question_formation_table(cells, {})
    note = results_table.protocol_paragraph(cells, ("authors", "sgd"))
    assert note.startswith(question_experiments.STOPPING_NOTES["authors"]) and "batches of 5" in note
    assert lines[lines.index(note) + 4].startswith("| gru_location | 1 | **0.100** | **0.600** |")
    assert "`gru_location (--stopping authors --recipe sgd)`" in "\n".join(lines)


@pytest.mark.parametrize("recipe, decoder_input, embedding_init, clip", [
    ("layers", "combined", "normal", None), ("combined", "combined", None, None), ("n01", None, "normal", None),
    ("noclip", "combined", "normal", 1e9)])
def test_the_layers_recipes_train_ours_with_the_authors_decoder_input_or_embeddings(
        recipe, decoder_input, embedding_init, clip, tmp_path, monkeypatch):
    """... and noclip: the layers recipe without gradient clipping (--gradient_clip=1e9, in range)."""
    _, runs, _ = fake_cell(tmp_path, monkeypatch, {1: 0.6}, stopping="authors", recipe=recipe)
    command = runs.trained[0][0]
    assert "--batch_size=128" in command and "--optimizer=sgd" not in command
    assert flag(command, "working_dir").endswith(os.path.join(f"gru_location.authors.{recipe}", "seed1"))
    given = vars(cli.build_parser(models()).parse_args(command[3:]))  # nmt.py's own parser takes every flag
    assert (given["decoder_input"], given["embedding_init"], given["cell"]) == (decoder_input, embedding_init, "gru")
    assert given["gradient_clip"] == clip
    config.check_ranges(given)


def test_runs_keep_their_names_and_records_their_protocol_whichever_protocol_is_the_main_one(monkeypatch):
    """Making another protocol the main table's must not rename a run's directory or prediction files
    (a resumed restart would start again elsewhere) nor move old records to another protocol."""
    for main in (("score", "adam"), ("authors", "layers")):
        monkeypatch.setattr(question_experiments, "MAIN_STOPPING", main[0])
        monkeypatch.setattr(question_experiments, "MAIN_RECIPE", main[1])
        assert [question_experiments.run_name("gru_location", *p) for p in (
            ("perplexity", "adam"), ("authors", "adam"), ("authors", "layers"))] == [
            "gru_location", "gru_location.authors", "gru_location.authors.layers"]
        assert question_experiments.protocol_of({"cell": "gru_location"}) == ("perplexity", "adam")


def test_each_table_says_how_its_cells_were_trained_and_their_budget_and_the_main_protocols_comes_first(
        tmp_path, monkeypatch):
    """The paragraph above a table follows its protocol and its records' budgets, so that making
    another protocol the main one (MAIN_PROTOCOL) changes what the page says of the first table."""
    score, _, _ = fake_cell(tmp_path / "score", monkeypatch, {1: 0.2}, stopping="score", recipe="adam")
    layers, _, _ = fake_cell(tmp_path / "layers", monkeypatch, {1: 0.6}, stopping="authors", recipe="layers")
    cells = [dict(score, train_seconds_budget=900, note=""), dict(layers, train_seconds_budget=1800, note=""),
             dict(layers, cell="srn_none", train_seconds_budget=900, note="")]
    assert results_table.protocol_paragraph(cells, ("score", "adam")) == (
        question_experiments.STOPPING_NOTES["score"] + " A restart trains at most 15 minutes.")
    assert results_table.protocol_paragraph(cells, ("authors", "layers")) == (
        f"{results_table.protocol_note('authors', 'layers')} A restart trains at most 15 or 30 minutes.")
    for main in (("score", "adam"), ("authors", "layers")):
        monkeypatch.setattr(results_table, "MAIN_PROTOCOL", main)
        monkeypatch.setattr(results_table, "PROTOCOLS", [main, *(p for p in results_table.PROTOCOLS if p != main)])
        lines = results_table.question_formation_table(cells, {})
        first = lines.index(QUESTION_HEADER_LINE)
        assert lines[first - 2] == results_table.protocol_paragraph(cells, main)
        assert lines[first + 2].startswith("| srn_none |") and ("not run yet" in lines[first + 2]) == (main[0] == "score")


def test_a_restart_without_a_finished_epoch_stops_the_run_naming_its_directory(tmp_path, monkeypatch):
    monkeypatch.setattr(FakeRuns, "train_within_budget", lambda self, command, working_dir, budget, log: "time budget")
    with pytest.raises(SystemExit, match=r"seed1: no epoch finished within 600 s of training \(give more"):
        fake_cell(tmp_path, monkeypatch, {1: 0.5})
    assert not (tmp_path / "results").exists()


def test_every_unit_and_attention_is_a_cell_with_the_papers_medians():
    assert set(question_experiments.CELLS) == set(question_experiments.PAPER) == {
        f"{u}_{a}" for u in ("srn", "gru", "lstm") for a in ("none", "location", "content")}
    flags = question_experiments.training_flags("lstm_content", 4)
    assert {"--model=encdec", "--cell=lstm", "--attention=content", "--seed=4", "--beam_size=1",
            "--early_stopping_metric=score", "--early_stopping_steps=3", "--decoder_input=combined"} <= set(flags)


@pytest.mark.parametrize("argv, message", [
    (["sru_none"], "argument CELL: invalid choice: 'sru_none'"),
    (["gru_none", "--restarts", "0"], "argument --restarts: 0: must be a whole number above 0"),
    (["gru_none", "--stopping", "bleu"], "argument --stopping: invalid choice: 'bleu'"),
    (["gru_none", "--recipe", "rmsprop"], "argument --recipe: invalid choice: 'rmsprop'"),
    (["gru_none", "--jobs", "0"], "argument --jobs: 0: from 1 to"),
    (["gru_none", "--data", "{missing}"], "--data={missing}: no question.gr, question.dev, question.test-covered"),
])
def test_unknown_cells_no_restarts_and_a_folder_without_the_shared_sets_are_usage_errors(
        argv, message, tmp_path, monkeypatch, capsys):
    missing = str(tmp_path / "none")
    monkeypatch.setattr(sys, "argv", ["run_question_formation.py", *(a.format(missing=missing) for a in argv)])
    with pytest.raises(SystemExit) as exit:
        runner.main()
    assert exit.value.code == 2 and message.format(missing=missing) in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


@pytest.mark.long  # trains through the command line's entry point: two tiny restarts, 8 test runs
def test_two_tiny_restarts_train_resumably_and_a_finished_one_is_not_trained_again(tmp_path, monkeypatch):
    covered = shared_sets(tmp_path / "shared")
    # The runner's commands in this process: its restarts, skips and kept tests are the subject, not how a
    # process is started (test_budgeted_runs.py); a new process each would cost most of the test's time.
    monkeypatch.setattr(budgeted_runs, "subprocess", ScriptsInProcess())
    monkeypatch.setattr(runner, "GENERATE", "--seed=1 --train=48 --dev=8 --test=8 --gen=8".split())
    monkeypatch.setattr(question_experiments, "TRAINING", (
        "--do_training --task=question_formation --embedding_size=8 --units=8 --num_layers=1 --batch_size=16 "
        "--beam_size=1 --max_epochs=1").split())
    logged = []
    run = lambda restarts: runner.run_cell("srn_location", restarts, str(tmp_path / "shared"),
                                           str(tmp_path / "work"), 300, logged.append, results=str(tmp_path / "res"),
                                           stopping="score", recipe="adam")  # epochs of the whole set: tiny
    run(1)
    first = tmp_path / "work" / "question_formation" / "srn_location.score" / "seed1"
    stamps = [(first / name).stat().st_mtime_ns for name in ("training_stats.json", "testing_stats_dev.json")]
    cell = run(2)
    assert [flag(m.split(), "seed") for m in logged if "--do_training" in m] == ["1", "2"]  # seed 1 trained once
    # ... and tested once: its kept tests are of its weights as they are
    assert [(first / name).stat().st_mtime_ns for name in ("training_stats.json", "testing_stats_dev.json")] == stamps
    assert [(r["seed"], r["stopped"], r["epochs"]) for r in cell["restarts"]] == [(1, "finished", 1), (2, "finished", 1)]
    # Of two restarts the median is the lower by generalization first-word accuracy, then dev full-sentence
    # accuracy, then seed (the order test_the_median_restart_is_the_middle_one_... fixes).
    lower = min(cell["restarts"], key=lambda r: (r["gen"]["first_word_accuracy"], r["dev"]["full_sentence_accuracy"],
                                                 r["seed"]))
    assert cell["median"]["restart"] == lower["seed"]
    for r in cell["restarts"]:
        assert 0 <= r["dev"]["full_sentence_accuracy"] <= 1 and r["gen"]["sentences"] == 8
    runner.record(cell, "tiny", results=str(tmp_path / "res"))
    assert json.loads((tmp_path / "res" / "question_formation.json").read_text())[0]["median"] == cell["median"]
    for name in ("test", "gen"):
        lines = (tmp_path / "res" / "question_formation" / f"srn_location.score.{name}.tsv").read_text().splitlines()
        assert [line.split("\t")[0] for line in lines] == covered[name]


def test_the_their_code_recipe_gives_nmt_py_the_authors_optimiser_layers_init_cut_and_batch_order(tmp_path, monkeypatch):
    _, runs, _ = fake_cell(tmp_path, monkeypatch, {1: 0.6}, stopping="authors", recipe="their_code")
    command = runs.trained[0][0]
    given = vars(cli.build_parser(models()).parse_args(command[3:]))  # nmt.py's own parser takes every flag
    assert (given["optimizer"], given["batch_size"], given["learning_rate"], given["teacher_forcing"]) == (
        "sgd", 5, 0.005, 0.5)
    assert (given["decoder_input"], given["embedding_init"], given["weight_init"], given["free_running_cut"],
            given["batch_order"], given["dropout_style"]) == ("combined", "normal", "pytorch", True, "fixed",
                                                               "decoder_words")
    settings = {k: v for k, v in given.items() if v is not None and k in config.names(flag=True)}
    config.check_applicable(settings, config.Config.from_flat(settings))  # no flag refused or ignored
    assert flag(command, "working_dir").endswith(os.path.join("gru_location.authors.their_code", "seed1"))


@pytest.mark.parametrize("cell", ["gru_location", "gru_content", "srn_none"])
def test_the_their_code_recipe_is_a_configuration_nmt_accepts_with_any_attention(cell):
    """Location attention's flags of the recipe (their 20 positions, the softmax over zero padding) go to
    the location cells only; the other cells' models would refuse them."""
    flags = question_experiments.training_flags(cell, 1, "authors", "their_code")
    given = vars(cli.build_parser(models()).parse_args([*flags, "--working_dir=w"]))
    settings = {k: v for k, v in given.items() if v is not None and k in config.names(flag=True)}
    config.check_applicable(settings, config.Config.from_flat(settings))
    location = cell.endswith("location")
    assert (given["attention_padding"], given["attention_positions"]) == (("zeros", 21) if location else (None, None))
