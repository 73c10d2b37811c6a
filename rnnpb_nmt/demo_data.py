"""The demo corpus: a small synthetic English->German parallel corpus made by a synchronous grammar.

The grammar has what makes German hard for a translation model, in the spirit of the SVO->SOV
and gender-agreement grammars of Grefenstette et al. (neural stack/queue/deque): gendered
articles that change with case (der/den, ein/einen), adjective endings that agree with article,
gender and case, and verb-final subordinate clauses. A few hundred word types, real words.

    rnnpb-nmt demo-data --out demo/data --train 4000        (or: python -m rnnpb_nmt.demo_data ...)

writes train/dev/test .en/.de files (tokenized like the thesis data, one sentence per line; with
--raw untokenized, as a user's corpus comes); dev and test sentences never occur in train.
"""

import os
import random
import sys

from rnnpb_nmt import flags
from rnnpb_nmt.data.files import write_text
from rnnpb_nmt.errors import UserError, exit_status

# English, German, gender (m, f, n)
NOUNS = [
    ("man", "Mann", "m"), ("woman", "Frau", "f"), ("child", "Kind", "n"), ("dog", "Hund", "m"),
    ("cat", "Katze", "f"), ("house", "Haus", "n"), ("book", "Buch", "n"), ("car", "Auto", "n"),
    ("teacher", "Lehrer", "m"), ("doctor", "Arzt", "m"), ("girl", "Mädchen", "n"), ("apple", "Apfel", "m"),
    ("table", "Tisch", "m"), ("door", "Tür", "f"), ("city", "Stadt", "f"), ("tree", "Baum", "m"),
    ("flower", "Blume", "f"), ("letter", "Brief", "m"), ("bird", "Vogel", "m"), ("horse", "Pferd", "n"),
    ("window", "Fenster", "n"), ("chair", "Stuhl", "m"), ("lamp", "Lampe", "f"), ("bed", "Bett", "n"),
    ("friend", "Freund", "m"), ("sister", "Schwester", "f"), ("brother", "Bruder", "m"), ("mother", "Mutter", "f"),
    ("father", "Vater", "m"), ("baker", "Bäcker", "m"), ("cook", "Koch", "m"), ("farmer", "Bauer", "m"),
    ("song", "Lied", "n"), ("picture", "Bild", "n"), ("ship", "Schiff", "n"), ("train", "Zug", "m"),
    ("street", "Straße", "f"), ("bridge", "Brücke", "f"), ("garden", "Garten", "m"), ("river", "Fluss", "m"),
    ("mountain", "Berg", "m"), ("school", "Schule", "f"), ("church", "Kirche", "f"), ("key", "Schlüssel", "m"),
    ("cup", "Tasse", "f"), ("glass", "Glas", "n"), ("bread", "Brot", "n"), ("cake", "Kuchen", "m"),
    ("newspaper", "Zeitung", "f"), ("clock", "Uhr", "f"), ("bag", "Tasche", "f"), ("coat", "Mantel", "m"),
    ("shirt", "Hemd", "n"), ("shoe", "Schuh", "m"), ("egg", "Ei", "n"), ("fish", "Fisch", "m"),
    ("mouse", "Maus", "f"), ("cow", "Kuh", "f"), ("pig", "Schwein", "n"), ("king", "König", "m"),
    ("queen", "Königin", "f"), ("singer", "Sänger", "m"), ("neighbour", "Nachbar", "m"), ("room", "Zimmer", "n"),
]
# transitive: English 3rd singular, German 3rd singular
VERBS = [
    ("sees", "sieht"), ("likes", "mag"), ("finds", "findet"), ("buys", "kauft"), ("reads", "liest"),
    ("has", "hat"), ("knows", "kennt"), ("visits", "besucht"), ("paints", "malt"), ("needs", "braucht"),
    ("loves", "liebt"), ("hears", "hört"), ("eats", "isst"), ("sells", "verkauft"), ("opens", "öffnet"),
    ("carries", "trägt"), ("draws", "zeichnet"), ("searches", "sucht"), ("gets", "bekommt"), ("washes", "wäscht"),
    ("fetches", "holt"), ("hides", "versteckt"), ("follows", "verfolgt"), ("cleans", "putzt"), ("asks", "fragt"),
    ("greets", "grüßt"), ("describes", "beschreibt"), ("forgets", "vergisst"), ("wants", "will"),
]
INTRANSITIVE = [
    ("sleeps", "schläft"), ("laughs", "lacht"), ("runs", "läuft"), ("sings", "singt"), ("waits", "wartet"),
    ("works", "arbeitet"), ("dances", "tanzt"), ("cries", "weint"), ("swims", "schwimmt"), ("falls", "fällt"),
]
# English, German stem
ADJECTIVES = [
    ("big", "groß"), ("small", "klein"), ("old", "alt"), ("new", "neu"), ("red", "rot"), ("young", "jung"),
    ("good", "gut"), ("beautiful", "schön"), ("green", "grün"), ("blue", "blau"), ("cold", "kalt"),
    ("warm", "warm"), ("tired", "müd"), ("happy", "froh"), ("strange", "seltsam"), ("quiet", "still"),
]
# English, German main-clause opener, its German conjugation is fixed
SAYERS = [("I know", "ich weiß"), ("I think", "ich glaube"), ("she says", "sie sagt"), ("he hopes", "er hofft"),
          ("we hear", "wir hören"), ("they believe", "sie glauben")]
CONJUNCTIONS = [("because", "weil"), ("while", "während"), ("although", "obwohl"), ("when", "wenn")]

DEFINITE = {("nom", "m"): "der", ("nom", "f"): "die", ("nom", "n"): "das",
            ("acc", "m"): "den", ("acc", "f"): "die", ("acc", "n"): "das"}
INDEFINITE = {("nom", "m"): "ein", ("nom", "f"): "eine", ("nom", "n"): "ein",
              ("acc", "m"): "einen", ("acc", "f"): "eine", ("acc", "n"): "ein"}


def adjective_ending(definite, case, gender):
    """Weak endings after der/die/das, mixed endings after ein/eine."""
    if case == "acc" and gender == "m":
        return "en"
    if definite:
        return "e"
    return {"m": "er", "f": "e", "n": "es"}[gender]


def noun_phrase(rng, case):
    english, german, gender = rng.choice(NOUNS)
    definite = rng.random() < 0.6
    en = ["the" if definite else ("an" if english[0] in "aeiou" else "a")]
    de = [(DEFINITE if definite else INDEFINITE)[(case, gender)]]
    if rng.random() < 0.4:
        adj_en, adj_de = rng.choice(ADJECTIVES)
        en[0] = "the" if definite else ("an" if adj_en[0] in "aeiou" else "a")
        en.append(adj_en)
        de.append(adj_de + adjective_ending(definite, case, gender))
    return en + [english], de + [german]


def clause(rng, subordinate):
    """(English words, German words) of one clause; German puts the verb last when subordinate."""
    subj_en, subj_de = noun_phrase(rng, "nom")
    if rng.random() < 0.25:
        verb_en, verb_de = rng.choice(INTRANSITIVE)
        return subj_en + [verb_en], subj_de + [verb_de]
    verb_en, verb_de = rng.choice(VERBS)
    obj_en, obj_de = noun_phrase(rng, "acc")
    german = subj_de + obj_de + [verb_de] if subordinate else subj_de + [verb_de] + obj_de
    return subj_en + [verb_en] + obj_en, german


def sentence(rng):
    """One sentence pair as tokenized strings."""
    kind = rng.random()
    if kind < 0.45:
        en, de = clause(rng, subordinate=False)
    elif kind < 0.75:
        opener_en, opener_de = rng.choice(SAYERS)
        sub_en, sub_de = clause(rng, subordinate=True)
        en = opener_en.split() + ["that"] + sub_en
        de = opener_de.split() + [",", "dass"] + sub_de
    else:
        main_en, main_de = clause(rng, subordinate=False)
        conj_en, conj_de = rng.choice(CONJUNCTIONS)
        sub_en, sub_de = clause(rng, subordinate=True)
        en, de = main_en + [conj_en] + sub_en, main_de + [",", conj_de] + sub_de
    de[0] = de[0][0].upper() + de[0][1:]
    en[0] = en[0][0].upper() + en[0][1:]
    return " ".join(en + ["."]), " ".join(de + ["."])


def generate(num_train, num_dev, num_test, seed=1):
    """Distinct sentence pairs split into train/dev/test (no English sentence in two splits)."""
    rng = random.Random(seed)
    pairs, seen = [], set()
    total = num_train + num_dev + num_test
    while len(pairs) < total:
        en, de = sentence(rng)
        if en not in seen:
            seen.add(en)
            pairs.append((en, de))
    return {"train": pairs[:num_train], "dev": pairs[num_train:num_train + num_dev],
            "test": pairs[num_train + num_dev:]}


def write(splits, out, raw=False):
    """One file per split and language, each written whole or not at all; ``raw``: untokenized text
    ("dog." rather than "dog ."), as a user's corpus comes, for a run that prepares its own text
    (--tokenize=moses)."""
    detokenize = _detokenizer() if raw else None
    for name, pairs in splits.items():
        for side, lang in ((0, "en"), (1, "de")):
            lines = [pair[side] for pair in pairs]
            if raw:
                lines = [detokenize(lang, line.split()) for line in lines]
            write_text(os.path.join(out, f"{name}.{lang}"), "".join(line + "\n" for line in lines))


def _detokenizer():
    """(lang, words) -> Moses-detokenized text; sacremoses is a dependency of the package, but a
    script run outside its environment may lack it."""
    try:
        from sacremoses import MosesDetokenizer
    except ImportError:
        raise UserError("--raw needs sacremoses (pip install sacremoses, or pip install . for the whole "
                        "package)") from None
    detokenizers = {}
    return lambda lang, words: detokenizers.setdefault(lang, MosesDetokenizer(lang=lang)).detokenize(words)


def build_parser():
    parser = flags.Parser(prog=f"{flags.prog()} demo-data", usage="%(prog)s --out=DIR [flags]",
                          description=__doc__.split("\n")[0], example=f"{flags.prog()} demo-data --out=demo/data")
    parser.add_argument("--out", default="demo/data", help="output directory")
    parser.add_argument("--train", type=int, default=4000, help="training sentence pairs")
    parser.add_argument("--dev", type=int, default=200, help="dev sentence pairs")
    parser.add_argument("--test", type=int, default=200, help="test sentence pairs")
    parser.add_argument("--seed", type=int, default=1, help="the grammar's random seed")
    parser.add_argument("--raw", action="store_true", help="untokenized text (default: tokenized, as the thesis's data)")
    return parser


def main(argv=None):
    """``rnnpb-nmt demo-data``: 0 when written; a one-line error and 1 when it cannot be."""
    parser = build_parser()
    args = parser.parse_args(argv)
    for flag in ("train", "dev", "test"):
        if getattr(args, flag) < 1:
            parser.error(f"--{flag}={getattr(args, flag)}: must be at least 1")

    def write_corpus():
        write(generate(args.train, args.dev, args.test, args.seed), args.out, args.raw)
        print(f"wrote {args.train}/{args.dev}/{args.test} sentence pairs to {args.out}")
    return exit_status(write_corpus)


if __name__ == "__main__":
    sys.exit(main())
