"""The Tatoeba/Anki preprocessing on a fixture the test writes itself."""

import collections
import subprocess
import sys

import pytest

from data import prepare_tatoeba
from rnnpb_nmt.data.dataset import read_sentences

from helpers import ROOT

ATTRIBUTION = "CC-BY 2.0 (France) Attribution: tatoeba.org #1 (a) & #2 (b)"
RAW = [
    ("I haven't seen \"Tom\".", "Ich habe „Tom“ nicht gesehen."),
    ("Go.", "Geh."), ("Go.", "Geh."), ("Go.", "Geht."), ("Hi.", "Hallo!"), ("Run!", "Lauf!"),
    ("I'm here.", "Ich bin hier."), ("Tom is here.", "Tom ist hier."), ("Tom ran.", "Tom ist gelaufen."),
    ("I ran.", "Ich bin gelaufen."), ("Tom is tall.", "Tom ist groß."), ("I'm tall.", "Ich bin groß."),
    ("Tom sings.", "Tom singt."), ("I sing.", "Ich singe."), ("Tom is old.", "Tom ist alt."),
    ("I'm old.", "Ich bin alt."), ("The xylophone is quaint.", "Das Xylophon ist wunderlich."),
    ("Tom is ill.", "Tom ist krank."), ("I'm ill.", "Ich bin krank."), ("Tom is sad.", "Tom ist traurig."),
]


@pytest.fixture
def raw_file(tmp_path):
    path = tmp_path / "deu.txt"
    path.write_text("".join(f"{e}\t{g}\t{ATTRIBUTION}\r\n" for e, g in RAW), encoding="utf-8")
    return path


def lines(path):
    return [" ".join(s) for s in read_sentences(path)]


def test_tokenization_dedup_split_and_easy_selection(raw_file, tmp_path):
    out = tmp_path / "out"
    assert prepare_tatoeba.prepare(str(raw_file), str(out), [10], num_dev=2, num_test=3) == {"easy10": 10}
    folder = out / "easy" / "easy10"
    en = {name: lines(folder / f"{name}.en") for name in ("train", "dev", "test")}
    de = {name: lines(folder / f"{name}.de") for name in ("train", "dev", "test")}
    assert [len(en[n]) for n in ("train", "dev", "test")] == [10, 2, 3]
    assert all(len(en[n]) == len(de[n]) for n in en)
    pairs = [p for n in en for p in zip(en[n], de[n])]
    assert len(pairs) == len(set(pairs))  # the duplicated Go./Geh. pair is kept once
    # The rare-word sentence ranks last and is left out; the rest are the 15 easiest by German words.
    assert "Das Xylophon ist wunderlich ." not in {g for _, g in pairs}
    everything = prepare_tatoeba.unique(prepare_tatoeba.tokenize_pairs(RAW))
    freq = collections.Counter(w for _, g in everything for w in g.split())
    kept = min(min(freq[w] for w in g.split()) for _, g in pairs)
    dropped = [g for _, g in everything if (_, g) not in pairs]
    assert all(min(freq[w] for w in g.split()) <= kept for g in dropped)


def test_moses_escaping_matches_the_thesis_data(raw_file, tmp_path):
    prepare_tatoeba.prepare(str(raw_file), str(tmp_path / "o"), [10], num_dev=2, num_test=3)
    tokens = prepare_tatoeba.tokenize_pairs(RAW[:1])[0][0]
    assert tokens == "I haven &apos;t seen &quot; Tom &quot; ."


def test_autoencoding_sets_have_no_duplicates_across_splits(raw_file, tmp_path):
    prepare_tatoeba.prepare(str(raw_file), str(tmp_path / "o"), [10], num_dev=2, num_test=3)
    folder = tmp_path / "o" / "autoenc" / "easy10"
    everything = [s for n in ("train", "dev", "test") for s in lines(folder / f"{n}.en")]
    assert len(everything) == 15 and len(set(everything)) == 15
    assert not (folder / "train.de").exists()


def test_bad_raw_file_is_a_one_line_error(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("Go.\tGeh.\tx\nno tab here\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, str(ROOT / "data/prepare_tatoeba.py"), str(bad), "--out", str(tmp_path / "o")],
                          capture_output=True, text=True)
    assert proc.returncode == 1 and "bad.txt:2: expected English<TAB>German" in proc.stderr
    assert "Traceback" not in proc.stderr
