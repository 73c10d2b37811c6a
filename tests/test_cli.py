"""The command line as users run it: training, testing, querying, and its errors (test_cli_runs.py:
those of runs that train their own working directory)."""

import json

import numpy as np
import pytest
import tensorflow as tf
from sacremoses import MosesDetokenizer, MosesTokenizer

from rnnpb_nmt.data.dataset import encode_all, read_sentences
from rnnpb_nmt.metrics import bleu
from rnnpb_nmt.train import workdir

from helpers import cli_in_process, models, run_nmt, tasks, train_args, translator_of


def test_training_writes_a_complete_working_directory(trained_encdec):
    for name in ("hparams.json", "vocab1.txt", "vocab2.txt", "training_stats.json"):
        assert (trained_encdec / name).is_file()
    stats = json.loads((trained_encdec / "training_stats.json").read_text())
    assert len(stats["epochs"]) == 4
    row = stats["epochs"][0]
    assert row["train_perplexity"] > 1 and row["dev_perplexity"] > 1 and row["seconds"] > 0
    assert stats["epochs"][-1]["train_perplexity"] < row["train_perplexity"]
    assert stats["best_dev_perplexity"] == min(r["dev_perplexity"] for r in stats["epochs"])
    assert not list(trained_encdec.rglob("*.pkl")) and not list(trained_encdec.rglob("*.pickle"))


@pytest.mark.long
def test_testing_writes_translations_and_bleu(trained_encdec, demo_data):
    proc = run_nmt("--do_testing", "--device=cpu", f"--test_set={demo_data}/test.en", f"--working_dir={trained_encdec}")
    stats = json.loads((trained_encdec / "testing_stats.json").read_text())
    hyps = (trained_encdec / "test_trans.txt").read_text(encoding="utf-8").split("\n")[:-1]
    refs = [" ".join(s) for s in read_sentences(demo_data / "test.de")]
    assert len(hyps) == len(refs) == stats["sentences"]
    assert stats["bleu"] == pytest.approx(bleu(hyps, refs))
    assert stats["testing_time"] > 0 and f"BLEU = {stats['bleu']:.2f}" in proc.stdout


def test_restored_model_translates_like_the_command_line(trained_encdec, demo_data, capsys):
    testing = ["--do_testing", f"--test_set={demo_data}/test.en", f"--working_dir={trained_encdec}"]
    assert cli_in_process(testing, capsys)[0] == 0
    first = (trained_encdec / "test_trans.txt").read_text()
    assert cli_in_process(testing, capsys)[0] == 0
    assert (trained_encdec / "test_trans.txt").read_text() == first
    model = workdir.load_model(str(trained_encdec), models())
    again = [" ".join(t) for t in translator_of(model).translate(read_sentences(demo_data / "test.en"), beam_size=10)]
    assert "\n".join(again) + "\n" == first


def test_beam_ten_is_at_least_as_probable_as_greedy(trained_encdec, demo_data):
    model = workdir.load_model(str(trained_encdec), models())
    src = encode_all(model.vocab1, read_sentences(demo_data / "test.en"))
    translator = translator_of(model)
    _, greedy = translator.translate_ids(src, beam_size=1)
    _, beam = translator.translate_ids(src, beam_size=10)
    assert np.mean(beam) >= np.mean(greedy)
    assert np.all(beam >= greedy - 1e-4)  # a wider beam may only find more probable outputs here


def test_query_tokenizes_translates_and_detokenizes(trained_encdec, capsys, monkeypatch):
    model = workdir.load_model(str(trained_encdec), models())
    expected = {}
    for text in ("The old man sees a dog.", "I know that a cat runs."):
        words = MosesTokenizer(lang="en").tokenize(text, escape=True)
        expected[text] = MosesDetokenizer(lang="de").detokenize(translator_of(model).translate([words], beam_size=10)[0])
    status, out, _ = cli_in_process(["--query=The old man sees a dog.", f"--working_dir={trained_encdec}"], capsys)
    assert status == 0 and out == expected["The old man sees a dog."] + "\n"
    status, out, _ = cli_in_process(["--query=-", f"--working_dir={trained_encdec}"], capsys,
                                    stdin=b"The old man sees a dog.\n\nI know that a cat runs.\n", monkeypatch=monkeypatch)
    assert status == 0 and out.split("\n") == [expected["The old man sees a dog."], "", expected["I know that a cat runs."], ""]


NO_FILES = ["--train_set1=a", "--train_set2=b", "--dev_set1=c", "--dev_set2=d"]


@pytest.mark.parametrize("flags, message", [
    (["--do_testing", "--test_set=README.md"], "hparams.json missing"),
    (["--do_testing", "--test_set=x.en"], "--test_set=x.en: no such file"),
    (["--do_training", "--do_testing", "--test_set=README.md", "--test_ref=x.de"], "--test_ref=x.de: no such file"),
    (["--do_testing", "--bogus_flag=1"], "unrecognized arguments: --bogus_flag=1"),
    (["--query=hi", "--beam_size=0"], "--beam_size=0: must be >= 1"),
    (["--do_training", "--p_reset=2", "--train_set1=a"], "--p_reset=2.0: must be >= 0 and <= 1"),
    (["--do_training", "--batch_size=0"], "--batch_size=0: must be >= 1"),
    (["--do_training", "--seed=-1"], "--seed=-1: must be >= 0"),
    (["--query=hi", "--recog_clip=0"], "--recog_clip=0.0: must be > 0"),
    (["--do_training", "--dropout=1"], "--dropout=1.0: must be below 1"),
    (["--do_training", "--p_mono=1"], "--p_mono=1.0: must be below 1"),
    (["--query=hi", "--refine_steps=-1"], "--refine_steps=-1: must be >= 0"),
    (["--do_training", "--amortize=tables"], "argument --amortize: invalid choice: 'tables'"),
    (["--do_training", "--optimizer=adagrad"], "argument --optimizer: invalid choice: 'adagrad'"),
    (["--do_training", "--early_stopping_metric=bleu"], "argument --early_stopping_metric: invalid choice: 'bleu'"),
    (["--do_training", "--train_set1=a"], "--do_training needs --train_set2"),
    (["--do_testing"], "--do_testing needs --test_set"),
    (["--units=8"], "nothing to do"),
    # Flags only training reads, given to a command that does not train.
    (["--do_testing", "--test_set=x", "--units=512"], "--units: only with --do_training (a trained run's model settings"),
    (["--query=hi", "--start_over"], "--start_over: only with --do_training; it would be ignored"),
    (["--query=hi", "--distribute=mirrored"], "--distribute: only with --do_training; it would be ignored"),
    (["--query=hi", "--test_ref=x"], "--test_ref: only with --do_testing or --analyze; it would be ignored"),
    # Flags the model does not read: refused before any data is read (the files named here do not exist).
    (["--do_training", "--model=rnnpbnmt", "--attention=content", *NO_FILES],
     "--attention=content: only for --model=encdec (this run: --model=rnnpbnmt); it would be ignored"),
    (["--do_training", "--model=encdec", "--refine_steps=2", *NO_FILES],
     "--refine_steps=2: only for --model=rnnpbnmt --amortize=encoder|learned"),
    (["--do_training", "--model=deep_lstm", "--task=transduction", "--memory_width=8", *NO_FILES],
     "--memory_width=8: only for --model=stack_lstm|queue_lstm|deque_lstm"),
])
def test_bad_flags_and_empty_working_dir_give_one_line_errors(tmp_path, flags, message, capsys):
    status, out, err = cli_in_process([*flags, f"--working_dir={tmp_path}"], capsys)
    assert status != 0 and out == ""
    assert message in err and len(err.splitlines()) == 1


def test_an_empty_directory_flag_is_named(tmp_path, capsys):
    for args, message in [(["--query=hi", "--working_dir="], "error: --working_dir: empty"),
                          (["export", f"--working_dir={tmp_path}", "--out="], "error: --out: empty")]:
        status, out, err = cli_in_process(args, capsys)
        assert (status, out) == (1, "") and err.startswith(message) and len(err.splitlines()) == 1, err


def test_a_flag_the_tested_model_does_not_read_is_refused(trained_encdec, capsys):
    status, out, err = cli_in_process(["--query=hi", "--refine_steps=2", f"--working_dir={trained_encdec}"], capsys)
    assert status == 1 and err.count("\n") == 1 and out == ""
    assert "--refine_steps=2: only for --model=rnnpbnmt --amortize=encoder|learned (this run: --model=encdec" in err


def found(path):
    """What the run in ``path`` left there, as training reads it under the lock."""
    return workdir.WorkingDir(str(path)).found(models())


def test_a_run_given_a_flag_before_such_flags_were_refused_resumes_with_it_or_without_it(tmp_path):
    """A deep_lstm trained with --memory_width=128 (as the transduction experiments gave it, before
    flags a model does not read were refused) resumes by its command and by it without the flag."""
    from rnnpb_nmt.train.resume import check_resumable
    from rnnpb_nmt.config import Config
    from rnnpb_nmt.errors import UserError
    from rnnpb_nmt.data.files import write_json

    old = {"model": "deep_lstm", "task": "transduction", "memory_width": 128, "train_set1": "a", "train_set2": "b"}
    write_json(str(tmp_path / "hparams.json"), Config.from_flat(old).to_flat())
    for given in (old, {k: v for k, v in old.items() if k != "memory_width"}):
        assert check_resumable(found(tmp_path), str(tmp_path), Config.from_flat(given), given).model.memory_width == 128
    other = dict(old, memory_width=64)
    with pytest.raises(UserError, match="^--memory_width=64: only for --model=stack_lstm"):
        check_resumable(found(tmp_path), str(tmp_path), Config.from_flat(other), other)
    other = dict(old, model="stack_lstm")
    with pytest.raises(UserError, match=r"another configuration: --model \(was 'deep_lstm', now 'stack_lstm'\)"):
        check_resumable(found(tmp_path), str(tmp_path), Config.from_flat(other), other)


@pytest.mark.skipif(bool(tf.config.list_physical_devices("GPU")), reason="this machine has a GPU")
def test_device_gpu_without_a_gpu_is_refused(tmp_path, capsys):
    status, _, err = cli_in_process(["--query=hi", "--device=gpu", f"--working_dir={tmp_path}"], capsys)
    assert status == 1 and "--device=gpu: TensorFlow sees no GPU" in err


def test_existing_model_is_never_overwritten(trained_encdec, demo_data, capsys):
    # Not --do_testing's outputs, nor the lock file, which names the last process that trained or tried to.
    before = {p: p.read_bytes() for p in trained_encdec.rglob("*") if p.is_file()
              and p.name not in ("test_trans.txt", "testing_stats.json", ".lock")}
    same = ["--model=encdec", "--reverse_source", "--max_epochs=4", "--learning_rate=0.01"]  # as the fixture
    status, _, err = cli_in_process(train_args(demo_data, trained_encdec, *same), capsys)
    assert status == 1 and "already holds a trained model" in err
    status, _, err = cli_in_process(train_args(demo_data, trained_encdec, "--model=rnnpbnmt"), capsys)
    assert status == 1 and "another configuration: --model" in err
    assert {p: p.read_bytes() for p in before} == before


@pytest.mark.parametrize("flags, line", [
    (["--max_epoch=3"], "unrecognized arguments: --max_epoch=3 (did you mean --max_epochs?)"),
    (["--unitss", "8", "--early_stopping=3"], "unrecognized arguments: --unitss 8 --early_stopping=3 (did you mean "
                                              "--units for --unitss, --early_stopping_ties or --early_stopping_steps or "
                                              "--early_stopping_metric for --early_stopping?)"),
    (["--bogus_flag=1"], "unrecognized arguments: --bogus_flag=1 (rnnpb-nmt --help lists the flags)"),
    (["--optimizer=adamw"], "argument --optimizer: invalid choice: 'adamw' (choose from 'adam', 'dense_adam', 'sgd', "
                            "'rmsprop', 'adadelta'; did you mean 'adam'?)"),
    (["--amortize=tables"], "argument --amortize: invalid choice: 'tables' (choose from 'none', 'encoder', 'learned')"),
    (["--preset=bond"], "argument --preset: invalid choice: 'bond' (choose from 'none', 'bound', 'thesis'; did you mean "
                        "'bound'?)"),
])
def test_a_mistyped_flag_or_value_is_one_line_naming_the_closest(flags, line, capsys, monkeypatch):
    from rnnpb_nmt import cli

    monkeypatch.setattr("sys.argv", ["/usr/local/bin/rnnpb-nmt"])  # the console command: its name in messages
    with pytest.raises(SystemExit) as stop:
        cli.main(models(), tasks(), ["--do_training", "--working_dir=x", *flags])
    assert stop.value.code == 2 and capsys.readouterr().err == f"error: {line}\n"


# make demo's bound model before --preset=bound: the bound model as it translates best, flag by flag.
BOUND_FLAGS = ("--model=rnnpbnmt --embedding_size=64 --units=128 --num_layers=2 --batch_size=32 --learning_rate=0.005 "
               "--amortize=encoder --proposal_output=state --pb_input=state --proposal_layers=2 "
               "--num_PB=512 --refine_steps=1 --refine_step_size=0.3 --both_directions --self_loss=0 --pb_binding=soft "
               "--pb_binding_strength=0.1").split()
HELPS = [[], ["train"], ["train", "--model=encdec"], ["train", "--preset=bound"], ["test"], ["translate"], ["export"],
         ["serve"], ["demo-data"]]


@pytest.mark.parametrize("command", HELPS)
def test_each_help_is_short_and_ends_with_an_example_that_parses(command, capsys, monkeypatch):
    monkeypatch.setattr("sys.argv", ["/usr/local/bin/rnnpb-nmt"])
    status, out, err = cli_in_process([*command, "--help"], capsys)
    assert (status, err) == (0, "") and len(out.splitlines()) <= 120, len(out.splitlines())
    if command:
        example = out.split("\nexample:\n")[1].strip().split(" | ")[-1]
        assert example.startswith(f"rnnpb-nmt {command[0]} ")
        parsed = cli_in_process([*example.split()[1:], "--help"], capsys)  # parses up to its --help
        assert parsed[0] == 0 and parsed[2] == ""


def test_the_training_help_of_every_model_and_task_is_short(capsys):
    for model in models():
        for task in tasks():
            status, out, _ = cli_in_process(["train", f"--model={model}", f"--task={task}", "--amortize=encoder",
                                             "--pb_binding=soft", "--help"], capsys)
            assert status == 0 and len(out.splitlines()) <= 120, (model, task, len(out.splitlines()))


def test_the_helps_show_defaults_and_only_the_flags_that_apply(capsys):
    def help_of(*args):  # its words (argparse wraps lines at the terminal's width)
        return " ".join(cli_in_process([*args, "--help"], capsys)[1].split())

    top = help_of()
    assert all(name in top for name in ("train", "test", "translate", "export", "serve", "demo-data",
                                        "--preset=NAME", "bound", "thesis", "--do_training", "train --help",
                                        "docs/flags.md"))
    assert "--units" not in top and "--num_PB" not in top  # the model's flags: train --help's
    train = help_of("train")
    assert all(f in train for f in ("--units=256", "--max_epochs=200", "--beam_size=10", "--num_PB=128", "--preset=none",
                                    "--device {cpu,gpu,auto}", "(default: auto)"))
    assert "--attention" not in train and "--refine_steps" not in train and "--query" not in train
    encdec = help_of("train", "--model=encdec")
    assert "--attention=none" in encdec and "--num_PB" not in encdec
    assert "--refine_steps=0" in help_of("train", "--preset=bound")  # the preset's --amortize=encoder reads it
    for command in ("test", "translate", "export", "serve"):
        text = help_of(command)
        assert "--beam_size=10" in text and "--units" not in text, command
    assert "(default: 8000)" in help_of("serve") and "(default: 4000)" in help_of("demo-data")
    assert "--nbest NBEST" in help_of("translate") and "--nbest" not in help_of("test")


def test_a_bare_command_prints_the_commands_and_version_says_which(capsys):
    import importlib.metadata

    status, out, err = cli_in_process([], capsys)
    assert status == 2 and out == "" and len(err.splitlines()) <= 15
    assert all(f"\n  {name} " in err for name in ("train", "test", "translate", "export", "serve", "demo-data"))
    assert "--help" in err and "--version" in err
    status, out, _ = cli_in_process(["--version"], capsys)
    assert status == 0 and out.startswith(f"rnnpb-nmt {importlib.metadata.version('rnnpb-nmt')} (Python ")


def test_a_hyphenated_flag_is_its_underscore_flag(tmp_path, capsys):
    status, _, err = cli_in_process(["--do_testing", "--test-set=README.md", f"--working-dir={tmp_path}"], capsys)
    assert status == 1 and "hparams.json missing" in err  # both flags read: the run's files were looked for
    status, _, err = cli_in_process(["test", "--test-set", "README.md", "--working-dir", str(tmp_path)], capsys)
    assert status == 1 and "hparams.json missing" in err
    status, _, err = cli_in_process(["export", f"--working-dir={tmp_path}", "--out="], capsys)
    assert status == 1 and err.startswith("error: --out: empty")
    status, _, err = cli_in_process(["train", "--max-epoch=3", "--working_dir=x"], capsys)
    assert status == 2 and "did you mean --max_epochs?" in err


def test_a_command_takes_its_own_flags_only(tmp_path, capsys):
    for args, flag in ((["translate", "--start_over"], "--start_over"), (["test", "--query=hi"], "--query=hi"),
                       (["train", "--nbest=2"], "--nbest=2")):
        status, _, err = cli_in_process([*args, f"--working_dir={tmp_path}"], capsys)
        assert status == 2 and f"unrecognized arguments: {flag}" in err and len(err.splitlines()) == 1


def config_of(*flags):
    """The configuration ``rnnpb-nmt train FLAGS`` trains."""
    from rnnpb_nmt import cli
    from rnnpb_nmt.config import Config

    return Config.from_flat(cli.given_values(cli.parse(models(), tasks(), ["train", "--working_dir=x", *flags])))


def test_a_preset_is_its_flags_which_flags_given_beside_it_replace():
    from rnnpb_nmt import registry

    assert config_of("--preset=bound") == config_of(*BOUND_FLAGS).replace(preset="bound")
    for preset in registry.presets().values():
        assert config_of(f"--preset={preset.name}") == config_of(*preset.flags().split()).replace(preset=preset.name)
    replaced = config_of("--preset=bound", "--num_PB=64", "--refine_steps=2").to_flat()
    assert (replaced["num_PB"], replaced["refine_steps"], replaced["amortize"]) == (64, 2, "encoder")


def test_the_thesis_preset_is_the_thesis_experiments_bound_model():
    import experiments

    row = next(r for r in experiments.EXPERIMENTS["exp3_en_de"] if r["name"] == "rnnpb20000")
    assert config_of("--preset=thesis") == config_of(*row["flags"]).replace(preset="thesis")


def test_a_run_records_its_preset_and_an_older_run_had_none(capsys):
    from rnnpb_nmt.config import Config

    assert config_of("--preset=bound").to_flat()["preset"] == "bound"
    older = {k: v for k, v in Config().to_flat().items() if k != "preset"}
    assert Config.from_saved(older, "hparams.json").model.preset == "none"
    status, _, err = cli_in_process(["--query=hi", "--preset=bound", "--working_dir=x"], capsys)
    assert status == 1 and err.startswith("error: --preset: only with --do_training")


def test_a_run_resumes_by_its_preset_or_by_the_flags_it_stands_for(tmp_path):
    from rnnpb_nmt.data.files import write_json
    from rnnpb_nmt.errors import UserError
    from rnnpb_nmt.train.resume import check_resumable

    files = ("--train_set1=a", "--train_set2=b")
    write_json(str(tmp_path / "hparams.json"), config_of(*BOUND_FLAGS, *files).to_flat())
    for flags in (["--preset=bound"], BOUND_FLAGS):
        assert check_resumable(found(tmp_path), str(tmp_path), config_of(*flags, *files), {}).model.preset == "none"
    with pytest.raises(UserError, match=r"another configuration: --units \(was 128, now 256\)") as refused:
        check_resumable(found(tmp_path), str(tmp_path), config_of("--preset=bound", "--units=256", *files), {})
    assert "--preset" not in str(refused.value)
