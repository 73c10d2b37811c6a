"""run_scripts/results_table.py: recorded rows with their speed-ups beside the thesis's, the rest marked."""

import sys

from helpers import ROOT

sys.path.insert(0, str(ROOT / "run_scripts"))
import results_table  # noqa: E402
from experiments import EXPERIMENTS  # noqa: E402


def test_recorded_rows_show_speedups_and_commands_and_the_others_say_not_run_yet():
    first, *others = EXPERIMENTS["exp1_autoencode"]
    thesis = first["thesis"]
    recorded = {"name": first["name"], "bleu": 98.5, "bleu_detokenized": 98.4, "best_dev_perplexity": 1.01,
                "epochs": 40, "best_epoch": 30, "train_seconds": thesis["train_seconds"] // 2,
                "test_seconds": thesis["test_seconds"] // 100, "train_command": "python3 nmt.py --do_training X",
                "test_command": "python3 nmt.py --do_testing Y", "machine": "M", "date": "D", "note": "Why"}
    lines = results_table.table("exp1_autoencode", [recorded])
    row = next(line for line in lines if line.startswith(f"| {first['name']} |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[3:] == ["**98.50**", f"{thesis['bleu']:.2f}", f"40 / {thesis['epochs']}", "30",
                         f"{thesis['train_seconds'] // 2} / {thesis['train_seconds']}", "2×",
                         f"{thesis['test_seconds'] // 100} / {thesis['test_seconds']}", "100×"]
    for spec in others:
        assert "not run yet" in next(line for line in lines if line.startswith(f"| {spec['name']} |"))
    text = "\n".join(lines)
    assert "python3 nmt.py --do_training X\npython3 nmt.py --do_testing Y" in text and "Why." in text


def test_a_row_the_thesis_did_not_run_shows_dashes_for_the_thesis_and_names_its_attention():
    spec = next(s for s in EXPERIMENTS["exp3_en_de"] if s["thesis"] is None)
    recorded = {"name": spec["name"], "bleu": 45.0, "bleu_detokenized": 44.9, "best_dev_perplexity": 3.5,
                "epochs": 30, "best_epoch": 10, "train_seconds": 2000, "test_seconds": 20,
                "train_command": "X", "test_command": "Y", "machine": "M", "date": "D"}
    for rows, ours in (([], "not run yet"), ([recorded], "**45.00**")):
        line = next(line for line in results_table.table("exp3_en_de", rows) if line.startswith(f"| {spec['name']} |"))
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[2:5] == ["seq2seq + content attention", ours, "–"]
        assert cells[8] == "–" and cells[10] == "–"  # no speed-up without the thesis's seconds


def test_a_recorded_transduction_cell_sits_beside_the_papers_figures_and_the_others_say_not_run_yet():
    tested = {"coarse": 0.5, "fine": 0.75, "test_seconds": 10, "test_command": "python3 nmt.py --do_testing T"}
    cell = {"task": "copy", "model": "queue_lstm", "training_lengths": tested, "longer": dict(tested, coarse=0.25),
            "epochs": 8, "best_epoch": 7, "train_seconds": 1200, "best_dev_perplexity": 1.5, "date": "D",
            "machine": "M", "note": "Why.", "generate_command": "python3 data/generate_transduction.py G",
            "train_command": "python3 nmt.py --do_training X"}
    lines = results_table.transduction_table([cell])
    row = next(line for line in lines if line.startswith("| copy | queue_lstm |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2:] == ["**0.50** / 0.75", "**0.25** / 0.75", "1.00 / 1.00", "1.00 / 1.00", "8 (7)", "1200", "20"]
    assert "not run yet" in next(line for line in lines if line.startswith("| reverse | stack_lstm |"))
    assert "python3 nmt.py --do_training X\npython3 nmt.py --do_testing T" in "\n".join(lines)


def test_a_transduction_cell_of_several_seeds_shows_every_run_and_the_one_kept():
    tested = {"coarse": 0.5, "fine": 0.75, "test_seconds": 10, "test_command": "python3 nmt.py --do_testing T"}
    runs = [{"seed": "default", "train_perplexity": 5.0, "best_dev_perplexity": 6.0, "best_epoch": 3, "epochs": 4,
             "train_seconds": 100, "train_command": "python3 nmt.py --do_training A"},
            {"seed": 2, "train_perplexity": 2.0, "best_dev_perplexity": 2.5, "best_epoch": 4, "epochs": 4,
             "train_seconds": 110, "train_command": "python3 nmt.py --do_training B"}]
    cell = {"task": "reverse", "model": "stack_lstm", "training_lengths": tested, "longer": tested, "epochs": 4,
            "best_epoch": 4, "train_seconds": 110, "best_dev_perplexity": 2.5, "date": "D", "machine": "M",
            "note": "Why.", "generate_command": "G", "train_command": "python3 nmt.py --do_training B",
            "restarts": runs, "kept_seed": 2}
    text = "\n".join(results_table.transduction_table([cell]))
    assert ("seed default: 5.00 (dev 6.00, best epoch 3 of 4, 100 s); seed 2: 2.00 (dev 2.50, best epoch 4 of 4, "
            "110 s); kept: seed 2") in text
    # every run's training command, then the kept run's tests
    assert "G\npython3 nmt.py --do_training A\npython3 nmt.py --do_training B\npython3 nmt.py --do_testing T" in text
