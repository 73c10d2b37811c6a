"""Issue 90's tuning protocol (run_scripts/experiments.py): one design of trials for every family,
promoted by successive halving on dev BLEU, the selected configuration chosen on dev only."""

import json


from experiments import (EXPERIMENTS, PROBE_MARGIN, TUNING_FAMILIES, TUNING_PROBES, TUNING_PROMOTED, TUNING_RUNG,
                         TUNING_SPACE, TUNING_TRIALS, promoted, selected, tuned_rows, tuning_points)
import results_table
import run_experiment

FAMILY = "transformer"


def trials(rung_scores, full=None):
    """Records of FAMILY's trials with these rung scores; ``full``: {trial: best dev BLEU} of finished finalists."""
    full = full or {}
    return [{"name": f"tune_{FAMILY}_t{t}", "config": FAMILY, "trial": t, "rung_dev_score": s,
             "full_schedule": t in full, "best_dev_score": full.get(t, s), "best_epoch": 20, "epochs": 30,
             "parameters": 1000, "date": "d", "machine": "m", "train_seconds": 1, "train_command": "c"}
            for t, s in enumerate(rung_scores, 1)]


def test_every_family_trains_the_same_points_which_use_each_value_of_each_dimension_about_equally():
    points = tuning_points()
    assert len(points) == TUNING_TRIALS
    for name, values in TUNING_SPACE.items():
        counts = [sum(p[name] == v for p in points) for v in values]
        assert max(counts) - min(counts) <= 1 and sum(counts) == TUNING_TRIALS
    for family in TUNING_FAMILIES:
        rows = [r for r in EXPERIMENTS["tuning"] if r["config"] == family]
        assert [r["point"] for r in rows] == points
        assert all(r["tune"] and r["rung"] == TUNING_RUNG for r in rows)


def test_the_rung_promotes_the_best_dev_bleu_only_once_every_trial_reached_it_and_ties_go_to_the_earlier_trial():
    scores = [50.0, 55.0, 40.0, 55.0, 60.0, 30.0, 20.0, 10.0]
    assert promoted(trials(scores)[:-1], FAMILY) == []
    assert TUNING_PROMOTED == 1 and promoted(trials(scores), FAMILY) == [f"tune_{FAMILY}_t5"]
    tied = [50.0, 55.0, 40.0, 55.0, 30.0, 30.0, 20.0, 10.0]
    assert promoted(trials(tied), FAMILY) == [f"tune_{FAMILY}_t2"]
    assert promoted(trials(scores), "bound_pbstate_k1") == []


def test_the_selected_trial_is_the_promoted_one_once_it_finished_its_full_schedule():
    scores = [50.0, 55.0, 40.0, 55.0, 60.0, 30.0, 20.0, 10.0]
    assert selected(trials(scores), FAMILY) is None  # trial 5 promoted, still under way
    # trials 1 and 2 have no full schedule that counts (not promoted): their higher figures do not
    pick = selected(trials(scores, full={5: 61.0, 2: 62.5, 1: 70.0}), FAMILY)
    assert pick["trial"] == 5


def test_a_trials_rung_score_is_its_best_dev_bleu_within_the_rung_not_after_it(tmp_path, monkeypatch):
    row = {"flags": ["--max_epochs=60"], "rung": 3}
    monkeypatch.setattr(run_experiment, "needs_training", lambda working_dir, epochs=None: True)
    epochs = [{"epoch": e, "dev_score": s} for e, s in enumerate([10.0, 30.0, 20.0, 90.0], 1)]
    figures = run_experiment.tuning_figures(row, {"epochs": epochs}, str(tmp_path))
    assert figures == {"rung": 3, "full_schedule": False, "rung_dev_score": 30.0}
    assert "rung_dev_score" not in run_experiment.tuning_figures(row, {"epochs": epochs[:2]}, str(tmp_path))


def test_the_table_shows_every_trials_rung_score_and_the_full_schedule_only_for_finalists_with_the_pick_in_bold():
    scores = [50.0, 55.0, 40.0, 55.0, 60.0, 30.0, 20.0, 10.0]
    text = "\n".join(results_table.tuning_table(trials(scores)))
    line = {int(line.split("|")[2]): line for line in text.splitlines() if line.startswith(f"| {FAMILY} |")}
    assert "| 50.00 | – | – |" in line[1] and "| 60.00 | promoted; 30 epochs so far | – |" in line[5]
    text = "\n".join(results_table.tuning_table(trials(scores, full={5: 61.0})))
    line = {int(line.split("|")[2]): line for line in text.splitlines() if line.startswith(f"| {FAMILY} |")}
    assert "| 60.00 | 20 of 30 | **61.00** (selected) |" in line[5] and "**" not in line[2]
    headline = results_table.tuning_headline(trials(scores, full={5: 61.0}))[1]
    assert "trial 5, **61.00**" in headline and "0 of 8 trials at the rung" in headline
    assert json.dumps(EXPERIMENTS["tuning"])  # the rows stay plain data


def finished_tuning(family, probes=None):
    """A family's tuning finished (trial 5 promoted and selected, 61.00), with each of its design
    probes at the rung: ``probes`` {probe: (its rung score, its full-schedule score or None)}; a probe
    not named is level with the twin's trial at its point (not promoted)."""
    scores = [50.0, 55.0, 40.0, 55.0, 60.0, 30.0, 20.0, 10.0]
    records = trials(scores, full={5: 61.0, 2: 62.5, 4: 59.0})
    points = {r["trial"]: r["point"] for r in EXPERIMENTS["tuning"] if r["config"] == family}
    records = [{**r, "config": family, "name": f"tune_{family}_t{r['trial']}", "point": points[r["trial"]]}
               for r in records]
    for probe, spec in TUNING_PROBES.items():
        if spec["twin"] != family:
            continue
        rung, full = (probes or {}).get(probe, (None, None))
        for r in [r for r in records if r["config"] == family and r["trial"] in spec["trials"]]:
            score = r["rung_dev_score"] if rung is None else rung
            records.append({**r, "config": probe, "name": f"tune_{probe}_t{r['trial']}", "rung_dev_score": score,
                            "full_schedule": full is not None, "best_dev_score": full or score})
    return records


def test_no_final_row_exists_before_a_family_is_selected_and_then_its_seeds_both_ways_easy50000_and_variants():
    assert tuned_rows(trials([50.0] * 8)) == []
    rows = {r["name"]: r for r in tuned_rows(finished_tuning("transformer"))}
    assert sorted(rows) == sorted([f"transformer_tuned_{w}_easy20000_seed{s}" for s in (1, 2, 3) for w in ("ende", "deen")]
                                  + ["transformer_tuned_ende_easy50000_seed1"])
    row = rows["transformer_tuned_deen_easy20000_seed2"]
    assert row["flags"][-1] == "--seed=2" and f"--dropout={tuning_points()[4]['dropout']}" in row["flags"]  # trial 5's
    assert row["selected_by"].startswith("tuning trial 5: dev BLEU 61.00") and not row["reverse_test"]
    assert "next finalist" not in row["selected_by"]  # the family's one finalist: nothing to be chosen over
    # the seed-1 row en→de on easy20000 is the trial's own command: it continues the trial's run
    assert rows["transformer_tuned_ende_easy20000_seed1"]["continues"] == "tune_transformer_t5"
    assert not any("continues" in r for name, r in rows.items() if name != "transformer_tuned_ende_easy20000_seed1")
    bound = {r["name"]: r for r in tuned_rows(finished_tuning("bound_transformer_k1"))}
    assert "bound_transformer_k1_tuned_deen_easy20000_seed1" not in bound  # one model: its reverse test
    assert bound["bound_transformer_k1_tuned_ende_easy20000_seed1"]["reverse_test"]
    assert bound["bound_transformer_k1_tuned_unbound_ende_easy20000_seed3"]["flags"][-2] == "--pb_binding=none"
    assert len(bound) == 3 + 1 + 3  # seeds, easy50000, unbound seeds: its other comparisons are probes
    probes = {r["name"]: r["flags"] for r in EXPERIMENTS["tuning"] if r["config"].startswith("bound_transformer_")}
    for name, change in (("k0", "--refine_steps=0"), ("prefix_k1", "--pb_read=prefix"), ("denoise_k1", "--denoise_loss=1")):
        assert change in probes[f"tune_bound_transformer_{name}_t3"] and change not in probes["tune_bound_transformer_k1_t3"]


def accepted_by_nmt(command):
    """The configuration ``nmt.py`` would train from ``command`` (a training command), or its UserError:
    the flags parsed, a preset resolved and each flag checked against the run that reads it."""
    from rnnpb_nmt import cli, config as config_lib, registry

    given = cli.given_values(cli.parse(registry.models(), registry.tasks(), command[3:]))
    config = config_lib.Config.from_flat(given)
    config_lib.check_applicable(given, config)
    return config


def test_every_trial_and_final_row_trains_a_configuration_nmt_accepts(tmp_path):
    """No row fails at its start: the unbound variant, made by --pb_binding=none after the trial's
    flags, once kept the trial's --pb_binding_strength, which a run without the term refuses."""
    rows = list(EXPERIMENTS["tuning"])
    rows += [r for family in TUNING_FAMILIES for r in tuned_rows(finished_tuning(family))]
    rows += tuned_rows(finished_tuning("bound_transformer_k1", {"bound_transformer_prefix_k1": (70.0, 70.0)}))
    for row in rows:
        config = accepted_by_nmt(run_experiment.commands(row, "/d", str(tmp_path))[0])
        bound = row["config"].startswith("bound") and "_unbound_" not in row["name"]
        assert (config.to_flat()["pb_binding"] == "soft") == bound, row["name"]
    unbound = [r for r in rows if "_unbound_" in r["name"]]
    assert len(unbound) == 3 * (1 + sum(f.startswith("bound") for f in TUNING_FAMILIES))
    assert not any(f.startswith("--pb_binding_strength") for r in unbound for f in r["flags"])


def test_a_final_row_is_also_tested_on_the_open_vocabulary_set_and_keeps_its_own_tests_files(tmp_path):
    row = tuned_rows(finished_tuning("bound_pbstate_k1"))[0]
    _, tests, _ = run_experiment.commands(row, "/d", str(tmp_path))
    # the open-vocabulary tests first: their files are renamed before the row's own tests write theirs
    assert [name for name, _ in tests] == ["open_forward", "open_reverse", "forward", "reverse"]
    assert tests[0][1][-1] == "--test_set=/d/easy/easy-full/test.en"
    assert tests[1][1][-2:] == ["--reverse_translation", "--test_set=/d/easy/easy-full/test.de"]
    assert tests[2][1][-1] == "--test_set=/d/easy/easy20000/test.en"
    for folder, first in (("easy20000", "a b ."), ("easy-full", "e f .")):  # one open source sentence unseen
        (tmp_path / "data" / "easy" / folder).mkdir(parents=True)
        for part in ("train", "test"):
            for language, text in (("en", f"{first}\nc d .\n"), ("de", "x y .\nz w .\n")):
                (tmp_path / "data" / "easy" / folder / f"{part}.{language}").write_text(text)
    (tmp_path / "test_trans.txt").write_text("x y .\nz w .\n")
    (tmp_path / "testing_stats.json").write_text(json.dumps({"bleu": 100.0, "bleu_detokenized": 100.0,
                                                             "testing_time": 3}))
    found = run_experiment.test_result(row, str(tmp_path / "data"), str(tmp_path), tests[0][1], reverse=False,
                                       folder="easy/easy-full")
    assert found["bleu"] == 100.0 and found["unseen_sentences"] == 1
    assert (tmp_path / "open_test_trans.txt").is_file() and not (tmp_path / "test_trans.txt").exists()


def test_the_seed_1_row_starts_from_a_copy_of_its_trials_run_and_leaves_the_trial_as_it_was(tmp_path):
    trial, row = tmp_path / "tuning" / "tune_transformer_t5", tmp_path / "final" / "transformer_tuned_ende"
    said = []
    # no trial run here (its machine gone): nothing is copied, the row trains by the same command
    assert run_experiment.continue_trial(str(trial), str(row), log=said.append) is False
    assert not row.exists() and "holds no trained run" in said[0]
    (trial / "best").mkdir(parents=True)
    (trial / "hparams.json").write_text("{}")
    (trial / "best" / "weights").write_text("w")
    (tmp_path / "final").mkdir()
    assert run_experiment.continue_trial(str(trial), str(row), log=lambda m: None) is True
    assert (row / run_experiment.COPIED).read_text().strip() == str(trial)  # what the record's trial_run reads
    assert (row / "best" / "weights").read_text() == "w" and (row / "hparams.json").is_file()
    assert (trial / "best" / "weights").is_file() and not (tmp_path / "final" / "transformer_tuned_ende.part").exists()


def test_a_design_probe_trains_its_twins_point_with_its_own_flags_and_never_reaches_the_final_rows():
    from experiments import TUNING_PROBES
    for probe, spec in TUNING_PROBES.items():
        probes = [r for r in EXPERIMENTS["tuning"] if r["config"] == probe]
        twins = {r["trial"]: r for r in EXPERIMENTS["tuning"] if r["config"] == spec["twin"]}
        assert [r["trial"] for r in probes] == list(spec["trials"]) and probe not in TUNING_FAMILIES
        for r in probes:
            twin = twins[r["trial"]]
            assert r["point"] == twin["point"]
            assert set(r["flags"]) - set(twin["flags"]) == set(spec["flags"]) - set(TUNING_FAMILIES[spec["twin"]]["flags"]) \
                | ({f"--proposal_dropout={r['point']['dropout']}"} if spec.get("encoder_dropout") else set())
        finished = [{**r, "rung_dev_score": 99.0, "full_schedule": True, "best_dev_score": 99.0} for r in probes]
        assert not any(row["config"].startswith(probe) for row in tuned_rows(finished))


def test_the_probe_table_shows_each_probes_change_and_its_twins_score_at_the_same_point():
    records = [{"name": "tune_bound_transformer_k1_t3", "rung_dev_score": 52.2},
               {"name": "tune_bound_transformer_k0_t3", "rung_dev_score": 48.0}]
    lines = {line.split("|")[1].strip(): line for line in results_table.probe_table(records) if line.startswith("| bound")}
    assert lines["bound_transformer_k0"].endswith("| `--refine_steps=0` | 3 | 48.00 | 52.20 | – | – |")
    assert "| `--denoise_loss=1` | 3 | not run yet | 52.20 |" in lines["bound_transformer_denoise_k1"]
    assert "| `--pb_read=prefix` | 3 | not run yet | 52.20 | – | – |" in lines["bound_transformer_prefix_k1"]
    assert "--pb_pool=attention --proposal_dropout" in lines["bound_transformer_pool_k1"]
    assert "| bound_pbstate_k1 | `--proposal_dropout (the trial's dropout)` | 8 | not run yet |" in lines[
        "bound_pbstate_encdrop_k1"]


def test_the_refinement_sweep_table_lists_each_k_in_order_with_both_ways_and_is_absent_without_sweeps():
    assert results_table.refine_table([{"name": "tune_x_t3"}]) == []
    sweep = {"10": {"en→de": 50.0, "de→en": 52.5}, "2": {"en→de": 49.0, "de→en": 51.0}}
    lines = results_table.refine_table([{"name": "tune_x_t3", "refine_sweep": sweep}])
    assert lines[-3:] == ["| tune_x_t3 | 2 | en→de 49.00 / de→en 51.00 |", "| tune_x_t3 | 10 | en→de 50.00 / de→en 52.50 |", ""]


def test_a_probe_over_the_margin_goes_on_under_the_full_schedule_and_the_best_of_them_is_the_familys_pick():
    """A design probe more than PROBE_MARGIN over its twin's trial at the rung is promoted; the family's
    selection waits for every probe's rung and every promoted one's full schedule, then takes the best
    under it, and a selected probe's final rows carry its name and flags."""
    family, prefix, denoise = "bound_transformer_k1", "bound_transformer_prefix_k1", "bound_transformer_denoise_k1"
    # the probes' point is trial 3, where the twin has 40.00 by the rung (finished_tuning)
    records = finished_tuning(family, {prefix: (40.0 + PROBE_MARGIN + 0.01, None), denoise: (40.0 + PROBE_MARGIN, None)})
    assert promoted(records, prefix) == [f"tune_{prefix}_t3"] and promoted(records, denoise) == []
    assert selected(records, family) is None  # the promoted probe has not finished its full schedule
    assert selected([r for r in records if r["config"] != denoise], family) is None  # nor every probe its rung
    records = finished_tuning(family, {prefix: (45.0, 60.5)})
    assert selected(records, family)["name"] == f"tune_{family}_t5"  # 61.00 under the full schedule
    records = finished_tuning(family, {prefix: (45.0, 63.0)})
    pick = selected(records, family)
    assert pick["name"] == f"tune_{prefix}_t3"
    rows = {r["name"]: r for r in tuned_rows(records)}
    assert len(rows) == 3 + 1 + 3 and all(name.startswith(f"{prefix}_tuned_") for name in rows)
    seed2 = rows[f"{prefix}_tuned_ende_easy20000_seed2"]
    assert "--pb_read=prefix" in seed2["flags"] and seed2["selected_by"].startswith(
        f"design probe {prefix} at its twin's trial 3: dev BLEU 63.00")
    # how far ahead it was chosen: over the twin's promoted trial (61.00 under the full schedule)
    assert seed2["selected_by"].endswith(f"; the next finalist, tune_{family}_t5, 61.00, 2.000 below")
    assert rows[f"{prefix}_tuned_ende_easy20000_seed1"]["continues"] == f"tune_{prefix}_t3"
    assert "--pb_binding=none" in rows[f"{prefix}_tuned_unbound_ende_easy20000_seed3"]["flags"]
    text = "\n".join(results_table.probe_table(records))
    assert "| 45.00 | 40.00 | 20 of 30 | **63.00** (selected) |" in text


def test_while_the_selection_waits_the_headline_names_the_best_finished_finalist_and_what_it_waits_for():
    """Before a family is selected, its headline shows the best run finished under the full schedule
    (a probe's, if it leads) and counts the probes not yet at the rung and the finalists still training."""
    family, prefix, denoise = "bound_transformer_k1", "bound_transformer_prefix_k1", "bound_transformer_denoise_k1"
    records = finished_tuning(family, {prefix: (45.0, 63.0), denoise: (45.0, None)})
    text = results_table.selection_text([r for r in records if r["config"] != "bound_transformer_tied_k1"], family)
    assert text == (f"best under the full schedule so far: {prefix} at trial 3 63.00, of 2 finished; the selection "
                    "waits for 1 design probe not at the rung yet, 1 finalist still under the full schedule")
    records = finished_tuning(family, {prefix: (45.0, 60.0)})
    assert results_table.selection_text([r for r in records if r["config"] != "bound_transformer_tied_k1"], family) == (
        "best under the full schedule so far: trial 5 61.00, of 2 finished; the selection waits for "
        "1 design probe not at the rung yet")
    assert results_table.selection_text(records, family) == "trial 5, **61.00**"
