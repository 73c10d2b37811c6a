# `make demo` and `make test` do all set-up on a fresh machine (Python 3.11 with venv).
PY ?= python3
VENV := .venv
PYTHON := $(VENV)/bin/python
DEMO := demo
SENTENCE := "The old teacher sees a small dog ."

.PHONY: demo test test-fast lint fuzz benchmark clean

$(VENV)/installed: requirements.txt
	$(PY) -m venv $(VENV)
	$(PYTHON) -m pip install --quiet --upgrade pip
	$(PYTHON) -m pip install --quiet -r requirements.txt
	touch $@

test: lint
	$(PYTHON) -m pytest -q -n 2 --dist loadfile tests

# The unit tests only: no test that trains through the command line (marker "slow").
test-fast: lint
	$(PYTHON) -m pytest -q -n 2 --dist loadfile -m "not slow" tests

lint: $(VENV)/installed
	$(PYTHON) -m ruff check .

# The property tests with fresh random examples (make test always draws the same ones).
fuzz: $(VENV)/installed
	HYPOTHESIS_PROFILE=fuzz $(PYTHON) -m pytest -q tests/test_properties.py

# A few minutes of training on the project's own synthetic en->de corpus, then BLEU and a query.
# Re-running it replaces the demo's own working directories (and nothing else).
demo: $(VENV)/installed
	$(PYTHON) data/generate_demo.py --out $(DEMO)/data --train 4000
	rm -rf $(DEMO)/encdec $(DEMO)/rnnpb
	$(PYTHON) nmt.py --do_training --model=encdec --reverse_source \
	  --embedding_size=64 --units=128 --num_layers=2 --batch_size=32 --learning_rate=0.005 --max_epochs=12 \
	  --train_set1=$(DEMO)/data/train.en --train_set2=$(DEMO)/data/train.de \
	  --dev_set1=$(DEMO)/data/dev.en --dev_set2=$(DEMO)/data/dev.de --working_dir=$(DEMO)/encdec
	$(PYTHON) nmt.py --do_testing --test_set=$(DEMO)/data/test.en --working_dir=$(DEMO)/encdec
	$(PYTHON) nmt.py --query=$(SENTENCE) --working_dir=$(DEMO)/encdec
	$(PYTHON) nmt.py --do_training --model=rnnpbnmt --bind_hard --num_PB=256 --p_reset=0.1 \
	  --embedding_size=64 --units=128 --num_layers=2 --batch_size=32 --learning_rate=0.005 --max_epochs=10 \
	  --max_recog_epochs=50 \
	  --train_set1=$(DEMO)/data/train.en --train_set2=$(DEMO)/data/train.de \
	  --dev_set1=$(DEMO)/data/dev.en --dev_set2=$(DEMO)/data/dev.de --working_dir=$(DEMO)/rnnpb
	$(PYTHON) nmt.py --do_testing --test_set=$(DEMO)/data/test.en --working_dir=$(DEMO)/rnnpb
	$(PYTHON) nmt.py --query=$(SENTENCE) --working_dir=$(DEMO)/rnnpb
	$(PYTHON) nmt.py --analyze --test_set=$(DEMO)/data/test.en --working_dir=$(DEMO)/rnnpb

benchmark: $(VENV)/installed
	$(PYTHON) run_scripts/benchmark.py --quick

clean:
	rm -rf $(VENV) $(DEMO) .pytest_cache
