import numpy as np
import pytest

from rnnpb_nmt.data.dataset import encode_all, evaluation_batches, make_dataset, read_parallel, read_sentences
from rnnpb_nmt.data.vocabulary import END_ID, Vocabulary
from rnnpb_nmt.errors import UserError

from helpers import SHARED_DATA


def write(path, data):
    path.write_bytes(data)
    return path


def test_crlf_bom_and_utf8(tmp_path):
    f = write(tmp_path / "a.de", "\ufeffDer Hund .\r\nDie Tür ist grün .\r\n".encode())
    assert read_sentences(f) == [["Der", "Hund", "."], ["Die", "Tür", "ist", "grün", "."]]
    g = write(tmp_path / "b.de", b"ohne Zeilenende")
    assert read_sentences(g) == [["ohne", "Zeilenende"]]


@pytest.mark.shared_data
def test_reference_data_with_crlf_reads_like_lf():
    train = read_sentences(SHARED_DATA / "easy/easy20000/train.en")
    assert len(train) == 20000 and not any("\r" in w for s in train for w in s)


@pytest.mark.parametrize("content, message", [
    (b"ok\n\nok\n", "a.txt:2: empty line"),
    (b"ok\n\xff\xfe bad\n", "a.txt:2: not valid UTF-8"),
    (b"", "a.txt: file is empty"),
])
def test_bad_files_name_file_and_line(tmp_path, content, message):
    f = write(tmp_path / "a.txt", content)
    with pytest.raises(UserError, match=message):
        read_sentences(f)


def test_missing_file_and_mismatched_parallel_files(tmp_path):
    with pytest.raises(UserError, match="nope.en: no such file"):
        read_sentences(tmp_path / "nope.en")
    a, b = write(tmp_path / "x.en", b"a\nb\n"), write(tmp_path / "x.de", b"a\n")
    with pytest.raises(UserError, match="x.en has 2 lines but .*x.de has 1"):
        read_parallel(a, b)


def test_batches_carry_index_end_and_padding():
    v = Vocabulary.build([["a", "b", "c"]])
    src = encode_all(v, [["a", "b"], ["c"], ["a"]])
    batches = list(make_dataset(src, src, batch_size=2))
    first = batches[0]
    assert first["index"].numpy().tolist() == [0, 1]
    assert first["src"].numpy().tolist() == [[4, 5, END_ID], [6, END_ID, 0]]
    assert batches[1]["index"].numpy().tolist() == [2]


def test_shuffled_epochs_cover_every_sentence_once_in_new_orders():
    src = [np.array([4 + i % 5] * (1 + i % 7) + [END_ID], np.int32) for i in range(100)]
    rng = np.random.default_rng(0)
    datasets = [make_dataset(src, src, batch_size=8, order=rng.permutation(100), bucket=True) for _ in range(2)]
    epochs = [np.concatenate([b["index"].numpy() for b in ds]) for ds in datasets]
    assert sorted(epochs[0]) == list(range(100)) and sorted(epochs[1]) == list(range(100))
    assert list(epochs[0]) != list(epochs[1])
    for b in datasets[0]:  # index and sentence stay together through shuffling and bucketing
        for i, row in zip(b["index"].numpy(), b["src"].numpy()):
            assert row[: len(src[i])].tolist() == src[i].tolist()


def test_evaluation_batches_hold_every_sentence_once_and_bound_the_padding():
    lengths = [1 + (i * 7) % 23 for i in range(300)]
    src = [np.array([4 + i % 5] * (n - 1) + [END_ID], np.int32) for i, n in enumerate(lengths)]
    batches = evaluation_batches(src, src, batch_size=64, max_padding=0.2, min_batch=8)
    assert sorted(np.concatenate([b["index"].numpy() for b in batches])) == list(range(300))
    assert len(batches) > -(-300 // 64)  # cut for padding, not only for size
    for b in batches:
        index, rows = b["index"].numpy(), b["src"].numpy()
        assert len(rows) <= 64 and rows.shape[1] == max(lengths[i] for i in index)
        if len(rows) > 8:
            assert rows.size <= 1.2 * sum(lengths[i] for i in index)
        for i, row in zip(index, rows):
            assert row[: lengths[i]].tolist() == src[i].tolist() and not row[lengths[i]:].any()
        assert (b["tgt"].numpy() == rows).all()
