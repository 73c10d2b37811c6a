"""Working directories written by an earlier version of the code still resume, test and answer --query.

``tests/fixtures/workdir_*_v1`` were trained by commit 78903fa (before the model base class was
split into Trainer, Translator, tasks and typed configuration) with the command below and
``--max_epochs=2``; ``workdirs_v1.json`` holds what that commit gave for them (its ``_about`` says how
the translations and --query answers, added later, were checked against it).
"""

import json
import shutil

import pytest

from helpers import ROOT, cli_in_process

pytestmark = pytest.mark.slow

FIXTURES = ROOT / "tests" / "fixtures"
CORPUS = "tests/fixtures/tiny_corpus"  # relative to the repository, as hparams.json names it
COMMON = [f"--train_set1={CORPUS}/train.en", f"--train_set2={CORPUS}/train.de", f"--dev_set1={CORPUS}/dev.en",
          f"--dev_set2={CORPUS}/dev.de", "--embedding_size=8", "--units=16", "--num_layers=1", "--batch_size=16",
          "--beam_size=2", "--seed=5"]
FLAGS = {"rnnpb": ["--model=rnnpbnmt", "--num_PB=4", "--max_recog_epochs=3", "--dropout=0.1", "--p_reset=0.1"],
         "encdec": ["--model=encdec", "--reverse_source"]}
EXPECTED = json.loads((FIXTURES / "workdirs_v1.json").read_text())["runs"]
QUERIES = (ROOT / CORPUS / "test.en").read_text().splitlines() + [""]  # an empty line: an empty answer


@pytest.mark.parametrize("name", sorted(FLAGS))
def test_an_old_working_dir_tests_queries_and_resumes_as_before(name, tmp_path, capsys, monkeypatch):
    wd = tmp_path / name
    shutil.copytree(FIXTURES / f"workdir_{name}_v1", wd)
    monkeypatch.chdir(ROOT)  # CORPUS is relative to the repository
    assert cli_in_process(["--do_testing", f"--test_set={CORPUS}/test.en", f"--working_dir={wd}"], capsys)[0] == 0
    tested = json.loads((wd / "testing_stats.json").read_text())
    assert tested["sentences"] == 8 and tested["bleu"] == pytest.approx(EXPECTED[name]["test_bleu"], abs=1e-6)
    assert (wd / "test_trans.txt").read_text().splitlines() == EXPECTED[name]["test_translations"]
    status, answer, _ = cli_in_process(["--query=-", "--scores", f"--working_dir={wd}"], capsys,
                                       stdin="".join(f"{line}\n" for line in QUERIES).encode(), monkeypatch=monkeypatch)
    answers, expected = [line.split(" ||| ") for line in answer.splitlines()], EXPECTED[name]["query_answers"]
    assert status == 0 and [(int(n), text) for n, text, _ in answers] == [(n, text) for n, (text, _) in enumerate(expected)]
    # Each sentence's own score (the encdec run translates every one to nothing), printed to 4 decimals: the
    # last digit may round either way.
    assert [float(score) for *_, score in answers] == pytest.approx([score for _, score in expected], abs=1.5e-4)

    # through the command line's entry point in this process (no TensorFlow start-up), as in test_resume_models.py
    status, resumed, _ = cli_in_process(["--do_training", *COMMON, *FLAGS[name], "--max_epochs=3", f"--working_dir={wd}"],
                                        capsys)
    assert status == 0 and "resuming" in resumed and "after epoch 2" in resumed
    epoch = json.loads((wd / "training_stats.json").read_text())["epochs"][-1]
    assert epoch["epoch"] == 3
    assert epoch["train_perplexity"] == pytest.approx(EXPECTED[name]["epoch3_train_perplexity"], rel=1e-5)
    assert epoch["dev_perplexity"] == pytest.approx(EXPECTED[name]["epoch3_dev_perplexity"], rel=1e-5)
    saved = json.loads((wd / "hparams.json").read_text())
    assert saved["task"] == "translation" and saved["model"] == FLAGS[name][0].split("=")[1]
