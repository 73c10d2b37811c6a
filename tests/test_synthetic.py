"""The synthetic tasks of Grefenstette et al. 2015 §4 and their accuracies (§4.3)."""

import hashlib

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from rnnpb_nmt.data.dataset import read_sentences
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.metrics import coarse_accuracy, fine_accuracy
from rnnpb_nmt.tasks.transduction import itg, synthetic

# Examples generate whole corpora: the machine's load, not the program, decides how long they take.
no_deadline = settings(deadline=None)
lengths = st.tuples(st.integers(1, 30), st.integers(0, 30)).map(lambda a: (a[0], a[0] + a[1]))


@no_deadline
@given(st.sampled_from(synthetic.TASKS), st.integers(0, 2**32 - 1))
def test_the_seed_decides_everything(task, seed):
    first = synthetic.generate(task, 5, 3, 30, seed)
    assert synthetic.generate(task, 5, 3, 30, seed) == first
    assert synthetic.generate(task, 5, 3, 30, seed + 1) != first


@no_deadline
@given(st.sampled_from(synthetic.SEQUENCE_TASKS), lengths, st.integers(1, 200), st.integers(0, 2**32 - 1))
def test_sequence_tasks_respect_lengths_and_vocabulary(task, min_max, vocab, seed):
    min_len, max_len = min_max
    assume(not (task == "bigram_flip" and min_len == max_len and min_len % 2))
    symbols = {f"x{k}" for k in range(1, vocab + 1)}
    for source, target in synthetic.generate(task, 8, min_len, max_len, seed, vocab_size=vocab):
        assert min_len <= len(source) <= max_len and len(target) == len(source)
        assert set(source) <= symbols
        if task == "bigram_flip":
            assert len(source) % 2 == 0


@no_deadline
@given(st.integers(0, 2**32 - 1))
def test_sequence_targets(seed):
    for task, expected in [("copy", lambda s: s), ("reverse", lambda s: s[::-1]),
                           ("bigram_flip", lambda s: np.array(s).reshape(-1, 2)[:, ::-1].ravel().tolist())]:
        for source, target in synthetic.generate(task, 5, 1, 20, seed):
            assert target == expected(source)


def test_all_source_lengths_and_symbols_occur():
    pairs = synthetic.generate("copy", 2000, 8, 64, seed=0, vocab_size=128)
    assert {len(s) for s, _ in pairs} == set(range(8, 65))
    assert {w for s, _ in pairs for w in s} == {f"x{k}" for k in range(1, 129)}


def paper_tree(grammar, node):
    """A derivation tree from a compact notation: (nonterminal, rule, *children) or a word."""
    if isinstance(node, str):
        name, _, index = node.partition(":")
        return (name, int(index)) if index else (name,)
    symbol, rule, *children = node
    return symbol, rule, [paper_tree(grammar, child) for child in children]


def test_svo_grammar_derives_the_papers_sample():
    # A -> S v O ||| S O v;  S -> s | s RC;  O -> o | o O | S;  RC -> rp S v O (straight).
    tree = ("A", 0, ("S", 0, "s:1"), "v:28",
            ("O", 1, "o:5", ("O", 1, "o:7", ("O", 2, ("S", 1, "s:15", (
                "RC", 0, "rp", ("S", 0, "s:19"), "v:16", ("O", 1, "o:10", ("O", 0, "o:24"))))))))
    source, target = itg.yields(itg.SVO_SOV, paper_tree(itg.SVO_SOV, tree))
    assert " ".join(source) == "si1 vi28 oi5 oi7 si15 rpi si19 vi16 oi10 oi24"
    assert " ".join(target) == "so1 oo5 oo7 so15 rpo so19 vo16 oo10 oo24 vo28"


def test_gender_grammar_derives_the_papers_sample():
    # The sample is a VP: V NP, NP -> N and NP -> N; the target's articles follow the nouns' genders.
    tree = ("VP", 0, "V:11", ("NP", 1, ("N", 2, ("Nn", 0, "the_n", "Nt:19")), "and",
                              ("NP", 0, ("N", 0, ("Nm", 0, "the_m", "M:17")))))
    source, target = itg.yields(itg.GENDER, paper_tree(itg.GENDER, tree))
    assert " ".join(source) == "we11 the en19 and the em17"
    assert " ".join(target) == "wg11 das gn19 und der gm17"


def test_the_papers_svo_grammar_derives_its_sample():
    # Table 1 (a): A -> S v O ||| S O v;  S -> S S | S rp S v | s;  O -> O O | S rp S v | o.
    tree = ("A", 0, ("S", 2, "s:1"), "v:28",
            ("O", 0, ("O", 2, "o:5"), ("O", 0, ("O", 2, "o:7"), ("O", 0, (
                "O", 1, ("S", 2, "s:15"), "rp", ("S", 2, "s:19"), "v:16"), ("O", 0, ("O", 2, "o:10"), ("O", 2, "o:24"))))))
    source, target = itg.yields(itg.SVO_SOV_PAPER, paper_tree(itg.SVO_SOV_PAPER, tree))
    assert " ".join(source) == "si1 vi28 oi5 oi7 si15 rpi si19 vi16 oi10 oi24"
    assert " ".join(target) == "so1 oo5 oo7 so15 rpo so19 vo16 oo10 oo24 vo28"


def test_the_papers_gender_grammar_derives_its_sample():
    # Table 1 (b): the sample is a V -> W B, with B -> N and N.
    tree = ("V", 0, "W:11", ("B", 1, ("N", 2, "the_n", "Nt:19"), "and", ("N", 0, "the_m", "M:17")))
    source, target = itg.yields(itg.GENDER_PAPER, paper_tree(itg.GENDER_PAPER, tree))
    assert " ".join(source) == "we11 the en19 and the em17"
    assert " ".join(target) == "wg11 das gn19 und der gm17"


@pytest.mark.parametrize("grammar", list(itg.GRAMMARS.values()))
def test_each_nonterminals_rule_probabilities_sum_to_one(grammar):
    for rules in (entry for entry in grammar.values() if isinstance(entry, list)):
        assert sum(rule.prob for rule in rules) == pytest.approx(1)


@pytest.mark.parametrize("task, verb_pairs", [("svo_sov_paper", True), ("svo_sov", False)])
def test_relative_clauses_after_subjects_and_objects_with_an_object_in_ours_alone(task, verb_pairs):
    """Both grammars put relative clauses in subjects and objects; Table 1's (rp S v) has no object
    of its own, so its verb can be followed by the main verb or another clause's verb at once."""
    sources = [source for source, _ in synthetic.generate(task, 300, 8, 64, seed=3, vocab_size=99)]
    assert any("rpi" in source[:main_verb(source)] for source in sources)
    assert any("rpi" in source[main_verb(source):] for source in sources)
    adjacent = any(a.startswith("vi") and b.startswith("vi") for source in sources for a, b in zip(source, source[1:]))
    assert adjacent == verb_pairs


def main_verb(source):
    """Every relative clause (after an "rp") has one verb, all before the main verb: the main verb
    is the first one with as many verbs as relative pronouns before it (both grammars)."""
    return next(i for i, w in enumerate(source)
                if w.startswith("v") and sum(x.startswith("v") for x in source[:i]) == source[:i].count("rpi"))


def to_target_word(word):
    """A source word of the SVO grammar as the target spells it (si3 -> so3, rpi -> rpo)."""
    return word[0] + "o" + word[2:] if word[0] in "svo" else "rpo"


@no_deadline
@given(st.sampled_from(["svo_sov", "svo_sov_paper"]), st.integers(0, 2**32 - 1))
def test_svo_target_moves_the_main_verb_to_the_end(task, seed):
    for source, target in synthetic.generate(task, 5, 3, 40, seed):
        main = main_verb(source)
        moved = source[:main] + source[main + 1:] + [source[main]]
        assert target == [to_target_word(w) for w in moved]


ARTICLES = {("the", "m"): "der", ("the", "f"): "die", ("the", "n"): "das",
            ("a", "m"): "ein", ("a", "f"): "eine", ("a", "n"): "ein"}


@no_deadline
@given(st.sampled_from(["gender_conjugation", "gender_conjugation_paper"]), st.integers(0, 2**32 - 1))
def test_gender_target_articles_agree_with_the_next_noun(task, seed):
    for source, target in synthetic.generate(task, 5, 3, 40, seed):
        expected = []
        for word, following in zip(source, source[1:] + [""]):
            if word in ("the", "a"):
                expected.append(ARTICLES[word, following[1]])
            else:
                expected.append({"and": "und", "or": "oder"}.get(
                    word, "g" + word[1:] if word[0] == "e" else "wg" + word[2:]))
        assert target == expected


@pytest.mark.parametrize("task", ["svo_sov", "gender_conjugation"])
def test_our_grammars_lengths_8_to_128_are_roughly_uniform(task):
    pairs = synthetic.generate(task, 600, 8, 128, seed=0)
    source_lengths = [len(s) for s, _ in pairs]
    assert all(len(t) == n for (_, t), n in zip(pairs, source_lengths))
    counts, _ = np.histogram(source_lengths, bins=[8, 28, 48, 68, 88, 108, 129])
    shares = counts / len(pairs)
    print(task, "source lengths 8-27, 28-47, ..., 108-128:", np.round(shares, 3))
    # Uniform would be 1/6 = 0.167 per bin.
    assert shares.min() > 0.10 and shares.max() < 0.25


@pytest.mark.parametrize("task, classes", [("svo_sov", 3), ("gender_conjugation", 4), ("svo_sov_paper", 3),
                                           ("gender_conjugation_paper", 4)])
def test_word_classes_split_the_vocabulary(task, classes):
    words = {w for s, _ in synthetic.generate(task, 50, 8, 40, seed=1, vocab_size=3 * classes) for w in s}
    indices = {int(w.lstrip("abcdefghijklmnopqrstuvwxyz_")) for w in words if w[-1].isdigit()}
    assert indices == {1, 2, 3}


@pytest.mark.parametrize("args, message", [
    (("sort", 3, 8, 64, 0), "task=sort"),
    (("copy", 3, 65, 64, 0), "min_len=65 > max_len=64"),
    (("copy", 3, 0, 64, 0), "min_len=0"),
    (("copy", -1, 8, 64, 0), "n=-1"),
    (("bigram_flip", 3, 7, 7, 0), "even"),
    (("gender_conjugation", 3, 8, 64, 0, 3), "vocab_size=3"),
    (("svo_sov", 3, 1, 2, 0), "max_len=2"),
    (("svo_sov_paper", 1, 500, 600, 0), "min_len=500, max_len=600: the grammar almost never makes such lengths"),
])
def test_bad_arguments_are_user_errors(args, message):
    with pytest.raises(UserError, match=message):
        synthetic.generate(*args)


def test_written_files_are_line_aligned_and_readable_by_the_toolkit(tmp_path):
    pairs = synthetic.generate("svo_sov", 20, 8, 64, seed=2)
    src, tgt = synthetic.write(pairs, str(tmp_path / "svo"), "train")
    assert (src, tgt) == (str(tmp_path / "svo" / "train.src"), str(tmp_path / "svo" / "train.tgt"))
    assert list(zip(read_sentences(src), read_sentences(tgt))) == pairs


def test_coarse_and_fine_accuracy_by_hand():
    targets = [["a", "b", "c", "</s>"], ["a", "b", "</s>"], ["c", "</s>"]]
    predictions = [["a", "b", "c", "</s>"],  # right: 4/4
                   ["a", "c", "</s>"],       # first error at 2: 1/3
                   ["c", "</s>", "c"]]       # runs on after its EOS: 2/2 before the error
    assert coarse_accuracy(predictions, targets) == pytest.approx(1 / 3)
    assert fine_accuracy(predictions, targets) == pytest.approx((1 + 1 / 3 + 1) / 3)


@given(st.lists(st.lists(st.sampled_from("ab"), min_size=1, max_size=6), min_size=1, max_size=5), st.data())
def test_fine_accuracy_is_at_least_coarse_and_one_exactly_when_all_right(targets, data):
    predictions = [data.draw(st.lists(st.sampled_from("ab"), max_size=7)) for _ in targets]
    coarse, fine = coarse_accuracy(predictions, targets), fine_accuracy(predictions, targets)
    assert 0 <= coarse <= fine <= 1
    assert (coarse == 1) == (predictions == targets)
    assert coarse_accuracy(targets, targets) == fine_accuracy(targets, targets) == 1


@pytest.mark.parametrize("task", synthetic.TASKS)
def test_the_alphabet_is_every_symbol_the_generator_draws(task):
    """--fresh_data refuses training files without a symbol of the alphabet: it must be exact."""
    vocab_size = 12
    pairs = synthetic.generate(task, 300, 8, 64, seed=5, vocab_size=vocab_size)
    drawn = tuple({symbol for pair in pairs for symbol in pair[side]} for side in (0, 1))
    assert drawn == synthetic.alphabet(task, vocab_size)


def test_the_generator_file_round_trips_and_a_bad_one_names_itself(tmp_path):
    spec = {"task": "svo_sov", "seed": 3, "min_len": 8, "max_len": 64, "vocab_size": 12, "train": 10}
    synthetic.write_generator(tmp_path, spec)
    read = synthetic.read_generator(tmp_path)
    assert read == {k: v for k, v in spec.items() if k != "train"}
    assert synthetic.epoch_pairs(read, 4, 2) == synthetic.epoch_pairs(read, 4, 2) != synthetic.epoch_pairs(read, 4, 3)
    (tmp_path / "generator.json").write_text('{"task": "sorting", "seed": 1, "min_len": 8, "max_len": 64, "vocab_size": 9}')
    with pytest.raises(UserError, match=r"generator.json: task=sorting: unknown synthetic task"):
        synthetic.read_generator(tmp_path)
    (tmp_path / "generator.json").write_text("{")
    with pytest.raises(UserError, match=r"generator.json: unreadable"):
        synthetic.read_generator(tmp_path)


def test_drawing_in_blocks_gives_the_numbers_of_single_draws():
    """The grammars draw their choices in blocks for speed; the pairs must not change with it."""
    blocks, single = itg.uniforms(np.random.default_rng([1, 4, 2]), block=64), np.random.default_rng([1, 4, 2])
    assert [next(blocks) for _ in range(200)] == [single.random() for _ in range(200)]


@pytest.mark.parametrize("task, digest", [("svo_sov", "192ca81c30211d12"), ("gender_conjugation", "6c4d31df7731ad9a")])
def test_the_recorded_cells_training_pairs_are_drawn_again(task, digest):
    """The first 100 training pairs of data/generate_transduction.py --seed=1 (stream (1, 0)), as
    drawn for the recorded cells (2026-11-24 to 11-26) by the one-draw-per-call code of 2026-11-23:
    a recorded cell's generate_command must write the files it trained on."""
    pairs = synthetic.generate(task, 100, 8, 64, seed=[1, 0])
    text = "\n".join(" ".join(source) + " ||| " + " ".join(target) for source, target in pairs)
    assert hashlib.sha256(text.encode()).hexdigest()[:16] == digest
