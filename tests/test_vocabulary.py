from rnnpb_nmt.data.vocabulary import END_ID, PAD_ID, UNK_ID, Vocabulary


def test_specials_come_first_and_words_by_frequency():
    v = Vocabulary.build([["b", "a", "b"], ["c", "b", "a"]])
    assert v.itos[:4] == ["<pad>", "<start>", "<end>", "<unk>"]
    assert PAD_ID == 0
    assert v.itos[4:] == ["b", "a", "c"]


def test_round_trip_and_unknown_words():
    v = Vocabulary.build([["der", "Hund", "bellt"]])
    ids = v.encode(["der", "Katze", "bellt"])
    assert ids[1] == UNK_ID
    assert v.decode(ids + [END_ID, 5]) == ["der", "<unk>", "bellt"]
    assert v.decode(v.encode(["der", "Hund"]) + [PAD_ID, PAD_ID]) == ["der", "Hund"]


def test_max_size_keeps_most_frequent(tmp_path):
    v = Vocabulary.build([["a", "a", "a", "b", "b", "c"]], max_size=2)
    assert len(v) == 6 and v.encode(["c"]) == [UNK_ID]
    v.save(tmp_path / "v.txt")
    loaded = Vocabulary.load(tmp_path / "v.txt")
    assert loaded.itos == v.itos
