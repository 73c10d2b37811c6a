"""Training under tf.distribute.MirroredStrategy on two logical CPUs matches one device, and
draws dropout masks and PB noise on every replica."""

import json
import subprocess
import sys

from conftest import ROOT

SCRIPT = r"""
import json, sys
import numpy as np
import tensorflow as tf
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[1] + "/tests")
from conftest import tiny_params
from nmtcore.vocabulary import Vocabulary
from rnnpb import BoundRNNPB

rng = np.random.default_rng(0)
src = [np.append(rng.integers(4, 34, rng.integers(2, 8)), 2).astype(np.int32) for _ in range(64)]
tgt = [np.append(rng.integers(4, 34, rng.integers(2, 8)), 2).astype(np.int32) for _ in range(64)]
vocab = Vocabulary([f"w{i}" for i in range(30)])
params = tiny_params(model="rnnpbnmt", num_train=64, binding_strength=1.0, max_recog_epochs=5)

def build(**overrides):
    return BoundRNNPB(dict(params, **overrides), vocab, vocab)

single = build()
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    mirrored = build()
for a, b in zip(single.variables, mirrored.variables):
    b.assign(a)
steps = 0
for a_batch, b_batch in zip(single.dataset("parallel", src, tgt), mirrored.dataset("parallel", src, tgt)):
    single.train_step(a_batch)
    mirrored.train_step(b_batch)
    steps += 1
diff = max(float(np.max(np.abs(a.numpy() - b.numpy()))) for a, b in zip(single.variables, mirrored.variables))
moved = float(np.abs(mirrored.pbs.a.numpy()).sum())
dev = (single.dev_perplexity(src[:8], tgt[:8], 8), mirrored.dev_perplexity(src[:8], tgt[:8], 8))
with strategy.scope():  # dropout and PB noise: each replica draws from the model's generator
    noisy = build(dropout=0.2, sigma=0.1)
    noisy.start_epoch(1)
noisy_losses = [float(noisy.train_step(b)["loss"]) for b in noisy.dataset("parallel", src, tgt, epoch=1)]
print(json.dumps({"replicas": strategy.num_replicas_in_sync, "steps": steps, "max_diff": diff,
                  "pb_moved": moved, "dev": dev, "noisy_losses": noisy_losses}))
"""


def test_mirrored_training_matches_single_device():
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(ROOT)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["replicas"] == 2 and result["steps"] >= 4
    assert result["pb_moved"] > 0
    assert result["max_diff"] < 1e-4
    assert abs(result["dev"][0] - result["dev"][1]) < 1e-3 * result["dev"][0]
    assert len(result["noisy_losses"]) == result["steps"] and all(0 < x < 1e3 for x in result["noisy_losses"])
