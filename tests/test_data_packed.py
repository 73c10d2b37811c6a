"""The packed corpus (issue 91): the same ids, vocabularies, sizes and batches as the lists of
per-sentence arrays it replaces, and its cache in a run's prepared/ directory."""

import collections
import concurrent.futures
import os

import numpy as np
import pytest
import tensorflow as tf

from helpers import tiny_config
from rnnpb_nmt.data import corpus
from hypothesis import given, settings, strategies as st

from rnnpb_nmt.data.dataset import (BUCKET_BOUNDARIES, encode_all, evaluation_batches, make_dataset, padded_lengths,
                                    padded_rows, read_lines, read_sentences, token_batches)
from rnnpb_nmt.data import parts
from rnnpb_nmt.data.packed import Draft, PackedSentences, VectorFile, pack
from rnnpb_nmt.data.vocabulary import PAD_ID, Vocabulary
from rnnpb_nmt.errors import UserError

SENTENCES = [["b", "a", "b"], ["c"], ["d", "c", "a", "e"], ["e", "b"], ["a"]]


def packed(sentences, vocab):
    return Draft(iter(sentences)).encode(vocab)


def reference_vocabulary(sentences, max_size=None):
    """Vocabulary.build as it was before issue 91: counts, ties by first occurrence."""
    counts = collections.Counter(w for s in sentences for w in s)
    order = {}
    for s in sentences:
        for w in s:
            order.setdefault(w, len(order))
    words = sorted(counts, key=lambda w: (-counts[w], order[w]))
    return Vocabulary(words[:max_size] if max_size is not None else words)


def reference_load(files, config, vocabularies=None):
    """corpus.load as it was before issue 91: every file a list of token lists, then encoded."""
    train1, train2, dev1, dev2 = (read_sentences(files[name]) for name in ("train_set1", "train_set2", "dev_set1", "dev_set2"))
    vocab1, vocab2 = vocabularies or (Vocabulary.build(train1, config.data.vocab1_max), None)
    vocab2 = vocab2 or (vocab1 if config.model.autoencode else Vocabulary.build(train2, config.data.vocab2_max))
    mono = {side: encode_all(vocab1 if side == 1 else vocab2, read_sentences(files[f"mono_set{side}"]))
            for side in (1, 2) if files.get(f"mono_set{side}")}
    return corpus.Corpus(vocab1, vocab2, encode_all(vocab1, train1), encode_all(vocab2, train2),
                         encode_all(vocab1, dev1), encode_all(vocab2, dev2), mono.get(1), mono.get(2))


def files_of(demo_data, **extra):
    files = {f"{kind}_set{side}": str(demo_data / f"{kind}.{lang}")
             for kind in ("train", "dev") for side, lang in ((1, "en"), (2, "de"))}
    return dict(files, **extra)


def assert_same_sentences(got, expected):
    assert len(got) == len(expected)
    assert all(g.dtype == np.int32 and np.array_equal(g, e) for g, e in zip(got, expected, strict=True))


def assert_same_corpus(got, expected):
    assert got.vocab1.itos == expected.vocab1.itos and got.vocab2.itos == expected.vocab2.itos
    assert (got.vocab1 is got.vocab2) == (expected.vocab1 is expected.vocab2)
    for name in ("train_src", "train_tgt", "dev_src", "dev_tgt", "mono1", "mono2"):
        if getattr(expected, name) is None:
            assert getattr(got, name) is None
        else:
            assert_same_sentences(getattr(got, name), getattr(expected, name))
    assert got.sizes() == expected.sizes()


def reference_dataset(src, tgt, batch_size=16, order=None, bucket=True, batches=None):
    """make_dataset as it was before issue 91 (bucketed, consecutive, or of given batches): the
    sentences of an epoch gathered into ragged columns."""
    def columns(indices):
        ragged = {k: tf.RaggedTensor.from_row_lengths(np.concatenate([side[i] for i in indices]), [len(side[i]) for i in indices])
                  for k, side in (("src", src), ("tgt", tgt))}
        return {"index": tf.constant(indices, tf.int32), **ragged}

    def dense(example):
        return {k: v.to_tensor(0) if isinstance(v, tf.RaggedTensor) else v for k, v in example.items()}
    if batches is not None:
        sizes, flat = [len(b) for b in batches], np.concatenate(batches).astype(np.int32)
        return tf.data.Dataset.from_tensor_slices({k: tf.RaggedTensor.from_row_lengths(v, sizes)
                                                   for k, v in columns(flat).items()}).map(dense)
    shapes, values = {"index": [], "src": [None], "tgt": [None]}, {k: np.int32(0) for k in ("index", "src", "tgt")}
    if not bucket:
        return tf.data.Dataset.from_tensor_slices(columns(order)).map(dense).padded_batch(
            batch_size, padded_shapes=shapes, padding_values=values)
    return tf.data.Dataset.from_tensor_slices(columns(order)).map(dense).bucket_by_sequence_length(
        lambda ex: tf.reduce_max([tf.shape(ex["src"])[0], tf.shape(ex["tgt"])[0]]), BUCKET_BOUNDARIES,
        [batch_size] * (len(BUCKET_BOUNDARIES) + 1), padded_shapes=shapes, padding_values=values)


def first_batches(loaded, make=make_dataset, count=3):
    order = np.random.default_rng(5).permutation(len(loaded.train_src)).astype(np.int32)
    bucketed = make(loaded.train_src, loaded.train_tgt, batch_size=16, order=order, bucket=True)
    batches = token_batches(padded_lengths(loaded.train_src, loaded.train_tgt), order, 200, 1, np.random.default_rng(5))
    by_tokens = make(loaded.train_src, loaded.train_tgt, batches=batches)
    return [{k: v.numpy() for k, v in b.items()} for ds in (bucketed, by_tokens) for b in list(ds)[:count]]


@settings(deadline=None, max_examples=25)
@given(st.lists(st.tuples(st.integers(1, 60), st.integers(1, 60)), min_size=1, max_size=150), st.integers(1, 12),
       st.randoms(use_true_random=False))
def test_batches_read_from_the_packed_ids_are_tensorflows_own(lengths, batch_size, rng):
    """Every batch, in its order, of the bucketed, consecutive and given batches is the one TensorFlow's own
    pipeline (bucket_by_sequence_length, padded_batch, ragged columns) makes: lengths across the bucket
    boundaries, unfinished batches in several buckets, both sides padded to their own longest."""
    sides = [pack([np.arange(4, 4 + n, dtype=np.int32) for n in side]) for side in zip(*lengths)]
    order = np.array(rng.sample(range(len(lengths)), len(lengths)), np.int32)
    batches = token_batches(padded_lengths(*sides), order, 80, 1, np.random.default_rng(rng.getrandbits(32)))
    for options, reference in (({"order": order, "bucket": True}, {"order": order, "bucket": True}),
                               ({"order": order}, {"order": order, "bucket": False}),
                               ({}, {"order": np.arange(len(lengths), dtype=np.int32), "bucket": False}),
                               ({"batches": batches}, {"batches": batches})):
        got = list(make_dataset(*sides, batch_size=batch_size, **options))
        wanted = list(reference_dataset(*sides, batch_size=batch_size, **reference))
        assert len(got) == len(wanted)
        for g, w in zip(got, wanted):
            assert g.keys() == w.keys() and all(g[k].dtype == w[k].dtype and np.array_equal(g[k], w[k]) for k in g)


def test_packed_sentences_behave_as_the_list_of_arrays():
    vocab = Vocabulary.build(SENTENCES)
    as_list, as_packed = encode_all(vocab, SENTENCES), packed(SENTENCES, vocab)
    assert len(as_packed) == len(as_list) and list(as_packed.lengths) == [len(s) for s in as_list]
    assert_same_sentences(list(as_packed), as_list)
    assert_same_sentences([as_packed[-1], as_packed[np.int64(2)]], [as_list[-1], as_list[2]])
    assert_same_sentences(list(as_packed[1:4]), as_list[1:4])
    assert len(as_packed[4:2]) == 0
    with pytest.raises(IndexError):
        as_packed[5]
    for sentences in (as_list, as_packed, as_packed[1:4]):
        numbers = np.arange(len(sentences))[::-1]
        rows, width = padded_rows(pack(sentences), numbers), max(len(s) for s in sentences)
        assert rows.dtype == np.int32
        assert rows.tolist() == [list(sentences[i]) + [PAD_ID] * (width - len(sentences[i])) for i in numbers]


def test_saved_packed_sentences_are_read_from_their_files_and_a_damaged_file_is_a_one_line_error(tmp_path):
    vocab = Vocabulary.build(SENTENCES)
    in_memory = packed(SENTENCES, vocab)
    in_memory.save(str(tmp_path / "train"))
    loaded = PackedSentences.load(str(tmp_path / "train"))
    assert isinstance(loaded.ids, VectorFile) and isinstance(loaded.offsets, VectorFile)
    assert_same_sentences(list(loaded), encode_all(vocab, SENTENCES))
    assert_same_sentences(list(loaded[1:4]), encode_all(vocab, SENTENCES[1:4]))
    assert loaded.lengths.tolist() == in_memory.lengths.tolist() == [len(s) + 1 for s in SENTENCES]
    for index in ([4, 0, 2, 2], [], [1]):
        for got, wanted in zip(loaded.gather(index), in_memory.gather(index), strict=True):
            assert got.dtype == wanted.dtype and got.tolist() == wanted.tolist()

    def gather(index):  # as tf.data's threads do, at once, from the one descriptor
        return loaded.gather(index)[1].tolist()
    numbers = [np.random.default_rng(k).integers(0, len(SENTENCES), 7) for k in range(64)]
    with concurrent.futures.ThreadPoolExecutor(8) as threads:
        assert list(threads.map(gather, numbers)) == [in_memory.gather(n)[1].tolist() for n in numbers]
    np.save(tmp_path / "train.offsets.npy", np.array([0, 3, 99], np.int64))
    with pytest.raises(UserError, match=r"train.offsets.npy: corrupted \(does not match .*train.ids.npy\)$"):
        PackedSentences.load(str(tmp_path / "train"))
    (tmp_path / "train.ids.npy").write_bytes(b"not numpy")
    with pytest.raises(UserError, match=r"train.ids.npy: corrupted \("):
        PackedSentences.load(str(tmp_path / "train"))


@pytest.mark.parametrize("max_size", [None, 1, 3, 100])
def test_a_vocabulary_from_streamed_counts_is_the_one_built_from_the_sentences(max_size):
    # Ties everywhere: a, b, c twice each after the first sentence, in another order of first occurrence.
    sentences = SENTENCES + [["c", "c", "d"], ["<unk>", "f", "e"]]
    expected = reference_vocabulary(sentences, max_size).itos
    assert Vocabulary.build(sentences, max_size).itos == expected
    assert Vocabulary.from_counts(Draft(iter(sentences)).counts(), max_size).itos == expected


@pytest.mark.parametrize("settings", [{}, {"vocab1_max": 30, "vocab2_max": 25}, {"autoencode": True}, {"mono": True}])
def test_the_packed_corpus_is_the_one_of_lists(demo_data, tmp_path, settings):
    settings = dict(settings)
    files = files_of(demo_data, **({"mono_set1": str(demo_data / "test.en"), "mono_set2": str(demo_data / "test.de")}
                                   if settings.pop("mono", False) else {}))
    config = tiny_config(**settings)
    expected = reference_load(files, config)
    for kept in (False, True, True):  # read, then kept in prepared/, then read from there
        prepared = corpus.Prepared(str(tmp_path / "prepared"), files, config)
        loaded = corpus.load(files, config, prepared=prepared)
        assert_same_corpus(loaded, expected)
        in_prepared = [sentences.ids.path.startswith(str(tmp_path / "prepared")) for sentences in
                       (loaded.train_src, loaded.train_tgt)]  # read from temporary files until kept
        assert in_prepared == [kept and prepared.unsaved is None] * 2
        if kept:
            prepared.save()
            assert loaded.train_tgt.ids.path.startswith(str(tmp_path / "prepared"))
        assert_same_corpus(loaded, expected)
        assert isinstance(loaded.train_src, PackedSentences)
        for got, wanted in zip(first_batches(loaded), first_batches(expected, reference_dataset), strict=True):
            assert got.keys() == wanted.keys() and all(np.array_equal(got[k], wanted[k]) for k in got)
        evaluated = evaluation_batches(loaded.train_src[:50], loaded.train_tgt[:50], 16)
        wanted = evaluation_batches(expected.train_src[:50], expected.train_tgt[:50], 16)
        assert all(np.array_equal(g[k], w[k]) for g, w in zip(evaluated, wanted, strict=True) for k in g)


def test_a_resumed_run_reads_no_text_and_a_changed_file_or_vocabulary_is_read_again(demo_data, tmp_path):
    files, config, directory = files_of(demo_data), tiny_config(), str(tmp_path / "prepared")

    def load(files, config, vocabularies=None, read=None):
        prepared = corpus.Prepared(directory, files, config)
        loaded = corpus.load(files, config, vocabularies, read=read, prepared=prepared)
        prepared.save()
        return loaded
    first = load(files, config)
    vocabularies = (first.vocab1, first.vocab2)

    def no_reading(path, side, part=None):
        raise AssertionError(f"{path} read again")
    resumed = load(files, config, vocabularies, read=no_reading)
    assert_same_corpus(resumed, reference_load(files, config))
    assert resumed.vocab1 is first.vocab1  # the run's own vocabularies, not copies
    with pytest.raises(AssertionError, match="read again"):  # other settings: another key
        load(files, tiny_config(vocab1_max=10), read=no_reading)
    with pytest.raises(AssertionError, match="read again"):  # other vocabularies
        load(files, config, (Vocabulary.build(SENTENCES), first.vocab2), read=no_reading)
    changed, lines = dict(files, dev_set2=str(tmp_path / "dev.de")), (demo_data / "dev.de").read_text(encoding="utf-8")
    (tmp_path / "dev.de").write_text(lines, encoding="utf-8")
    before = load(changed, config, vocabularies)
    (tmp_path / "dev.de").write_text("Hund " + lines, encoding="utf-8")  # a changed file: read again
    after = load(changed, config, vocabularies)
    assert list(after.dev_tgt[0]) == first.vocab2.encode(["Hund"]) + list(before.dev_tgt[0])
    with open(tmp_path / "dev.de", "a", encoding="utf-8") as f:
        f.write("ein Satz mehr\n")
    with pytest.raises(UserError, match=r"dev.en has \d+ lines but .*dev.de has \d+: parallel files must be line-aligned$"):
        load(changed, config, vocabularies)


def test_the_streamed_corpus_reports_the_errors_the_lists_did_in_the_same_order(demo_data, tmp_path):
    bad = tmp_path / "train.de"
    bad.write_bytes((demo_data / "train.de").read_bytes().replace(b"\n", b"\n\xff", 1))
    files = dict(files_of(demo_data), train_set2=str(bad), dev_set1=str(tmp_path / "missing.en"))
    for load in (reference_load, corpus.load):
        with pytest.raises(UserError, match=r"train.de:2: not valid UTF-8 \(byte 0\)$"):
            load(files, tiny_config())
    with pytest.raises(UserError, match="--p_mono > 0 needs --mono_set1 and/or --mono_set2"):
        corpus.load(files_of(demo_data), tiny_config(p_mono=0.5))


@pytest.mark.parametrize("damage", ["key.json", "vocab2.txt", "train_set2.ids.npy", "train_set1.offsets.npy"])
def test_a_damaged_prepared_corpus_is_prepared_again_from_the_text(demo_data, tmp_path, damage):
    files, config, directory = files_of(demo_data), tiny_config(), tmp_path / "prepared"
    prepared = corpus.Prepared(str(directory), files, config)
    corpus.load(files, config, prepared=prepared)
    prepared.save()
    with open(directory / damage, "r+b") as f:  # cut short
        f.truncate(os.path.getsize(directory / damage) // 2)
    again = corpus.Prepared(str(directory), files, config)
    assert again.read() is None
    assert_same_corpus(corpus.load(files, config, prepared=again), reference_load(files, config))
    again.save()
    assert_same_corpus(corpus.Prepared(str(directory), files, config).read(), reference_load(files, config))


def test_a_file_cut_into_parts_is_its_lines_numbered_as_in_the_file(tmp_path):
    path = tmp_path / "text.en"
    lines = [f"line {k} " + "x" * (k % 7) for k in range(1, 41)]
    path.write_bytes(("\ufeff" + "\n".join(lines)).encode("utf-8"))  # a BOM, no last LF
    for count in (1, 2, 3, 7, 40, 100):
        cut = parts.line_parts(str(path), count)
        assert cut == [None] if count == 1 else 1 < len(cut) <= min(count, 40)
        read = [pair for part in cut for pair in read_lines(str(path), part)]
        assert read == list(enumerate(lines, start=1))
    assert parts.line_parts(str(tmp_path / "missing.en"), 4) == [None]
    bad = tmp_path / "bad.en"
    bad.write_bytes(b"a\nb\nc\nd\n\xff\nf\n")
    with pytest.raises(UserError, match=r"bad.en:5: not valid UTF-8 \(byte 0\)$"):
        [pair for part in parts.line_parts(str(bad), 3) for pair in read_lines(str(bad), part)]


def prepared_files(directory):
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def prepare(demo_data, directory, workers, **settings):
    files = files_of(demo_data, mono_set2=str(demo_data / "test.de"))
    config = tiny_config(prepare_workers=workers, **settings)
    prepared = corpus.Prepared(str(directory), files, config)
    loaded = corpus.load(files, config, prepared=prepared)
    prepared.save()
    return loaded


@pytest.mark.parametrize("settings", [{}, {"vocab1_max": 30}])
def test_a_corpus_read_in_many_parts_is_the_one_read_in_one(demo_data, tmp_path, monkeypatch, settings):
    """Parts of a few lines (in this process): the same vocabularies, ids and prepared/ files, byte for byte."""
    whole = prepare(demo_data, tmp_path / "whole", 1, **settings)
    monkeypatch.setattr(parts, "MAX_PART_BYTES", 97)  # parts of a line or two, cut anywhere
    in_parts = prepare(demo_data, tmp_path / "parts", 1, **settings)
    assert_same_corpus(in_parts, whole)
    assert prepared_files(tmp_path / "parts") == prepared_files(tmp_path / "whole")


@pytest.mark.long
def test_a_corpus_prepared_by_two_worker_processes_is_the_one_prepared_by_one(demo_data, tmp_path, monkeypatch):
    one = prepare(demo_data, tmp_path / "one", 1)
    monkeypatch.setattr(parts, "MIN_PART_BYTES", 1)  # two parts, even of a small file
    two = prepare(demo_data, tmp_path / "two", 2)
    assert_same_corpus(two, one)
    assert prepared_files(tmp_path / "two") == prepared_files(tmp_path / "one")
    bad = tmp_path / "train.de"
    bad.write_bytes((demo_data / "train.de").read_bytes().replace(b"\n", b"\n\xff", 300))
    files = files_of(demo_data, train_set2=str(bad))
    with pytest.raises(UserError, match=r"train.de:2: not valid UTF-8 \(byte 0\)$"):  # the first, in the first part
        corpus.load(files, tiny_config(prepare_workers=2))
