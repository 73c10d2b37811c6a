# `make demo` and `make test` do all set-up on a fresh machine: Python 3.11, 3.12 or 3.13 with venv.
# PY=python3.11 chooses the Python; by default the newest supported one that runs here (a pyenv
# shim of a version that is installed but not activated does not). Each Python has its own
# virtualenv, .venv-3.X, and .venv links to the one make used last.
ifndef PY
PY := $(firstword $(foreach p,python3.13 python3.12 python3.11,$(shell $(p) -c "" >/dev/null 2>&1 && echo $(p))))
endif
PYVER := $(shell $(PY) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
# Python 3.11: TensorFlow 2.15 with tensorflow-addons; 3.12+: the newest TensorFlow (docs/install.md).
STACK := $(if $(filter 3.11,$(PYVER)),py311,py312plus)
VENV := .venv-$(PYVER)
PYTHON := $(VENV)/bin/python
DEMO := demo
SENTENCE := "The old teacher sees a small dog ."
RAW_SENTENCE := "The old teacher sees a small dog."
SATZ := "Der alte Lehrer sieht einen kleinen Hund ."
# The bound RNNPB model as it translates best on the demo corpus (--preset=bound:
# rnnpb_nmt/models/rnnpb/presets.py, run_scripts/results/notes/bound_translation.md): one model,
# both directions. --analyze measures the binding: is each test sentence's translation its nearest PB?
BOUND := --preset=bound

.PHONY: demo test test-all test-fast lint fuzz benchmark clean venv

$(VENV)/installed: pyproject.toml requirements/$(STACK).txt
	@case "$(PYVER)" in 3.11|3.12|3.13) ;; \
	  *) echo "error: PY=$(PY) is not a Python 3.11, 3.12 or 3.13 that runs here" >&2; exit 1;; esac
	$(PY) -m venv $(VENV)
	$(PYTHON) -m pip install --quiet --upgrade pip
	$(PYTHON) -m pip install --quiet -e ".[test]" -c requirements/$(STACK).txt
	$(PYTHON) -c "from rnnpb_nmt import tf_stack; print(tf_stack.STACK)" > $@

# The virtualenv of $(PY), installed if need be; says which stack it holds.
venv: $(VENV)/installed
	@if [ -L .venv ] || [ ! -e .venv ]; then ln -sfn $(VENV) .venv; fi
	@echo "stack: $$(cat $(VENV)/installed) ($(VENV), requirements/$(STACK).txt)"

# Every test but the long ones (marker "long": a process of its own, or training to a quality).
test: venv lint
	$(PYTHON) -m pytest -q -n 2 --dist loadfile -m "not long" tests

# Every test: what CI runs.
test-all: venv lint
	$(PYTHON) -m pytest -q -n 2 --dist loadfile tests

# The unit tests only: no test that trains through the command line (marker "slow").
test-fast: venv lint
	$(PYTHON) -m pytest -q -n 2 --dist loadfile -m "not slow" tests

lint: venv
	$(PYTHON) -m ruff check .

# The property tests with fresh random examples (make test always draws the same ones).
fuzz: venv
	HYPOTHESIS_PROFILE=fuzz $(PYTHON) -m pytest -q tests/test_properties.py

# A few minutes of training on the project's own synthetic en->de corpus, then BLEU and a query:
# first raw text to raw text (Moses + SentencePiece, prepared by the run), then the thesis's
# seq-to-seq and the bound RNNPB model (both directions) on the tokenized corpus. Re-running it
# replaces the demo's own working directories.
demo: venv
	$(PYTHON) nmt.py demo-data --out=$(DEMO)/raw --train=4000 --raw
	rm -rf $(DEMO)/subword
	$(PYTHON) nmt.py --do_training --model=encdec --attention=content --tokenize=moses \
	  --subword=sentencepiece --subword_vocab=1000 \
	  --embedding_size=64 --units=128 --num_layers=2 --batch_size=32 --learning_rate=0.005 --max_epochs=25 \
	  --train_set1=$(DEMO)/raw/train.en --train_set2=$(DEMO)/raw/train.de \
	  --dev_set1=$(DEMO)/raw/dev.en --dev_set2=$(DEMO)/raw/dev.de --working_dir=$(DEMO)/subword
	$(PYTHON) nmt.py --do_testing --test_set=$(DEMO)/raw/test.en --working_dir=$(DEMO)/subword
	echo $(RAW_SENTENCE) | $(PYTHON) nmt.py translate --working_dir=$(DEMO)/subword --nbest=3
	$(PYTHON) nmt.py demo-data --out=$(DEMO)/data --train=4000
	rm -rf $(DEMO)/encdec $(DEMO)/bound
	$(PYTHON) nmt.py --do_training --model=encdec --reverse_source \
	  --embedding_size=64 --units=128 --num_layers=2 --batch_size=32 --learning_rate=0.005 --max_epochs=12 \
	  --train_set1=$(DEMO)/data/train.en --train_set2=$(DEMO)/data/train.de \
	  --dev_set1=$(DEMO)/data/dev.en --dev_set2=$(DEMO)/data/dev.de --working_dir=$(DEMO)/encdec
	$(PYTHON) nmt.py --do_testing --test_set=$(DEMO)/data/test.en --working_dir=$(DEMO)/encdec
	$(PYTHON) nmt.py --query=$(SENTENCE) --working_dir=$(DEMO)/encdec
	$(PYTHON) nmt.py --do_training $(BOUND) --max_epochs=20 \
	  --train_set1=$(DEMO)/data/train.en --train_set2=$(DEMO)/data/train.de \
	  --dev_set1=$(DEMO)/data/dev.en --dev_set2=$(DEMO)/data/dev.de --working_dir=$(DEMO)/bound
	$(PYTHON) nmt.py --do_testing --test_set=$(DEMO)/data/test.en --working_dir=$(DEMO)/bound
	$(PYTHON) nmt.py --do_testing --reverse_translation --test_set=$(DEMO)/data/test.de --working_dir=$(DEMO)/bound
	$(PYTHON) nmt.py --query=$(SENTENCE) --nbest=3 --working_dir=$(DEMO)/bound
	$(PYTHON) nmt.py --query=$(SATZ) --reverse_translation --working_dir=$(DEMO)/bound
	$(PYTHON) nmt.py --analyze --test_set=$(DEMO)/data/test.en --working_dir=$(DEMO)/bound

# docs/flags.md from the configuration's metadata (tests/test_docs.py fails when it is stale).
.PHONY: docs
docs: venv
	$(PYTHON) -m rnnpb_nmt.flag_reference

benchmark: venv
	$(PYTHON) run_scripts/benchmark.py --quick

clean:
	rm -rf .venv .venv-3.* $(DEMO) .pytest_cache
