"""run_scripts/benchmark.py --part=translation_cost: a bound model and a seq-to-seq timed side by side."""

import json
import subprocess
import sys

import pytest

from helpers import ROOT

import results_table

FIXTURE = ROOT / "tests" / "fixtures" / "stack-py311"  # tiny trained working directories (tests/test_stacks.py)
KEYS = ("translation_seconds_per_1000_bound", "translation_seconds_per_1000_seq2seq",
        "translation_cost_ratio_bound_vs_seq2seq")


def benchmark(*args):
    return subprocess.run([sys.executable, str(ROOT / "run_scripts" / "benchmark.py"), "--part=translation_cost",
                           *map(str, args)], capture_output=True, text=True, cwd=ROOT, timeout=600)


@pytest.mark.long  # trains two models and starts the benchmark
def test_both_models_translate_the_test_set_and_their_costs_are_recorded():
    proc = benchmark(f"--bound_dir={FIXTURE / 'rnnpb'}", f"--seq2seq_dir={FIXTURE / 'encdec'}",
                     f"--test_set={FIXTURE / 'corpus' / 'test.en'}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = json.loads(proc.stdout.strip().split("\n")[-1])
    assert results["translation_test_sentences"] == len((FIXTURE / "corpus" / "test.en").read_text().splitlines())
    assert all(results[key] > 0 for key in KEYS)
    ratio = results["translation_seconds_per_1000_bound"] / results["translation_seconds_per_1000_seq2seq"]
    assert results["translation_cost_ratio_bound_vs_seq2seq"] == pytest.approx(ratio)
    assert not any(key.startswith("train_step") for key in results)  # this part alone


@pytest.mark.slow  # starts the benchmark script (it sets the process's threads, so not in this one)
@pytest.mark.parametrize("args, message", [
    ([], "needs --bound_dir, --seq2seq_dir and --test_set"),
    ([f"--bound_dir={FIXTURE / 'encdec'}", f"--seq2seq_dir={FIXTURE / 'encdec'}",
      f"--test_set={FIXTURE / 'corpus' / 'test.en'}"], "its model is encdec, not rnnpbnmt"),
])
def test_missing_or_wrong_working_directories_are_one_line_errors(args, message):
    proc = benchmark(*args)
    assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr


def test_the_results_table_shows_the_translation_cost_keys():
    run = {"date": "D", "commit": "C", "machine": "M", "command": "X", "note": "",
           "results": dict(zip(KEYS, (300.0, 20.0, 15.0)))}
    lines = results_table.benchmark_table({"full_translation_cost": run})
    for key, value in zip(KEYS, ("300", "20", "15")):
        assert any(line.startswith(f"| `{key}` | {value} |") for line in lines)
