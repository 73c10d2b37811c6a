"""Probabilistic context-free grammars: reading, sampling derivations, parsing sentences.

A grammar file has one rule per line, ``WEIGHT<TAB>LEFT<TAB>RIGHT`` (RIGHT: symbols separated
by spaces); blank lines are skipped. The weights of the rules of one left side are relative
(they need not sum to 1). The left side of the first rule is the start symbol; a symbol that is
no rule's left side is a word. This is the format of McCoy et al.'s ``question.gr``.

A derivation is a tree ``(symbol, children)`` whose leaves are words (strings).
"""

import bisect
import functools
import itertools
import os

from rnnpb_nmt.errors import UserError


class Grammar:
    """Rules by left side: {left: [(weight, right symbols)]}; ``start`` the start symbol."""

    def __init__(self, rules, start):
        self.rules, self.start = rules, start
        self._cumulative = {left: list(itertools.accumulate(w for w, _ in alternatives))
                            for left, alternatives in rules.items()}

    @classmethod
    def read(cls, path):
        """The grammar of ``path``; a malformed rule is a UserError naming the file and line."""
        rules, start = {}, None
        if not os.path.isfile(path):
            raise UserError(f"{path}: no such file")
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().split("\n")
        except UnicodeDecodeError as e:
            raise UserError(f"{path}: not valid UTF-8 (byte {e.start})") from None
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            weight, left, right = _rule(line, f"{path}:{number}")
            rules.setdefault(left, []).append((weight, right))
            start = start or left
        if start is None:
            raise UserError(f"{path}: no rules")
        for left, alternatives in rules.items():
            if sum(w for w, _ in alternatives) <= 0:
                raise UserError(f"{path}: the rules of {left} all have weight 0")
        return cls(rules, start)

    def sample(self, rng, symbol=None):
        """A random derivation of ``symbol`` (the start symbol), rules drawn by their weights with
        ``rng`` (a ``random.Random``: one draw per rule, which numpy would make ten times slower)."""
        symbol = symbol or self.start
        if symbol not in self.rules:
            return symbol
        cumulative = self._cumulative[symbol]
        # The first rule whose cumulative weight exceeds the draw (rules of weight 0: never).
        index = bisect.bisect_right(cumulative, rng.random() * cumulative[-1])
        _, right = self.rules[symbol][min(index, len(cumulative) - 1)]
        return symbol, [self.sample(rng, s) for s in right]

    def parse(self, words):
        """A derivation of ``words`` (a sequence of strings) from the start symbol, or None."""
        words = tuple(words)

        @functools.lru_cache(maxsize=None)
        def parses(symbol, begin):
            """[(derivation, end)] of every way ``symbol`` derives words[begin:end]."""
            if symbol not in self.rules:
                return [(symbol, begin + 1)] if begin < len(words) and words[begin] == symbol else []
            found = []
            for _, right in self.rules[symbol]:
                for children, end in sequences(right, begin):
                    found.append(((symbol, children), end))
            return found

        def sequences(symbols, begin):
            if not symbols:
                return [([], begin)]
            return [([first] + rest, end) for first, middle in parses(symbols[0], begin)
                    for rest, end in sequences(symbols[1:], middle)]

        complete = [tree for tree, end in parses(self.start, 0) if end == len(words)]
        return complete[0] if complete else None


def _rule(line, where):
    """(weight, left, right symbols) of one line of a grammar file."""
    fields = line.rstrip().split("\t")  # question.gr has a line with a TAB after its right side
    if len(fields) != 3:
        raise UserError(f"{where}: expected WEIGHT<TAB>LEFT<TAB>RIGHT, got {len(fields)} tab-separated fields")
    weight, left, right = fields[0].strip(), fields[1].strip(), fields[2].split()
    try:
        value = float(weight)
    except ValueError:
        raise UserError(f"{where}: weight {weight!r} is not a number") from None
    if not value >= 0 or value == float("inf"):
        raise UserError(f"{where}: weight {weight} must be a finite number >= 0")
    if not left or " " in left:
        raise UserError(f"{where}: left side {left!r} must be one symbol")
    return value, left, right


def words(tree):
    """The words a derivation derives, left to right."""
    if isinstance(tree, str):
        return [tree]
    return [w for child in tree[1] for w in words(child)]
