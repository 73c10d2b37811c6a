"""Ensembles (--ensemble): the majority vote over whole outputs, its tie rule, and --do_testing by
the vote of tiny inflection working directories. Only the tests that build models import
TensorFlow (inside them): the vote's own tests run without it."""

import json
import shutil

import pytest

from rnnpb_nmt.errors import UserError
from rnnpb_nmt.infer.voting import VotingTranslator, majority_vote

from helpers import cli_in_process, tiny_config

SAMPLE = [("kitāb", "pos=N,num=PL", "kutub"), ("gehen", "pos=V,tense=PST", "ging"),
          ("ქალაქი", "pos=N,case=DAT", "ქალაქს"), ("áʼázhoozh", "pos=N,per=4", "yíʼázhoozh"),
          ("spielen", "pos=V,tense=PST", "spielte"), ("Haus", "pos=N,num=PL", "Häuser")]


def test_the_output_most_members_wrote_wins_each_input_on_its_own():
    votes = majority_vote([["a", "x", "p"], ["b", "y", "p"], ["b", "x", "q"], ["c", "y", "q"], ["b", "z", "q"]])
    assert votes == ["b", "x", "q"]


def test_a_tie_goes_to_the_earliest_listed_member_among_the_tied_outputs():
    assert majority_vote([["a"], ["b"]]) == ["a"]
    assert majority_vote([["a"], ["b"], ["b"], ["a"]]) == ["a"]
    # The first member's output is not among the tied ones: the earliest member that wrote one of them.
    assert majority_vote([["c"], ["b"], ["a"], ["a"], ["b"]]) == ["b"]


def test_one_member_is_that_member():
    outputs = ["kutub", "ging", "", "ging"]
    assert majority_vote([outputs]) == outputs


def test_keys_decide_which_outputs_are_one_vote_and_the_earliest_such_output_is_returned():
    # Action sequences writing the same form are one vote; the earliest member's spelling of it is returned.
    actions = [[("x",)], [("g", "<step>")], [("<step>", "g")]]
    forms = [["x"], ["g"], ["g"]]
    assert majority_vote(actions, forms) == [("g", "<step>")]


@pytest.mark.parametrize("predictions, keys", [([], None), ([["a"], ["a", "b"]], None), ([["a"]], [["a"], ["a"]]),
                                               ([["a", "b"]], [["a"]])])
def test_members_without_one_output_per_input_are_refused(predictions, keys):
    with pytest.raises(ValueError, match="at least one member, and as many predictions"):
        majority_vote(predictions, keys)


class Fixed:
    """A member that writes given outputs (what a Translator's translate returns)."""

    def __init__(self, outputs):
        self.model, self.outputs, self.asked = f"model of {outputs}", outputs, []

    def translate(self, sentences, beam_size=None, batch_size=None, show_progress=False):
        self.asked.append((sentences, beam_size, batch_size, show_progress))
        return self.outputs


class Lines:
    """A task whose output line is the output with its '-' removed."""

    def output_lines(self, sources, outputs):
        return [f"{s}\t{o.replace('-', '')}" for s, o in zip(sources, outputs)]


def test_a_voting_translator_asks_every_member_and_votes_over_the_tasks_output_lines():
    members = [Fixed(["a-b", "x"]), Fixed(["ab", "y"]), Fixed(["c", "y"])]
    voting = VotingTranslator(members, Lines())
    assert voting.translate(["s", "t"], 1, 8, True) == ["a-b", "y"]
    assert all(m.asked == [(["s", "t"], 1, 8, True)] for m in members)
    assert voting.model == members[0].model


def inflection_member(path, train, seed):
    """A working directory of an untrained tiny hard-attention model with the vocabularies of
    ``train``: what --do_testing needs, without training."""
    import tensorflow as tf

    from rnnpb_nmt import registry
    from rnnpb_nmt.train import workdir
    from rnnpb_nmt.train.checkpoints import RunCheckpoints
    from rnnpb_nmt.tasks.inflection.task import InflectionTask

    config = tiny_config(model="hard_attention", task="inflection", embedding_size=8, units=8, feature_size=4,
                         num_layers=1, beam_size=1, max_trans_ratio=3.0, seed=seed)
    loaded = InflectionTask().load_corpus({"train_set1": train, "dev_set1": train}, config)
    tf.keras.utils.set_random_seed(seed)
    model = registry.models()["hard_attention"](config, loaded.vocab1, loaded.vocab2)
    workdir.save_setup(str(path), config, loaded.vocab1, loaded.vocab2)
    RunCheckpoints(str(path), model).save_best(1)
    return str(path)


def write_rows(path, rows):
    path.write_text("".join("\t".join(row) + "\n" for row in rows), encoding="utf-8")
    return str(path)


def outputs_of(capsys, working_dir, test_set, *flags):
    status, _, err = cli_in_process(["--do_testing", f"--test_set={test_set}", f"--working_dir={working_dir}", *flags],
                                    capsys)
    assert status == 0, err
    return ((working_dir / "test_trans.txt").read_text(encoding="utf-8").splitlines(),
            json.loads((working_dir / "testing_stats.json").read_text()))


@pytest.mark.slow  # runs the command line four times
def test_do_testing_by_an_ensemble_writes_and_scores_the_vote_like_a_single_model(tmp_path, capsys):
    """Members A and B (another seed, and vocabularies of another training file), and B again in
    a copied directory: the vote of A, B, B' is B's output, that of A, B (a tie) A's."""
    test_set = write_rows(tmp_path / "test", SAMPLE)
    a = inflection_member(tmp_path / "a", test_set, seed=1)
    b = inflection_member(tmp_path / "b", write_rows(tmp_path / "train_b", SAMPLE[1:]), seed=2)
    shutil.copytree(b, tmp_path / "b2")
    (a_lines, a_stats), (b_lines, b_stats) = (outputs_of(capsys, tmp_path / name, test_set) for name in ("a", "b"))
    assert a_lines != b_lines  # else the votes below could not tell the members apart
    members = [a, b, str(tmp_path / "b2")]
    lines, stats = outputs_of(capsys, tmp_path / "vote", test_set, f"--ensemble={','.join(members)}")
    assert lines == b_lines and [line.rsplit("\t", 1)[0] for line in lines] == ["\t".join(r[:2]) for r in SAMPLE]
    assert (stats["accuracy"], stats["mean_levenshtein"], stats["ensemble"]) == (
        b_stats["accuracy"], b_stats["mean_levenshtein"], members)
    assert outputs_of(capsys, tmp_path / "tie", test_set, f"--ensemble={a},{b}")[0] == a_lines


def test_members_must_be_trained_on_one_task_and_named_once(tmp_path, demo_data):
    from rnnpb_nmt import registry
    from rnnpb_nmt.train import workdir

    from helpers import untrained_working_dir

    infl = inflection_member(tmp_path / "infl", write_rows(tmp_path / "train", SAMPLE), seed=1)
    untrained_working_dir(tmp_path / "transl", demo_data, model="encdec")
    with pytest.raises(UserError, match=r"^--ensemble: .*transl was trained on --task=translation, .*infl on "
                                        r"--task=inflection$"):
        workdir.load_ensemble([infl, str(tmp_path / "transl")], registry.models())
    with pytest.raises(UserError, match=r"^--ensemble: .*infl/ is named twice"):
        workdir.load_ensemble([infl, infl + "/"], registry.models())
    with pytest.raises(UserError, match=r"^--ensemble: .*empty holds no trained model \(no hparams.json\)$"):
        workdir.load_ensemble([infl, str(tmp_path / "empty")], registry.models())


def test_an_empty_member_name_is_refused():
    from rnnpb_nmt.cli import ensemble_members

    assert ensemble_members("a,b/c") == ["a", "b/c"]
    with pytest.raises(UserError, match=r"^--ensemble=a,,b: an empty directory name"):
        ensemble_members("a,,b")


def test_an_ensemble_only_tests(tmp_path, capsys):
    status, out, err = cli_in_process(["--query=ab\tpos=N", f"--ensemble={tmp_path}", f"--working_dir={tmp_path}"],
                                      capsys)
    assert status == 1 and err == (
        "error: --ensemble: only with --do_testing (not with --do_training, --analyze, --query or --translate)\n")
