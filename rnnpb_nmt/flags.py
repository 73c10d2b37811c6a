"""The command line's parsing, below both ``rnnpb_nmt.cli`` and ``rnnpb_nmt.serving`` (which import it).

A configuration field's flag is made here from its metadata (``add_flags``); ``Parser`` is argparse
with one-line errors that name the closest flag or value, ``--working-dir`` read as ``--working_dir``,
and a short help: the flags of a configuration section listed one per line with their defaults
(``listing``), only those the run would read. Which settings a trained run may be given again
(``INFERENCE``, ``inference_settings``) is decided here once, for the command line, ``rnnpb_nmt.load``,
export and serve. A parsed command reaches training and testing as one ``RunRequest``.
"""

import argparse
import dataclasses
import difflib
import os
import shutil
import sys

from rnnpb_nmt import config as config_lib, registry

GROUPS = {"data": "data", "model": "model (saved in hparams.json)", "training": "training (saved in hparams.json)",
          "inference": "translation and recognition (saved; may be changed at test time)"}
# The settings a trained run may be given again (at test time, to rnnpb_nmt.load, to export and serve).
INFERENCE = tuple(f.name for f in config_lib.fields(config_lib.SECTIONS["inference"]))
DOCS = "docs/flags.md"  # every flag, with its range and who reads it


def inference_settings(values):
    """The translation settings among ``values`` (flag names -> values, None: not given)."""
    return {name: values[name] for name in INFERENCE if values.get(name) is not None}


@dataclasses.dataclass(frozen=True)
class RunRequest:
    """What a command asks of a run, made once from its parsed flags: ``given``, the flags given
    (flat names -> values, a --preset's beneath them), the run's --working_dir, --start_over and
    --distribute; ``models`` and ``tasks`` map --model and --task names to their classes."""

    models: dict
    tasks: dict
    given: dict
    working_dir: str
    start_over: bool = False
    distribute: str = "none"


def add_flags(group, section, choices=None, listed=False):
    """One flag per field of a config section, from its metadata; every default is None, which
    means "not given" (a resumed or tested run takes the saved value). ``listed``: --help shows
    the flag as ``listing``'s line (its default shown), not argparse's."""
    for field in config_lib.fields(section):
        m = field.metadata
        if not m["flag"]:
            continue
        kind = config_lib.flag_type(field)
        text = argparse.SUPPRESS if listed else m["help"]
        if kind is bool:
            group.add_argument(f"--{field.name}", action="store_true", default=None, help=text)
        else:
            group.add_argument(f"--{field.name}", type=kind, default=None, help=text,
                               choices=(choices or {}).get(field.name, m["choices"]))


def _default(field):
    if field.default is None:
        return "(unset)"
    if isinstance(field.default, bool):
        return "off" if not field.default else "on"
    return f"{field.default:g}" if isinstance(field.default, float) else str(field.default)


def listing(section, given, width=None):
    """The lines of --help for a config section's flags that a run of ``given`` (flat names: the
    flags given so far) reads: ``--flag=DEFAULT  help``, cut to the terminal's width."""
    width = width or min(shutil.get_terminal_size((100, 24)).columns, 120)
    config = config_lib.Config.from_flat(given)
    lines = []
    for field in config_lib.fields(section):
        if field.metadata["flag"] and config_lib.applies(field.name, config):
            head = f"  --{field.name}={_default(field)}"
            text = f"{head:<32} {field.metadata['help']}"
            lines.append(text if len(text) <= width else text[:width - 1] + "…")
    return lines


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions as written (their lists kept), and each flag's default where it has one."""

    def _get_help_string(self, action):
        text = action.help or ""
        if action.default not in (None, False, argparse.SUPPRESS) and "default" not in text:
            text += " (default: %(default)s)"
        return text


class Parser(argparse.ArgumentParser):
    """argparse, whose errors are one line (not the usage), naming the flags or values closest to a
    mistyped one; a hyphenated long flag is read as its underscore name. ``sections``: the config
    sections whose flags --help lists, one line each (those the flags given would read);
    ``example``: the command line --help ends with."""

    def __init__(self, *args, example=None, **kwargs):
        super().__init__(*args, allow_abbrev=False, formatter_class=_Formatter, **kwargs)
        self.sections, self.example, self.argv = [], example, []

    def add_section(self, name, choices=None):
        """The flags of config section ``name``, listed by --help one line each (``listing``)."""
        add_flags(self.add_argument_group(GROUPS[name]), config_lib.SECTIONS[name], choices, listed=True)
        self.sections.append(name)

    def parse_known_args(self, args=None, namespace=None):
        self.argv = [self._underscored(word) for word in (sys.argv[1:] if args is None else args)]
        return super().parse_known_args(self.argv, namespace)

    def _underscored(self, word):
        """``--working-dir=D`` -> ``--working_dir=D`` when only the underscore flag exists."""
        name, eq, value = word.partition("=")
        if not name.startswith("--") or name in self._option_string_actions:
            return word
        fixed = "--" + name[2:].replace("-", "_")
        return fixed + eq + value if fixed in self._option_string_actions else word

    def parse_args(self, args=None, namespace=None):
        parsed, unknown = self.parse_known_args(args, namespace)
        if unknown:
            self.error(f"unrecognized arguments: {self._unknown(unknown)}")
        return parsed

    def _unknown(self, unknown):
        """The unknown arguments, and the known flags closest to each unknown flag."""
        flags = [s for s in self._option_string_actions if s.startswith("--")]
        close = {word.split("=")[0]: " or ".join(closest(word.split("=")[0], flags))
                 for word in unknown if word.startswith("-")}
        close = {word: hint for word, hint in close.items() if hint}
        if not close:
            return f"{' '.join(unknown)} ({self.prog} --help lists the flags)"
        hints = next(iter(close.values())) if len(close) == 1 else ", ".join(f"{h} for {w}" for w, h in close.items())
        return f"{' '.join(unknown)} (did you mean {hints}?)"

    def _check_value(self, action, value):
        """argparse's check of a --flag=VALUE against the flag's choices (its message), naming the
        closest choices."""
        if action.choices is not None and value not in action.choices:
            close = " or ".join(map(repr, closest(str(value), [str(c) for c in action.choices])))
            raise argparse.ArgumentError(action, f"invalid choice: {value!r} (choose from "
                                                 f"{', '.join(map(repr, action.choices))}"
                                                 f"{f'; did you mean {close}?' if close else ''})")

    def error(self, message):
        self.exit(2, f"error: {message}\n")

    def format_help(self):
        """argparse's help of the command's own flags, then the config sections' flags that the
        flags given so far would read, one line each with its default, then the example."""
        lines = [super().format_help().rstrip("\n")]
        given = _given(self.argv, {a.dest: a for a in self._actions})
        for name in self.sections:
            lines += ["", f"{GROUPS[name]}, a new run's defaults (what each does: {DOCS}):",
                      *listing(config_lib.SECTIONS[name], given)]
        if self.example:
            lines += ["", "example:", f"  {self.example}"]
        return "\n".join(lines) + "\n"


def _given(argv, actions):
    """The flags with choices among ``argv`` (``--model=NAME``, ``--amortize encoder``), a preset's
    first: what decides which flags a run reads, read from a command line not yet checked."""
    given = {}
    for i, word in enumerate(argv):
        name, eq, value = word.removeprefix("--").partition("=")
        value = value if eq else (argv[i + 1] if i + 1 < len(argv) else "")
        if word.startswith("--") and getattr(actions.get(name), "choices", None):
            given[name] = registry.model_aliases().get(value, value) if name == "model" else value
    preset = registry.presets().get(given.get("preset"))
    return {**(preset.values if preset else {}), **given}


def closest(word, known):
    """The ``known`` words closest to a mistyped ``word``: the closest, and those nearly as close."""
    ratios = {k: difflib.SequenceMatcher(None, word, k).ratio() for k in known}
    best = max(ratios.values(), default=0)
    return [k for k in difflib.get_close_matches(word, known, n=3) if ratios[k] >= best - 0.1]


def prog():
    """The command's name as it was run: ``rnnpb-nmt`` (the console command) or ``nmt.py``."""
    name = os.path.basename(sys.argv[0])
    return "python3 -m rnnpb_nmt" if name == "__main__.py" else name or "rnnpb-nmt"
