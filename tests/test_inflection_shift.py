"""run_scripts/inflection_shift.py: the shares of a split unseen in training, counted on a tiny set,
and a --data without inflection sets is a one-line error."""

import sys

import pytest

import inflection_shift as shift

TRAIN = [("walad", ["pos=N", "num=PL"], "ʾawlād"), ("walad", ["pos=N", "num=SG"], "waladun"),
         ("kataba", ["pos=V", "per=3"], "yaktubu")]


def test_a_splits_shares_count_lemmas_pairs_and_bundles_never_seen_in_training():
    split = [("walad", ["num=PL", "pos=N"], None),  # a training pair, its tags in another order
             ("walad", ["pos=V", "per=3"], None),  # a seen lemma with a seen bundle, not as a pair
             ("kalb", ["pos=N", "num=DU"], None),  # all three unseen
             ("kataba", ["pos=V", "per=3"], None)]
    assert shift.shift(TRAIN, split) == {"pairs": 4, "lemma_unseen": 25.0, "pair_unseen": 50.0,
                                         "bundle_unseen": 25.0, "lemma_length": 5.0}


def test_a_data_folder_without_inflection_sets_is_a_one_line_error(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["inflection_shift.py", f"--data={tmp_path}"])
    with pytest.raises(SystemExit, match=f"^error: --data={tmp_path}: no inflection/ folder there$"):
        shift.main()
