"""run_scripts/peer_opennmt.py (benchmark.py --part=peer_opennmt): the parts that need no OpenNMT-tf:
its configuration and model file, its log read, our command's step count, the keys and the page."""

import ast
import datetime
import json
import os
import subprocess
import sys

import pytest

from helpers import ROOT

import peer_opennmt
import results_table
from rnnpb_nmt.errors import UserError

# OpenNMT-tf 2.32's reports (as its quick run logged them, with other rates).
LOG = """2026-12-06 08:25:41.749000: I runner.py:310] Number of model weights: 92 (trainable = 92, non trainable = 0)
2026-12-06 08:25:49.601000: I runner.py:310] Step = 10 ; steps/s = 2.00, tokens/s = 1900 (900 source, 1000 target) \
; Learning rate = 0.001000 ; Loss = 32.086060
2026-12-06 08:25:54.714000: I runner.py:310] Step = 20 ; steps/s = 10.00, tokens/s = 9500 (4500 source, 5000 \
target) ; Learning rate = 0.001000 ; Loss = 29.473995
2026-12-06 08:26:00.037000: I runner.py:310] Step = 40 ; steps/s = 5.00, tokens/s = 5700 (2700 source, 3000 target) \
; Learning rate = 0.001000 ; Loss = 28.507633
"""


def test_the_log_gives_the_intervals_and_the_steady_rate_leaves_the_first_out():
    intervals, logged_target = peer_opennmt.peer_intervals(LOG)
    assert intervals == [(10, 5.0), (10, 1.0), (20, 4.0)]
    assert peer_opennmt.steady_steps_per_second(intervals) == pytest.approx(30 / 5.0)
    assert logged_target == 4000  # the reports after the first
    with pytest.raises(UserError, match="no 'Step = N"):
        peer_opennmt.peer_intervals("I runner.py] Training starts\n")


def test_the_peer_config_is_ours_settings(tmp_path):
    files = {"train_source": "a.en", "train_target": "a.de", "source_vocabulary": "v.en", "target_vocabulary": "v.de"}
    config = peer_opennmt.peer_config(files, str(tmp_path), steps=1500, report_every=100, beam=4)
    config = json.loads(json.dumps(config))  # what is written (JSON, read by OpenNMT-tf as YAML)
    assert config["data"] == {"train_features_file": "a.en", "train_labels_file": "a.de",
                              "source_vocabulary": "v.en", "target_vocabulary": "v.de"}
    assert config["params"] == {"optimizer": "Adam", "learning_rate": 0.001, "optimizer_params": {"global_clipnorm": 1.0},
                                "beam_width": 4, "num_hypotheses": 1}
    train = config["train"]
    assert (train["batch_size"], train["batch_type"], train["max_step"]) == (64, "examples", 1500)
    assert (train["save_summary_steps"], train["save_checkpoints_steps"]) == (100, 1500)
    assert train["length_bucket_width"] is None  # random batches, as ours
    assert config["infer"] == {"batch_size": 256, "batch_type": "examples", "length_bucket_width": 1}


def test_the_model_file_builds_a_transformer_of_our_sizes():
    tree = ast.parse(peer_opennmt.MODEL_FILE)
    call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "Transformer")
    arguments = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
    assert arguments == {"num_layers": 2, "num_units": 192, "num_heads": 4, "ffn_inner_dim": 768,
                         "dropout": 0.0, "attention_dropout": 0.0, "ffn_dropout": 0.0}
    ours = dict(flag.lstrip("-").split("=") for flag in peer_opennmt.OUR_MODEL)
    assert (ours["num_layers"], ours["units"], ours["embedding_size"], ours["heads"], ours["ffn_units"]) == \
        ("2", "192", "192", "4", "768")


def test_our_command_trains_the_same_steps_in_epochs_of_one_report_interval():
    files = {k: k for k in ("train_source", "train_target", "dev_source", "dev_target")}
    command = peer_opennmt.our_training_command(files, "W", steps=1500, report_every=100)
    flags = dict(arg.lstrip("-").split("=", 1) for arg in command if arg.startswith("--") and "=" in arg)
    assert int(flags["epoch_examples"]) * int(flags["max_epochs"]) == 1500 * int(flags["batch_size"])
    assert int(flags["epoch_examples"]) == 100 * int(flags["batch_size"])
    assert (flags["optimizer"], flags["lr_schedule"], float(flags["learning_rate"])) == ("adam", "constant", 0.001)


def test_the_vocabularies_hold_every_training_word_and_the_test_set_is_cut(tmp_path):
    folder = tmp_path / "easy" / "easy20000"
    folder.mkdir(parents=True)
    for part, lines in (("train", ["a b a", "c a"]), ("dev", ["a"]), ("test", ["a b", "c", "b a"])):
        for language in ("en", "de"):
            (folder / f"{part}.{language}").write_text("".join(line + "\n" for line in lines))
    files = peer_opennmt.prepare(str(tmp_path), str(tmp_path / "out"), test_sentences=2)
    # OpenNMT-tf's own specials first (it takes the first three lines as them), then by frequency
    assert open(files["source_vocabulary"]).read().split() == ["<blank>", "<s>", "</s>", "a", "b", "c"]
    assert open(files["test_target"]).read() == "a b\nc\n"
    assert peer_opennmt.mean_target_tokens(files["train_target"]) == pytest.approx((4 + 3) / 2)


@pytest.mark.parametrize("steps", [50, 150, 100])
def test_a_step_count_that_is_no_whole_number_of_intervals_is_refused_before_anything_runs(tmp_path, steps):
    with pytest.raises(UserError, match=f"--peer_steps={steps}: needs to be a multiple of 100"):
        peer_opennmt.run(str(tmp_path), str(tmp_path / "out"), str(tmp_path / "env"), steps, 100, 0)
    assert not (tmp_path / "env").exists()


def test_a_core_this_process_may_not_use_is_refused():
    with pytest.raises(UserError, match="--peer_core=100000: not one of"):
        peer_opennmt.check_core(100000)


def recorded_run(results):
    return {"date": "D", "commit": "C", "machine": "M", "command": "python3 run_scripts/benchmark.py X", "note": "N",
            "results": results}


def test_the_page_puts_both_side_by_side_with_ours_against_theirs():
    results = {"quick": False, "cpu_cores": 2, "tensorflow": "2.15.1", "peer_opennmt_version": "2.32.0",
               "peer_tensorflow": "2.12.1", "peer_train_steps": 1500, "peer_report_every": 100, "peer_core": 1,
               "peer_test_sentences": 2000}
    results.update({key: 10.0 for key in peer_opennmt.figure_keys() if key.startswith("peer_opennmt_")})
    results.update({key: 8.0 for key in peer_opennmt.figure_keys() if key.startswith("ours_")})
    results.update(ours_test_bleu_beam10=10.5, peer_opennmt_logged_target_words_per_second=6000.0)
    lines = results_table.benchmark_table({"full": recorded_run({"train_step_rnnpb_ms": 1.0}),
                                           "full_peer_opennmt": recorded_run(results)})
    assert "full_peer_opennmt" not in lines[0]  # not a column of the main table
    rows = {line.split(" | ")[0].lstrip("| "): line.split(" | ") for line in lines if line.startswith("| ")}
    assert rows["train_target_tokens_per_second"][1:5] == ["10.00", "8.00", "0.80× ✗", "≥ 1 (stretch ≥ 1.2)"]
    assert rows["translate_sentences_per_second_beam4"][3] == "0.80× ✗"
    assert rows["test_bleu_beam4"][3] == "-2.00 ✗" and rows["test_bleu_beam10"][3] == "+0.50 ✓"
    assert rows["train_wall_seconds"][3] == "0.80×"  # not judged
    text = "\n".join(lines)
    assert "trained 1500 steps by each, one after the other on core 1" in text
    assert "OpenNMT-tf 2.32.0 with TensorFlow 2.12.1" in text and "6000 target words/s" in text
    assert not any(key in text for key in peer_opennmt.figure_keys())  # figures by name, not keys, in the main table


def test_a_quick_side_by_side_is_shown_but_not_judged():
    results = {key: 1.0 for key in peer_opennmt.figure_keys()}
    results.update({key: 1 for key in peer_opennmt.SETTING_KEYS}, tensorflow="2.15.1")
    lines = results_table.peer_table("quick_peer_opennmt", recorded_run(results))
    assert not any("✓" in line or "✗" in line for line in lines)


@pytest.mark.slow  # starts the benchmark script
@pytest.mark.parametrize("flag, message", [
    ("--peer_steps=15", "--peer_steps=15: needs to be a multiple of 10 steps"),
    ("--peer_core=100000", "--peer_core=100000: not one of this machine's cores"),
])
def test_bad_peer_flags_are_one_line_errors_before_anything_is_made(tmp_path, flag, message):
    proc = subprocess.run([sys.executable, str(ROOT / "run_scripts" / "benchmark.py"), "--part=peer_opennmt", "--quick",
                           f"--peer_env={tmp_path / 'env'}", f"--out={tmp_path / 'out'}", flag],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert message in proc.stderr.strip().splitlines()[-1]
    assert not (tmp_path / "env").exists() and not (tmp_path / "out").exists()


def test_the_inference_log_says_when_the_checkpoint_was_read():
    log = ("2026-12-06 08:30:28.173000: I inputter.py:316]  - special tokens: BOS=yes, EOS=yes\n"
           "2026-12-06 08:30:28.212000: I runner.py:462] Restored checkpoint /tmp/run/ckpt-40\n"
           "2026-12-06 08:30:30.084000: I runner.py:471] Tracing and optimizing the inference graph...\n")
    assert peer_opennmt.restored_at(log) == datetime.datetime(2026, 12, 6, 8, 30, 28, 212000).timestamp()
    with pytest.raises(UserError, match="no 'Restored checkpoint' line"):
        peer_opennmt.restored_at(log.splitlines()[0])


def fake_setup(pip_fails):
    """subprocess.run for ensure_peer_env: ``venv`` makes the interpreter, pip fails or not."""
    def run(command, **kwargs):
        if command[1:3] == ["-m", "venv"]:
            os.makedirs(os.path.join(command[3], "bin"))
            open(os.path.join(command[3], "bin", "python"), "w").close()
        failed = pip_fails and "pip" in command
        return subprocess.CompletedProcess(command, int(failed), "", "ERROR: No matching distribution\n" * failed)
    return run


def test_the_peer_env_is_made_beside_and_moved_into_place_only_when_pip_has_finished(tmp_path, monkeypatch):
    path = str(tmp_path / "cache" / "env")
    monkeypatch.setattr(peer_opennmt.shutil, "which", lambda name: name)
    monkeypatch.setattr(peer_opennmt.subprocess, "run", fake_setup(pip_fails=True))
    with pytest.raises(UserError, match=r"--peer_env=.*: pip install 'opennmt-tf\[tensorflow\]==2.32.0' failed: "
                                        "ERROR: No matching distribution$"):
        peer_opennmt.ensure_peer_env(path, log=lambda m: None)
    assert not os.path.exists(path)  # never taken for a finished set-up
    monkeypatch.setattr(peer_opennmt.subprocess, "run", fake_setup(pip_fails=False))
    assert peer_opennmt.ensure_peer_env(path, log=lambda m: None) == os.path.join(path, "bin", "python")
    assert os.path.isfile(os.path.join(path, "bin", "python")) and not os.path.exists(path + ".partial")
    monkeypatch.setattr(peer_opennmt.subprocess, "run", None)  # made: nothing runs again
    assert peer_opennmt.ensure_peer_env(path) == os.path.join(path, "bin", "python")


def test_no_python_to_make_the_peer_env_with_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr(peer_opennmt.shutil, "which", lambda name: None)
    with pytest.raises(UserError, match="needs python3.11, which is not on PATH"):
        peer_opennmt.ensure_peer_env(str(tmp_path / "env"))
