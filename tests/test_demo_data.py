"""The demo corpus from the installed package: ``rnnpb-nmt demo-data`` (``rnnpb_nmt.demo_data``)."""

import sys

from helpers import cli_in_process

from rnnpb_nmt import demo_data


def lines(path):
    return path.read_text(encoding="utf-8").splitlines()


def test_demo_data_writes_disjoint_splits_of_the_generator(tmp_path, capsys):
    status, out, err = cli_in_process(["demo-data", f"--out={tmp_path}", "--train=30", "--dev=5", "--test=4"], capsys)
    assert (status, err) == (0, "") and out == f"wrote 30/5/4 sentence pairs to {tmp_path}\n"
    splits = demo_data.generate(30, 5, 4)
    for name, pairs in splits.items():
        assert lines(tmp_path / f"{name}.en") == [en for en, _ in pairs]
        assert lines(tmp_path / f"{name}.de") == [de for _, de in pairs]
    assert not set(lines(tmp_path / "train.en")) & set(lines(tmp_path / "test.en") + lines(tmp_path / "dev.en"))


def test_raw_demo_data_is_untokenized_and_without_sacremoses_a_one_line_error(tmp_path, capsys, monkeypatch):
    assert cli_in_process(["demo-data", f"--out={tmp_path}", "--train=10", "--dev=2", "--test=2", "--raw"], capsys)[0] == 0
    tokenized = [en for en, _ in demo_data.generate(10, 2, 2)["train"]]
    assert lines(tmp_path / "train.en") == [line.replace(" .", ".").replace(" ,", ",") for line in tokenized]
    monkeypatch.setitem(sys.modules, "sacremoses", None)  # as where it is not installed
    status, out, err = cli_in_process(["demo-data", f"--out={tmp_path / 'new'}", "--raw"], capsys)
    assert (status, out) == (1, "") and err == "error: --raw needs sacremoses (pip install sacremoses, or pip install . " \
                                              "for the whole package)\n"
    assert not (tmp_path / "new").exists()


def test_demo_data_refuses_an_empty_split(capsys):
    status, _, err = cli_in_process(["demo-data", "--out=x", "--dev=0"], capsys)
    assert status == 2 and err == "error: --dev=0: must be at least 1\n"
