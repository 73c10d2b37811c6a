"""run_scripts/inflection_breakdown.py: its rows partition the examples and their accuracies add
up to the whole; a predictions file that is not the gold file's lines is a one-line error."""

import sys

import pytest


import inflection_breakdown as breakdown

GOLD = [("kitāb", ["pos=N", "num=PL"], "kutub"), ("muʿallim", ["pos=N", "num=PL"], "muʿallimūna"),
        ("sayyāra", ["pos=N", "num=PL"], "sayyārātun"), ("kataba", ["pos=V", "per=3"], "yaktubu"),
        ("kalb", ["pos=N", "num=SG"], "kalbun"), ("walad", ["pos=N", "num=PL"], "ʾawlād")]
PREDICTED = ["kutub", "muʿallimūna", "sayyārāt", "yaktubu", "kalbu", "walad"]


def run(monkeypatch, capsys, *args):
    """(exit code, stdout, stderr) of the script's main with these arguments."""
    monkeypatch.setattr(sys, "argv", ["inflection_breakdown.py", *args])
    try:
        breakdown.main()
        code = 0
    except SystemExit as stop:  # sys.exit(message) prints the message and exits 1
        code = stop.code if isinstance(stop.code, int) else 1
        if not isinstance(stop.code, int):
            print(stop.code, file=sys.stderr)
    out, err = capsys.readouterr()
    return code, out, err


def write(path, rows):
    path.write_text("".join("\t".join(row) + "\n" for row in rows), encoding="utf-8")
    return str(path)


def test_groups_partition_the_selection_and_their_accuracies_make_its_accuracy():
    rows = breakdown.breakdown(GOLD, [PREDICTED], by=["num"], where=[("pos", "N")],
                               ending=breakdown.Ending.of("(ūn|āt)(a|un)?"))
    named = {name: (count, accuracies[0]) for name, count, accuracies in rows}
    groups = [(count, accuracy) for name, (count, accuracy) in named.items() if name.startswith("num=")]
    selected, others, everything = named["pos=N"], named["not pos=N"], named["all"]
    assert sum(count for count, _ in groups) == selected[0] == 5 and others[0] == 1 and everything[0] == 6
    assert sum(c * a for c, a in groups) == pytest.approx(selected[0] * selected[1])
    assert selected[0] * selected[1] + others[0] * others[1] == pytest.approx(everything[0] * everything[1])
    # the sound plurals (an ending) and the broken ones, told apart by the gold form alone
    assert named["num=PL ending in (ūn|āt)(a|un)?"] == (2, 0.5)
    assert named["num=PL not ending in (ūn|āt)(a|un)?"] == (2, 0.5)
    assert named["num=SG not ending in (ūn|āt)(a|un)?"] == (1, 0.0)


def test_the_table_escapes_a_regex_bar_and_reads_unicode_files_byte_exact(tmp_path, monkeypatch, capsys):
    gold = write(tmp_path / "dev", [(lemma, ",".join(tags), form) for lemma, tags, form in GOLD])
    (tmp_path / "vote").mkdir()
    predicted = write(tmp_path / "vote" / "test_trans_dev.txt",
                      [(lemma, ",".join(tags), form) for (lemma, tags, _), form in zip(GOLD, PREDICTED)])
    code, out, err = run(monkeypatch, capsys, gold, predicted, "--where", "pos=N", "--ending", "ūna|ātun")
    assert code == 0, err
    assert "| examples | count | vote |" in out
    assert "| ending in ūna\\|ātun | 2 | 50.00 |" in out and "| all | 6 | 50.00 |" in out


@pytest.mark.parametrize("change, message", [
    (lambda rows: rows[:-1], "5 lines, the gold file has 6"),
    (lambda rows: rows[:2] + [("sayyāra", "pos=N", "sayyārāt")] + rows[3:],
     ":3: sayyāra<TAB>pos=N<TAB>sayyārāt, where the gold file has sayyāra<TAB>pos=N,num=PL<TAB>FORM"),
    (lambda rows: rows[:1] + [rows[1][:2]] + rows[2:], ":2: muʿallim<TAB>pos=N,num=PL, where the gold file has"),
])
def test_predictions_that_are_not_the_gold_files_lines_are_one_line_errors(tmp_path, monkeypatch, capsys, change,
                                                                            message):
    gold = write(tmp_path / "dev", [(lemma, ",".join(tags), form) for lemma, tags, form in GOLD])
    rows = [(lemma, ",".join(tags), form) for (lemma, tags, _), form in zip(GOLD, PREDICTED)]
    predicted = write(tmp_path / "predicted", change(rows))
    code, out, err = run(monkeypatch, capsys, gold, predicted)
    assert code == 1 and message in err and len(err.splitlines()) == 1 and out == ""


@pytest.mark.parametrize("flags, message", [
    (["--ending", "(ūn"], "--ending (ūn: not a regular expression"),
    (["--ending", "(?i)ĀT"], "--ending (?i)ĀT: not a regular expression"),  # flags must lead: not inside (?:...)
    (["--ending", ""], "--ending: an empty pattern"),
    (["--where", "num=PL", "pos"], "--where pos: each tag must be NAME=VALUE"),
    (["--by", "pos=N"], "--by pos=N: a feature name (pos), not a tag (pos=N)"),
])
def test_a_bad_pattern_or_tag_is_a_usage_error(tmp_path, monkeypatch, capsys, flags, message):
    gold = write(tmp_path / "dev", [(lemma, ",".join(tags), form) for lemma, tags, form in GOLD])
    code, out, err = run(monkeypatch, capsys, gold, gold, *flags)
    assert code == 2 and message in err and out == ""


def test_an_empty_predicted_form_is_read_and_scored_wrong(tmp_path, monkeypatch, capsys):
    gold = write(tmp_path / "dev", [(lemma, ",".join(tags), form) for lemma, tags, form in GOLD])
    predicted = write(tmp_path / "predicted", [(lemma, ",".join(tags), form) for (lemma, tags, form) in GOLD[:-1]]
                      + [(GOLD[-1][0], ",".join(GOLD[-1][1]), "")])
    code, out, err = run(monkeypatch, capsys, gold, predicted)
    assert code == 0, err
    assert f"| all | 6 | {100 * 5 / 6:.2f} |" in out


def test_groups_show_even_when_one_side_is_empty_and_a_where_that_selects_nothing_is_an_error(tmp_path, monkeypatch,
                                                                                              capsys):
    gold = write(tmp_path / "dev", [(lemma, ",".join(tags), form) for lemma, tags, form in GOLD])
    code, out, err = run(monkeypatch, capsys, gold, gold, "--ending", "xyz")
    assert code == 0 and "| not ending in xyz | 6 | 100.00 |" in out, err
    code, out, err = run(monkeypatch, capsys, gold, gold, "--by", "pos", "--where", "num=PL", "--ending", "ūna")
    assert "| pos=N ending in ūna | 1 | 100.00 |" in out and "| pos=N not ending in ūna | 3 | 100.00 |" in out
    code, out, err = run(monkeypatch, capsys, gold, gold, "--where", "pos=n")
    assert code == 1 and err == f"inflection_breakdown.py: --where pos=n: no example of {gold} has all these tags\n"


def test_decomposed_predictions_are_wrong_and_crlf_or_bom_files_read_like_plain_ones(tmp_path, monkeypatch, capsys):
    """Forms are compared code point by code point, as the task scores them: a decomposed ū
    (u + combining macron) is not the gold's ū."""
    gold = write(tmp_path / "dev", [(lemma, ",".join(tags), form) for lemma, tags, form in GOLD])
    rows = [(lemma, ",".join(tags), form) for lemma, tags, form in GOLD]
    rows[1] = rows[1][:2] + ("muʿallimu\u0304na",)
    text = "\ufeff" + "".join("\t".join(row) + "\r\n" for row in rows)
    (tmp_path / "predicted").write_text(text, encoding="utf-8", newline="")
    code, out, err = run(monkeypatch, capsys, gold, str(tmp_path / "predicted"), "--by", "pos")
    assert code == 0, err
    assert "| pos=N | 5 | 80.00 |" in out and "| pos=V | 1 | 100.00 |" in out and f"| all | 6 | {500 / 6:.2f} |" in out


def test_columns_are_named_by_working_directory_or_file_and_by_path_where_those_repeat():
    assert breakdown.column_names(["r/ensemble/test_trans_dev.txt", "r/seed1/test_trans_dev.txt", "p/de.predictions"]) \
        == ["ensemble", "seed1", "de.predictions"]
    paths = ["a/seed1/test_trans_dev.txt", "b/seed1/test_trans_dev.txt"]
    assert breakdown.column_names(paths) == paths
