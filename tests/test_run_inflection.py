"""run_scripts/run_inflection.py's bookkeeping, on a fake data layout that the test writes, with
training and testing replaced by stand-ins that write what nmt.py would: which commands run,
which configuration's predictions are kept and where, what is recorded, and how
results_table.py shows it beside the paper's figures."""

import json
import os
import sys
from pathlib import Path

import pytest

from helpers import ROOT

import budgeted_runs
import inflection_experiments
import results_table
from inflection_breakdown import predicted_forms
import run_inflection

COVERED = ["gehen\tpos=V,tense=PST", "Haus\tpos=N,num=PL", "spielen\tpos=V,per=3"]


def fake_layout(root, collection, name):
    """The set's train, dev and covered test files under ``root``, three lines each."""
    full = [f"{line}\tx" for line in COVERED]
    for path, lines in zip(inflection_experiments.files(collection, name, str(root)), (full, full, COVERED)):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def flag(command, name):
    return next(a.split("=", 1)[1] for a in command if a.startswith(f"--{name}="))


class FakeRuns:
    """Stand-ins for training (writes training_stats.json; the second member runs out of time)
    and for a --do_testing run (writes test_trans_NAME.txt, the working directory's name as
    each prediction, or on dev its forms in ``forms``; an accuracy per working directory). They
    keep the commands."""

    def __init__(self, accuracies, forms=None):
        self.accuracies, self.forms, self.trained, self.tested = accuracies, forms or {}, [], []

    def train_within_budget(self, command, working_dir, budget, log):
        self.trained.append((command, working_dir, budget))
        os.makedirs(working_dir, exist_ok=True)
        Path(working_dir, "training_stats.json").write_text(json.dumps(
            {"epochs": [{"seconds": 10}] * 3, "best_epoch": 2, "best_dev_perplexity": 1.5, "total_seconds": 30}))
        return "time budget" if working_dir.endswith("seed2") else "finished"

    def run_test(self, command, working_dir, name):
        self.tested.append((command, working_dir, name))
        os.makedirs(working_dir, exist_ok=True)
        inputs = [line.split("\t")[:2] for line in Path(flag(command, "test_set")).read_text("utf-8").splitlines()]
        configuration = os.path.basename(working_dir)
        forms = self.forms.get(configuration) if name == "dev" else None
        Path(working_dir, f"test_trans_{name}.txt").write_text("".join(
            "\t".join([*fields, forms[k] if forms else configuration]) + "\n" for k, fields in enumerate(inputs)),
            encoding="utf-8")
        return {"accuracy": self.accuracies[configuration], "mean_levenshtein": 0.25, "testing_time": 2.0,
                "sentences": len(inputs)}


@pytest.fixture
def fake(monkeypatch):
    def make(accuracies, forms=None):
        runs = FakeRuns(accuracies, forms)
        monkeypatch.setattr(run_inflection, "train_within_budget", runs.train_within_budget)
        monkeypatch.setattr(run_inflection, "run_test", runs.run_test)
        monkeypatch.setattr(run_inflection, "machine", lambda: "M")
        return runs
    return make


def test_a_set_trains_its_members_votes_on_dev_and_keeps_the_votes_test_predictions(tmp_path, fake):
    fake_layout(tmp_path / "data", "sigmorphon2016", "german")
    runs = fake({"seed1": 0.5, "seed2": 0.75, "seed3": 0.5, "ensemble": 0.8})
    cell = run_inflection.run_set("sigmorphon2016", "german", str(tmp_path / "data"), str(tmp_path / "work"), 3, 600,
                                  print, results=str(tmp_path / "results"))
    train, dev, covered = inflection_experiments.files("sigmorphon2016", "german", str(tmp_path / "data"))
    members = [str(tmp_path / "work" / "inflection" / "sigmorphon2016" / "german" / f"seed{n}") for n in (1, 2, 3)]
    trained = [(flag(c, "seed"), flag(c, "train_set1"), flag(c, "dev_set1"), flag(c, "working_dir"),
                flag(c, "embedding_size"), budget) for c, _, budget in runs.trained]
    assert trained == [(str(n), train, dev, d, "300", 600) for n, d in zip((1, 2, 3), members)]
    assert all("--model=hard_attention" in c and "--task=inflection" in c for c, _, _ in runs.trained)
    vote_dir = os.path.join(os.path.dirname(members[0]), "ensemble")
    assert [(flag(c, "test_set"), d, name) for c, d, name in runs.tested] == [
        *[(dev, d, "dev") for d in members], (dev, vote_dir, "dev"), (covered, vote_dir, "test")]
    assert flag(runs.tested[3][0], "ensemble") == flag(runs.tested[4][0], "ensemble") == ",".join(members)
    kept = tmp_path / "results" / "inflection" / "sigmorphon2016" / "german-task1-test-predictions"
    assert kept.read_text(encoding="utf-8").splitlines() == [f"{line}\tensemble" for line in COVERED]
    assert [(m["seed"], m["stopped"], m["dev"]["accuracy"]) for m in cell["members"]] == [
        (1, "finished", 0.5), (2, "time budget", 0.75), (3, "finished", 0.5)]
    assert cell["ensemble"]["accuracy"] == 0.8 and "--ensemble=" in cell["ensemble"]["test_command"]
    # the vote's testing of the covered file, its paths relative to where the runner ran
    vote_command = " ".join([os.path.relpath(sys.executable), "-u", os.path.relpath(ROOT / "nmt.py"), "--do_testing",
                             "--device=cpu", f"--ensemble={','.join(map(os.path.relpath, members))}",
                             f"--test_set={os.path.relpath(covered)}", f"--working_dir={os.path.relpath(vote_dir)}"])
    assert cell["predictions"] == {"file": os.path.relpath(kept, ROOT), "configuration": "ensemble", "lines": 3,
                                   "test_seconds": 2.0, "test_command": vote_command}
    assert cell["members"][0]["train_command"].endswith(f"--working_dir={os.path.relpath(members[0])}")


# A hand-made set: two dev pairs are training pairs (one with its tags in another order), three are not.
NOVEL_TRAIN = ["gehen\tpos=V,tense=PST\tging", "Haus\tpos=N,num=PL\tHäuser", "spielen\tpos=V,per=3\tspielt"]
NOVEL_DEV = ["gehen\tpos=V,tense=PST\tging", "Haus\tnum=PL,pos=N\tHäuser", "gehen\tpos=V,per=3\tgeht",
             "spielen\tpos=V,tense=PST\tspielte", "Haus\tpos=N,num=SG\tHaus"]


def test_the_dev_accuracy_on_the_pairs_not_in_training_is_recorded_for_each_member_and_the_vote(tmp_path, fake):
    fake_layout(tmp_path / "data", "sigmorphon2016", "navajo")
    train, dev, _ = inflection_experiments.files("sigmorphon2016", "navajo", str(tmp_path / "data"))
    Path(train).write_text("".join(line + "\n" for line in NOVEL_TRAIN), encoding="utf-8")
    Path(dev).write_text("".join(line + "\n" for line in NOVEL_DEV), encoding="utf-8")
    forms = {"seed1": ["ging", "Häuser", "geht", "spielt", "Haus"],  # novel: 2 of 3 right
             "seed2": ["gang", "Haus", "geh", "spielte", "Hause"],  # novel: 1 of 3 (the training pairs do not count)
             "ensemble": ["ging", "Häuser", "geht", "spielte", "Haus"]}
    fake({"seed1": 0.6, "seed2": 0.2, "ensemble": 1.0}, forms)
    cell = run_inflection.run_set("sigmorphon2016", "navajo", str(tmp_path / "data"), str(tmp_path / "work"), 2, 600,
                                  print, results=str(tmp_path / "results"))
    assert cell["dev_novel_pairs"] == 3
    assert [m["dev"]["novel_accuracy"] for m in cell["members"]] == [2 / 3, 1 / 3] and cell["ensemble"]["novel_accuracy"] == 1
    for scored, configuration in zip([*(m["dev"] for m in cell["members"]), cell["ensemble"]], forms):
        kept = Path(scored["predictions"])  # each member's dev predictions, and the vote's, kept beside it
        assert kept.parent.name == configuration and kept.name == "test_trans_dev.txt"
        assert [line.split("\t")[2] for line in kept.read_text(encoding="utf-8").splitlines()] == forms[configuration]
    row = next(line for line in results_table.inflection_table([dict(cell, note="")], {}) if line.startswith("| navajo | hard"))
    assert "| **100.00** (2) | 100.00 (3) |" in row
    gold, novel = run_inflection.novel_pairs(train, dev)
    assert novel == [2, 3, 4] and [form for _, _, form in gold] == [line.split("\t")[2] for line in NOVEL_DEV]


def test_members_trained_two_at_a_time_are_recorded_and_voted_as_one_at_a_time(tmp_path, fake):
    fake_layout(tmp_path / "data", "sigmorphon2016", "german")
    accuracies = {"seed1": 0.5, "seed2": 0.75, "seed3": 0.5, "ensemble": 0.8}
    cells, trained = [], []
    for jobs in (1, 2):
        runs = fake(accuracies)
        cells.append(run_inflection.run_set("sigmorphon2016", "german", str(tmp_path / "data"), str(tmp_path / "work"),
                                            3, 600, print, results=str(tmp_path / "results"), jobs=jobs))
        trained.append(sorted(runs.trained))
    assert cells[1] == cells[0] and trained[1] == trained[0] and len(trained[1]) == 3
    assert [member["seed"] for member in cells[1]["members"]] == [1, 2, 3]


@pytest.mark.parametrize("flag, value, message", [
    ("--jobs", "cores + 1", "argument --jobs: {value}: from 1 to {cores}, the cores this process may use"),
    ("--train_seconds", "0", "argument --train_seconds: {value}: must be a whole number above 0"),
    ("--train_seconds", "-60", "argument --train_seconds: {value}: must be a whole number above 0"),
    ("--train_seconds", "ten", "argument --train_seconds: {value}: must be a whole number above 0")])
def test_more_jobs_than_cores_or_a_budget_not_above_0_is_a_usage_error_before_anything_trains(
        flag, value, message, monkeypatch, capsys):
    cores = len(budgeted_runs.cores())
    value = str(cores + 1) if value == "cores + 1" else value
    monkeypatch.setattr(sys, "argv", ["run_inflection.py", "celex", flag, value])
    monkeypatch.setattr(run_inflection, "run_set", lambda *a, **k: pytest.fail("trained"))
    with pytest.raises(SystemExit) as stop:
        run_inflection.main()
    assert stop.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1].endswith(message.format(value=value, cores=cores))


def test_the_vote_gives_the_predictions_even_where_a_member_is_better_on_dev_and_one_member_has_no_vote(
        tmp_path, fake):
    fake_layout(tmp_path / "data", "celex", "fold3")
    runs = fake({"seed1": 0.5, "seed2": 0.9, "ensemble": 0.8})
    cell = run_inflection.run_set("celex", "fold3", str(tmp_path / "data"), str(tmp_path / "work"), 2, 600, print,
                                  results=str(tmp_path / "results"))
    assert cell["predictions"]["configuration"] == "ensemble" and flag(runs.trained[0][0], "embedding_size") == "100"
    assert "--ensemble=" in " ".join(runs.tested[-1][0])
    kept = tmp_path / "results" / "inflection" / "celex" / "fold3.test-predictions"
    assert kept.read_text(encoding="utf-8").splitlines() == [f"{line}\tensemble" for line in COVERED]
    runs = fake({"seed1": 0.5})
    cell = run_inflection.run_set("celex", "fold3", str(tmp_path / "data"), str(tmp_path / "work"), 1, 600, print,
                                  results=str(tmp_path / "results"))
    assert cell["ensemble"] is None and cell["predictions"]["configuration"] == "seed1"
    assert [name for _, _, name in runs.tested] == ["dev", "test"]
    assert kept.read_text(encoding="utf-8").splitlines() == [f"{line}\tseed1" for line in COVERED]


def test_the_corpus_aligner_trains_into_folders_of_its_own_on_dev_only_and_keeps_the_predicting_cell(tmp_path, fake):
    fake_layout(tmp_path / "data", "sigmorphon2016", "arabic")
    work, results = str(tmp_path / "work"), str(tmp_path / "results")
    runs = fake({"seed1": 0.5, "seed2": 0.75, "ensemble": 0.8})
    full = run_inflection.run_set("sigmorphon2016", "arabic", str(tmp_path / "data"), work, 2, 600, print,
                                  results=results)
    kept = tmp_path / "results" / "inflection" / "sigmorphon2016" / "arabic-task1-test-predictions"
    before = kept.read_text(encoding="utf-8")
    runs = fake({"seed1": 0.625, "seed2": 0.75, "ensemble": 0.875})
    dev = run_inflection.run_set("sigmorphon2016", "arabic", str(tmp_path / "data"), work, 2, 600, print,
                                 results=results, aligner="corpus", dev_only=True)
    assert all("--aligner=corpus" in c and os.path.relpath(d, work).startswith("inflection_corpus")
               for c, d, _ in runs.trained)
    assert [name for _, _, name in runs.tested] == ["dev", "dev", "dev"]  # no test set read, none written
    assert dev["predictions"] is None and kept.read_text(encoding="utf-8") == before
    assert "--aligner" not in " ".join(full["members"][0]["train_command"])
    for cell in (full, dev):
        run_inflection.record(cell, "N", results=results)
    recorded = json.loads((tmp_path / "results" / "inflection.json").read_text())
    assert [(c["aligner"], c["predictions"] is None) for c in recorded] == [("levenshtein", False), ("corpus", True)]
    text = "\n".join(results_table.inflection_table(recorded, {}))
    assert "| arabic | hard | 50.00 | **80.00** (2) |" in text  # the predicting cell's figures in the main table
    assert "| sigmorphon2016 | arabic | 50.00 | 80.00 (2) | 62.50 | 87.50 (2) |" in text
    assert ("Averages: single models over the 1 sets that have each: levenshtein 50.00, corpus 62.50; "
            "votes over the 1 sets that have each: levenshtein 80.00, corpus 87.50.") in text
    assert "dev only, no test predictions" in text
    single = run_inflection.run_set("sigmorphon2016", "arabic", str(tmp_path / "data"), work, 1, 600, print,
                                    results=results, aligner="corpus", dev_only=True)  # one member: no vote
    run_inflection.record(single, "N", results=results)
    recorded = json.loads((tmp_path / "results" / "inflection.json").read_text())
    text = "\n".join(results_table.inflection_table(recorded, {}))
    assert "| sigmorphon2016 | arabic | 50.00 | 80.00 (2) | 62.50 | – |" in text
    assert ("Averages: single models over the 1 sets that have each: levenshtein 50.00, corpus 62.50; "
            "votes: no set has one of each yet.") in text
    fake({"seed1": 0.625, "seed2": 0.75, "ensemble": 0.875})
    voted = run_inflection.run_set("sigmorphon2016", "arabic", str(tmp_path / "data"), work, 2, 600, print,
                                   results=results, aligner="corpus")  # the vote, with test predictions
    run_inflection.record(voted, "N", results=results)
    recorded = json.loads((tmp_path / "results" / "inflection.json").read_text())
    row = next(line for line in results_table.inflection_table(recorded, {}) if line.startswith("| arabic | hard |"))
    assert row.startswith("| arabic | hard | 62.50 | **87.50** (2) |")  # the predicting cell is now the corpus one's
    assert row.endswith("| ensemble, corpus oracle |")  # and the row says which oracle its predictions learned from
    text = "\n".join(results_table.inflection_table(recorded, {}))
    # The Levenshtein cell's file now holds the corpus vote's predictions: its paragraph no longer claims it.
    paragraphs = {line.split("): ")[0]: line.split("): ")[1] for line in text.splitlines()
                  if "arabic-task1-test-predictions`" in line}
    levenshtein = next(p for k, p in paragraphs.items() if "levenshtein oracle" in k)
    corpus = next(p for k, p in paragraphs.items() if "corpus oracle" in k)
    assert levenshtein.startswith("its 3 test predictions were in `") and levenshtein.endswith(
        "arabic-task1-test-predictions`, since replaced by those of the ensemble (hard_attention, corpus oracle, "
        + voted["date"] + "). N")
    assert corpus.startswith("3 test predictions in `")
    assert text.count("test predictions in `") == 1  # the corpus vote's, the file's present contents


def test_the_corpus_aligner_with_early_insertions_trains_into_folders_of_its_own_and_gets_columns_of_its_own(
        tmp_path, fake):
    fake_layout(tmp_path / "data", "celex", "fold0")
    work, cells = str(tmp_path / "work"), []
    for aligner, accuracies in (("corpus", (0.5, 0.75, 0.8)), ("corpus_early", (0.625, 0.75, 0.875))):
        runs = fake(dict(zip(("seed1", "seed2", "ensemble"), accuracies)))
        cells.append(dict(run_inflection.run_set("celex", "fold0", str(tmp_path / "data"), work, 2, 600, print,
                                                 results=str(tmp_path / "results"), aligner=aligner, dev_only=True),
                          note=""))
        assert all(f"--aligner={aligner}" in c and os.path.relpath(d, work).split(os.sep)[0] == f"inflection_{aligner}"
                   for c, d, _ in runs.trained)
    text = "\n".join(results_table.inflection_table(cells, {}))
    assert ("| collection | set | corpus single | corpus vote (models) | corpus_early single | corpus_early vote (models) |"
            in text)
    assert "| celex | fold0 | 50.00 | 80.00 (2) | 62.50 | 87.50 (2) |" in text  # no column of the aligner not run
    assert "votes over the 1 sets that have each: corpus 80.00, corpus_early 87.50." in text


def test_a_recipe_trains_by_its_flags_into_folders_of_its_own_on_dev_only_and_is_compared_with_the_protocols(
        tmp_path, fake):
    """Issue 94: the paper's stopping (best dev accuracy, up to 100 epochs) against ours, on dev: its
    flags follow the protocol's, so they win; its runs never touch the protocol's folders or cells."""
    fake_layout(tmp_path / "data", "celex", "fold1")
    work, cells = str(tmp_path / "work"), []
    for recipe, accuracies in (("ours", (0.5, 0.75, 0.8)), ("paper_stopping", (0.625, 0.75, 0.875))):
        runs = fake(dict(zip(("seed1", "seed2", "ensemble"), accuracies)))
        cells.append(dict(run_inflection.run_set("celex", "fold1", str(tmp_path / "data"), work, 2, 600, print,
                                                 results=str(tmp_path / "results"), aligner="corpus", dev_only=True,
                                                 recipe=recipe), note=""))
        folder = "inflection_corpus" + ("_paper_stopping" if recipe == "paper_stopping" else "")
        assert all(os.path.relpath(d, work).split(os.sep)[0] == folder for _, d, _ in runs.trained)
        command = runs.trained[0][0]
        given = {a.split("=", 1)[0]: a.split("=", 1)[1] for a in command if "=" in a}  # the last of each flag wins
        stopping = tuple(given.get(f"--{name}") for name in ("early_stopping_metric", "early_stopping_steps", "max_epochs"))
        assert stopping == (("score", "20", "100") if recipe == "paper_stopping" else (None, "5", None))
    assert [run_inflection.cell_key(c)[3:] for c in cells] == [("corpus", "ours", True), ("corpus", "paper_stopping", True)]
    text = "\n".join(results_table.inflection_table(cells, {}))
    assert "| celex | fold1 | 50.00 | 80.00 (2) | 62.50 | 87.50 (2) |" in text
    assert "| corpus single | corpus vote (models) | corpus + paper_stopping single |" in text
    assert "votes over the 1 sets that have each: corpus 80.00, corpus + paper_stopping 87.50." in text
    assert "(hard_attention, corpus oracle, paper_stopping recipe, " in text


@pytest.mark.parametrize("recipe", ["per_example", "adadelta", "tied_feedback", "end_of_word"])
def test_the_later_recipes_each_add_one_change_to_the_papers_stopping(recipe, tmp_path, fake):
    """Issue 94's next dev tests each change one thing against the paper's stopping: its flags come
    after the protocol's and the paper's stopping, and its runs go to a folder of their own."""
    fake_layout(tmp_path / "data", "celex", "fold1")
    work = str(tmp_path / "work")
    runs = fake({"seed1": 0.5})
    run_inflection.run_set("celex", "fold1", str(tmp_path / "data"), work, 1, 600, print,
                           results=str(tmp_path / "results"), aligner="corpus", dev_only=True, recipe=recipe)
    (command, directory, _), = runs.trained
    assert os.path.relpath(directory, work).split(os.sep)[0] == f"inflection_corpus_{recipe}"
    paper = inflection_experiments.training_flags("celex", 1, aligner="corpus", recipe="paper_stopping")
    ours = inflection_experiments.training_flags("celex", 1, aligner="corpus", recipe=recipe)
    added = {"per_example": ["--batch_size=1"], "tied_feedback": ["--tie_feedback"], "end_of_word": ["--end_of_word"],
             "adadelta": ["--batch_size=1", "--optimizer=adadelta", "--learning_rate=1"]}[recipe]
    assert ours == paper + added and command[command.index(ours[0]):][:len(ours)] == ours


@pytest.mark.parametrize("argv", [["--recipe", "paper_stopping"], ["--recipe", "paper_stopping", "--model", "soft",
                                                                    "--dev_only"]])
def test_a_recipe_other_than_the_protocols_without_dev_only_or_for_the_soft_model_is_a_usage_error(
        argv, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["run_inflection.py", "celex", *argv])
    monkeypatch.setattr(run_inflection, "run_set", lambda *a, **k: pytest.fail("trained"))
    with pytest.raises(SystemExit) as stop:
        run_inflection.main()
    assert stop.value.code == 2
    assert "--recipe=paper_stopping: the hard model only, and with --dev_only" in capsys.readouterr().err.splitlines()[-1]


def test_an_aligner_for_the_soft_model_is_a_usage_error(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["run_inflection.py", "sigmorphon2016", "--model", "soft", "--aligner", "corpus"])
    monkeypatch.setattr(run_inflection, "run_set", lambda *a, **k: pytest.fail("trained"))
    with pytest.raises(SystemExit) as stop:
        run_inflection.main()
    assert stop.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1].endswith(
        "--aligner=corpus: only the hard model reads an oracle (--model=hard)")


@pytest.mark.parametrize("argv, model, aligner", [
    ([], "hard", "corpus"), (["--aligner", "levenshtein"], "hard", "levenshtein"), (["--model", "soft"], "soft", "levenshtein"),
    (["--aligner", "corpus_early"], "hard", "corpus_early")])
def test_the_command_lines_defaults_are_the_one_protocol(argv, model, aligner, monkeypatch):
    """Issue 46's protocol without flags: the hard model on the corpus aligner's oracle (chosen on dev),
    5 members, 40 minutes each; the soft model reads no oracle (recorded under the aligner of no flags)."""
    runs = []
    monkeypatch.setattr(sys, "argv", ["run_inflection.py", "celex", "--sets", "fold0", *argv])
    monkeypatch.setattr(run_inflection, "run_set", lambda *a, **k: runs.append((a, k)) or {})
    monkeypatch.setattr(run_inflection, "record", lambda cell, note: None)
    run_inflection.main()
    [(given, named)] = runs
    assert given[:2] + given[4:6] == ("celex", "fold0", 5, 2400)
    assert (named["model"], named["aligner"], named["dev_only"], named["recipe"]) == (model, aligner, False, "ours")
    assert inflection_experiments.training_flags("celex", 1, model, aligner).count("--aligner=corpus") == (
        aligner == "corpus")


def test_recording_a_set_replaces_its_earlier_cell_and_keeps_the_others(tmp_path):
    cell = {"collection": "celex", "set": "fold0", "model": "hard_attention", "predictions": {}, "value": 1}
    other = dict(cell, set="fold1")
    for recorded in (cell, other, dict(cell, value=2)):
        run_inflection.record(recorded, "N", results=str(tmp_path))
    assert json.loads((tmp_path / "inflection.json").read_text()) == [dict(other, note="N"),
                                                                      dict(cell, value=2, note="N")]


def test_every_set_has_its_three_files_and_a_predictions_name_of_its_own():
    names = set()
    for collection, spec in inflection_experiments.COLLECTIONS.items():
        assert len(spec["sets"]) == {"sigmorphon2016": 10, "celex": 5, "wiktionary": 3}[collection]
        for name in spec["sets"]:
            train, dev, covered = inflection_experiments.files(collection, name, "D")
            assert covered.endswith("test-covered") and train.endswith("train") and dev.endswith("dev")
            names.add(inflection_experiments.predictions_name(os.path.basename(covered)))
    assert len(names) == 18 and not any("covered" in n for n in names)


def test_a_recorded_set_sits_beside_the_papers_figures_and_the_others_say_not_run_yet(tmp_path, fake):
    fake_layout(tmp_path / "data", "sigmorphon2016", "german")
    fake({"seed1": 0.5, "seed2": 0.75, "ensemble": 0.9})
    cell = dict(run_inflection.run_set("sigmorphon2016", "german", str(tmp_path / "data"), str(tmp_path / "work"), 2,
                                       600, print, results=str(tmp_path / "results")), note="Why.")
    lines = results_table.inflection_table([cell], {})
    row = next(line for line in lines if line.startswith("| german | hard |"))
    assert [c.strip() for c in row.strip("|").split("|")][2:] == [
        "50.00", "**90.00** (2)", "– (0)", "–", "96.58", "0.250", "3 (2), 3 (2)*", "30, 30", "ensemble, levenshtein oracle"]
    assert next(line for line in lines if line.startswith("| german | soft |")) == (
        "| german | soft | not run yet | – | – | – | 96.51 | – | – | – | – |")
    assert "not run yet" in next(line for line in lines if line.startswith("| russian | hard |"))
    assert "| average | hard | | 90.00 (1 of 10 sets) | |" in "\n".join(lines)
    assert "| average | soft | | – | |" in "\n".join(lines)
    assert "Paper's averages: hard 95.61, soft 96.34, MED 95.56." in "\n".join(lines)
    text = "\n".join(lines)
    assert cell["members"][1]["train_command"] in text and cell["predictions"]["test_command"] in text and "Why." in text


def test_a_set_of_one_model_shows_no_vote_and_the_single_models_edit_distance(tmp_path, fake):
    fake_layout(tmp_path / "data", "sigmorphon2016", "german")
    fake({"seed1": 0.5})
    cell = dict(run_inflection.run_set("sigmorphon2016", "german", str(tmp_path / "data"), str(tmp_path / "work"), 1,
                                       600, print, results=str(tmp_path / "results")), note="")
    assert cell["ensemble"] is None
    row = next(line for line in results_table.inflection_table([cell], {}) if line.startswith("| german | hard |"))
    assert [c.strip() for c in row.strip("|").split("|")][2:8] == ["50.00", "– (1)", "– (0)", "–", "96.58", "0.250"]


def test_a_soft_set_trains_the_soft_baseline_into_folders_of_its_own_and_sits_beside_the_hard_one(tmp_path, fake):
    fake_layout(tmp_path / "data", "sigmorphon2016", "navajo")
    runs = fake({"seed1": 0.5, "seed2": 0.75, "ensemble": 0.8})
    hard = run_inflection.run_set("sigmorphon2016", "navajo", str(tmp_path / "data"), str(tmp_path / "work"), 2, 600,
                                  print, results=str(tmp_path / "results"))
    soft = run_inflection.run_set("sigmorphon2016", "navajo", str(tmp_path / "data"), str(tmp_path / "work"), 2, 600,
                                  print, results=str(tmp_path / "results"), model="soft")
    hard_commands, soft_commands = runs.trained[:2], runs.trained[2:]
    assert all("--model=hard_attention" in c for c, _, _ in hard_commands)
    for command, working_dir, _ in soft_commands:
        assert {"--model=encdec", "--bidirectional", "--attention=content", "--attention_style=luong",
                "--inflection_target=form", "--embedding_size=300", "--units=100", "--num_layers=2"} <= set(command)
        assert "--model=hard_attention" not in command and "--feature_size=100" not in command
        assert working_dir.startswith(str(tmp_path / "work" / "inflection_soft" / "sigmorphon2016" / "navajo"))
    kept = tmp_path / "results" / "inflection_soft" / "sigmorphon2016" / "navajo-task1-test-predictions"
    assert soft["predictions"]["file"] == os.path.relpath(kept, ROOT) and kept.is_file()
    assert (hard["model"], soft["model"]) == ("hard_attention", "soft_attention")
    for cell in (hard, soft):
        run_inflection.record(dict(cell, date="D"), "N", results=str(tmp_path))
    recorded = json.loads((tmp_path / "inflection.json").read_text())
    assert [c["model"] for c in recorded] == ["hard_attention", "soft_attention"]
    lines = results_table.inflection_table(recorded, {})
    rows = [line for line in lines if line.startswith("| navajo |")]
    assert [row.split("|")[2].strip() for row in rows] == ["hard", "soft"]
    assert [row.split("|")[7].strip() for row in rows] == ["93.01", "95.41"]  # the paper's hard and soft
    assert all("**80.00** (2)" in row for row in rows)
    assert [row.split("|")[-2].strip() for row in rows] == ["ensemble, levenshtein oracle", "ensemble"]  # soft: none
    runs = [line for line in lines if line.startswith("`sigmorphon2016` `navajo`")]
    assert [run.split(",")[:2] for run in runs] == [["`sigmorphon2016` `navajo` (hard_attention", " levenshtein oracle"],
                                                   ["`sigmorphon2016` `navajo` (soft_attention", " D"]]


def test_a_predictions_file_that_does_not_match_dev_is_one_line_naming_it(tmp_path, monkeypatch, capsys):
    predictions = tmp_path / "test_trans_dev.txt"
    predictions.write_text("walk\tV;PST\twalked\n", encoding="utf-8")
    gold = [("walk", ("V", "PST"), "walked"), ("talk", ("V", "PST"), "talked")]
    monkeypatch.setattr(sys, "argv", ["run_inflection.py", "celex", "--sets", "fold0"])
    monkeypatch.setattr(run_inflection, "run_set", lambda *a, **k: predicted_forms(gold, str(predictions)))
    monkeypatch.setattr(run_inflection, "record", lambda cell, note: pytest.fail("recorded"))
    with pytest.raises(SystemExit) as stop:
        run_inflection.main()
    assert stop.value.code == 2
    assert capsys.readouterr().err.splitlines() == [
        f"run_inflection.py: error: {predictions}: 1 lines, the gold file has 2"]
