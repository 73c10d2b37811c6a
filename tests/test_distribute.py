"""Training under tf.distribute.MirroredStrategy on two logical CPUs matches one device (also with
--batch_tokens), and applies dropout and PB noise on the replicas; two local workers of a multi-worker run train the
single-process model, each in its own directory."""

import json
import os
import socket
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from helpers import ROOT, run_nmt, train_args

pytestmark = pytest.mark.long  # every test here trains through the command line or a strategy, in processes of its own

# Two logical CPUs, and 64 pairs of random words: what each script below starts from.
PREAMBLE = r"""
import json, sys
import numpy as np
import pytest
import tensorflow as tf
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
from helpers import models, tiny_config, translator_of
from rnnpb_nmt.data.dataset import make_dataset
from rnnpb_nmt.data.vocabulary import Vocabulary
from rnnpb_nmt.models.rnnpb.model import BoundRNNPB
from rnnpb_nmt.train.step import Trainer

rng = np.random.default_rng(0)
src = [np.append(rng.integers(4, 34, rng.integers(2, 8)), 2).astype(np.int32) for _ in range(64)]
tgt = [np.append(rng.integers(4, 34, rng.integers(2, 8)), 2).astype(np.int32) for _ in range(64)]
vocab = Vocabulary([f"w{i}" for i in range(30)])
"""
SCRIPT = PREAMBLE + r"""
config = tiny_config(model="rnnpbnmt", num_train=64, binding_strength=1.0, max_recog_epochs=5, num_layers=1)

def build(**changes):
    return Trainer(BoundRNNPB(config.replace(**changes), vocab, vocab))

single = build()
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    mirrored = build()
for a, b in zip(single.model.variables, mirrored.model.variables):
    b.assign(a)
steps = 0
for a_batch, b_batch in zip(single.dataset("parallel", src, tgt), mirrored.dataset("parallel", src, tgt)):
    single.train_step(a_batch)
    mirrored.train_step(b_batch)
    steps += 1
diff = max(float(np.max(np.abs(a.numpy() - b.numpy())))
           for a, b in zip(single.model.variables, mirrored.model.variables))
moved = float(np.abs(mirrored.model.pbs.a.numpy()).sum())
dev = tuple(translator_of(t.model).dev_perplexity(src[:8], tgt[:8], 8) for t in (single, mirrored))
with strategy.scope():  # dropout and PB noise: each replica draws from the trainer's generator
    noisy = build(dropout=0.2, sigma=0.1)
    clean = build()
    noisy.start_epoch(1)
for a, b in zip(noisy.model.variables, clean.model.variables):
    b.assign(a)
clean_loss = float(clean.train_step(next(iter(clean.dataset("parallel", src, tgt, epoch=1))))["loss"])
noisy_losses = [float(noisy.train_step(b)["loss"]) for b in noisy.dataset("parallel", src, tgt, epoch=1)]
with strategy.scope():  # --batch_tokens: each replica a share of the batch, the loss over the whole batch
    tokened = build(batch_tokens=40)
alone = build(batch_tokens=40)
for a, b in zip(tokened.model.variables, alone.model.variables):
    b.assign(a)
alone.dataset("parallel", src, tgt)  # the kind's batch signature
shares, covered = [], []
for batch in tokened.dataset("parallel", src, tgt):
    parts = [p["index"].numpy().tolist() for p in strategy.experimental_local_results(batch)]
    shares.append([len(p) for p in parts])
    covered += [i for p in parts for i in p]
    tokened.train_step(batch)
    alone.train_step(next(iter(make_dataset(src, tgt, batches=[sum(parts, [])]))))
token_diff = max(float(np.max(np.abs(a.numpy() - b.numpy())))
                 for a, b in zip(tokened.model.variables, alone.model.variables))
print(json.dumps({"replicas": strategy.num_replicas_in_sync, "steps": steps, "max_diff": diff,
                  "pb_moved": moved, "dev": dev, "noisy_losses": noisy_losses, "clean_loss": clean_loss,
                  "token_shares": shares, "token_covered": sorted(covered), "token_diff": token_diff}))
"""


def test_mirrored_training_matches_single_device():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "tests")]))  # helpers and the package
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["replicas"] == 2 and result["steps"] >= 4
    assert result["pb_moved"] > 0
    assert result["max_diff"] < 1e-4
    assert abs(result["dev"][0] - result["dev"][1]) < 1e-3 * result["dev"][0]
    assert len(result["noisy_losses"]) == result["steps"] and all(0 < x < 1e3 for x in result["noisy_losses"])
    # The same weights and first batch without dropout and noise give another loss (untrained, the
    # model's outputs are near uniform whatever its inputs, so the difference is small but exact).
    assert result["noisy_losses"][0] != result["clean_loss"]
    # --batch_tokens under the strategy: every pair once, every replica a sentence of every batch, and
    # the single-device model of the same (whole) batches
    assert result["token_covered"] == list(range(64)) and len(result["token_shares"]) > 2
    assert all(len(shares) == 2 and min(shares) >= 1 for shares in result["token_shares"])
    assert result["token_diff"] < 1e-4


def free_ports(n):
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("localhost", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def test_two_workers_train_the_single_process_model(demo_data, tmp_path):
    flags = ["--model=rnnpbnmt", "--num_PB=8", "--max_epochs=2", "--max_recog_epochs=5", "--num_layers=1"]
    run_nmt(*train_args(demo_data, tmp_path / "single", *flags))
    workers = [f"localhost:{port}" for port in free_ports(2)]
    procs = [subprocess.Popen(
        [sys.executable, str(ROOT / "nmt.py"), *train_args(demo_data, tmp_path / "multi", *flags), "--distribute=multiworker"],
        env=dict(os.environ, TF_CONFIG=json.dumps({"cluster": {"worker": workers}, "task": {"type": "worker", "index": i}})),
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(2)]
    for proc in procs:
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err[-3000:]
    # The chief trains into --working_dir, worker 1 beside it; both hold the single process's run.
    single = json.loads((tmp_path / "single" / "training_stats.json").read_text())
    for wd in ("multi", "multi.worker-1"):
        stats = json.loads((tmp_path / wd / "training_stats.json").read_text())
        for a, b in zip(stats["epochs"], single["epochs"], strict=True):
            assert a["train_perplexity"] == pytest.approx(b["train_perplexity"], rel=1e-5)
            assert a["dev_perplexity"] == pytest.approx(b["dev_perplexity"], rel=1e-5)
        for name, _ in tf.train.list_variables(str(tmp_path / "single" / "best")):
            if name.startswith("model/"):
                np.testing.assert_allclose(tf.train.load_variable(str(tmp_path / wd / "best"), name),
                                           tf.train.load_variable(str(tmp_path / "single" / "best"), name), atol=1e-5)


MIXED_SCRIPT = PREAMBLE + r"""
config = tiny_config(model="transformer", heads=2, mixed_precision="bfloat16")
single = Trainer(models()["transformer"](config, vocab, vocab))
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    mirrored = Trainer(models()["transformer"](config, vocab, vocab))
for a, b in zip(single.model.variables, mirrored.model.variables):
    b.assign(a)
losses = [[float(t.train_step(b)["loss"]) for t, b in ((single, one), (mirrored, two))]
          for one, two in zip(single.dataset("parallel", src, tgt), mirrored.dataset("parallel", src, tgt))]
print(json.dumps({"replicas": strategy.num_replicas_in_sync, "losses": losses,
                  "dtype": mirrored.model.output_layer.compute_dtype}))
"""


def test_mirrored_training_composes_with_bfloat16():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "tests")]))
    proc = subprocess.run([sys.executable, "-c", MIXED_SCRIPT], capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["replicas"] == 2 and result["dtype"] == "bfloat16" and len(result["losses"]) >= 4
    # Each replica rounds its half of the batch in bfloat16, summed in another order: equal within
    # bfloat16's rounding (measured: 0.03 % at most)
    single, mirrored = np.array(result["losses"]).T
    np.testing.assert_allclose(mirrored, single, rtol=0.005)
