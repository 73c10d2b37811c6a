"""run_scripts/results_table.py: recorded rows with their speed-ups beside the thesis's, the rest marked; the
index of studies and a generated page per study."""

import json
import os

import pytest

import results_table
from experiments import EXPERIMENTS


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


def test_a_transduction_cell_of_one_run_names_its_seed_from_its_command_and_its_budget_where_recorded():
    tested = {"coarse": 1.0, "fine": 1.0, "test_seconds": 10, "test_command": "T"}
    cell = {"task": "copy", "model": "queue_lstm", "training_lengths": tested, "longer": tested, "epochs": 8,
            "best_epoch": 7, "train_seconds": 1200, "best_dev_perplexity": 1.0, "date": "D", "machine": "M",
            "note": "Why.", "generate_command": "G", "train_command": "python3 nmt.py --do_training --units=8"}
    assert "Why. One run, from the default seed.\n" in "\n".join(results_table.transduction_table([cell]))
    cell.update(train_command="python3 nmt.py --do_training --seed=3", budget_seconds=1500)
    assert "Why. One run, from seed 3, within 25 minutes.\n" in "\n".join(results_table.transduction_table([cell]))


def test_a_transduction_cell_budgeted_in_batches_says_its_budget_patience_and_learning_curve():
    tested = {"coarse": 1.0, "fine": 1.0, "test_seconds": 10, "test_command": "T"}
    curve = [{"batches": 1200, "train_perplexity": 3.5, "dev_perplexity": 2.25}, {"batches": 2400, "train_perplexity": 1.5,
                                                                              "dev_perplexity": None}]
    cell = {"task": "copy", "model": "queue_lstm", "training_lengths": tested, "longer": tested, "epochs": 6,
            "best_epoch": 5, "train_seconds": 1200, "best_dev_perplexity": 1.0, "date": "D", "machine": "M",
            "note": "Why.", "generate_command": "G", "train_command": "python3 nmt.py --do_training",
            "budget_batches": 100000, "patience_batches": 20000, "batches": 2400, "curve": curve}
    assert ("Why. One run, from the default seed, within 100,000 batches (patience 20,000 batches); 2,400 batches "
            "trained, training / dev perplexity after batches 1,200: 3.500 / 2.250; 2,400: 1.500 / –.\n"
            ) in "\n".join(results_table.transduction_table([cell]))
    runs = [dict(cell, seed=seed, train_perplexity=t, best_dev_perplexity=d) for seed, t, d in (("default", 2.0, 1.0),
                                                                                                  (2, 1.5, 1.2))]
    text = "\n".join(results_table.transduction_table([dict(cell, restarts=runs, kept_seed=2, kept_by="train")]))
    assert "2 runs each within 100,000 batches (patience 20,000 batches), dev perplexity at the best epoch (the " \
           "lowest training perplexity kept, the paper's criterion)" in text
    assert "kept: seed 2, the one tested; 2,400 batches trained" in text

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
    assert ("seed default: 6.000 (training 5.00, best epoch 3 of 4, 100 s); seed 2: 2.500 (training 2.00, best epoch "
            "4 of 4, 110 s); kept: seed 2") in text
    # every run's training command, then the kept run's tests
    assert "G\npython3 nmt.py --do_training A\npython3 nmt.py --do_training B\npython3 nmt.py --do_testing T" in text


def test_a_transduction_cell_of_a_rate_grid_names_each_runs_rate_and_the_kept_one_by_seed_and_rate():
    tested = {"coarse": 0.5, "fine": 0.75, "test_seconds": 10, "test_command": "T"}
    runs = [{"seed": seed, "learning_rate": rate, "train_perplexity": 2.0, "best_dev_perplexity": ppl, "best_epoch": 3,
             "epochs": 4, "train_seconds": 100, "train_command": f"train {seed} {rate}"}
            for seed, rate, ppl in (("default", 0.005, 3.0), ("default", 0.001, 2.0), (2, 0.005, 1.5), (2, 0.001, 4.0))]
    runs[0]["stopped"] = "diverged"
    cell = {"task": "svo_sov", "model": "queue_lstm", "training_lengths": tested, "longer": tested, "epochs": 4,
            "best_epoch": 3, "train_seconds": 100, "best_dev_perplexity": 2.0, "date": "D", "machine": "M",
            "note": "Why.", "generate_command": "G", "train_command": "train 2 0.005", "restarts": runs,
            "kept_seed": 2, "kept_learning_rate": 0.005, "budget_seconds": 1500}
    text = "\n".join(results_table.transduction_table([cell]))
    assert " 4 runs each within 25 minutes, dev perplexity at the best epoch (the lowest kept" in text
    assert "seed default at rate 0.001: 2.000 (training 2.00" in text and "kept: seed 2 at rate 0.005, the one tested." in text
    assert "seed default at rate 0.005: 3.000 (training 2.00, best epoch 3 of 4, 100 s, diverged)" in text
    assert "seed default at rate 0.001: 2.000 (training 2.00, best epoch 3 of 4, 100 s)" in text


def test_a_transduction_cell_whose_kept_run_trained_on_keeps_the_protocols_row_and_tells_the_longer_run():
    def tested(coarse, name):
        return {"coarse": coarse, "fine": 0.5, "test_seconds": 10, "test_command": f"test {name}"}
    continued = {"train_command": "train on", "stopped": "finished", "epochs": 114, "best_epoch": 109,
                 "best_dev_perplexity": 2.817, "train_seconds": 4531, "budget_seconds": 7200,
                 "training_lengths": tested(0.25, "on short"), "longer": tested(0.0, "on long")}
    cell = {"task": "gender_conjugation", "model": "stack_lstm", "training_lengths": tested(0.0, "short"),
            "longer": tested(0.0, "long"), "epochs": 29, "best_epoch": 29, "train_seconds": 1174,
            "best_dev_perplexity": 4.07, "date": "D", "machine": "M", "note": "Why.", "generate_command": "G",
            "train_command": "train", "stopped": "time budget", "budget_seconds": 1200, "continued": continued}
    lines = results_table.transduction_table([cell])
    row = next(line for line in lines if line.startswith("| gender_conjugation | stack_lstm |"))
    assert "**0.00** / 0.50 | **0.00** / 0.50" in row and "29 (29), stopped by the time budget | 1174 |" in row
    text = "\n".join(lines)
    assert ("within 120 minutes in all (not in the table, whose rows share the protocol's budget): ended by itself "
            "(patience or epoch cap) after 114 epochs (4531 s), best epoch 109 at dev perplexity 2.817; coarse / fine "
            "0.25 / 0.50 on the training lengths, 0.00 / 0.50 on the longer pairs.") in text
    assert "train\ntest short\ntest long\ntrain on\ntest on short\ntest on long\n```" in text
    # a run no longer on disk: its seed and rate trained again from the start under a larger epoch cap
    retrained = dict(continued, retrained=True, max_epochs=120)
    del retrained["budget_seconds"]
    text = "\n".join(results_table.transduction_table([dict(cell, continued=retrained)]))
    assert ("trained again from the start, up to 120 epochs (not in the table, whose rows share the protocol's "
            "budget): ended by itself (patience or epoch cap) after 114 epochs") in text
    text = "\n".join(results_table.transduction_table([dict(cell, continued=dict(retrained, budget_seconds=2400))]))
    assert "trained again from the start, up to 120 epochs within 40 minutes (not in the table" in text
    text = "\n".join(results_table.transduction_table([dict(cell, continued=dict(continued, stopped="diverged"))]))
    assert ("share the protocol's budget): diverged (a non-finite loss; its best epoch before kept) after 114 "
            "epochs") in text


def test_the_epochs_columns_mark_a_run_the_budget_stopped_and_one_that_diverged_and_the_legend_says_which():
    runs = [{"epochs": epochs, "best_epoch": best, "stopped": stopped}
            for epochs, best, stopped in ((12, 7, "finished"), (12, 8, "time budget"), (28, 27, "diverged"))]
    assert [results_table.epochs_of(r) for r in runs] == ["12 (7)", "12 (8)*", "28 (27)†"]
    assert results_table.STOP_LEGEND == ("\\* stopped by the time budget; † diverged (a non-finite loss; its best "
                                         "epoch before kept).")


def test_the_index_has_one_row_per_study_with_ours_beside_the_papers_and_a_link_to_its_page():
    first = EXPERIMENTS["exp1_autoencode"][0]
    recorded = {"exp1_autoencode": [{"name": first["name"], "bleu": 98.5}]}
    lines = results_table.index([recorded.get(s.name, s.empty) for s in results_table.STUDIES])
    rows = [line for line in lines if line.startswith("| [")]
    assert [row.split("](")[1].split(")")[0] for row in rows] == [f"{s.name}.md" for s in results_table.STUDIES]
    cells = [c.strip() for c in rows[0].strip("|").split("|")]
    assert f"{first['name']} **98.50**" in cells[3] and f"{first['name']} {first['thesis']['bleu']:.2f}" in cells[4]
    assert cells[5] == f"1 of {len(EXPERIMENTS['exp1_autoencode'])} rows" and cells[6] == "[notes/thesis.md](notes/thesis.md)"
    transduction = next(row for row in rows if "(transduction.md)" in row)
    assert "| not run yet | – | 0 of 20 cells |" in transduction


def test_the_transduction_headline_averages_the_recorded_cells_beside_the_papers_same_cells():
    tested = {"coarse": 0.5, "fine": 0.75}
    cells = [{"task": "copy", "model": "queue_lstm", "training_lengths": tested, "longer": dict(tested, coarse=0.0)},
             {"task": "reverse", "model": "queue_lstm", "training_lengths": dict(tested, coarse=1.0), "longer": tested},
             # our reconstruction of an ITG grammar is not one of Figure 2a's cells
             {"task": "svo_sov", "model": "queue_lstm", "training_lengths": tested, "longer": tested}]
    _, ours, paper, count = results_table.transduction_headline(cells)
    assert (ours, paper, count) == ("**0.75** / **0.25**", "0.72 / 0.50", "2 of 20 cells")  # paper: (1.00 + 0.44) / 2
    # the project README's row says over how many cells its mean is
    readme = results_table.readme_table([cells if s.name == "transduction" else s.empty for s in results_table.STUDIES])
    assert "| Grefenstette et al. 2015, Figure 2a: 2 of 20 cells | " in "\n".join(readme)


def test_the_benchmark_headline_counts_the_targets_met_on_the_full_modes_only():
    run = {"results": {"recognition_batched_speedup": 8.0, "train_step_ratio_deque_lstm_vs_lstm2": 3.5}}
    _, ours, _, count = results_table.benchmark_headline({"full": run, "quick": dict(run, results={
        "recognition_batched_speedup": 1.0})})
    assert ours == "**1 of 2** met; missed: `train_step_ratio_deque_lstm_vs_lstm2` 3.5 (target ≤ 3 (issue 17))"
    assert count == "2 modes"


def test_every_study_gets_a_page_saying_it_is_generated_and_the_index_links_them(tmp_path, monkeypatch):
    monkeypatch.setattr(results_table, "RESULTS", str(tmp_path))
    readme = tmp_path / "project_README.md"
    readme.write_text(f"intro\n{results_table.README_BEGIN}\n{results_table.README_END}\nrest")
    monkeypatch.setattr(results_table, "README", str(readme))
    results_table.main()
    assert readme.read_text().startswith(f"intro\n{results_table.README_BEGIN}\n| study | figure | ours | published |")
    index = (tmp_path / "README.md").read_text()
    for study in results_table.STUDIES:
        page = (tmp_path / f"{study.name}.md").read_text()
        assert page.startswith(f"# {study.title}\n\nGenerated by `python3 run_scripts/results_table.py`")
        assert f"]({study.name}.md)" in index and "[README.md](README.md)" in page
        assert (f"[notes/{study.notes}.md](notes/{study.notes}.md)" in page) == bool(study.notes)
        assert not study.notes or os.path.isfile(os.path.join(results_table.HERE, "results", "notes", f"{study.notes}.md"))


def test_the_hand_written_notes_hold_no_results_table():
    """Results tables are generated from records; the notes beside them say in prose what was tried."""
    for study in results_table.STUDIES:
        if study.notes:
            path = os.path.join(results_table.HERE, "results", "notes", f"{study.notes}.md")
            with open(path, encoding="utf-8") as f:
                tables = [n for n, line in enumerate(f, 1) if line.startswith("|")]
            assert not tables, f"{path}: a Markdown table on lines {tables[:5]}"


def fair_record(spec, bleu, **extra):
    return {"name": spec["name"], "bleu": bleu, "bleu_unseen": bleu - 10, "best_dev_perplexity": 5.0, "epochs": 12,
            "best_epoch": 2, "train_seconds": 100, "parameters": 1234567, "machine": "M", "date": "D",
            "train_command": f"train {spec['name']}", "test_command": "test", **extra}


def tuned_record(spec, bleu, **extra):
    """``fair_record`` of a final row trained by its spec's flags, as run_experiment.py records it."""
    command = " ".join(["nmt.py", *spec["training"], *spec["flags"], f"--working_dir={spec['name']}"])
    return fair_record(spec, bleu, train_command=command, **extra)


def test_the_fair_fight_averages_seeds_and_gives_the_bound_models_reverse_test_a_row_of_its_own():
    specs = EXPERIMENTS["bound_translation"]
    bound = [s for s in specs if s["config"] == "bound_soft" and s["folder"] == "easy/easy20000"]
    retrieval = {"retrieval_p_at_1_source_to_target": 0.9, "retrieval_p_at_1_target_to_source": 0.8,
                 "retrieval_binding_ratio": 0.25, "analyze_command": "analyze"}
    rows = [fair_record(bound[0], 30.0, reverse=fair_record(bound[0], 20.0, test_command="reverse test"), **retrieval),
            fair_record(bound[1], 34.0, reverse=fair_record(bound[1], 24.0), **retrieval)]
    lines = results_table.fair_table(rows)
    cells = lambda start: [c.strip() for c in next(line for line in lines if line.startswith(start)).strip("|").split("|")]
    forward = cells("| bound_soft | easy/easy20000 | en→de |")
    assert forward[3:] == ["1,234,567", "2 of 3", "**32.00 ± 2.83 (2 seeds)**", "22.00 ± 2.83 (2 seeds)", "2, 2",
                           "5.00 ± 0.00 (2 seeds)", "–", "0.900 ± 0.000 (2 seeds) / 0.800 ± 0.000 (2 seeds)",
                           "0.250 ± 0.000 (2 seeds)", "–"]
    reverse = cells("| bound_soft | easy/easy20000 | de→en (same models) |")
    assert reverse[5] == "**22.00 ± 2.83 (2 seeds)**"
    assert reverse[7:10] == ["the same models as the row above (chosen by its dev figures)", "–", "–"]
    assert "not run yet" in cells("| encdec_attention | easy/easy20000 | en→de |")
    by_bleu = next(s for s in specs if s["config"] == "encdec_devbleu" and s["source"] == "de")
    lines = results_table.fair_table([*rows, fair_record(by_bleu, 15.0, best_dev_score=18.5)])
    assert cells("| encdec_devbleu | easy/easy20000 | de→en |")[9:] == ["18.50 (1 seed)", "–", "–", "–"]
    assert "train bound_soft_ende_easy20000_seed1\ntest\nreverse test\nanalyze" in "\n".join(lines)
    k1 = [s for s in specs if s["config"] == "bound_pbstate_k1" and s["folder"] == "easy/easy20000"]
    dev = {"dev_retrieval_p_at_1_source_to_target": 0.95, "dev_retrieval_p_at_1_target_to_source": 0.93,
           "dev_retrieval_binding_ratio": 0.3, "dev_analyze_command": "dev analyze"}
    lines = results_table.fair_table([fair_record(k1[0], 30.0, reverse=fair_record(k1[0], 20.0), **retrieval, **dev),
                                      fair_record(k1[1], 31.0, reverse=fair_record(k1[1], 21.0), **retrieval)])
    assert cells("| bound_pbstate_k1 | 0.1 |")[2:] == ["2", "5.00 ± 0.00 (2 seeds)", "0.950 (1 seed) / 0.930 (1 seed)",
                                                       "0.300 (1 seed)"]
    assert cells("| bound_pbstate_k1_unbound | 0 |")[2:] == ["0", "not run yet", "–", "–"]
    assert "analyze\ndev analyze\n```" in "\n".join(lines)


def test_a_tuned_rows_open_vocabulary_bleu_has_its_column_both_ways_and_the_page_says_what_selected_it(monkeypatch):
    # A family of its own: the experiment already holds the real families' tuned rows once one is selected.
    tuned = {"name": "family_tuned_ende_easy20000_seed1", "config": "family_tuned", "seed": 1,
             "folder": "easy/easy20000", "source": "en", "target": "de", "selected_by": "tuning trial 2: dev BLEU 62.50",
             "training": ["--do_training"], "flags": ["--dropout=0.1", "--seed=1"]}
    bound = {**tuned, "name": "bound_tuned_ende_easy20000_seed1", "config": "bound_tuned", "reverse_test": True}
    monkeypatch.setitem(EXPERIMENTS, "bound_translation", [*EXPERIMENTS["bound_translation"], tuned, bound])
    open_test = {"folder": "easy/easy-full", "forward": {"bleu": 19.5}, "reverse": {"bleu": 17.25}}
    lines = results_table.fair_table([tuned_record(tuned, 55.0, open_test=open_test),
                                      tuned_record(bound, 50.0, reverse=tuned_record(bound, 52.0), open_test=open_test)])
    cells = lambda start: [c.strip() for c in next(line for line in lines if line.startswith(start)).strip("|").split("|")]
    assert cells("| family_tuned | easy/easy20000 | en→de |")[-1] == "19.50 (1 seed)"
    assert cells("| bound_tuned | easy/easy20000 | de→en (same models) |")[-1] == "17.25 (1 seed)"
    assert "family_tuned: selected by tuning trial 2: dev BLEU 62.50." in lines
    assert not any(line.startswith("Test BLEU by the source's length") for line in lines)  # no record has it
    by_length = lambda short, long: {"1-5": {"sentences": 472, "bleu": short}, "9+": {"sentences": 220, "bleu": long}}
    lines = results_table.fair_table([
        tuned_record(tuned, 55.0, bleu_by_length=by_length(60.0, 40.0)),
        tuned_record(bound, 50.0, bleu_by_length=by_length(58.0, 30.0),
                    reverse=tuned_record(bound, 52.0, bleu_by_length={"1-5": {"sentences": 470, "bleu": 59.5}}))])
    table = lines[lines.index(next(line for line in lines if line.startswith("Test BLEU by the source's length"))):]
    assert "| configuration | data | direction | 1-5 words | 9+ words |" in table
    assert "| family_tuned | easy/easy20000 | en→de | 60.00 (1 seed), 472 sentences | 40.00 (1 seed), 220 sentences |" in table
    assert "| bound_tuned | easy/easy20000 | de→en (same models) | 59.50 (1 seed), 470 sentences | – |" in table


def test_the_open_vocabulary_sets_distance_from_training_comes_from_its_record_or_says_it_was_not_measured(tmp_path):
    import open_vocabulary

    data = tmp_path / "data"
    for folder, lines in (("easy/easy20000", {"train.en": "a b\n", "train.de": "x\n", "test.en": "a b\n",
                                              "test.de": "x\n"}),
                          ("easy/easy-full", {"test.en": "a c\nb\n", "test.de": "y y\nx y\n"})):
        (data / folder).mkdir(parents=True)
        for name, text in lines.items():
            (data / folder / name).write_text(text)
    found = open_vocabulary.figures(str(data))
    assert found["en"]["training_types"] == 2 and found["de"]["training_types"] == 1
    assert found["en"]["easy/easy-full"] == {"sentences": 2, "tokens": 3, "tokens_unseen_percent": 33.33,
                                             "sentences_with_unseen_percent": 50.0}
    assert found["de"]["easy/easy-full"]["tokens_unseen_percent"] == 75.0
    assert found["en"]["easy/easy20000"]["tokens_unseen_percent"] == 0.0
    with pytest.raises(SystemExit, match=r"^open_vocabulary.py: error: .*/easy/easy20000/train.en: no such file \(give --data"):
        open_vocabulary.figures(str(tmp_path / "elsewhere"))
    assert "not measured" in results_table.open_vocabulary_text(str(tmp_path))
    (tmp_path / "open_vocabulary.json").write_text(json.dumps(
        {"command": "python3 run_scripts/open_vocabulary.py --save", "date": "D", "training": "easy/easy20000",
         "languages": found}))
    assert results_table.open_vocabulary_text(str(tmp_path)).startswith(
        "33.3 % / 75.0 % of their tokens and 50 % / 100 % of their sentences with a word unseen in easy/easy20000's")


def test_a_final_row_trained_by_other_flags_than_its_spec_stops_the_tables_naming_it(monkeypatch):
    tuned = {"name": "family_tuned_ende_easy20000_seed1", "config": "family_tuned", "seed": 1,
             "folder": "easy/easy20000", "source": "en", "target": "de", "selected_by": "tuning trial 2",
             "training": ["--do_training"], "flags": ["--dropout=0.1", "--seed=1"]}
    monkeypatch.setitem(EXPERIMENTS, "bound_translation", [*EXPERIMENTS["bound_translation"], tuned])
    results_table.fair_table([tuned_record(tuned, 55.0)])
    other_trial = tuned_record({**tuned, "flags": ["--dropout=0.3", "--seed=1"]}, 55.0)
    with pytest.raises(SystemExit, match="^bound_translation.json: family_tuned_ende_easy20000_seed1 was trained by "
                                         "other flags than experiments.py gives it now"):
        results_table.fair_table([other_trial])


def test_final_rows_of_a_family_whose_selection_a_probe_reopened_are_shown_marked_so(monkeypatch):
    """No spec names them while the selection is open again; their figures stay on the page and in
    the README's line, marked, and count towards no family's final rows."""
    row = {"name": "bound_pbstate_k1_tuned_ende_easy20000_seed1", "config": "bound_pbstate_k1_tuned",
           "dataset": "easy/easy20000", "source": "en", "target": "de", "selected_by": "tuning trial 8"}
    # the selection open again, whatever the recorded tuning says today: no spec of the family's final rows
    monkeypatch.setitem(EXPERIMENTS, "bound_translation", [s for s in EXPERIMENTS["bound_translation"]
                                                           if not s["config"].startswith("bound_pbstate_k1_tuned")])
    rows = [fair_record(row, 56.0, reverse=fair_record(row, 59.0), **{k: row[k] for k in row if k != "name"}),
            fair_record({**row, "name": row["name"].replace("seed1", "seed2")}, 58.0, reverse=fair_record(row, 61.0),
                        **{k: row[k] for k in row if k != "name"})]
    lines = results_table.fair_table(rows)
    cells = lambda start: [c.strip() for c in next(line for line in lines if line.startswith(start)).strip("|").split("|")]
    forward = cells(f"| bound_pbstate_k1_tuned | easy/easy20000 | en→de, {results_table.REOPENED} |")
    assert forward[4:6] == ["2", "**57.00 ± 1.41 (2 seeds)**"]
    assert cells(f"| bound_pbstate_k1_tuned | easy/easy20000 | de→en (same models), {results_table.REOPENED} |")[5] == (
        "**60.00 ± 1.41 (2 seeds)**")
    said = results_table.reopened_text(results_table.fair_groups(rows), "bound_pbstate_k1")
    assert said == f"; its final rows {results_table.REOPENED}: 57.00 ± 1.41 (2 seeds) / 60.00 ± 1.41 (2 seeds)"
    assert results_table.reopened_text(results_table.fair_groups(rows), "transformer") == ""


def test_the_fair_fight_headline_shows_the_dev_bleu_rule_both_ways_and_counts_every_run():
    specs = EXPERIMENTS["bound_translation"]
    bound = [s for s in specs if s["config"] == "bound_pbstate_k1_devbleu" and s["folder"] == "easy/easy20000"]
    plain = [s for s in specs if s["config"] == "encdec_devbleu" and s["folder"] == "easy/easy20000"]
    other_rule = next(s for s in specs if s["config"] == "encdec" and s["folder"] == "easy/easy20000")
    rows = [fair_record(bound[0], 30.0, reverse=fair_record(bound[0], 20.0)),
            fair_record(bound[1], 34.0, reverse=fair_record(bound[1], 24.0)),
            *(fair_record(s, 10.0 if s["source"] == "en" else 12.0) for s in plain if s["seed"] == 1),
            fair_record(other_rule, 99.0)]
    _, ours, _, count = results_table.fair_headline(rows)
    assert "bound_pbstate_k1_devbleu **32.00 ± 2.83 (2 seeds)** / **22.00 ± 2.83 (2 seeds)**" in ours
    assert "encdec_devbleu **10.00 (1 seed)** / **12.00 (1 seed)**" in ours
    assert "encdec_attention_devbleu not run yet / not run yet" in ours
    assert "99.00" not in ours  # the perplexity rule's rows are on the study's page only
    assert count == f"5 of {len(specs)} runs"


def test_the_project_readme_shows_the_results_table_generated_from_the_records():
    table = results_table.readme_table([results_table.load(study) for study in results_table.STUDIES])
    with open(results_table.README, encoding="utf-8") as f:
        assert "\n".join(table) in f.read()
    begin, end = results_table.README_BEGIN, results_table.README_END
    old = f"intro\n{begin}\n| old |\n{end}\nrest"
    assert results_table.with_readme_table(old, [begin, "| new |", end]) == f"intro\n{begin}\n| new |\n{end}\nrest"
    with pytest.raises(SystemExit, match="results table's lines"):
        results_table.with_readme_table("intro without the table", [begin, "| new |", end])


WITHHELD = {"source": "issue 94, scored outside the project", "filed": "2026-12",
            "inflection": {"predictions": "P", "predictions_commit": "1cef785577", "measure": "M", "note": "N", "scores": [
                {"collection": "sigmorphon2016", "set": "arabic", "model": "hard", "test": 94.96, "paper": 98.77},
                {"collection": "sigmorphon2016", "set": "average", "model": "hard", "test": 94.87, "paper": 95.61}]},
            "question_formation": {"predictions": "Q", "predictions_commit": "943a2e2262", "measure": "M", "note": "N",
                                   "scores": [{"cell": "gru_location", "measure": "gen_first_word_accuracy",
                                               "test": 0.679, "paper": 0.78}]}}


def inflection_cell(accuracy):
    member = {"dev": {"accuracy": accuracy, "mean_levenshtein": 0.1, "test_command": "dev"}, "epochs": 3,
              "best_epoch": 2, "stopped": "finished", "train_seconds": 10, "train_command": "train"}
    return {"collection": "sigmorphon2016", "set": "arabic", "model": "hard_attention", "aligner": "corpus",
            "members": [member], "ensemble": None, "date": "D", "machine": "M", "note": "Why.",
            "predictions": {"file": "f", "configuration": "single", "lines": 2, "test_command": "test"}}


def row_cells(lines, start):
    return [c.strip() for c in next(line for line in lines if line.startswith(start)).strip("|").split("|")]


def test_the_inflection_page_puts_the_withheld_test_figure_between_our_dev_and_the_papers_test_figures():
    lines = results_table.inflection_table([inflection_cell(0.9)], WITHHELD)
    header = row_cells(lines, "| set |")
    assert header[2:7] == ["dev: single", "dev: vote (models)", "dev: novel (pairs)", "test: ours (scored outside)",
                           "test: paper (that model)"]
    assert row_cells(lines, "| arabic | hard |")[2:7] == ["90.00", "– (1)", "–", "94.96", "98.77"]  # no novel figure yet
    assert row_cells(lines, "| arabic | soft |")[5:7] == ["–", "99.30"]  # no test figure came back for it
    assert row_cells(lines, "| average | hard |")[3:7] == ["90.00 (1 of 10 sets)", "", "94.87", "95.61"]
    text = "\n".join(lines)
    assert ("Test figures (issue 94, scored outside the project against the withheld gold, filed 2026-12): M, of P, "
            "as of commit 1cef785; N.") in text
    assert "No withheld-test figure has come back yet." in "\n".join(results_table.inflection_table([], {}))


def test_the_inflection_page_shows_the_accuracy_on_the_dev_pairs_not_in_training_where_a_cell_has_it():
    single = inflection_cell(0.9)
    single["members"][0]["dev"]["novel_accuracy"] = 0.75
    voted = dict(single, ensemble={"accuracy": 0.95, "mean_levenshtein": 0.1, "test_command": "vote",
                                   "novel_accuracy": 0.875}, dev_novel_pairs=8)
    none = dict(single, dev_novel_pairs=0)
    none["members"] = [{**single["members"][0], "dev": {**single["members"][0]["dev"], "novel_accuracy": None}}]
    shown = [row_cells(results_table.inflection_table([cell], {}), "| arabic | hard |")[2:5]
             for cell in (dict(single, dev_novel_pairs=8), voted, none)]
    assert shown == [["90.00", "– (1)", "75.00 (8)"], ["90.00", "**95.00** (1)", "87.50 (8)"], ["90.00", "– (1)", "– (0)"]]


def test_the_inflection_headline_shows_our_test_average_beside_the_papers_and_labels_the_dev_one():
    measure, ours, paper, _ = results_table.inflection_headline([inflection_cell(0.9)], WITHHELD)
    assert "sigmorphon2016 hard test **94.87** (dev 90.00) (1 of 10 sets)" in ours and "on test" in measure
    assert "sigmorphon2016 hard 95.61" in paper
    _, ours, _, _ = results_table.inflection_headline([inflection_cell(0.9)], {})
    assert "sigmorphon2016 hard dev **90.00** (1 of 10 sets)" in ours and "test" not in ours


def question_cell(name, gen, stopping="authors", recipe="layers"):
    tested = {"test_command": "test"}
    restart = {"seed": 1, "train_seconds": 60, "epochs": 30, "best_epoch": 30, "stopped": "finished",
               "train_command": "train", "dev": dict(tested, full_sentence_accuracy=1.0),
               "gen": dict(tested, first_word_accuracy=gen), "test_covered": tested, "gen_covered": tested}
    stem = f"run_scripts/results/question_formation/{name}.{stopping}.{recipe}"
    return {"cell": name, "stopping": stopping, "recipe": recipe, "restarts": [restart], "train_seconds_budget": 900,
            "median": {"dev_full_sentence_accuracy": 1.0, "gen_first_word_accuracy": gen, "restart": 1},
            "predictions": {"test": f"{stem}.test.tsv", "gen": f"{stem}.gen.tsv"}, "generate_command": "G",
            "date": "D", "machine": "M", "note": "Why."}


def test_the_question_formation_main_table_shows_the_withheld_test_figure_and_names_the_scored_files():
    cells = [question_cell("gru_location", 0.755), question_cell("srn_none", 0.5),
             question_cell("gru_location", 0.562, recipe="adam")]
    lines = results_table.question_formation_table(cells, WITHHELD)
    main, other = [i for i, line in enumerate(lines) if line.startswith("| cell |")]
    assert "(**test**, the median restart's predictions, scored outside)" in lines[main]
    assert len(row_cells(lines, "| cell |")) == 10 and len(row_cells(lines[other:], "| cell |")) == 9
    assert row_cells(lines, "| gru_location |")[3:7] == ["**0.755**", "0.679", "0.770", "0.780"]
    assert row_cells(lines, "| srn_none |")[3:5] == ["**0.500**", "–"]
    assert row_cells(lines[other:], "| gru_location |")[3:5] == ["**0.562**", "0.770"]  # other protocols: no column
    text = "\n".join(lines)
    assert ("The scored prediction files, the one protocol's (`--stopping authors --recipe layers`, the median restart "
            "of each cell), 4 in `results/question_formation/`: `srn_none.authors.layers.test.tsv`, "
            "`srn_none.authors.layers.gen.tsv`, `gru_location.authors.layers.test.tsv`, "
            "`gru_location.authors.layers.gen.tsv`.") in text
    assert "Predictions of its median restart in `run_scripts/results/question_formation/gru_location.authors.layers" in text
    assert ("were in `run_scripts/results/question_formation/gru_location.authors.adam.test.tsv` and "
            "`run_scripts/results/question_formation/gru_location.authors.adam.gen.tsv`, not scored, removed by issue "
            "94") in text


def test_the_question_formation_headline_and_readme_row_show_the_test_figure_with_the_dev_one_labelled():
    cells = [question_cell("gru_location", 0.755), question_cell("srn_none", 0.5)]
    measure, ours, _, _ = results_table.question_headline(cells, WITHHELD)
    assert "gru_location test **0.679** (dev 0.755)" in ours and "srn_none dev **0.500**" in ours
    assert "gru_none not run yet" in ours and "labelled" in measure
    readme = "\n".join(results_table.readme_table(
        [cells if s.name == "question_formation" else s.empty for s in results_table.STUDIES]))
    assert "| McCoy et al. 2018, GRU + location attention | generalization first-word accuracy on test" in readme
    assert "| test **0.679** (dev 0.755) | 0.780 |" in readme
    assert "| Aharoni & Goldberg 2017, SIGMORPHON 2016, hard attention | mean accuracy % on test" in readme


def test_the_withheld_record_quotes_the_papers_figures_and_names_a_scored_file_for_every_main_cell():
    scores = results_table.withheld_scores()
    for entry in scores["inflection"]["scores"]:
        paper = results_table.INFLECTION_PAPER[entry["collection"]]
        expected = (results_table.paper_average(entry["collection"], entry["model"]) if entry["set"] == "average"
                    else paper[entry["model"]].get(entry["set"]))
        assert entry["paper"] == expected, entry
    for entry in scores["question_formation"]["scores"]:
        assert entry["paper"] == results_table.QUESTION_PAPER[entry["cell"]][1]
    cells = results_table.load(next(s for s in results_table.STUDIES if s.name == "question_formation"))
    scored = {os.path.basename(c["predictions"][kind]) for c in cells
              if results_table.protocol_of(c) == results_table.MAIN_PROTOCOL for kind in ("test", "gen")}
    folder = os.path.join(results_table.RESULTS, "question_formation")
    assert len(scored) == 2 * len(results_table.CELLS)
    assert {f for f in os.listdir(folder) if f.endswith(".tsv")} == scored  # the scored protocol's files alone


def test_translate_mode_is_judged_against_do_testing_of_the_same_model():
    results = {"translate_mode_test_sentences": 2000,
               "translate_mode_sentences_per_second_a": 95.0, "do_testing_sentences_per_second_a": 100.0,
               "translate_mode_same_translations_a": 1.0,
               "translate_mode_sentences_per_second_b": 80.0, "do_testing_sentences_per_second_b": 100.0}
    run = {"date": "D", "commit": "C", "machine": "M", "command": "c", "note": "N", "results": results}
    lines = results_table.translate_mode_lines("full_translate_mode", run)
    assert "- `a`: 0.95× (target ≥ 0.9) ✓, 100.0% of its translations equal to `--do_testing`'s" in lines
    assert "- `b`: 0.80× (target ≥ 0.9) ✗" in lines
    assert not any("✓" in line for line in results_table.translate_mode_lines("quick_translate_mode", run))


def test_the_oracle_table_compares_each_recipe_with_the_recipe_it_changes_one_thing_of():
    cells = [dict(inflection_cell(accuracy), recipe=recipe) for accuracy, recipe in
             ((0.90, "ours"), (0.95, "paper_stopping"), (0.96, "tied_feedback"))]
    averages = [line for line in results_table.oracle_table(cells) if line.startswith("Averages")]
    assert averages == [
        "Averages: single models over the 1 sets that have each: corpus 90.00, corpus + paper_stopping 95.00; "
        "votes: no set has one of each yet.",
        "Averages: single models over the 1 sets that have each: corpus + paper_stopping 95.00, "
        "corpus + tied_feedback 96.00; votes: no set has one of each yet."]


def test_the_readme_row_of_the_tuned_fight_names_each_familys_selection_or_how_far_it_has_come(monkeypatch):
    monkeypatch.setattr(results_table, "selected",
                        lambda rows, family: {"config": "transformer"} if family == "transformer" else None)
    line = results_table.tuned_fight([], lambda config: f"<{config}>")
    assert "<transformer_tuned> (transformer)" in line
    assert (f"not selected yet (bound_pbstate_k1: 0 of {results_table.TUNING_TRIALS} trials at the rung)"
            in line)
    assert line.count("; ") == len(results_table.TUNING_FAMILIES) - 1
