"""run_scripts/run_experiment.py: what a trained and tested working directory's record says."""

import json

import run_experiment

ROW = {"name": "r", "folder": "easy/easy20000", "flags": ["--model=encdec"], "thesis": None}


def record_of(tmp_path, epochs, best_epoch):
    stats = {"epochs": epochs, "best_epoch": best_epoch, "best_dev_perplexity": 9.0, "total_seconds": 12.3}
    (tmp_path / "training_stats.json").write_text(json.dumps(stats))
    return run_experiment.summarize(ROW, str(tmp_path), ["train"], {"forward": {"bleu": 30.0}})


def test_a_record_names_the_dev_score_of_the_epoch_the_score_chose_and_none_when_perplexity_chose(tmp_path):
    by_score = [{"epoch": 1, "dev_perplexity": 9.0, "dev_score": 21.0}, {"epoch": 2, "dev_perplexity": 10.0,
                                                                          "dev_score": 25.12346}]
    record = record_of(tmp_path, by_score, best_epoch=2)
    assert (record["best_epoch"], record["best_dev_score"], record["bleu"], record["epochs"]) == (2, 25.1235, 30.0, 2)
    assert "best_dev_score" not in record_of(tmp_path, [{"epoch": 1, "dev_perplexity": 9.0}], best_epoch=1)
