"""run_scripts/scale_benchmark.py (benchmark.py --part=scale): the corpora it makes and the page's
table and verdicts; the measurements themselves are the benchmark's, not the suite's."""

import pytest

import results_table
import scale_benchmark


@pytest.fixture
def small_base(monkeypatch):
    monkeypatch.setattr(scale_benchmark, "BASE_PAIRS", 40)
    monkeypatch.setattr(scale_benchmark, "DEV_PAIRS", 3)


def read(path):
    return path.read_text(encoding="utf-8").splitlines()


@pytest.mark.slow  # generates the demo grammar's base corpus in a process of its own
def test_each_pair_joins_three_pairs_of_the_base_the_same_for_the_same_size(tmp_path, small_base):
    scale_benchmark.make_corpus(50, str(tmp_path / "corpus50"))
    base = {lang: read(tmp_path / "base" / f"train.{lang}") for lang in ("en", "de")}
    train = {lang: read(tmp_path / "corpus50" / f"train.{lang}") for lang in ("en", "de")}
    assert len(train["en"]) == len(train["de"]) == 50
    en_index = {line: k for k, line in enumerate(base["en"])}
    for en, de in zip(train["en"], train["de"]):
        assert en.endswith(" .")  # each sentence of the demo grammar ends with " ." and has no other
        drawn = [en_index[sentence + " ."] for sentence in en[:-2].split(" . ")]
        assert len(drawn) == 3
        assert de == " ".join(base["de"][k] for k in drawn)  # the German of the same three base pairs
    dev = read(tmp_path / "corpus50" / "dev.en")
    assert dev == [" ".join(read(tmp_path / "base" / "dev.en")[3 * k:3 * k + 3]) for k in range(3)]
    scale_benchmark.make_corpus(50, str(tmp_path / "again"))
    assert read(tmp_path / "again" / "train.de") == train["de"]
    scale_benchmark.make_corpus(60, str(tmp_path / "corpus60"))
    assert read(tmp_path / "corpus60" / "train.en")[:50] != train["en"]  # another size, another draw


def size(pairs, memory, prepare_seconds, first_step=10.0, lists=True):
    keys = {"pairs": pairs, "peak_prepare_memory_mb": memory, "prepare_main_memory_mb": memory - 10,
            "prepare_worker_memory_mb": 500.0, "prepare_seconds": prepare_seconds, "peak_train_memory_mb": memory,
            "seconds_to_first_step": first_step, "train_target_tokens_per_second": 20000.0}
    return keys | ({"peak_lists_memory_mb": 9000.0, "lists_seconds": 60.0} if lists else {})


def scale_run(*sizes):
    return {"date": "D", "commit": "C", "machine": "M", "command": "python3 run_scripts/benchmark.py --part=scale",
            "note": "N", "results": {"quick": False, "scale": list(sizes)}}


def test_the_page_has_a_row_a_size_and_judges_the_largest_against_the_smallest():
    run = scale_run(size(4_500_000, 1000.0, 900.0, first_step=30.0, lists=False), size(500_000, 700.0, 100.0))
    lines = results_table.benchmark_table({"full_scale": run})
    assert "full_scale" not in lines[0]  # not a column of the main table
    rows = [line for line in lines if line.startswith("| 500,000") or line.startswith("| 4,500,000")]
    assert rows[0].startswith("| 500,000 | 100.0 | 200.0 | 700 (690 / 500) |") and "9000, 60.0" in rows[0]
    assert rows[1].startswith("| 4,500,000 | 900.0 | 200.0 |") and "– (not measured)" in rows[1]
    verdicts = "\n".join(line for line in lines if line.startswith("- "))
    assert "peak memory of preparing 1000 MB (limit 4096) ✓, +43% over the smaller corpus's (limit +20%) ✗" in verdicts
    assert "the first step 30.0 s after the start of a prepared run (limit 60 s) ✓" in verdicts
    assert "preparation 1.00× the smaller corpus's seconds a pair (linear: at most 1.1×) ✓" in verdicts


def test_growth_within_the_limits_is_met_and_a_quick_mode_is_not_judged():
    sizes = size(500_000, 700.0, 100.0), size(4_500_000, 800.0, 1200.0, first_step=61.0)
    verdicts = results_table.scale_verdicts("full_scale", *sizes)
    assert "+14% over the smaller corpus's (limit +20%) ✓" in verdicts[1]
    assert verdicts[3].endswith("(limit 60 s) ✗;") and "1.33×" in verdicts[4] and verdicts[4].endswith("✗.")
    assert not any("✓" in line or "✗" in line for line in results_table.scale_verdicts("quick_scale", *sizes))
