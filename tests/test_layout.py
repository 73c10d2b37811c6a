"""The package's layout says what depends on what: the core names no model family and no task, each
family and task registers itself from its own folder, and no file edits Python's import path."""

import ast
import re

from rnnpb_nmt import registry

from helpers import ROOT

PACKAGE = ROOT / "rnnpb_nmt"
CORE = [p for p in PACKAGE.rglob("*.py") if p.relative_to(PACKAGE).parts[0] not in ("models", "tasks")]
# The two base classes every model and task subclasses, and the registry's package docstrings, are
# the contract itself: they live beside the families but name none.
CONTRACTS = [PACKAGE / "models" / "base.py", PACKAGE / "models" / "teacher_forced.py", PACKAGE / "models" / "losses.py",
             PACKAGE / "tasks" / "base.py", PACKAGE / "models" / "__init__.py", PACKAGE / "tasks" / "__init__.py"]


def _imports(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def test_the_core_imports_no_model_family_and_no_task():
    for path in CORE + CONTRACTS:
        for name in _imports(path):
            parts = name.split(".")
            if parts[:2] in (["rnnpb_nmt", "models"], ["rnnpb_nmt", "tasks"]) and len(parts) > 2:
                assert parts[2] in ("base", "teacher_forced", "losses"), f"{path.relative_to(ROOT)} imports {name}"


def _alternatives(names):
    return "|".join(sorted(map(re.escape, names), key=len, reverse=True))


def test_the_core_names_no_model_and_no_task():
    # A model name as a word (not a module path such as layers/hard_attention.py); a task name, an
    # English word and a JSON key too ("translation"), as a value given or compared: after "=" or "==".
    models = set(registry.models()) | set(registry.model_aliases())
    pattern = re.compile(rf"(?<![\w./-])({_alternatives(models)})(?![\w-])"
                         rf"|=\s*\(?[\"']?({_alternatives(registry.tasks())})\b")
    for path in CORE + CONTRACTS:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            found = pattern.search(line)
            assert not found, f"{path.relative_to(ROOT)}:{number} names {found.group(0)!r}: {line.strip()}"


def test_every_model_and_task_registers_from_its_own_folder():
    for kind, table, folder in (("model", registry.models(), "models"), ("task", registry.tasks(), "tasks")):
        for name, cls in table.items():
            parts = cls.__module__.split(".")
            assert parts[:2] == ["rnnpb_nmt", folder] and len(parts) == 4, f"--{kind}={name}: {cls.__module__}"


def test_no_file_edits_the_import_path():
    # The package is installed (make installs it editable); tests find helpers.py and the run scripts
    # through pytest.ini's pythonpath. (The name is split so that this file does not match itself.)
    needle = "sys." + "path"
    files = [p for p in ROOT.rglob("*.py") if not any(part.startswith(".") or part in ("fixtures", "build")
                                                       for part in p.relative_to(ROOT).parts)]
    assert len(files) > 50
    for path in files:
        assert needle not in path.read_text(encoding="utf-8"), path.relative_to(ROOT)
