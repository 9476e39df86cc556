#!/usr/bin/env python3
"""gen_corpus.py — synthetic conversation histories with known ground truth, for dream-mini.

One history is one invented person talking to assistants over several months: a ChatGPT export
(`chatgpt/conversations.json`, the tree `mapping` format) holding most conversations and a
Claude.ai export (`claude/conversations.json`) holding the rest, plus `truth.json` (schema in
train/README.md) saying which messages form which topic segments, which subjects each message
names, and which facts each user message states.

    python3 train/gen_corpus.py --seed S --catalogue train|heldout --out DIR [--conversations N]

Why it is built the way it is:
- The trained model only ever sees the pipeline's prompts, so everything a gold answer needs is
  in the text: a subject is named by its full name (surface[0]) the first time it comes up in each
  conversation, its first conversation says what it is (type and category words included), and
  every fact is said explicitly, value included, in a user message.
- Subject material comes from text Debian ships (WordNet's noun database from `wordnet-base`,
  the word list from `wamerican`), not from hand-made lists: the templates are hand-written, the
  things, places, practices, occupations and names that fill them are not. The `train` and
  `heldout` catalogues split that material by a stable hash of each lemma/name, so no subject
  name of one can appear in the other.
- Deterministic: everything flows from one random.Random seeded by catalogue and seed; nothing
  iterates a set or depends on hash randomization or the clock, so a seed gives the same bytes.
"""
import argparse
import datetime
import hashlib
import json
import os
import random
import re
import sys

WORDNET = "/usr/share/wordnet"
WORDS = "/usr/share/dict/american-english"
HELDOUT_BUCKETS = 8  # the heldout catalogue takes bucket 0 of 8 (1/8 of every pool)


# =============================================================================================
# Lexicon: WordNet nouns and dictionary names
# =============================================================================================

class Synset:
    __slots__ = ("off", "lex", "words", "hypers", "hypos", "parts", "gloss", "instance")

    def __init__(self, off, lex, words, hypers, hypos, parts, gloss, instance):
        self.off, self.lex, self.words = off, lex, words
        self.hypers, self.hypos, self.parts = hypers, hypos, parts
        self.gloss, self.instance = gloss, instance


def bucket(word):
    """Stable catalogue bucket of a lemma or name (sha256, so independent of PYTHONHASHSEED)."""
    return int(hashlib.sha256(word.lower().encode()).hexdigest()[:8], 16) % HELDOUT_BUCKETS


def in_catalogue(word, catalogue):
    return (bucket(word) == 0) == (catalogue == "heldout")


def lemma_text(w):
    return w.replace("_", " ")


def clean_gloss(g):
    """The definition part of a WordNet gloss: examples ("...") and trailing clauses dropped."""
    g = g.split('; "')[0].split(';')[0].strip()
    g = re.sub(r"\s*\([^)]*\)", "", g)  # parenthesized usage notes read badly inside a sentence
    return g.strip().rstrip(".")


class Lexicon:
    """WordNet's noun synsets (data.noun), their most common senses (index.noun) and the
    dictionary word list, with the pools the generator draws subjects and values from."""

    def __init__(self):
        for path in (WORDNET + "/data.noun", WORDNET + "/index.noun", WORDS):
            if not os.path.exists(path):
                sys.exit(f"gen_corpus: {path} is missing; apt-get install -y wordnet-base wamerican")
        self.syn = {}
        with open(WORDNET + "/data.noun", encoding="latin-1") as f:
            for line in f:
                if line.startswith(" "):
                    continue  # licence header
                head, _, gloss = line.partition(" | ")
                t = head.split()
                wc = int(t[3], 16)
                words = [t[4 + 2 * i] for i in range(wc)]
                i = 4 + 2 * wc
                pc = int(t[i])
                i += 1
                hypers, hypos, parts, inst = [], [], [], False
                for _ in range(pc):
                    sym, off, pos = t[i], t[i + 1], t[i + 2]
                    i += 4
                    if pos != "n":
                        continue
                    if sym in ("@", "@i"):
                        hypers.append(off)
                        inst = inst or sym == "@i"
                    elif sym in ("~", "~i"):
                        hypos.append(off)
                    elif sym == "%p":
                        parts.append(off)
                self.syn[t[0]] = Synset(t[0], int(t[1]), words, hypers, hypos, parts, gloss.strip(), inst)
        # A lemma is only used in the synset that is its most common sense, so "bridge" is never
        # the card game and "fencing" never the barrier when the other was meant.
        self.senses = {}   # lemma → its synsets, most common sense first
        self.first = {}    # lemma → its most common sense
        self.tagged = {}   # lemma → how many of its senses the SemCor corpus tagged (0: rare word)
        with open(WORDNET + "/index.noun", encoding="latin-1") as f:
            for line in f:
                if line.startswith(" "):
                    continue
                t = line.split()
                n = int(t[2])
                self.senses[t[0]] = t[-n:]
                self.first[t[0]] = t[-n]
                self.tagged[t[0]] = int(t[-n - 1])
        with open(WORDS, encoding="utf-8") as f:
            self.dict_words = [w.strip() for w in f if w.strip()]
        self.lower_words = {w for w in self.dict_words if w[:1].islower()}

    # --- graph helpers -----------------------------------------------------------------------
    def find(self, lemma, lex):
        """The most common sense of lemma in lexicographer file lex (6 = noun.artifact, ...)."""
        for off in self.senses.get(lemma.lower(), []):
            if self.syn[off].lex == lex:
                return off
        return None

    def descendants(self, off):
        out, seen, stack = [], {off}, list(reversed(self.syn[off].hypos))
        while stack:
            o = stack.pop()
            if o in seen:
                continue
            seen.add(o)
            out.append(o)
            stack.extend(reversed(self.syn[o].hypos))
        return out

    def hypernym_chain(self, off, depth=4):
        chain, at = [], off
        for _ in range(depth):
            hs = self.syn[at].hypers
            if not hs:
                break
            at = hs[0]
            chain.append(at)
        return chain

    def head(self, off):
        """The synset's first lemma as text."""
        return lemma_text(self.syn[off].words[0])

    def is_main_sense(self, off):
        w = self.syn[off].words[0]
        return self.first.get(w.lower()) == off

    def plain(self, word):
        """Every token is an ordinary dictionary word (keeps out Latin names and jargon)."""
        toks = re.split(r"[ _-]", word.lower())
        return all(t in self.lower_words or t.capitalize() in self._caps for t in toks if t)

    @property
    def _caps(self):
        if not hasattr(self, "_capset"):
            self._capset = {w for w in self.dict_words if w[:1].isupper()}
        return self._capset

    def pool(self, roots, lowercase=True, leaves_or_common=True, max_words=3, instances=False):
        """Main-sense lemmas under the given (lemma, lexfile) roots, in WordNet file order."""
        out, seen = [], set()
        for lemma, lex in roots:
            root = self.find(lemma, lex)
            if root is None:
                continue
            for off in self.descendants(root):
                s = self.syn[off]
                w = s.words[0]
                if off in seen or not self.is_main_sense(off):
                    continue
                if instances != s.instance:
                    continue
                if lowercase and not w.islower():
                    continue
                if "'" in w or any(c.isdigit() for c in w) or len(w.split("_")) > max_words:
                    continue
                if leaves_or_common and s.hypos and not self.tagged.get(w.lower()):
                    continue
                if not self.plain(w):
                    continue
                seen.add(off)
                out.append(off)
        return out

    def meronyms(self, off):
        """Parts of a thing, inherited from its hypernyms when it has none of its own."""
        at = off
        for _ in range(3):
            parts = [self.head(p) for p in self.syn[at].parts if self.syn[p].words[0].islower()]
            parts = [p for p in parts if len(p.split()) <= 2 and self.plain(p)]
            if parts:
                return parts
            if not self.syn[at].hypers:
                break
            at = self.syn[at].hypers[0]
        return []

    def given_names(self):
        """First names of the people WordNet lists (instance synsets of noun.person, "Albert
        Einstein" → "Albert"), kept when the dictionary has them too."""
        if hasattr(self, "_given"):
            return self._given
        caps = self._caps
        people = {}
        for s in self.syn.values():
            if s.lex != 18 or not s.instance:
                continue
            for w in s.words:
                t = w.split("_")
                if len(t) == 2 and all(x.isalpha() and x.isascii() and x[0].isupper() and x[1:].islower() for x in t):
                    # A name that is also a word ("Frank", "March") would be found in ordinary text.
                    if t[0] in caps and 4 <= len(t[0]) <= 9 and t[0].lower() not in self.lower_words \
                            and t[0] not in MONTHS and t[0] not in WEEKDAYS and t[0] not in NOT_NAMES:
                        people.setdefault(t[0], set()).add(s.off)
        # Names borne by at least two people are ordinary given names, not one figure's epithet.
        self._given = sorted(n for n, who in people.items() if len(who) >= 2)
        return self._given

    def names(self):
        """Capitalized dictionary words that are not also English words in WordNet: mostly given
        names and surnames. Plurals/demonyms are dropped by requiring a possessive in the list."""
        if hasattr(self, "_names"):
            return self._names
        wn_words = set(self.first)
        for pos in ("verb", "adj", "adv"):
            with open(f"{WORDNET}/index.{pos}", encoding="latin-1") as f:
                for line in f:
                    if not line.startswith(" "):
                        wn_words.add(line.split()[0])
        words = set(self.dict_words)
        self._names = [w for w in self.dict_words
                       if w.isascii() and w.isalpha() and w[0].isupper() and w[1:].islower()
                       and 4 <= len(w) <= 9 and w.lower() not in wn_words
                       and w.lower() not in self.lower_words and (w + "'s") in words
                       and not w.endswith("s")]
        return self._names


# =============================================================================================
# Small text helpers
# =============================================================================================

def a(word):
    """An indefinite article for word (vowel-letter rule with the usual exceptions)."""
    w = word.lower()
    if re.match(r"(uni|use|usu|eu|one|u[bcfhjkqrstn][aeiou])", w) and not w.startswith(("unde", "unt", "unh")):
        return "a " + word
    if re.match(r"(hour|honest|heir)", w):
        return "an " + word
    return ("an " if w[:1] in "aeiou" else "a ") + word


def plural(phrase):
    words = phrase.split(" ")
    w = words[-1]
    irregular = {"man": "men", "woman": "women", "person": "people", "child": "children",
                 "foot": "feet", "tooth": "teeth", "mouse": "mice", "goose": "geese"}
    low = w.lower()
    for sing, plur in irregular.items():
        if low.endswith(sing):
            w = w[: len(w) - len(sing)] + plur
            break
    else:
        if re.search(r"(s|x|z|ch|sh)$", low):
            w += "es"
        elif re.search(r"[^aeiou]y$", low):
            w = w[:-1] + "ies"
        else:
            w += "s"
    return " ".join(words[:-1] + [w])


SMALL = {"a", "an", "the", "of", "and", "or", "for", "in", "on", "to", "at", "by", "with"}


def title_case(phrase):
    out = []
    for i, w in enumerate(phrase.split(" ")):
        if i and w.lower() in SMALL:
            out.append(w.lower())
        else:
            out.append("-".join(p[:1].upper() + p[1:] for p in w.split("-")))
    return " ".join(out)


def cap(s):
    return s[:1].upper() + s[1:]


def words(text):
    return len(text.split())


MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


# =============================================================================================
# The catalogue: pools of subject material for one catalogue
# =============================================================================================

# Roots under which owned things are drawn, with how a person maintains and uses each family.
# (verb, gerund) pairs and use phrases are templates; the things themselves come from WordNet.
THING_FAMILIES = [
    # roots, care verbs, use phrases ({food}, {music}, ... are filled from WordNet pools)
    ([("musical_instrument", 6)], [("tune", "tuning"), ("restring", "restringing"), ("clean", "cleaning")],
     ["playing {music}", "practising scales in the evening", "playing with friends on Sundays", "recording {music} covers"]),
    ([("home_appliance", 6), ("kitchen_utensil", 6)], [("descale", "descaling"), ("clean", "cleaning"), ("deep-clean", "deep-cleaning")],
     ["making {food}", "cooking {food} for friends", "batch-cooking {food} on Sundays", "making {food} for the week"]),
    ([("hand_tool", 6), ("power_tool", 6)], [("sharpen", "sharpening"), ("oil", "oiling"), ("service", "servicing")],
     ["building {furniture_pl}", "repairs around the house", "making {furniture_pl} for friends", "small jobs in the {room}"]),
    ([("furniture", 6)], [("wax", "waxing"), ("polish", "polishing"), ("tighten the joints of", "tightening the joints of")],
     ["working from home", "reading in the evenings", "storing {collection_pl}", "guests who stay over"]),
    ([("boat", 6)], [("wash down", "washing down"), ("service", "servicing"), ("inspect", "inspecting")],
     ["trips on the lake", "weekend paddles along the river", "fishing for {fish}", "early-morning outings"]),
    ([("timepiece", 6)], [("wind", "winding"), ("service", "servicing"), ("regulate", "regulating")],
     ["timing {practice} sessions", "everyday wear", "keeping time in the {room}", "special occasions"]),
    ([("camera", 6), ("optical_instrument", 6)], [("clean", "cleaning"), ("calibrate", "calibrating"), ("check", "checking")],
     ["photographing {bird_pl}", "watching {bird_pl} from the {room}", "street photography", "taking pictures on trips"]),
    ([("lamp", 6), ("tent", 6), ("bag", 6)], [("clean", "cleaning"), ("check", "checking"), ("reproof", "reproofing")],
     ["camping trips", "long walks in the hills", "carrying {artifact_pl} around", "overnight trips"]),
    ([("motor_vehicle", 6), ("bicycle", 6)], [("service", "servicing"), ("wash", "washing"), ("check the tyres on", "checking the tyres on")],
     ["commuting", "weekend trips", "the school run", "hauling {artifact_pl} to the {room}"]),
]

PET_ROOTS = [("dog", 5), ("domestic_cat", 5)]
PLACE_ROOTS = [("city", 15), ("port", 15), ("town", 15), ("island", 17)]
PRACTICE_ROOTS = [("sport", 4), ("dancing", 4), ("handicraft", 4), ("outdoor_sport", 4),
                  ("water_sport", 4), ("martial_art", 4), ("court_game", 4)]
# Practices named directly: each must be a main sense in WordNet's noun.act (or cognition) file.
PRACTICE_LEMMAS = ["knitting", "gardening", "woodworking", "photography", "origami", "hiking", "cycling",
                   "rowing", "swimming", "jogging", "aerobics", "baking", "brewing", "archery", "skiing", "rock_climbing",
                   "weaving", "crochet", "surfing", "skating", "snorkeling", "tai_chi", "mountaineering",
                   "beekeeping", "fishing", "fly-fishing", "golf", "tennis", "badminton", "judo", "karate",
                   "meditation", "yoga", "calligraphy", "pottery", "birding", "sculling", "canoeing"]
OCCUPATION_ROOTS = [("health_professional", 18), ("educator", 18), ("artist", 18), ("skilled_worker", 18),
                    ("craftsman", 18), ("musician", 18), ("engineer", 18), ("scientist", 18)]
BUILD_ROOTS = [("furniture", 6), ("outbuilding", 6)]
RESTORE_ROOTS = [("boat", 6), ("motor_vehicle", 6), ("timepiece", 6), ("musical_instrument", 6)]
# Words that would make a subject grim, military or clinical; the pools skip lemmas containing them.
AVOID = {"gun", "bomb", "military", "police", "coffin", "hospital", "operating", "prison", "death",
         "war", "battle", "sick", "body", "slave", "torpedo", "missile", "tank", "ambulance", "hearse",
         "funeral", "hangman", "executioner", "sickbed", "casket", "gallows", "assault", "combat",
         "bed", "toilet", "urinal", "chamber", "electric", "gas", "witch", "devil", "ritual",
         "wheelchair", "bloodmobile", "technical", "transporter", "sandbag", "gunnysack", "liner",
         "official", "quack", "abortionist", "sword", "ghost", "rain", "sun", "apache", "belly",
         "sight", "outhouse", "pusher", "urinal", "bedpan", "spittoon", "stripper", "hooker", "moneybag"}


# Given names that are religious or mythological figures rather than names people have.
NOT_NAMES = {"Jesus", "Muhammad", "Mohammed", "Allah", "Buddha", "Christ", "Krishna", "Baal", "Amaterasu", "Moses"}


def ok_lemma(w):
    return not (set(re.split(r"[ _-]", w.lower())) & AVOID)


class Catalogue:
    """The subject pools of one catalogue (train or heldout), in a fixed order."""

    def __init__(self, lex, catalogue):
        self.lex, self.name = lex, catalogue
        keep = lambda offs: [o for o in offs if in_catalogue(lex.syn[o].words[0], catalogue)
                             and ok_lemma(lex.syn[o].words[0])]
        self.thing_families = []
        for roots, verbs, uses in THING_FAMILIES:
            offs = keep(lex.pool(roots))
            self.thing_families.append((offs, verbs, uses, lemma_text(roots[0][0])))
        self.pets = [o for o in keep(lex.pool(PET_ROOTS, lowercase=False)) if "breed" in lex.syn[o].gloss]
        self.places = keep(lex.pool(PLACE_ROOTS, lowercase=False, instances=True, max_words=2))
        self.places = [o for o in self.places if lex.syn[o].words[0][:1].isupper()]
        # Practices are (synset, name) pairs: a lemma named directly keeps its own spelling even when
        # its synset's head word differs ("knitting" lives in the synset headed "knit").
        bad_prac = ("professional", "game", "hitter", "singles", "doubles", "play", "rope-a-dope", "stroke",
                    "hunting", "baiting", "fighting", "racing", "coursing", "ducking", "skinny", "flop", "nude",
                    "bathe", "strip")
        prac = [(o, lex.head(o)) for o in lex.pool(PRACTICE_ROOTS, max_words=2)
                if not any(b in lex.syn[o].words[0] for b in bad_prac) and not lex.head(o).endswith(" sport")]
        have = {o for o, _ in prac}
        for l in PRACTICE_LEMMAS:
            off = lex.first.get(l)
            if off and off not in have and lex.syn[off].lex in (4, 6, 9):
                have.add(off)
                prac.append((off, lemma_text(l)))
        self.practices = [(o, n) for o, n in prac if in_catalogue(n, catalogue) and ok_lemma(n)]
        self.occupations = keep(lex.pool(OCCUPATION_ROOTS, max_words=2))
        self.builds = keep(lex.pool(BUILD_ROOTS, max_words=2))
        self.outdoor_builds = set(lex.pool([("outbuilding", 6)], max_words=2))  # built for the garden, not a room
        self.restores = keep(lex.pool(RESTORE_ROOTS, max_words=2))
        given = set(lex.given_names())
        self.given = [n for n in lex.given_names() if in_catalogue(n, catalogue)]
        # Surnames and brand names: the dictionary's other capitalized words (see Lexicon.names).
        self.names = [n for n in lex.names() if in_catalogue(n, catalogue) and n not in given]
        # Project codenames: short plain animal and plant words, capitalized ("Heron", "Larch").
        code = lex.pool([("bird", 5), ("tree", 20), ("fish", 5), ("flower", 20)], max_words=1)
        self.codenames = [cap(lex.head(o)) for o in keep(code) if 4 <= len(lex.head(o)) <= 9]
        # Value pools (not subjects, so they are shared by both catalogues).
        vp = lambda roots, n=2: [lex.head(o) for o in lex.pool(roots, max_words=n) if ok_lemma(lex.syn[o].words[0])]
        self.foods = vp([("dish", 13), ("bread", 13), ("soup", 13), ("dessert", 13), ("cheese", 13)])
        self.woods = [w for w in vp([("wood", 27)]) if w not in ("sawdust", "log", "wicker", "cabinet wood", "bentwood")]
        # Where a household keeps things: a handful of ordinary rooms (WordNet's room hyponyms are
        # mostly ships' and institutions' rooms, which read oddly in someone's home).
        self.rooms = ["attic", "basement", "garage", "hallway", "spare room", "shed", "kitchen", "study",
                      "living room", "bedroom", "workshop", "cellar", "loft", "utility room",
                      "conservatory", "box room", "toolshed", "woodshed", "dining room", "pantry"]
        self.colors = vp([("chromatic_color", 7)], 2)
        self.birds = vp([("bird", 5)], 2)
        self.fabrics = vp([("fabric", 6)], 1)
        self.wines = vp([("wine", 13), ("beer", 13)], 2)
        self.music = vp([("popular_music", 10), ("folk_music", 10), ("classical_music", 10), ("jazz", 10)], 2) or ["folk music"]
        self.tools = vp([("hand_tool", 6), ("power_tool", 6)], 2)
        self.sports_gear = vp([("sports_equipment", 6), ("footwear", 6), ("headdress", 6)], 2)
        self.artifacts = vp([("bag", 6), ("kitchen_utensil", 6), ("timepiece", 6), ("lamp", 6), ("hand_tool", 6)], 2)
        self.plants = vp([("herb", 20), ("shrub", 20), ("vegetable", 13)], 2)
        self.collections = vp([("bird", 5), ("cheese", 13), ("wine", 13), ("beer", 13), ("herb", 20),
                               ("shrub", 20), ("bread", 13), ("fish", 13)], 2)
        self.cities = [lex.head(o) for o in lex.pool([("city", 15)], lowercase=False, instances=True, max_words=2)
                       if lex.syn[o].words[0][:1].isupper()]
        for attr, least in (("places", 12), ("practices", 12), ("occupations", 12), ("builds", 8),
                            ("restores", 8), ("pets", 3), ("names", 40), ("given", 20), ("codenames", 8)):
            if len(getattr(self, attr)) < least:
                sys.exit(f"gen_corpus: the {catalogue} catalogue has too few {attr} ({len(getattr(self, attr))})")


# =============================================================================================
# Subjects and their fact templates
# =============================================================================================
#
# A fact template says, for one aspect of one kind of subject, how the person says it (fp), how
# an article states it (tp), and, for keyed facts that may change, how a later change is said
# (cfp/ctp: "I switched ... to ...", "now ... instead of ..."). Placeholders: {s} a short mention
# of the subject as the user says it (it contains one of its surfaces verbatim), {tn} the
# subject's full name as an article would write it, {v} the value, {old} the value it replaces;
# any other name comes from the subject's own slot values.

INTERVALS = ["every week", "every two weeks", "once a month", "every three months", "twice a year",
             "every six weeks", "once a season", "every other weekend", "every Sunday morning"]
FREQUENCIES = ["twice a week", "three times a week", "every Saturday morning", "on Tuesday and Thursday evenings",
               "every weekday before work", "once a week", "most evenings", "every Sunday", "four times a week"]
TRANSPORT = ["train", "ferry", "bus", "car", "plane", "overnight train", "coach"]
LODGING = ["a small guesthouse", "a rented flat", "a family-run hotel", "a hostel", "a friend's spare room",
           "a cabin", "a bed and breakfast"]
LANDMARKS = ["harbour", "old town", "cathedral", "main station", "market square", "river", "university",
             "botanical garden", "castle", "seafront"]
KIN = ["sister", "brother", "oldest friend", "parents", "aunt", "grandmother", "cousin", "best friend",
       "godmother", "uncle"]
SEASONS = ["spring", "early summer", "late summer", "autumn", "winter", "the shoulder season"]
RELATIONS = [  # (how the person says it, category the person belongs to)
    ("friend from university", "Friends"), ("neighbour", "Neighbours"), ("colleague", "Colleagues"),
    ("cousin", "Family"), ("former teacher", "Teachers"), ("climbing partner", "Friends"),
    ("sister-in-law", "Family"), ("old school friend", "Friends"), ("mentor", "Mentors"),
    ("landlord", "Landlords"), ("flatmate", "Flatmates"), ("brother-in-law", "Family")]
MEETINGS = ["every Thursday for coffee", "once a month for dinner", "on Sunday mornings for a walk",
            "every other Friday after work", "twice a month for lunch", "on the first Saturday of the month"]
WORKPLACES = ["a small clinic", "the local school", "a design studio", "a community workshop", "a large firm",
              "a family bakery", "the city library", "a start-up", "the regional hospital", "a music school",
              "a bike shop", "a university lab"]
LANGUAGES = ["Python", "Go", "Rust", "TypeScript", "Kotlin", "Ruby", "C", "Elixir", "Swift", "Zig"]
STORAGES = ["SQLite", "PostgreSQL", "plain JSON files", "CSV files", "a TOML file", "DuckDB", "Redis"]
HOSTING = ["a Raspberry Pi in the hallway", "a cheap VPS", "a single laptop", "a home server in the cellar",
           "a free hosting tier", "an old desktop machine"]
FORMS = ["command-line tool", "web app", "desktop app", "phone app", "small website", "script collection"]
PROJECT_STATUS = ["a rough prototype", "in beta", "feature-complete", "on hold", "half done", "nearly finished"]
THING_STATUS = ["in daily use", "in storage", "up for sale", "lent to a friend", "waiting for a repair",
                "back in regular use"]
# Values go into both the first- and the third-person sentence, so none says "I" or "my".
OPINIONS = ["worth every penny", "a bit of a disappointment", "fine but nothing special", "better than expected",
            "excellent value", "more trouble than it's worth", "overpriced"]
FINISHES = ["linseed oil", "beeswax", "clear lacquer", "milk paint", "tung oil", "shellac", "danish oil"]
GOALS_SW = ["export a yearly summary", "sync between a laptop and a phone", "send a weekly reminder e-mail",
            "print a monthly report", "share lists with friends", "import an old spreadsheet",
            "draw simple charts", "run offline"]
PRACTICE_GOALS = ["enter a local competition", "do it every day for a month", "join a proper club",
                  "teach a friend the basics", "go on a week-long course", "keep it up through the winter"]
TECHNIQUES = ["balance", "breathing", "footwork", "timing", "posture", "endurance", "rhythm", "grip",
              "consistency", "pacing"]
CLASSES = ["a beginners' class on Tuesdays", "an evening course at the community centre", "private lessons",
           "a weekend workshop", "an online course", "a Saturday morning group"]
VENUES = ["the community centre", "a gym near work", "the park by the river", "a club across town",
          "home", "the sports hall at the school", "a studio in the old town"]
PET_FOOD = ["dry food", "wet food twice a day", "a raw diet", "grain-free kibble", "home-cooked meals",
            "a vet-prescribed diet"]
TRICKS = ["sit and stay", "roll over", "come back when called", "walk on a loose lead", "fetch", "wait at doors"]


def money(g, lo, hi, step=5):
    return f"{g.cur}{g.rng.randrange(lo, hi, step)}"


def month_year(g, lo=1, hi=4):
    return f"in {g.rng.choice(MONTHS)} {g.start.year - g.rng.randint(lo, hi)}"


def fill(g, text, subj):
    """Fills the {food}/{music}/... slots of a phrase from the catalogue's value pools."""
    c = g.cat
    slots = {"food": lambda: g.rng.choice(c.foods), "music": lambda: g.rng.choice(c.music),
             "furniture_pl": lambda: plural(g.rng.choice([g.lex.head(o) for o in c.builds[:60]])),
             "room": lambda: g.rng.choice(c.rooms), "collection_pl": lambda: plural(g.rng.choice(c.collections)),
             "fish": lambda: g.rng.choice(["trout", "perch", "pike", "carp", "mackerel"]),
             "practice": lambda: g.rng.choice(c.practices)[1], "bird_pl": lambda: plural(g.rng.choice(c.birds)),
             "artifact": lambda: g.rng.choice(c.artifacts), "artifact_pl": lambda: plural(g.rng.choice(c.artifacts))}
    return re.sub(r"\{(\w+)\}", lambda m: slots[m.group(1)]() if m.group(1) in slots else m.group(0), text)


def T(aspect, key, val, fp, tp, cfp=None, ctp=None):
    return {"aspect": aspect, "key": key, "val": val, "fp": fp, "tp": tp, "cfp": cfp, "ctp": ctp}


THING_FACTS = [
    T("Acquisition", "acquired", lambda g, s: month_year(g),
      ["I bought {s} {v}.", "I got {s} {v}, secondhand.", "I picked up {s} {v} from a seller nearby.",
       "{S} has been with me since I bought it {v}."],
      ["They bought {tn} {v}."]),
    T("Costs", "price", lambda g, s: money(g, 40, 900),
      ["I paid {v} for {s}.", "{S} cost me {v}, which felt like a lot at the time.", "It set me back {v} when I bought {s}."],
      ["They paid {v} for {tn}."]),
    T("Maintenance", "care_interval", lambda g, s: g.rng.choice(INTERVALS),
      ["I {verb} {s} {v}.", "My routine is to {verb} {s} {v}.", "For upkeep I {verb} {s} {v}."],
      ["They {verb} {tn} {v}."],
      ["I switched to {gerund} {s} {v} instead of {old}.", "Now I {verb} {s} {v} instead of {old}."],
      ["They now {verb} {tn} {v}."]),
    T("Storage", "location", lambda g, s: "in the " + g.rng.choice(g.cat.rooms),
      ["I keep {s} {v}.", "{S} lives {v} when I'm not using it.", "Between uses I store {s} {v}."],
      ["They keep {tn} {v}."],
      ["I moved {s}: now I keep it {v} instead of {old}.", "Now {s} is stored {v} instead of {old}."],
      ["They now keep {tn} {v}."]),
    T("Usage", "used_for", lambda g, s: fill(g, g.rng.choice(s.uses), s),
      ["I mostly use {s} for {v}.", "Mainly {s} gets used for {v}.", "{S} is what I reach for when it comes to {v}."],
      ["They mostly use {tn} for {v}."],
      ["These days I use {s} for {v} instead of {old}.", "I switched to using {s} for {v} rather than {old}."],
      ["They now use {tn} for {v}."]),
    T("Repairs", None, lambda g, s: g.rng.choice(s.parts) if s.parts else None,
      ["I had to replace the {v} on {s} last month.", "The {v} on {s} broke, so I fitted a new one.",
       "I repaired the {v} of {s} myself over the weekend."],
      ["They replaced the {v} of {tn}."]),
    T("Opinion", "opinion", lambda g, s: g.rng.choice(OPINIONS),
      ["Honestly, {s} is {v}.", "My verdict so far: {s} is {v}.", "I'd say {s} is {v}."],
      ["They consider {tn} {v}."],
      ["I've changed my mind about {s}: now it's {v} instead of {old}.",
       "I used to think {s} was {old}, but now I'd say it's {v}."],
      ["They now consider {tn} {v}."]),
    T("Status", "status", lambda g, s: g.rng.choice(THING_STATUS),
      ["Right now {s} is {v}.", "At the moment {s} is {v}."],
      ["{TN} is {v}."],
      ["Update on {s}: it's now {v} instead of {old}.", "{S} is now {v}, no longer {old}."],
      ["{TN} is now {v}."]),
    T("Appearance", "color", lambda g, s: g.rng.choice(g.cat.colors),
      ["The finish on {s} is {v}.", "Mine is {v}, which is why I noticed {s} in the first place."],
      ["{TN} is {v}."]),
]

PET_FACTS = [
    T("Background", "adopted", lambda g, s: month_year(g, 1, 6),
      ["I adopted {s} from a shelter {v}.", "{S} came to live with me {v}."],
      ["They adopted {tn} {v}."]),
    T("Diet", "diet", lambda g, s: g.rng.choice(PET_FOOD),
      ["{S} eats {v}.", "I feed {s} {v}."],
      ["{TN} eats {v}."],
      ["I switched {s} to {v} instead of {old}.", "Now {s} is on {v} instead of {old}."],
      ["{TN} now eats {v}."]),
    T("Health", "weight", lambda g, s: f"{g.rng.randint(3, 38)} kg",
      ["At the last vet visit {s} weighed {v}.", "The vet weighed {s} at {v}."],
      ["{TN} weighs {v}."],
      ["The vet says {s} is now {v} instead of {old}."],
      ["{TN} now weighs {v}."]),
    T("Exercise", "walks", lambda g, s: g.rng.choice(["twice a day", "three times a day", "once a day", "every morning and evening"]),
      ["I take {s} out {v}.", "{S} gets walked {v}."],
      ["They walk {tn} {v}."],
      ["Now I take {s} out {v} instead of {old}."],
      ["They now walk {tn} {v}."]),
    T("Training", None, lambda g, s: g.rng.choice(TRICKS),
      ["I've been teaching {s} to {v}.", "Training-wise, {s} is learning to {v}."],
      ["They are teaching {tn} to {v}."]),
    T("Costs", "insurance", lambda g, s: money(g, 10, 60, 1) + " a month",
      ["Insurance for {s} costs me {v}.", "I pay {v} to insure {s}."],
      ["They pay {v} to insure {tn}."]),
]

SOFTWARE_FACTS = [
    T("Technology", "language", lambda g, s: g.rng.choice(LANGUAGES),
      ["I'm writing {s} in {v}.", "{S} is written in {v}.", "The code for {s} is all {v}."],
      ["They write {tn} in {v}."],
      ["I switched {s} from {old} to {v}.", "I rewrote {s} in {v} instead of {old}."],
      ["They now write {tn} in {v}."]),
    T("Data Storage", "storage", lambda g, s: g.rng.choice(STORAGES),
      ["{S} keeps its data in {v}.", "For storage, {s} uses {v}."],
      ["{TN} stores its data in {v}."],
      ["I moved {s}'s data from {old} to {v}.", "{S} now stores everything in {v} instead of {old}."],
      ["{TN} now stores its data in {v}."]),
    T("Goals", "goal", lambda g, s: g.rng.choice(GOALS_SW),
      ["The next goal for {s} is to {v}.", "What I want {s} to do next is {v}."],
      ["Their next goal for {tn} is to {v}."]),
    T("Design", None, lambda g, s: ", ".join(g.rng.sample(s.modules, 3)),
      ["I split {s} into three modules: {v}.", "The code of {s} is organised into {v} modules."],
      ["They split {tn} into the modules {v}."]),
    T("Testing", "tests", lambda g, s: str(g.rng.randint(8, 140)),
      ["{S} has {v} tests so far.", "I've written {v} tests for {s}."],
      ["{TN} has {v} tests."]),
    T("Status", "status", lambda g, s: g.rng.choice(PROJECT_STATUS),
      ["{S} is {v} at the moment.", "Right now {s} is {v}."],
      ["{TN} is {v}."],
      ["{S} is now {v} instead of {old}.", "Update: {s} is {v} now, no longer {old}."],
      ["{TN} is now {v}."]),
    T("Deployment", "hosting", lambda g, s: g.rng.choice(HOSTING),
      ["{S} runs on {v}.", "I host {s} on {v}."],
      ["{TN} runs on {v}."],
      ["I moved {s} from {old} to {v}.", "{S} now runs on {v} instead of {old}."],
      ["{TN} now runs on {v}."]),
]

BUILD_FACTS = [
    T("Materials", "material", lambda g, s: g.rng.choice(g.cat.woods),
      ["I'm making {s} out of {v}.", "The wood for {s} is {v}."],
      ["They are building {tn} out of {v}."],
      ["I switched the wood for {s} from {old} to {v}.", "Now I'm using {v} for {s} instead of {old}."],
      ["They now build {tn} out of {v}."]),
    T("Budget", "budget", lambda g, s: money(g, 80, 1500, 10),
      ["My budget for {s} is {v}.", "I've set aside {v} for {s}."],
      ["Their budget for {tn} is {v}."],
      ["The budget for {s} is now {v} instead of {old}."],
      ["Their budget for {tn} is now {v}."]),
    T("Schedule", "deadline", lambda g, s: "by the end of " + g.rng.choice(MONTHS),
      ["I want {s} finished {v}.", "The plan is to have {s} done {v}."],
      ["They plan to finish {tn} {v}."],
      ["I pushed the deadline for {s}: now it's {v} instead of {old}."],
      ["They now plan to finish {tn} {v}."]),
    T("Tools", "main_tool", lambda g, s: g.rng.choice(g.cat.tools),
      ["Most of the work on {s} I do with {av}.", "For {s} my main tool is {av}."],
      ["They build {tn} mainly with {av}."]),
    T("Finish", "finish", lambda g, s: g.rng.choice(FINISHES),
      ["I'll finish {s} with {v}.", "For the finish on {s} I'm going with {v}."],
      ["They finish {tn} with {v}."],
      ["I switched the finish on {s} to {v} instead of {old}."],
      ["They now finish {tn} with {v}."]),
    T("Progress", None, lambda g, s: g.rng.choice(s.parts) if s.parts else None,
      ["This week I finished the {v} of {s}.", "The {v} of {s} is done now."],
      ["They have finished the {v} of {tn}."]),
    T("Workspace", "workspace", lambda g, s: "in the " + g.rng.choice(g.cat.rooms),
      ["I'm working on {s} {v}.", "{S} is taking shape {v}."],
      ["They work on {tn} {v}."],
      ["I moved work on {s}: now it happens {v} instead of {old}."],
      ["They now work on {tn} {v}."]),
]

PLACE_FACTS = [
    T("Visits", "visit_frequency", lambda g, s: g.rng.choice(["twice a year", "every summer", "once a year", "every few months", "at Christmas"]),
      ["I get to {s} {v}.", "I usually visit {s} {v}."],
      ["They visit {tn} {v}."],
      ["Now I visit {s} {v} instead of {old}."],
      ["They now visit {tn} {v}."]),
    T("Travel", "transport", lambda g, s: g.rng.choice(TRANSPORT),
      ["I usually travel to {s} by {v}.", "Getting to {s}, I go by {v}."],
      ["They travel to {tn} by {v}."],
      ["Now I travel to {s} by {v} instead of by {old}.", "I switched to going to {s} by {v} instead of by {old}."],
      ["They now travel to {tn} by {v}."]),
    T("Accommodation", "stay", lambda g, s: g.rng.choice(LODGING) + " near the " + g.rng.choice(LANDMARKS),
      ["In {s} I stay in {v}.", "When I'm in {s}, I book {v}."],
      ["In {tn} they stay in {v}."],
      ["Now I stay in {v} in {s} instead of {old}."],
      ["In {tn} they now stay in {v}."]),
    T("Food", "favourite_food", lambda g, s: g.rng.choice(g.cat.foods),
      ["The best thing I ate in {s} was the {v}.", "In {s} I always order the {v}."],
      ["Their favourite dish in {tn} is the {v}."],
      ["My favourite thing to eat in {s} is now the {v} instead of the {old}."],
      ["Their favourite dish in {tn} is now the {v}."]),
    T("Connections", "connection", lambda g, s: g.rng.choice(KIN),
      ["My {v} lives in {s}.", "Part of the draw of {s} is that my {v} lives there."],
      ["Their {v} lives in {tn}."]),
    T("Plans", "next_visit", lambda g, s: "in " + g.rng.choice(MONTHS),
      ["My next trip to {s} is {v}.", "I'm planning to be back in {s} {v}."],
      ["They plan to visit {tn} {v}."],
      ["I moved my next trip to {s} to {v} instead of {old}."],
      ["They now plan to visit {tn} {v}."]),
    T("Costs", "trip_budget", lambda g, s: money(g, 150, 2500, 50),
      ["A trip to {s} costs me about {v}.", "I budget {v} for each trip to {s}."],
      ["A trip to {tn} costs them about {v}."]),
    T("Season", "best_season", lambda g, s: g.rng.choice(SEASONS),
      ["I think {s} is at its best in {v}.", "My favourite time to be in {s} is {v}."],
      ["They think {tn} is at its best in {v}."],
      ["I've come round to thinking {s} is best in {v} instead of {old}."],
      ["They now think {tn} is at its best in {v}."]),
]

PERSON_FACTS = [
    T("Work", "workplace", lambda g, s: g.rng.choice(WORKPLACES),
      ["{S} works at {v}.", "These days {s} is working at {v}."],
      ["{TN} works at {v}."],
      ["{S} now works at {v} instead of {old}.", "{S} switched jobs: {v} now, instead of {old}."],
      ["{TN} now works at {v}."]),
    T("Location", "lives_in", lambda g, s: g.rng.choice(g.person_cities),
      ["{S} lives in {v}.", "{S} is based in {v}."],
      ["{TN} lives in {v}."],
      ["{S} moved: now in {v} instead of {old}.", "{S} now lives in {v} instead of {old}."],
      ["{TN} now lives in {v}."]),
    T("Meetings", "meets", lambda g, s: g.rng.choice(MEETINGS),
      ["{S} and I meet {v}.", "We see each other {v}, {s} and I."],
      ["They meet {tn} {v}."],
      ["Now {s} and I meet {v} instead of {old}."],
      ["They now meet {tn} {v}."]),
    T("Interests", "hobby", lambda g, s: g.rng.choice(g.cat.practices)[1],
      ["{S} is really into {v}.", "In {s}'s spare time it's all {v}."],
      ["{TN} is into {v}."],
      ["{S} has moved on to {v} instead of {old}."],
      ["{TN} is now into {v}."]),
    T("Personal", "birthday", lambda g, s: f"{g.rng.choice(MONTHS)} {g.rng.randint(1, 28)}",
      ["{S}'s birthday is on {v}.", "I need to remember that {s}'s birthday is {v}."],
      ["{TN}'s birthday is on {v}."]),
    T("Gifts", None, lambda g, s: g.rng.choice(g.cat.artifacts),
      ["For the last birthday I gave {s} {av}.", "I once gave {s} {av} as a present."],
      ["They gave {tn} {av} as a present."]),
    T("History", "met", lambda g, s: f"in {g.start.year - g.rng.randint(2, 20)}",
      ["I first met {s} {v}.", "{S} and I have known each other since we met {v}."],
      ["They met {tn} {v}."]),
]

PRACTICE_FACTS = [
    T("Schedule", "frequency", lambda g, s: g.rng.choice(FREQUENCIES),
      ["I do {s} {v}.", "My {s} sessions are {v}.", "I've settled into doing {s} {v}."],
      ["They practise {tn} {v}."],
      ["Now I do {s} {v} instead of {old}.", "I switched my {s} to {v} instead of {old}."],
      ["They now practise {tn} {v}."]),
    T("Venue", "venue", lambda g, s: g.rng.choice(VENUES),
      ["I do {s} at {v}.", "For {s} I go to {v}."],
      ["They practise {tn} at {v}."],
      ["I moved my {s} to {v} instead of {old}."],
      ["They now practise {tn} at {v}."]),
    T("Equipment", "equipment", lambda g, s: g.rng.choice(s.gear),
      ["My main piece of kit for {s} is {av}.", "For {s} I rely on {av}."],
      ["Their main equipment for {tn} is {av}."],
      ["For {s} I switched to {av} instead of {aold}."],
      ["Their main equipment for {tn} is now {av}."]),
    T("Technique", "focus", lambda g, s: g.rng.choice(s.techniques),
      ["Lately in {s} I'm working on my {v}.", "The thing I'm practising most in {s} is {v}."],
      ["In {tn} they are working on {v}."],
      ["In {s} I'm now focusing on {v} instead of {old}."],
      ["In {tn} they now focus on {v}."]),
    T("Goals", "goal", lambda g, s: g.rng.choice(PRACTICE_GOALS),
      ["My goal with {s} is to {v}.", "This year I want to {v}, {s}-wise."],
      ["Their goal with {tn} is to {v}."]),
    T("Costs", "cost", lambda g, s: money(g, 10, 120, 1) + " a month",
      ["{S} costs me about {v}.", "I spend roughly {v} on {s}."],
      ["{TN} costs them about {v}."],
      ["{S} now costs me {v} instead of {old}."],
      ["{TN} now costs them about {v}."]),
    T("Instruction", "classes", lambda g, s: g.rng.choice(CLASSES),
      ["I'm learning {s} through {v}.", "For {s} I signed up for {v}."],
      ["They learn {tn} through {v}."]),
    T("Background", "started", lambda g, s: f"in {g.start.year - g.rng.randint(1, 12)}",
      ["I started {s} {v}.", "I first tried {s} {v}."],
      ["They started {tn} {v}."]),
]


# Hypernyms too abstract to name a category ("Devices", "Artifacts"): the family root stands in.
ABSTRACT = {"device", "instrumentality", "artifact", "object", "whole", "implement", "equipment",
            "container", "structure", "covering", "commodity", "instrument", "system", "facility",
            "conveyance", "vehicle", "craft", "apparatus", "mechanism", "machine", "tool", "act",
            "activity", "diversion", "recreation", "sport"}
MODULES = ["parser", "storage", "cli", "report", "sync", "importer", "models", "api", "scheduler",
           "export", "search", "config", "notifications", "stats"]


class Subject:
    """One subject of a history with what the generator needs to talk about it."""

    def __init__(self, sid, kind):
        self.id, self.kind = sid, kind
        self.name = self.type = self.category = self.description = ""
        self.surfaces = []      # truth surfaces; [0] starts every conversation's first mention
        self.mentions = []      # how the user refers to it after the first mention (each contains a surface)
        self.tn = ""            # the full name as an article writes it ("the Kenton espresso maker")
        self.intro = []         # describing sentences (first conversation), with {s0} = surface[0]
        self.reintro = []       # first-mention sentences in later conversations
        self.templates = []
        self.recurring = True
        self.facts = []
        self.appearances = []   # conversation indices, chronological
        self.uses, self.parts, self.modules, self.techniques = [], [], [], []
        self.verb = self.gerund = ""
        self.gloss = ""
        self.family = ""        # a word for what it is, for the assistant's replies
        self.software = False
        self.aspects = []       # aspects questions may be about, even with no fact
        self.passing = []       # conversations naming it in passing, inside another's segment

    def truth(self):
        return {"id": self.id, "name": self.name, "surface": self.surfaces, "kind": self.kind,
                "type": self.type, "category": self.category, "description": self.description,
                "recurring": self.recurring, "facts": [f.truth() for f in self.facts]}


class Fact:
    def __init__(self, fid, subj, tmpl, value, supersedes=None, error=False):
        self.id, self.subject, self.tmpl, self.value = fid, subj, tmpl, value
        self.supersedes = supersedes     # the Fact this one replaces
        self.error = error               # a correction of a wrong earlier statement, not a change of view
        self.aspect, self.key = tmpl["aspect"], tmpl["key"]
        self.appearance = 0
        self.first_person = self.third_person = ""
        self.conversation = self.message = self.date = None

    def truth(self):
        return {"id": self.id, "subject": self.subject.id, "aspect": self.aspect, "key": self.key,
                "value": self.value if self.key else None,
                "supersedes": self.supersedes.id if self.supersedes else None,
                "change": ("error" if self.error else "evolution") if self.supersedes else None,
                "first_person": self.first_person, "third_person": self.third_person,
                "conversation": self.conversation, "message": self.message, "date": self.date}


def family_anchor(lex, off, fallback):
    """The nearest hypernym concrete enough to be a category word."""
    for h in lex.hypernym_chain(off, 3):
        w = lex.head(h)
        if w.lower() not in ABSTRACT and w.islower() and len(w.split()) <= 3:
            return w
    return fallback


# Practice categories: the first ancestor of a practice found here names its category (plural
# nouns, so the describing sentence can say "one of the <category> I do").
PRACTICE_CATEGORIES = {
    "water sport": "Water Sports", "outdoor sport": "Outdoor Sports", "skiing": "Winter Sports",
    "skating": "Winter Sports", "martial art": "Martial Arts", "court game": "Court Games",
    "outdoor game": "Outdoor Games", "field game": "Field Games", "dancing": "Dance Styles", "dance": "Dance Styles",
    "exercise": "Fitness Activities", "cardiopulmonary exercise": "Fitness Activities",
    "handicraft": "Crafts", "needlework": "Needlecrafts", "trade": "Crafts", "art": "Arts",
    "creating from raw materials": "Home Crafts", "production": "Home Crafts", "cultivation": "Outdoor Hobbies",
    "farming": "Outdoor Hobbies", "walk": "Outdoor Activities", "climb": "Outdoor Activities",
    "sport": "Sports", "athletics": "Sports", "contact sport": "Sports", "racing": "Sports",
}


def practice_class(lex, off):
    """(type, category) of a practice: its WordNet hypernym, and a category from its ancestors."""
    hyp = lex.syn[off].hypers
    typ = lex.head(hyp[0]) if hyp and lex.syn[hyp[0]].lex == 4 and lex.syn[hyp[0]].words[0].islower() else "practice"
    for h in lex.hypernym_chain(off, 6):
        w = lex.head(h).lower()
        if w in PRACTICE_CATEGORIES:
            return typ, PRACTICE_CATEGORIES[w]
    return typ, ("Wellbeing Practices" if lex.syn[off].lex == 9 else "Hobbies")


class SubjectMaker:
    """Draws subjects of each kind from the catalogue, never reusing a lemma or name in a history."""

    def __init__(self, g):
        self.g, self.lex, self.cat, self.rng = g, g.lex, g.cat, g.rng
        self.used = set()

    def _pick(self, items, key=lambda x: x):
        order = list(items)
        self.rng.shuffle(order)
        for it in order:
            k = key(it).lower()
            if k not in self.used:
                self.used.add(k)
                return it
        raise SystemExit("gen_corpus: a catalogue pool ran dry")

    def name(self):
        return self._pick(self.cat.names)

    def given(self):
        return self._pick(self.cat.given)

    def make(self, sid, kind):
        s = Subject(sid, kind)
        getattr(self, "_" + kind)(s)
        s.aspects = list(dict.fromkeys(t["aspect"] for t in s.templates))
        return s

    # --- kinds -------------------------------------------------------------------------------
    def _thing(self, s):
        lex, rng = self.lex, self.rng
        if self.cat.pets and rng.random() < 0.2:
            return self._pet(s)
        if self.g.casual and rng.random() < 0.75:
            return self._named_thing(s)
        fam = self._thing_family()
        lemma = lex.head(fam[0])
        brand = self.name()
        model = ""
        if rng.random() < 0.5:
            model = rng.choice([f"{brand[0]}{rng.randint(2, 99)}", f"{brand[0]}{brand[1].upper()}-{rng.randint(1, 9)}0",
                                f"Mk {rng.choice(['II', 'III', 'IV'])}", f"{rng.randint(1, 9)}{rng.choice('0257')}0"])
        s.name = f"{brand} {model} {lemma}" if model else f"{brand} {lemma}"
        s.surfaces = [s.name] + ([f"{model} {lemma}"] if model else []) + [f"the {brand}", f"the {lemma}"]
        s.mentions = ([f"my {model} {lemma}"] if model else []) + [f"the {brand}", f"the {lemma}"]
        s.tn = "the " + s.name
        anc = self._thing_kind(s, *fam)
        s.description = f"{a(lemma)} ({s.gloss}) that the person owns"
        s.intro = [f"I have {{as0}} — it's {a(lemma)}, a kind of {anc}: {s.gloss}.",
                   f"Some background: my {{s0}} is {a(lemma)} ({s.gloss}), so basically a kind of {anc}.",
                   f"I own {{as0}}. For context, {a(lemma)} is a kind of {anc} — {s.gloss}.",
                   f"A while ago I got {{as0}}, which is {a(lemma)}: {s.gloss}. It's my only {anc} worth mentioning."]
        s.reintro = ["Quick update on my {s0}.", "Back with another question about my {s0}.",
                     "Something about my {s0} again.", "Me again about the {s0}.", "About my {s0}:"]

    def _thing_family(self):
        """(synset, verbs, uses, root) of a thing: a family, then an unused lemma of it."""
        lex, rng = self.lex, self.rng
        offs, verbs, uses, root = rng.choice([f for f in self.cat.thing_families if f[0]])
        return self._pick(offs, key=lambda o: lex.syn[o].words[0]), verbs, uses, root

    def _thing_kind(self, s, off, verbs, uses, root):
        """What a thing is, whatever it is called (drawn after its name); returns its family word."""
        lex = self.lex
        s.type = lex.head(off)
        s.gloss = clean_gloss(lex.syn[off].gloss)
        s.family = family_anchor(lex, off, root)
        s.category = title_case(plural(s.family))
        s.verb, s.gerund = self.rng.choice(verbs)
        s.uses = uses
        s.parts = lex.meronyms(off)
        s.templates = [t for t in THING_FACTS if t["aspect"] != "Repairs" or s.parts]
        return s.family

    def _named_thing(self, s):
        """A thing the person calls by a given name (casual style): the name is the subject."""
        fam = self._thing_family()
        lemma = self.lex.head(fam[0])
        nick = self.given()
        s.name, s.surfaces, s.mentions, s.tn = nick, [nick], [nick], nick
        self._thing_kind(s, *fam)
        s.description = f"the person's {lemma} ({s.gloss}), which they call {nick}"
        s.intro = [f"My {lemma}, {{s0}}, has been on my mind lately.",
                   f"{{s0}}, my {lemma}, needs some attention.",
                   f"I have {a(lemma)} that I call {{s0}} — {s.gloss}.",
                   f"Yes, I named my {lemma} {{s0}}. It's {a(lemma)}, so {s.gloss}.",
                   f"Some context: {{s0}} is what I call my {lemma}.",
                   f"I've had my {lemma} for a while now (I call it {{s0}})."]
        s.reintro = ["{s0} is acting up again.", "Quick one about {s0}.", "So, {s0} again.",
                     f"{{s0}}, my {lemma}, again.", "Another thing about {s0}.", "Me and {s0} again."]
        if self.g.wide_intros:
            s.intro += [f"My {lemma}, {{s0}}, has gone a bit sluggish lately and I don't know why.",
                        f"My {lemma}, {{s0}}, hasn't been right since I moved it.",
                        f"{{s0}} (my {lemma}) isn't behaving like it used to.",
                        f"So my {lemma} — I call it {{s0}} — is giving me trouble this week.",
                        f"I need advice on my {lemma}, {{s0}}, which has been off for a few days.",
                        f"I've been a little worried about {{s0}}, my {lemma}, since last week."]
            s.reintro += ["{s0} is doing much better now.", "Update on {s0}: back to normal, mostly.",
                          f"My {lemma} {{s0}} again, sorry.", "Good news about {s0}."]

    def _pet(self, s):
        lex, rng = self.lex, self.rng
        off = self._pick(self.cat.pets, key=lambda o: lex.syn[o].words[0])
        breed = lex.head(off)
        animal = "cat" if any(lex.head(h) in ("domestic cat", "cat", "house cat") for h in lex.hypernym_chain(off, 4)) else "dog"
        pet = self.given()
        s.name, s.surfaces, s.mentions, s.tn = pet, [pet], [pet], pet
        s.type, s.category = breed, "Pets"
        s.gloss = clean_gloss(lex.syn[off].gloss)
        s.family = animal
        s.description = f"the person's pet {animal}, {a(breed)}"
        s.intro = [f"{{s0}} is my {animal}, {a(breed)} — {s.gloss}. Best pet I've ever had.",
                   f"My pet {animal} {{s0}} is {a(breed)} ({s.gloss}).",
                   f"For context, {{s0}} is {a(breed)}, my pet {animal}; the breed is {s.gloss}."]
        s.reintro = ["Another question about {s0}, my " + animal + ".", "{s0} update!", "So, {s0} again."]
        s.templates = list(PET_FACTS)

    def _project(self, s):
        lex, rng, cat = self.lex, self.rng, self.cat
        code = self._pick(cat.codenames)
        if self.g.casual and rng.random() < 0.6:
            code = code.lower()
        s.name, s.surfaces, s.tn = code, [code], code
        choice = rng.random()
        if choice < 0.5:
            s.software = True
            form = rng.choice(FORMS)
            pool, verb = rng.choice([(cat.birds, "spot"), (cat.foods, "cook"), (cat.wines, "try"),
                                     (cat.plants, "grow"), (cat.collections, "keep notes on")])
            coll = plural(rng.choice(pool))
            s.type, s.category, s.family = form, "Software Projects", form
            s.gloss = f"keeps track of the {coll} I {verb}"
            s.description = f"{a(form)} the person is writing to keep track of the {coll} they {verb}"
            s.intro = [f"I'm building {{s0}}, {a(form)} that keeps track of the {coll} I {verb} — a software side project of mine.",
                       f"My software side project is called {{s0}}: {a(form)} to keep track of the {coll} I {verb}.",
                       f"Some context: {{s0}} is {a(form)} I'm writing to keep track of the {coll} I {verb}. It's a software project, just for me."]
            if self.g.casual:
                s.intro += [f"I'm writing a small {form} called {{s0}} that keeps track of the {coll} I {verb}.",
                            f"In {{s0}}, my {form} for the {coll} I {verb}, I'm stuck on something.",
                            f"For my side project {{s0}} (it tracks the {coll} I {verb}) I need some help."]
            s.mentions = [code]
            item = re.sub(r"\W+", "_", coll.split()[-1]).strip("_")
            s.modules = sorted(set(rng.sample(MODULES, 5) + [item.rstrip("s") or "items"]))
            s.templates = list(SOFTWARE_FACTS)
        else:
            restore = choice >= 0.8
            off = self._pick(cat.restores if restore else cat.builds, key=lambda o: lex.syn[o].words[0])
            obj = lex.head(off)
            s.type, s.family = obj, obj
            s.gloss = clean_gloss(lex.syn[off].gloss)
            s.parts = lex.meronyms(off)
            s.surfaces.append(f"the {obj}")
            s.mentions = [code, f"the {obj}"]
            if restore:
                s.category = "Restoration Projects"
                s.description = f"an old {obj} ({s.gloss}) the person is restoring"
                s.intro = [f"{{s0}} is my restoration project: an old {obj} ({s.gloss}) that I'm bringing back to life.",
                           f"I've taken on a restoration project I call {{s0}}, an old {obj} — {s.gloss}.",
                           f"Background: {{s0}} is the name I gave the old {obj} I'm restoring ({s.gloss}); it's my restoration project."]
                s.templates = [t for t in BUILD_FACTS if t["aspect"] != "Materials" and (t["aspect"] != "Progress" or s.parts)]
            else:
                room = "garden" if off in cat.outdoor_builds else rng.choice(cat.rooms)
                s.category = "Woodworking Projects"
                s.description = f"{a(obj)} ({s.gloss}) the person is building for their {room}"
                s.intro = [f"I've started {{s0}} — that's what I call the {obj} I'm building for the {room}; it's a woodworking project. ({cap(s.gloss)}.)",
                           f"My woodworking project is {{s0}}, {a(obj)} for the {room} — {s.gloss}.",
                           f"I'm building {a(obj)} for the {room} and calling the project {{s0}}. It's my first proper woodworking project: {s.gloss}."]
                s.templates = [t for t in BUILD_FACTS if t["aspect"] != "Progress" or s.parts]
        s.reintro = ["Progress report on {s0}.", "Back to {s0} for a moment.", "Another {s0} question.",
                     "Working on {s0} again today.", "A quick {s0} update."]

    def _place(self, s):
        lex, rng = self.lex, self.rng
        off = self._pick(self.cat.places, key=lambda o: lex.syn[o].words[0])
        name = lex.head(off)
        s.name, s.surfaces, s.mentions, s.tn = name, [name], [name], name
        s.type = lex.head(lex.syn[off].hypers[0])
        s.category = title_case(plural(s.type))
        s.gloss = clean_gloss(lex.syn[off].gloss)
        s.family = s.type
        rel = rng.choice([("I visit it whenever I can", f"{a(s.type)} the person visits whenever they can"),
                          ("my family comes from there", f"{a(s.type)} the person's family comes from"),
                          ("I travel there for work", f"{a(s.type)} the person travels to for work"),
                          ("I'm planning a long stay there", f"{a(s.type)} where the person is planning a long stay"),
                          ("I lived there for a few years", f"{a(s.type)} where the person lived for a few years")])
        s.description = f"{rel[1]} ({s.gloss})"
        s.intro = [f"{{s0}} is {a(s.type)} — {s.gloss} — and {rel[0]}.",
                   f"Some context on {{s0}}: it's {a(s.type)} ({s.gloss}), and {rel[0]}.",
                   f"You might know {{s0}}, {a(s.type)}: {s.gloss}. The short version is that {rel[0]}."]
        s.reintro = ["Thinking about {s0} again.", "Back to {s0}.", "Another question about {s0}.",
                     "I'm planning around {s0} again."]
        s.templates = list(PLACE_FACTS)

    def _person(self, s):
        lex, rng = self.lex, self.rng
        first, last = self.given(), self.name()
        off = self._pick(self.cat.occupations, key=lambda o: lex.syn[o].words[0])
        occ = lex.head(off)
        rel, group = rng.choice(RELATIONS)
        pron = rng.choice(["she", "he"])
        s.name = f"{first} {last}"
        s.surfaces, s.mentions, s.tn = [s.name, first], [first], s.name
        s.type, s.category, s.family = occ, group, rel
        s.gloss = clean_gloss(lex.syn[off].gloss)
        s.description = f"the person's {rel}, {a(occ)}"
        s.intro = [f"{{s0}} is my {rel}; {pron} works as {a(occ)}.",
                   f"My {rel} {{s0}} is {a(occ)} ({s.gloss}).",
                   f"Some context: {{s0}} is {a(occ)} and my {rel}."]
        s.reintro = ["About {s0} again.", "Update on {s0}.", "Something came up with {s0}.", "I saw {s0} this week."]
        s.templates = list(PERSON_FACTS)

    def _practice(self, s):
        lex, rng = self.lex, self.rng
        off, lemma = self._pick(self.cat.practices, key=lambda p: p[1])
        s.name = cap(lemma)
        s.surfaces, s.mentions, s.tn = [lemma], [lemma], lemma
        s.type, s.category = practice_class(lex, off)
        s.gloss = clean_gloss(lex.syn[off].gloss)
        s.family = s.type
        hypo = [lex.head(h) for h in lex.syn[off].hypos if lex.syn[h].words[0].islower()]
        s.techniques = hypo if len(hypo) >= 3 else rng.sample(TECHNIQUES, 5)
        # Practice types are often mass nouns ("skiing", "dancing"), hence "a form of".
        s.description = f"a form of {s.type} the person practises ({s.gloss})"
        cw = s.category.lower()
        s.intro = [f"I've been getting into {{s0}} — {s.gloss} — it's my favourite kind of {s.type} at the moment, and of all the {cw} I've tried it's the one that stuck.",
                   f"I took up {{s0}} recently; it's a form of {s.type}, {s.gloss}. It's one of the {cw} I do.",
                   f"Background: {{s0}}, {s.gloss}, is the {s.type} I spend most of my free time on — the main one of my {cw}."]
        s.reintro = ["More {s0} talk.", "Back to {s0}.", "A {s0} question.", "Thinking about {s0} again."]
        if self.g.casual:
            s.intro += [f"I've been doing a lot of {{s0}} lately ({s.gloss}).",
                        f"I want to get better at {{s0}}; it's the {s.type} I like most.",
                        f"This year I started {{s0}} — {s.gloss}."]
            s.reintro += ["I did some {s0} again this week.", "Still at the {s0}."]
        crafty = s.category in ("Crafts", "Needlecrafts", "Home Crafts", "Arts", "Hobbies", "Wellbeing Practices")
        s.gear = self.cat.tools if crafty else self.cat.sports_gear
        s.templates = list(PRACTICE_FACTS)


# =============================================================================================
# What people and assistants say around the facts
# =============================================================================================

GREETINGS = ["Hi!", "Hello again.", "Hey there.", "Good morning!", "Hi, hope you're well.", "Evening!",
             "Hey, quick one.", "Hello!", "Hi there, I need some advice.", "Morning.", "Hey!"]
SMALLTALK_USER = [
    "Hi! It's {weather} here and I'm on my second {drink} of the day. How are you?",
    "Hello! Long week, finally {day}. Got a few minutes?",
    "Hey, hope your {day} is going better than mine — the {weather} weather has me stuck indoors.",
    "Good {daypart}! I've just made a pot of {drink} and thought I'd work through some questions with you.",
    "Hi again. I'm procrastinating on {day} chores, so let's talk about something more fun first.",
    "Hey! Before anything else: it's {weather} out and I've got the whole {daypart} free.",
]
SMALLTALK_ASSISTANT = [
    "Hello! I'm doing well, thanks for asking. A {weather} {day} with a {drink} sounds like a good setting for "
    "working through a few things, and I'm glad you stopped by. There's no rush: tell me what's on your mind, and if it's more than one "
    "topic we can take them one at a time. I'm happy to go into as much or as little detail as you like, "
    "whether that's practical steps, costs, scheduling or just thinking out loud together about options. "
    "And if the {weather} weather lifts later, you'll have earned a walk.",
    "Hi! Of course, I have as much time as you need. A free {daypart} is a good chance to sort out the things "
    "that have been piling up. Go ahead and describe what you're working on or thinking about — the more "
    "context you give me, the more specific I can be. If anything I suggest doesn't fit your situation, just "
    "say so and we'll adjust; I'd rather give you advice that works for you than something generic. We can "
    "also keep it light — not every question needs a detailed plan.",
    "Good {daypart} to you too! Glad to help — {day}s are a good time to catch up on projects and plans. "
    "What would you like to start with? If you have several questions, list them and I'll suggest an order, "
    "or we can simply follow your train of thought. I can also summarise at the end so you have a short "
    "list of next steps to keep. Enjoy the {drink} in the meantime; it sounds like a good way to ease into the "
    "{daypart}.",
    "Hello again! Sorry to hear about the {weather} weather, but it does make a good excuse for an indoor "
    "{daypart} of planning. I'm ready when you are, and we can take things in whatever order suits you. Share whatever you have in mind, and feel free to include "
    "details like dates, budgets or what you've already tried; those details usually make the difference "
    "between a vague answer and a useful one. And if you just want to chat for a minute first, that's fine too.",
]
WEATHER = ["grey", "rainy", "windy", "sunny", "freezing", "humid", "foggy", "snowy", "muggy", "drizzly"]
DRINKS = ["coffee", "tea", "green tea", "cocoa", "espresso", "herbal tea", "mate"]
DAYPARTS = ["morning", "afternoon", "evening"]
TRANSITIONS = ["Different topic:", "Switching gears.", "Unrelated question.", "Also, totally separate question:",
               "One more thing, on another subject.", "Okay, next topic.", "Changing the subject:",
               "While I have you — something else.", "New question, different area:"]
THANKS = ["Thanks, that helps.", "Great, thank you.", "That makes sense, thanks.", "Perfect, cheers.",
          "Okay, good to know.", "Thanks, really useful.", "Got it, thanks.", "Brilliant, thank you."]

# Questions a user asks about an aspect ({s}: a mention of the subject, {a}: the aspect in lower case).
QUESTIONS = [
    "What would you suggest for the {a} side of {s}?", "Any tips on {a} for {s}?",
    "Is there anything I'm missing when it comes to {a}?", "How do other people think about {a} when it comes to {s}?",
    "What should I watch out for regarding {a}?", "Does that sound sensible to you?",
    "Would you do anything differently?", "What's a good next step here?",
    "How would you approach the {a} question for {s}?", "Can you give me a short checklist for {a}?",
    "Is that a reasonable plan?", "What are the common mistakes with {a}?",
    "Any thoughts on how to improve the {a} part?", "Should I be worried about anything there?",
    "What would make the biggest difference for {s}?", "How much time should I set aside for this?",
]
FOLLOWUPS = [
    "And what about doing that in {season}?", "How often would you check on that?",
    "Would that still work if I'm away for a couple of weeks in {month}?", "Is there a cheaper way to do it?",
    "What if I only have an hour on {weekday}s?", "How do I know if it's working?",
    "Could you explain the second point in a bit more detail?", "Is that overkill for someone like me?",
    "Which of those would you start with?", "Would a {noun} help with that, or is that a gimmick?",
    "How long before I see a difference?", "Is there anything I should avoid completely?",
    "What would you prioritise if I could only do one thing this {month}?",
    "Does the order of those steps matter?", "Can I do that myself or should I ask someone?",
    "What's the risk if I just leave it as it is until {season}?",
]

# Passing mentions of a second subject ({s0}: its full name), which state no fact.
PASSING = {
    "person": ["I was telling {s0} about this yesterday.", "{s0} thinks I'm overdoing it, by the way.",
               "{s0} asked me about this too.", "(I might ask {s0} for a second opinion.)"],
    "thing": ["I had my {s0} with me at the time.", "It's taking up the space where my {s0} used to go.",
              "I noticed it while I was sorting out my {s0}.", "(My {s0} is fine, for once.)"],
    "pet": ["{s0} supervised the whole thing from the sofa.", "{s0} was no help at all, of course.",
            "I had to keep {s0} out of the way while I did it."],
    "place": ["I'll have more time for this after my trip to {s0}.", "I thought about this a lot while I was in {s0}.",
              "It reminded me of something I saw in {s0}."],
    "project": ["It's a nice break from {s0}.", "Between this and {s0}, my evenings are full.",
                "I keep putting off {s0} because of it."],
    "practice": ["It's a nice break from {s0}.", "I've been too busy with {s0} to think about it much.",
                 "It fits in around {s0} at the weekend."],
}
MENTION_LINES = ["For {s}, here's my take.", "Thinking specifically about {s}:", "Applied to {s}, a few thoughts.",
                 "With {s} in mind, this is what I'd suggest.", "Here's what I'd do in the case of {s}.",
                 "As far as {s} goes, a few pointers.", "Let's look at {s} specifically."]
OPENERS = [
    "Good question.", "That sounds like a solid setup.", "Thanks for the context, that helps.",
    "Nice — {s} sounds like it's in good hands.", "That's a common situation.", "Happy to help with {s}.",
    "You're on the right track.", "That's useful detail.", "Sounds like you've thought about this already.",
    "Let's break that down.", "There are a few ways to look at this.", "That's a sensible plan overall.",
    "Great, that gives me a clear picture.", "Understood.", "Short answer: yes, with a few caveats.",
    "I can see why you're asking.", "That's a good instinct.", "Here's how I'd think about it.",
]
CLOSERS = [
    "If you tell me a bit more about your routine, I can tailor this further.",
    "Let me know how it goes and we can adjust from there.",
    "Happy to go deeper on any of these points.",
    "If something here doesn't fit your situation, say so and I'll suggest alternatives.",
    "Want me to turn this into a simple checklist you can keep?",
    "Check back in a few weeks and we can see what changed.",
    "I hope that helps — ask if any step is unclear.",
    "Would it help if I sketched a rough plan for the next month?",
    "Keep notes as you go; they make the next decision much easier.",
    "Feel free to share photos or numbers next time and I'll be more specific.",
]
GENERIC_ADVICE = [
    "The most important thing with {s} is consistency: a small habit you keep beats a big plan you drop.",
    "Write down what you do and when, even briefly; after a month you'll see patterns you'd otherwise miss.",
    "Don't change everything at once — adjust one thing, give it a couple of weeks, then decide.",
    "It's worth budgeting a little extra time and money for surprises, because they always come up.",
    "People in a similar position often find that the second month is where it either sticks or fades.",
    "If in doubt, ask someone who has done it for years; a ten-minute chat can save you a lot of trial and error.",
    "Think about what you actually enjoy about {s} and protect that part first.",
    "A good rule of thumb is to start simple and only add complexity when a real problem shows up.",
    "Seasonal changes matter more than people expect, so revisit your approach in {season}.",
    "Keep the basics in good order and most of the bigger problems never appear.",
    "Try to separate what is urgent from what is just nice to have; only the first needs doing this {month}.",
    "A short weekly review — five minutes on a {weekday} — is usually enough to stay on top of things.",
    "Costs tend to creep up slowly, so a simple running total is worth keeping.",
    "Look for small improvements you can test cheaply before committing to anything expensive.",
    "When something feels off, trust that feeling and check it early rather than waiting.",
    "It's fine to be pragmatic here; perfect is the enemy of done.",
]
KIND_ADVICE = {
    "thing": [
        "With {a_family} like {s}, the details of how it is used and stored matter as much as the model itself.",
        "Check the {part} every so often; on {a_type} it is usually the first thing to wear.",
        "Manufacturers' recommendations for {a_type} are a starting point, but real use is the better guide.",
        "Keeping {s} clean and dry goes a long way; most damage to {type_pl} comes from neglect rather than use.",
        "If {s} is used heavily, a yearly professional check is cheap insurance.",
        "Spare parts for {type_pl} are easier to find than people think, especially the {part}.",
        "Avoid storing {s} somewhere with big swings in temperature or humidity.",
        "A soft cloth and a few minutes after each use will keep {s} looking good for years.",
        "If you ever sell {s}, a record of purchases and maintenance will help you get a fair price.",
    ],
    "pet": [
        "Every {family} is different, but {a_type} usually does best with a predictable daily rhythm.",
        "Keep a simple diary of {s}'s meals, walks and moods for a couple of weeks; patterns show up quickly.",
        "Regular check-ups are worth it: a vet can catch small problems in {a_type} before they become big ones.",
        "Short, frequent training sessions work better with {s} than long ones.",
        "Praise and treats at the right moment teach {s} much faster than scolding.",
        "Make sure {s} has a quiet spot to retreat to when the house gets busy.",
        "Changes in appetite or energy are worth writing down; they help the vet if anything comes up.",
        "{Type_pl} often have breed-specific quirks, so it's worth reading up on them.",
    ],
    "project": [
        "For a project like {s}, it helps to define what 'done' means before adding new ideas.",
        "Break {s} into small milestones you can finish in an evening; momentum matters more than speed.",
        "Keep a short log of decisions for {s}, including why you made them; you'll thank yourself later.",
        "It's normal for a project like this to take longer than planned, so build in a buffer.",
        "Test each part of {s} on its own before putting everything together.",
        "Resist the urge to restart from scratch when it gets hard; refactoring in place is usually faster.",
        "Share an early version of {s} with someone you trust; outside feedback catches blind spots.",
        "Make a list of the remaining work on {s} and sort it by effort; do a few quick wins first.",
    ],
    "place": [
        "{S} rewards a bit of planning, especially around the busy periods.",
        "Booking early usually matters more for {s} than chasing the lowest price at the last minute.",
        "Local markets and small restaurants often give you a better feel for {s} than the famous spots.",
        "Check the local calendar before you go; festivals can make {s} wonderful or impossible.",
        "If you visit {s} often, it's worth getting to know one neighbourhood really well.",
        "Travel times to {s} vary a lot by season, so compare a few options before committing.",
        "Having a rough plan for each day in {s}, with room for changes, tends to work best.",
        "Locals in {s} will often have better recommendations than any guide.",
    ],
    "person": [
        "Relationships like yours with {s} benefit from small regular gestures more than big occasions.",
        "It sounds like {s} matters to you; saying so directly now and then is never wasted.",
        "If schedules are tight, a fixed slot — the same day each week or month — keeps you in touch with {s}.",
        "Asking {s} about their own plans is a good way to keep the conversation two-sided.",
        "Write down the things {s} mentions in passing; they make thoughtful gift ideas later.",
        "Changes in someone's work or home life take adjustment, so a bit of patience goes a long way.",
        "A shared activity is often easier than just meeting up; it gives you both something to talk about.",
        "If something is bothering you, a calm conversation with {s} early on usually beats waiting.",
    ],
    "practice": [
        "With {s}, steady practice matters far more than occasional long sessions.",
        "Warm up properly before {s}; most setbacks come from skipping that step.",
        "Film yourself or keep notes now and then; progress in {s} is easy to miss from the inside.",
        "A good teacher or club can speed up your progress in {s} a lot, even if you only go occasionally.",
        "Don't compare your progress in {s} with people who have done it for years.",
        "Rest days are part of training, not a break from it.",
        "Set one small goal per month for {s}; it keeps you motivated without adding pressure.",
        "The right equipment helps, but in {s} technique beats expensive gear almost every time.",
    ],
}
# Casual style: sentences full of everyday nouns that are not subjects, so a name is not just
# "the one concrete word in the message" ({food}, {tool}, {room}, {plant}, {fabric}, {thing}).
CASUAL_ADVICE = [
    "A {tool} makes this much easier, and it's worth keeping one in the {room}.",
    "Some people keep a {thing} nearby for this; it's cheap and saves time.",
    "If it gets damp, move it out of the {room} and dry it with a {fabric} cloth.",
    "I'd wipe it down with {fabric} rather than anything rough.",
    "Think of it like {food}: small changes in timing make a big difference.",
    "A {thing} on the shelf as a reminder sounds silly, but it works.",
    "Water the {plant} on the same day, so both become one routine.",
    "Keep the {tool} and the spare parts together in the {room}.",
    "It's the same logic as with {food}: patience first, then adjust.",
    "A cheap {thing} and a notebook are all the equipment you need to start.",
]
CASUAL_ASIDES = [
    "I was making {food} at the time.", "It's next to the {tool} in the {room}.",
    "My {plant} is doing fine, at least.", "I keep meaning to clear out the {room}.",
    "(I used the {tool} from the {room} for that.)", "I had {food} for lunch while I thought about it.",
    "The {thing} I bought last week helped a bit.", "It's cold in the {room} these days.",
    "I wrapped it in {fabric} for now.", "Everything smells of {food} in here today.",
]

# Advice on one aspect; "<Aspect>_<kind>" entries apply to that kind only.
ASPECT_ADVICE = {
    "Maintenance": ["A regular schedule for {s} makes maintenance a habit instead of a chore.",
                    "If you notice any change in how {s} behaves, bring the next service forward."],
    "Costs": ["It's worth tracking what {s} costs over a whole year, not just the headline price."],
    "Costs_thing": ["Compare the price with what similar {type_pl} go for secondhand; it gives you a baseline."],
    "Storage": ["Where you keep {s} matters: a stable temperature and some airflow prevent most problems.",
                "Cover {s} loosely rather than wrapping it tightly, so moisture can escape."],
    "Technology": ["Pick the language you enjoy using; for a personal project like {s}, motivation matters most.",
                   "A rewrite is a good moment to add tests first, so you know the new version behaves the same."],
    "Data Storage": ["For a single-user tool like {s}, a simple embedded database is usually plenty.",
                     "Whatever you choose for storage, write a small export so your data is never locked in."],
    "Design": ["Keep the modules of {s} small and give each one a single job; it makes changes much easier.",
               "A thin command layer on top of plain functions keeps {s} easy to test."],
    "Testing": ["Aim your tests at behaviour you care about, not at every line.",
                "A handful of end-to-end tests for {s} catch more real bugs than dozens of tiny ones."],
    "Materials": ["Wood choice changes both the look and the workload: harder woods take longer to cut but wear better.",
                  "Let the wood acclimatise in the room for a week or two before you cut it."],
    "Budget": ["Keep ten to twenty percent of the budget for {s} in reserve for mistakes and surprises."],
    "Schedule_project": ["A deadline helps, but tie it to milestones so you notice early if {s} is slipping."],
    "Travel": ["Compare door-to-door times rather than just the journey itself; stations and airports add up.",
               "Booking the return at the same time as the outward journey is often cheaper."],
    "Accommodation": ["Staying near good transport links saves a lot of time in {s}.",
                      "Reviews from the last few months are more useful than the overall rating."],
    "Food": ["Ask where the locals eat; the best food in {s} is rarely on the main square."],
    "Schedule_practice": ["Fixed days for {s} make it easier to keep going when motivation dips."],
    "Equipment": ["Buy the equipment for {s} in stages, replacing things as you outgrow them."],
    "Technique": ["Break the technique into small drills and repeat them slowly before adding speed."],
    "Diet": ["Any change in diet is best done gradually, mixing the new food in over a week or so.",
             "Your vet is the best judge of how much {s} should eat for their age and weight."],
    "Health": ["Regular weigh-ins are a simple way to keep an eye on {s}'s health."],
    "Work": ["Job changes can be stressful; a little extra contact with {s} during that time is probably welcome."],
    "Location": ["When someone moves, it's worth setting up the first visit quickly so the distance doesn't settle in."],
    "Meetings": ["A regular slot is the easiest way to keep seeing each other, even when life gets busy."],
}
CODE_SNIPPETS = {
    "Python": "```python\nfrom dataclasses import dataclass\n\n\n@dataclass\nclass {Item}:\n    name: str\n    {f1}: str = \"\"\n    {f2}: int = 0\n\n\ndef load_{items}(path):\n    with open(path, encoding=\"utf-8\") as f:\n        return [{Item}(**row) for row in json.load(f)]\n```",
    "Go": "```go\ntype {Item} struct {\n\tName string\n\t{F1} string\n\t{F2} int\n}\n\nfunc load{Items}(path string) ([]{Item}, error) {\n\tvar out []{Item}\n\tdata, err := os.ReadFile(path)\n\tif err != nil {\n\t\treturn nil, err\n\t}\n\treturn out, json.Unmarshal(data, &out)\n}\n```",
    "Rust": "```rust\n#[derive(Debug, Deserialize)]\nstruct {Item} {\n    name: String,\n    {f1}: String,\n    {f2}: u32,\n}\n\nfn load_{items}(path: &Path) -> anyhow::Result<Vec<{Item}>> {\n    let text = std::fs::read_to_string(path)?;\n    Ok(serde_json::from_str(&text)?)\n}\n```",
    "TypeScript": "```typescript\ninterface {Item} {\n  name: string;\n  {f1}: string;\n  {f2}: number;\n}\n\nexport async function load{Items}(path: string): Promise<{Item}[]> {\n  const text = await readFile(path, \"utf8\");\n  return JSON.parse(text) as {Item}[];\n}\n```",
    "SQL": "```sql\nCREATE TABLE {items} (\n  id INTEGER PRIMARY KEY,\n  name TEXT NOT NULL,\n  {f1} TEXT,\n  {f2} INTEGER DEFAULT 0,\n  created_at TEXT DEFAULT CURRENT_TIMESTAMP\n);\nCREATE INDEX {items}_by_{f1} ON {items}({f1});\n```",
    "shell": "```sh\n# run the {items} checks before every commit\n{cmd} --check {items}.json\n{cmd} report --since {month_l} > report-{month_l}.txt\n```",
}
FIELDS = ["notes", "rating", "place", "source", "price", "count", "season", "colour", "origin", "tags", "score"]


# =============================================================================================
# The generator
# =============================================================================================

class Message:
    def __init__(self, role, text, segment, subjects=(), facts=()):
        self.role, self.text, self.segment = role, text, segment
        self.subjects, self.facts = list(subjects), list(facts)
        self.id = None
        self.time = 0.0


class Conversation:
    def __init__(self, index, date):
        self.index, self.date = index, date
        self.id = self.title = self.fmt = self.file = None
        self.topics = []       # (subject, appearance index)
        self.capacity = 1
        self.quick = False
        self.messages = []
        self.segments = []     # dicts: subject, label, first, last (message indices)


class Generator:
    def __init__(self, lex, seed, catalogue, n_conv=None, style="plain", named_intros="base"):
        self.lex = lex
        # named_intros "wide" (casual style; since run 12): a named thing is also introduced in
        # the same sentence as what is wrong with it ("My sourdough starter, Gus, has gone
        # sluggish..."), as people write, not only in a sentence that just names it. Off by
        # default, so every corpus made before keeps its bytes.
        self.wide_intros = named_intros == "wide"
        # "casual" (since run 6): short chats, mostly one subject each, things the person has
        # given a name ("my mixer, Bertha"), lower-case project names, shorter replies and
        # everyday nouns that are not subjects. Every random draw it adds happens only in that
        # style, so the plain style's corpora stay byte-identical for their seeds.
        self.casual = style == "casual"
        self.cat = Catalogue(lex, catalogue)
        self.seed, self.catalogue = seed, catalogue
        # A string seed is hashed with SHA-512 by random.seed, so it is stable across runs and
        # Python builds, and train/heldout histories of the same seed share nothing by accident.
        self.rng = random.Random(f"dream-corpus/{catalogue}/{seed}" + ("/casual" if self.casual else ""))
        self.n_conv = n_conv
        self.ids, self.texts = set(), set()
        self.n_fact = 0
        self._allow = []

    # --- small utilities ---------------------------------------------------------------------
    def uuid(self):
        while True:
            h = f"{self.rng.getrandbits(128):032x}"
            u = f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) % 4]}{h[17:20]}-{h[20:32]}"
            if u not in self.ids:
                self.ids.add(u)
                return u

    def pick(self, seq):
        return self.rng.choice(seq)

    def slots(self, subj=None):
        """Values for the non-fact placeholders of user and assistant text."""
        r = self.rng
        v = {"season": r.choice(SEASONS), "month": r.choice(MONTHS), "weekday": r.choice(WEEKDAYS),
             "noun": r.choice(self.cat.artifacts), "weather": r.choice(WEATHER), "drink": r.choice(DRINKS),
             "daypart": r.choice(DAYPARTS), "day": r.choice(WEEKDAYS)}
        if self.casual:  # everyday nouns that are not subjects (casual style only: see __init__)
            c = self.cat
            v.update({"food": r.choice(c.foods), "tool": r.choice(c.tools), "room": r.choice(c.rooms),
                      "plant": r.choice(c.plants), "fabric": r.choice(c.fabrics), "thing": r.choice(c.artifacts)})
        if subj is not None:
            m = r.choice(subj.mentions)
            m = "your " + m[3:] if m.startswith("my ") else m
            v.update({"s": m, "S": cap(m), "type": subj.type, "a_type": a(subj.type),
                      "type_pl": plural(subj.type), "Type_pl": cap(plural(subj.type)), "family": subj.family, "a_family": a(subj.family),
                      "part": r.choice(subj.parts) if subj.parts else "finish"})
        return v

    def fmt(self, text, subj=None, **extra):
        v = self.slots(subj)
        v.update(extra)
        return re.sub(r"\{(\w+)\}", lambda m: str(v.get(m.group(1), m.group(0))), text)

    def clean_of_others(self, text, subj):
        """True when text names no subject other than subj and the ones a passing mention in
        the message is allowed to name (surfaces matched as whole words)."""
        low = text.lower()
        for o in self.subjects:
            if o is subj or o in self._allow:
                continue
            for srf in o.surfaces:
                if re.search(r"(?<![\w-])" + re.escape(srf.lower()) + r"(?![\w-])", low):
                    return False
        return True

    def unique(self, build, subj=None, tries=40):
        """A text from build() that no earlier message used and that names no other subject."""
        for i in range(tries):
            t = build(i).strip()
            if t and t not in self.texts and self.clean_of_others(t, subj):
                self.texts.add(t)
                return t
        why = "it names another subject" if t in self.texts or not self.clean_of_others(t, subj) else "duplicate"
        raise SystemExit(f"gen_corpus: could not make a unique message text ({why}): {t[:200]!r}")

    def typo(self, sentence):
        """One deterministic slip in a word of a filler sentence (never in names or facts)."""
        toks = sentence.split(" ")
        names = self.name_tokens
        cand = [i for i, w in enumerate(toks) if len(w) >= 5 and w.isalpha() and w.islower() and w not in names]
        if not cand:
            return sentence
        i = self.pick(cand)
        w = toks[i]
        j = self.rng.randrange(1, len(w) - 2)
        kind = self.rng.randrange(3)
        if kind == 0:
            w = w[:j] + w[j + 1] + w[j] + w[j + 2:]
        elif kind == 1:
            w = w[:j] + w[j + 1:]
        else:
            w = w[:j] + w[j] + w[j:]
        toks[i] = w
        return " ".join(toks)

    # --- the person and the subjects ---------------------------------------------------------
    def make_person(self):
        self.maker = SubjectMaker(self)
        first, last = self.maker.given(), self.maker.name()
        self.person = {"name": f"{first} {last}"}
        self.cur = self.pick(["€", "$", "£"])
        # Histories start between 2022 and early 2025 and last four to ten months.
        self.start = datetime.date(2022, 1, 1) + datetime.timedelta(days=self.rng.randrange(3 * 365 + 60))
        self.span = self.rng.randint(120, 300)
        self.person_cities = [c for c in self.cat.cities if in_catalogue(c, self.catalogue)]

    def make_subjects(self, n_conv):
        r = self.rng
        # More conversations want more subjects (5-9 recurring, 5-10 one-off), or every visit of a
        # subject would be a bare question.
        n_rec = min(9, max(5, round(n_conv / 5) + r.randint(-1, 1)))
        n_one = min(10, max(5, round(n_conv / 4) + r.randint(-1, 1)))
        if n_conv < 16:  # a short history cannot carry as many subjects
            n_rec = min(n_rec, max(3, n_conv // 2))
            n_one = min(n_one, max(2, n_conv // 2))
        kinds = ["thing", "project", "place", "person", "practice"]
        order = r.sample(kinds, len(kinds))
        rec_kinds = (order * 2)[:n_rec]
        one_kinds = [r.choice(kinds) for _ in range(n_one)]
        self.subjects = []
        for i, k in enumerate(rec_kinds + one_kinds):
            # Redraw a subject whose name shows up in another's text or the other way round
            # ("Antonio" and "San Antonio", "Texas" in a gloss): mentions must be unambiguous.
            for _ in range(50):
                s = self.maker.make(f"s{i + 1}", k)
                if not any(self.clash(s, o) or self.clash(o, s) for o in self.subjects):
                    break
            else:
                raise SystemExit("gen_corpus: could not draw non-clashing subjects")
            s.recurring = i < n_rec
            self.subjects.append(s)
        # Words of subject names, which a typo must never touch.
        self.name_tokens = {t for s in self.subjects for x in s.surfaces for t in x.lower().split()}
        # Place names must not double as the values of where someone lives.
        names = {s.name.lower() for s in self.subjects}
        self.person_cities = [c for c in self.person_cities if c.lower() not in names]

    @staticmethod
    def clash(s, o):
        """Whether a surface of s occurs in o's own text (name, surfaces, descriptions)."""
        text = " ".join([o.name, o.gloss, o.description, o.type] + o.surfaces + o.intro + o.mentions).lower()
        return any(re.search(r"(?<![\w-])" + re.escape(x.lower()) + r"(?![\w-])", text) for x in s.surfaces)

    def new_fact(self, subj, tmpl, supersedes=None, error=False):
        old = supersedes.value if supersedes else None
        for _ in range(40):
            v = tmpl["val"](self, subj)
            # A value must not be another subject's name ("into scuba diving" when scuba diving
            # is a subject of its own), or a mention would hide inside a fact.
            if v is not None and v != old and not any(
                    re.search(r"(?<![\w-])" + re.escape(x.lower()) + r"(?![\w-])", v.lower())
                    for o in self.subjects if o is not subj for x in o.surfaces):
                break
        self.n_fact += 1
        return Fact(f"f{self.n_fact}", subj, tmpl, v, supersedes, error)

    def plan_facts(self, subj):
        """Draws the subject's facts and spreads them over its appearances: every appearance
        states something when there are facts enough, and a changed fact comes in a later
        conversation than the one it replaces."""
        r = self.rng
        k = len(subj.appearances)
        templates = [t for t in subj.templates if t["val"](self, subj) is not None]
        n_total = subj.n_facts
        n_chg = 0
        if subj.recurring and k >= 2:
            n_chg = min(r.choice([1, 1, 2]), n_total - 2, len([t for t in templates if t["cfp"]]))
        base_t = r.sample(templates, min(n_total - n_chg, len(templates)))
        if n_chg and not any(t["cfp"] for t in base_t):  # a change needs a changeable fact to change
            base_t[0] = r.choice([t for t in templates if t["cfp"]])
        facts = [self.new_fact(subj, t) for t in base_t]
        # Most changes are changes of view or circumstance ("I switched ..."); about one in four
        # corrects a wrong earlier statement instead ("Correction: ... not X"), which may hit any
        # keyed fact, a price or a birthday as much as a routine.
        changes = []
        for _ in range(n_chg):
            taken = {c.supersedes.id for c in changes}
            keyed = [f for f in facts if f.key and f.id not in taken]
            changeable = [f for f in keyed if f.tmpl["cfp"]]
            if keyed and (r.random() < 0.25 or not changeable):
                changes.append(self.new_fact(subj, (f := r.choice(keyed)).tmpl, supersedes=f, error=True))
            elif changeable:
                changes.append(self.new_fact(subj, (f := r.choice(changeable)).tmpl, supersedes=f))
        best, best_empty = None, None
        for _ in range(60):
            app = {}
            for f in facts:
                app[f.id] = r.randrange(k)
            for c in changes:
                o = c.supersedes
                if app[o.id] >= k - 1:
                    app[o.id] = r.randrange(k - 1)
                app[c.id] = r.randint(app[o.id] + 1, k - 1)
            used = set(app.values())
            empty = sum(1 for i in range(k) if i not in used) + (0 if 0 in used else 5)
            if best is None or empty < best_empty:
                best, best_empty = app, empty
            if empty == 0:
                break
        for f in facts + changes:
            f.appearance = best[f.id]
        subj.facts = sorted(facts + changes, key=lambda f: (f.appearance, f.supersedes is not None))

    # --- planning conversations --------------------------------------------------------------
    def plan(self):
        r = self.rng
        n = self.n_conv or (r.randint(8, 18) if self.casual else r.randint(20, 40))
        self.make_person()
        self.make_subjects(n)
        days = sorted(r.sample(range(self.span), n))
        convs = [Conversation(i, self.start + datetime.timedelta(days=d)) for i, d in enumerate(days)]
        rec = [s for s in self.subjects if s.recurring]
        one = [s for s in self.subjects if not s.recurring]
        # Topic slots: about 1.4 per conversation, two per recurring subject at least.
        total = max(round(n * (r.uniform(1.0, 1.2) if self.casual else r.uniform(1.3, 1.6))), n, 2 * len(rec) + len(one))
        # Each recurring subject has 3-6 facts and appears at most once per fact, so that most
        # appearances say something new; only a history too long for its facts gets visits that
        # are questions alone.
        for s in self.subjects:
            s.n_facts = r.randint(3, 6) if s.recurring else r.randint(2, 4)
        counts = {s.id: 2 for s in rec}
        while sum(counts.values()) + len(one) < total:
            room = [s for s in rec if counts[s.id] < min(n, s.n_facts)]
            if not room:  # then at most one question-only visit each
                room = [s for s in rec if counts[s.id] < min(n, s.n_facts + 1)]
            if not room:
                if sum(counts.values()) + len(one) >= n:
                    break
                room = [s for s in rec if counts[s.id] < n]
            s = r.choice(room)
            counts[s.id] += 1
        total = sum(counts.values()) + len(one)
        sessions = r.sample(range(n), max(1, round(n * (0.12 if self.casual else 0.3))))
        for _ in range(total - n):
            open_ = [i for i in sessions if convs[i].capacity < 5] or [i for i in range(n) if convs[i].capacity < 5]
            convs[r.choice(open_)].capacity += 1
        left = {c.index: c.capacity for c in convs}
        for s in sorted(rec, key=lambda s: -counts[s.id]):
            ranked = sorted(range(n), key=lambda i: (-(left[i] + r.random() * 1.5)))
            chosen = [i for i in ranked if left[i] > 0][:counts[s.id]]
            if len(chosen) < 2:
                chosen = ranked[:2]
            for i in chosen:
                left[i] -= 1
            s.appearances = sorted(chosen)
        for s in one:
            i = max(range(n), key=lambda i: (left[i], r.random()))
            left[i] -= 1
            s.appearances = [i]
        for s in self.subjects:
            for k, i in enumerate(s.appearances):
                convs[i].topics.append((s, k))
        # A conversation left without a topic gets one more visit from a recurring subject.
        for c in convs:
            if not c.topics:
                s = r.choice(rec)
                s.appearances = sorted(s.appearances + [c.index])
        for s in rec:
            for c in convs:
                c.topics = [(t, k) for t, k in c.topics if t is not s]
            for k, i in enumerate(s.appearances):
                convs[i].topics.append((s, k))
        for s in self.subjects:
            self.plan_facts(s)
        for c in convs:
            r.shuffle(c.topics)
            c.quick = len(c.topics) == 1 and r.random() < (0.5 if self.casual else 0.2)
            c.fmt = "claude" if r.random() < 0.25 else "chatgpt"
        if n >= 4 and not any(c.fmt == "claude" for c in convs):
            convs[r.randrange(n)].fmt = "claude"
        if not any(c.fmt == "chatgpt" for c in convs):
            convs[0].fmt = "chatgpt"
        self.convs = convs

    # --- writing one conversation ------------------------------------------------------------
    def fact_sentence(self, f, mention):
        """The first-person sentence of a fact, and its third-person counterpart."""
        t, s = f.tmpl, f.subject
        old = f.supersedes.value if f.supersedes else ""
        v = {"s": mention, "S": cap(mention), "v": f.value, "old": old, "av": a(f.value) if f.value else "",
             "aold": a(old) if old else "", "tn": s.tn, "TN": cap(s.tn), "verb": s.verb, "gerund": s.gerund}
        evolution = f.supersedes and not f.error
        fps = t["cfp"] if evolution else t["fp"]
        tps = t["ctp"] if evolution else t["tp"]
        sub = lambda x: re.sub(r"\{(\w+)\}", lambda m: v[m.group(1)], x)
        fp, tp = sub(self.pick(fps)), sub(self.pick(tps))
        if f.error:  # the plain statement with the right value, wrapped as a correction
            core = fp.rstrip(".")
            fp = self.pick([f"Correction: {core} — not {old}, as I said before.",
                            f"Sorry, I got that wrong earlier. {fp} It was never {old}.",
                            f"I need to correct myself — {core}, not {old}.",
                            f"Small correction to what I told you before: {core}. I mixed it up with {old}."])
        return fp, tp

    def user_message(self, subj, parts, facts, question, aside=None):
        """A user message from filler parts and facts; only filler can get a typo."""
        r = self.rng

        def build(i):
            out, said = [], []
            for p in parts:
                text, filler = p(i) if callable(p) else p
                if filler and r.random() < 0.12:
                    text = self.typo(text)
                out.append(text)
            for f in facts:
                fp, tp = self.fact_sentence(f, self.pick(subj.mentions))
                said.append((f, fp, tp))
                out.append(fp)
            if aside:  # a callable is drawn again for each try (it may name another subject)
                out.append(aside(i) if callable(aside) else aside)
            if question:
                q, filler = question(i)
                if filler and r.random() < 0.1:
                    q = self.typo(q)
                out.append(q)
            self._said = said
            return " ".join(o for o in out if o)

        text = self.unique(build, subj)
        for f, fp, tp in self._said:
            f.first_person, f.third_person = fp, tp
        return text

    def ack(self, facts):
        if any(f.supersedes for f in facts):
            return self.pick(["Switching like that is a reasonable call.", "Changes like that are normal as you learn what works.",
                              "That sounds like a sensible switch.", "Good that you adjusted it rather than sticking with something that didn't fit."])
        asp = facts[0].aspect.lower()
        return self.pick([f"Thanks for the detail on the {asp} side.", f"Noted on the {asp}.", f"That {asp} detail is helpful.",
                          f"Good to know about the {asp}.", f"That gives me a clearer idea of the {asp}."])

    def code_block(self, subj):
        r = self.rng
        lang = None
        for f in subj.facts:
            if f.key == "language" and f.conversation is not None:
                lang = f.value
        if lang not in CODE_SNIPPETS:
            lang = r.choice(["Python", "Go", "Rust", "TypeScript", "SQL", "shell"])
        item = r.choice(subj.modules)
        f1, f2 = r.sample(FIELDS, 2)
        snippet = CODE_SNIPPETS[lang]
        rep = {"Item": cap(item), "Items": cap(plural(item)), "items": plural(item), "f1": f1, "F1": cap(f1),
               "f2": f2, "F2": cap(f2), "cmd": subj.name.lower(), "month_l": r.choice(MONTHS).lower()}
        body = re.sub(r"\{(\w+)\}", lambda m: rep.get(m.group(1), m.group(0)), snippet)
        lead = r.choice(["Here's a minimal sketch:", "Something like this would work:", "A starting point:",
                         "Roughly like this:", f"For {subj.name}, I'd start with:"])
        tail = r.choice([f"You can add more fields than `{f1}` later without breaking old data.",
                         f"Keep `{f2}` optional at first; it's easy to backfill.",
                         "Run it against a copy of your data first.",
                         f"The `{plural(item)}` part is where most of the logic will end up."])
        return f"{lead}\n\n{body}\n\n{tail}"

    def reply(self, subj, aspect, facts):
        r = self.rng
        kind = "pet" if subj.category == "Pets" else subj.kind
        technical = subj.software and aspect in ("Technology", "Data Storage", "Design", "Testing", "Deployment", "Goals", "Status")

        def build(i):
            target = r.randint(40, 150) if self.casual else r.randint(80, 300)
            generic = GENERIC_ADVICE if kind != "person" else [g for g in GENERIC_ADVICE if "{s}" not in g and "Cost" not in g]
            pool = ASPECT_ADVICE.get(aspect, []) + ASPECT_ADVICE.get(f"{aspect}_{subj.kind}", []) + KIND_ADVICE[kind] + generic
            if self.casual:
                pool = pool + CASUAL_ADVICE
            if subj.kind == "thing" and not subj.parts:
                pool = [p for p in pool if "{part}" not in p]
            order = r.sample(pool, len(pool))
            take = lambda: self.fmt(order.pop(), subj) if order else None
            opener = self.fmt(self.pick(OPENERS), subj)
            if facts:
                opener += " " + self.ack(facts)
            blocks = [opener]
            mention = self.fmt(self.pick(MENTION_LINES), subj)
            if r.random() < 0.5 or self.named(subj, opener):
                blocks[0] += " " + mention
                mention = None
            code_done = False
            while words("\n\n".join(blocks)) < target and order:
                x = r.random()
                if technical and not code_done and x < 0.45:
                    blk = self.code_block(subj)
                    code_done = True
                elif x < 0.55:
                    sents = [take() for _ in range(r.randint(2, 4))]
                    blk = " ".join(s for s in sents if s)
                elif x < 0.8:
                    items = [t for t in (take() for _ in range(r.randint(3, 4))) if t]
                    head = self.pick(["A few things to consider:", "What I'd look at:", "Some options:", "Key points:"])
                    if r.random() < 0.4:  # bold lead words, as chat assistants like to write them
                        items = [re.sub(r"^([^,:;]{3,50})([,:;])", r"**\1**\2", t, count=1) for t in items]
                    blk = head + "\n\n" + "\n".join(f"- {t}" for t in items)
                else:
                    steps = [take() for _ in range(r.randint(3, 4))]
                    head = self.pick(["Here's a simple plan:", "Step by step:", "In order:", "A rough sequence:"])
                    blk = head + "\n\n" + "\n".join(f"{n + 1}. {t}" for n, t in enumerate(s for s in steps if s))
                if words("\n\n".join(blocks + [blk])) > 300 and words("\n\n".join(blocks)) >= 80:
                    break
                blocks.append(blk)
            if mention and not self.named(subj, "\n\n".join(blocks)):
                blocks.insert(1, mention)
            if r.random() < 0.7 and words("\n\n".join(blocks)) < 285:
                blocks.append(self.pick(CLOSERS))
            return "\n\n".join(blocks)

        return self.unique(build, subj)

    def segment_turns(self, c, subj, k, lead_parts):
        """The messages of one topic segment: subject subj on its k-th appearance."""
        r = self.rng
        facts = [f for f in subj.facts if f.appearance == k]
        if c.quick:
            groups = [facts]
        else:
            n1 = min(len(facts), r.randint(1, 2))
            groups, rest = [facts[:n1]], facts[n1:]
            while rest:
                m = r.choice([1, 1, 2])
                groups.append(rest[:m])
                rest = rest[m:]
            # Follow-up exchanges without new facts; long sessions get more of them.
            extra = r.randint(0, 2) if self.casual else r.randint(1, 3) + (r.randint(1, 3) if c.capacity >= 3 else 0)
            for _ in range(extra):
                groups.insert(r.randint(1, len(groups)), [])
        msgs = []
        s0 = subj.surfaces[0]
        for gi, group in enumerate(groups):
            aspect = group[0].aspect if group else self.pick(subj.aspects)
            parts = []
            if gi == 0:
                parts += lead_parts
                intro = subj.intro if k == 0 else subj.reintro
                parts.append(lambda i, intro=intro: (self.pick(intro).replace("{as0}", a(s0)).replace("{s0}", s0), False))
            elif r.random() < 0.3:
                parts.append(lambda i: (self.pick(THANKS), True))
            other = self.passing_mention(c, subj) if r.random() < 0.12 else None
            aside = other[1] if other else None
            if self.casual and not other and r.random() < 0.45:
                aside = lambda i: self.fmt(self.pick(CASUAL_ASIDES))
            if gi == 0 or group or r.random() < 0.4:
                question = lambda i, aspect=aspect: (self.fmt(self.pick(QUESTIONS), None, s=self.pick(subj.mentions),
                                                              a=aspect.lower()), True)
            else:
                question = lambda i: (self.fmt(self.pick(FOLLOWUPS)), True)
            self._allow = [other[0]] if other else []
            text = self.user_message(subj, parts, group, question, aside=aside)
            self._allow = []
            msgs.append(Message("user", text, None, [subj.id], [f for f in group]))
            msgs.append(Message("assistant", self.reply(subj, aspect, group), None, [subj.id]))
        return msgs, facts

    def passing_mention(self, c, subj):
        """Another recurring subject named in passing (full name, no fact): chunks about one
        subject often name a second. Only subjects introduced in an earlier conversation, so the
        describing sentence always comes first, and not one that has its own segment here."""
        here = {t.id for t, _ in c.topics} | {o.id for o in self.subjects if c.index in o.passing}
        cands = [o for o in self.subjects if o.recurring and o is not subj and o.id not in here
                 and o.appearances[0] < c.index and o.kind != subj.kind]
        if not cands:
            return None
        o = self.pick(cands)
        s0 = o.surfaces[0]
        sent = self.pick(PASSING[o.kind]).replace("{as0}", a(s0)).replace("{s0}", s0)
        if o.category == "Pets":
            pool = PASSING["pet"]
            if self.casual:  # "from the sofa" must not name a sofa-building project (the plain style keeps its draws)
                pool = [x for x in pool if self.clean_of_others(x.replace("{s0}", s0), o)] or pool
            sent = self.pick(pool).replace("{s0}", s0)
        o.passing.append(c.index)
        return o, sent

    def label(self, subj, facts, k):
        r = self.rng
        aspects = list(dict.fromkeys(f.aspect.lower() for f in facts))
        chg = [f for f in facts if f.supersedes]
        if chg and r.random() < 0.6:
            lab = f"{subj.name} {chg[0].aspect.lower()} change to {chg[0].value}"
        elif len(aspects) >= 2:
            lab = f"{subj.name} {aspects[0]} and {aspects[1]}"
        elif aspects:
            lab = f"{subj.name} {aspects[0]} " + r.choice(["details", "update", "questions", "and advice"])
        else:
            lab = f"{subj.name} " + r.choice(["general advice", "follow-up questions", "check-in and questions",
                                               "next steps discussion"])
        if k == 0 and r.random() < 0.3:
            lab = f"introducing {lab}" if words(lab) < 10 else lab
        w = lab.split()
        if len(w) < 4:
            w += ["discussion"] if len(w) == 3 else ["questions", "and", "advice"][: 4 - len(w)]
        return " ".join(w[:10])

    def title(self, c):
        r = self.rng
        subj = c.topics[0][0]
        facts = [f for f in subj.facts if f.appearance == c.topics[0][1]]
        asp = (facts[0].aspect if facts else self.pick(subj.aspects)).lower()
        if len(c.topics) >= 3 and r.random() < 0.4:
            return self.pick(["A few questions", "Catch-up on several things", f"{self.pick(WEEKDAYS)} questions",
                              f"Mixed bag: {subj.name} and more", "Odds and ends", "Planning session"])
        n, t = subj.name, subj.type
        first = n.split()[0]
        options = {
            "thing": [f"{n} {asp}", f"Help with my {t}", f"Question about my {n}", f"{cap(asp)} for the {t}",
                      f"{cap(t)} {asp} tips", f"My {t}: {asp}"],
            "project": [f"{n}: {asp}", f"{n} progress", f"Working on {n}", f"{cap(asp)} for {n}",
                        f"{n} {asp} questions", f"Side project {n}"],
            "place": [f"Trip to {n}", f"{n} {asp}", f"Planning around {n}", f"Question about {n}",
                      f"{n}: {asp} advice"],
            "person": [f"About {first}", f"Advice about {first}", f"Catching up with {first}",
                       f"{first}: {asp}", f"Question about {n}"],
            "practice": [f"{n} {asp}", f"Getting better at {subj.surfaces[0]}", f"{n} questions",
                         f"{cap(asp)} for {subj.surfaces[0]}", f"My {subj.surfaces[0]} routine"],
        }[subj.kind]
        return self.pick(options)

    def build_conversation(self, c):
        r = self.rng
        c.id = self.uuid()
        msgs = []
        if not c.quick and r.random() < 0.25:
            # Both turns share one set of slot values, so the reply fits the greeting.
            shared = {}
            def user(i):
                shared.clear()
                shared.update(self.slots())
                return self.fmt(self.pick(SMALLTALK_USER), **shared)
            u = self.unique(user)
            a_ = self.unique(lambda i: self.fmt(self.pick(SMALLTALK_ASSISTANT), **shared))
            c.segments.append({"subject": None, "label": self.pick(
                ["greeting and small talk", "small talk before the questions", "opening chat about the day",
                 "hello and small talk about the weather"]), "first": 0, "last": 1})
            msgs += [Message("user", u, 0), Message("assistant", a_, 0)]
        greet = not msgs and r.random() < 0.35
        for ti, (subj, k) in enumerate(c.topics):
            lead = []
            if ti == 0 and greet:
                lead.append(lambda i: (self.pick(GREETINGS), True))
            if ti > 0:
                if r.random() < 0.4:
                    lead.append(lambda i: (self.pick(THANKS), True))
                lead.append(lambda i: (self.pick(TRANSITIONS), True))
            seg_msgs, facts = self.segment_turns(c, subj, k, lead)
            seg = len(c.segments)
            for m in seg_msgs:
                m.segment = seg
            c.segments.append({"subject": subj, "label": self.label(subj, facts, k),
                               "first": len(msgs), "last": len(msgs) + len(seg_msgs) - 1})
            msgs += seg_msgs
        c.messages = msgs
        c.title = self.title(c)
        # Times: the person types for a while, the assistant answers within seconds; a whole
        # conversation stays inside one UTC day so its date is unambiguous.
        start = datetime.datetime(c.date.year, c.date.month, c.date.day, r.randint(7, 19), r.randint(0, 59),
                                  r.randint(0, 59), tzinfo=datetime.timezone.utc).timestamp()
        t = start + r.random()
        for m in msgs:
            t += r.uniform(20, 200) if m.role == "user" else r.uniform(3, 30)
            m.time = round(t, 6)
        end_day = datetime.datetime.fromtimestamp(t, datetime.timezone.utc).date()
        assert end_day == c.date, "conversation crosses midnight"
        c.start = round(start, 6)
        for m in msgs:
            m.id = self.uuid()
        for f in (f for m in msgs for f in m.facts):
            f.conversation, f.date = c.id, c.date.isoformat()
        for m in msgs:
            for f in m.facts:
                f.message = m.id

    # --- the whole history -------------------------------------------------------------------
    def run(self):
        self.plan()
        for c in self.convs:
            self.build_conversation(c)
        self.renumber()
        return self.exports(), self.truth()

    def renumber(self):
        """Fact ids in the order they are said (conversation, then message)."""
        n = 0
        for c in self.convs:
            for m in c.messages:
                for f in m.facts:
                    n += 1
                    f.id = f"f{n}"
        for s in self.subjects:
            s.facts.sort(key=lambda f: int(f.id[1:]))

    # --- export files ------------------------------------------------------------------------
    def chatgpt_conv(self, c):
        r = self.rng
        slug = r.choice(["gpt-4o", "gpt-4", "gpt-4o-mini", "o3", "gpt-4-turbo"])
        root, sysid = self.uuid(), self.uuid()
        mapping = {root: {"id": root, "message": None, "parent": None, "children": [sysid]}}
        mapping[sysid] = {"id": sysid, "message": {
            "id": sysid, "author": {"role": "system", "name": None, "metadata": {}}, "create_time": None,
            "update_time": None, "content": {"content_type": "text", "parts": [""]}, "status": "finished_successfully",
            "end_turn": True, "weight": 0.0, "metadata": {"is_visually_hidden_from_conversation": True},
            "recipient": "all", "channel": None}, "parent": root, "children": []}
        parent = sysid
        # Now and then an earlier, regenerated answer stays in the tree off the visible branch,
        # as in real exports; the ingester must follow current_node and never see it.
        regen = r.randrange(len(c.messages)) if r.random() < 0.15 else -1
        for i, m in enumerate(c.messages):
            meta = ({"model_slug": slug, "finish_details": {"type": "stop", "stop_tokens": [200002]},
                     "is_complete": True, "parent_id": parent} if m.role == "assistant"
                    else {"request_id": self.uuid(), "message_source": None, "timestamp_": "absolute"})
            node = {"id": m.id, "message": {
                "id": m.id, "author": {"role": m.role, "name": None, "metadata": {}}, "create_time": m.time,
                "update_time": None, "content": {"content_type": "text", "parts": [m.text]},
                "status": "finished_successfully", "end_turn": m.role == "assistant" or None,
                "weight": 1.0, "metadata": meta, "recipient": "all", "channel": None},
                "parent": parent, "children": []}
            if i == regen and m.role == "assistant":
                alt = self.uuid()
                subj = c.segments[m.segment]["subject"]
                text = self.reply(subj, self.pick(subj.aspects), []) if subj else self.unique(
                    lambda j: self.fmt(self.pick(SMALLTALK_ASSISTANT)))
                altnode = json.loads(json.dumps(node))
                altnode["id"] = altnode["message"]["id"] = alt
                altnode["message"]["content"]["parts"] = [text]
                altnode["message"]["create_time"] = round(m.time - r.uniform(5, 60), 6)
                mapping[alt] = altnode
                mapping[parent]["children"].append(alt)
            mapping[parent]["children"].append(m.id)
            mapping[m.id] = node
            parent = m.id
        return {"title": c.title, "create_time": c.start, "update_time": c.messages[-1].time, "mapping": mapping,
                "moderation_results": [], "current_node": parent, "plugin_ids": None, "conversation_id": c.id,
                "conversation_template_id": None, "gizmo_id": None, "gizmo_type": None, "is_archived": False,
                "is_starred": None, "safe_urls": [], "default_model_slug": slug, "id": c.id}

    @staticmethod
    def iso(t):
        return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    def claude_conv(self, c):
        msgs = []
        for m in c.messages:
            when = self.iso(m.time)
            msgs.append({"uuid": m.id, "text": m.text,
                         "content": [{"start_timestamp": when, "stop_timestamp": when, "type": "text",
                                      "text": m.text, "citations": []}],
                         "sender": "human" if m.role == "user" else "assistant", "created_at": when,
                         "updated_at": when, "attachments": [], "files": []})
        return {"uuid": c.id, "name": c.title, "summary": "", "created_at": self.iso(c.start),
                "updated_at": self.iso(c.messages[-1].time), "account": {"uuid": self.account},
                "chat_messages": msgs}

    def exports(self):
        self.account = self.uuid()
        files = {"chatgpt": "chatgpt/conversations.json", "claude": "claude/conversations.json"}
        out = {"chatgpt": [], "claude": []}
        for c in self.convs:
            c.file = files[c.fmt]
            out[c.fmt].append(self.chatgpt_conv(c) if c.fmt == "chatgpt" else self.claude_conv(c))
        # Real ChatGPT exports list the newest conversation first.
        out["chatgpt"].reverse()
        return {files[k]: v for k, v in out.items() if v}

    # --- truth -------------------------------------------------------------------------------
    def named(self, subj, text):
        low = text.lower()
        return any(re.search(r"(?<![\w-])" + re.escape(s.lower()) + r"(?![\w-])", low) for s in subj.surfaces)

    def truth(self):
        convs = []
        for c in self.convs:
            seg_subjects = [sg["subject"] for sg in c.segments]
            messages = []
            for m in c.messages:
                named = [s.id for s in self.subjects if self.named(s, m.text)]
                messages.append({"id": m.id, "role": m.role, "text": m.text, "segment": m.segment,
                                 "subjects": named, "facts": [f.id for f in m.facts]})
            segments = [{"start": c.messages[sg["first"]].id, "end": c.messages[sg["last"]].id,
                         "label": sg["label"], "subject": sg["subject"].id if sg["subject"] else None}
                        for sg in c.segments]
            convs.append({"id": c.id, "title": c.title, "date": c.date.isoformat(), "format": c.fmt,
                          "file": c.file, "messages": messages, "segments": segments})
        return {"seed": self.seed, "catalogue": self.catalogue, "person": self.person,
                "subjects": [s.truth() for s in self.subjects], "conversations": convs}


# =============================================================================================
# Self-check: the promises truth.json makes, verified on every run
# =============================================================================================

def check(truth):
    problems = []
    err = problems.append
    ids, texts, conv_ids = set(), set(), set()
    subj = {s["id"]: s for s in truth["subjects"]}
    facts = {f["id"]: f for s in truth["subjects"] for f in s["facts"]}
    where = {}
    seen_in = {sid: [] for sid in subj}
    seg_count = {sid: 0 for sid in subj}
    pat = lambda s: re.compile(r"(?<![\w-])" + re.escape(s.lower()) + r"(?![\w-])")
    for c in truth["conversations"]:
        if c["id"] in conv_ids:
            err(f"duplicate conversation id {c['id']}")
        conv_ids.add(c["id"])
        for m in c["messages"]:
            if m["id"] in ids:
                err(f"duplicate message id {m['id']}")
            if m["text"] in texts:
                err(f"duplicate message text in {c['id']}")
            if m["text"] != m["text"].strip():
                err(f"message {m['id']} has edge whitespace (ingest would strip it)")
            ids.add(m["id"])
            texts.add(m["text"])
            where[m["id"]] = (c, m)
        pos = {m["id"]: i for i, m in enumerate(c["messages"])}
        expect = 0
        for k, sg in enumerate(c["segments"]):
            a_, b_ = pos[sg["start"]], pos[sg["end"]]
            if a_ != expect or b_ < a_:
                err(f"{c['id']}: segment {k} is not contiguous")
            if any(c["messages"][i]["segment"] != k for i in range(a_, b_ + 1)):
                err(f"{c['id']}: message segment index disagrees with segment {k}")
            if not 1 <= len(sg["label"].split()) <= 10:
                err(f"{c['id']}: label length {sg['label']!r}")
            if sg["subject"]:
                seg_count[sg["subject"]] += 1
            expect = b_ + 1
        if expect != len(c["messages"]):
            err(f"{c['id']}: segments do not cover every message")
        # First mention in each conversation uses surface[0].
        for sid, s in subj.items():
            pats = [pat(x) for x in s["surface"]]
            for m in c["messages"]:
                low = m["text"].lower()
                full = [(h.start(), h.end()) for h in pats[0].finditer(low)]
                # A shorter surface inside an occurrence of the full name ("the Paula" in "the
                # Paula overhead projector") is that occurrence, not an earlier short mention.
                short = [h.start() for p in pats[1:] for h in p.finditer(low)
                         if not any(a_ <= h.start() < b_ or h.start() <= a_ < h.end() for a_, b_ in full)]
                if not full and not short:
                    continue
                seen_in[sid].append(c["id"])
                if not full or (short and min(short) < full[0][0]):
                    err(f"{c['id']}: first mention of {sid} is not {s['surface'][0]!r}")
                break
    for sid, s in subj.items():
        convs = sorted(set(seen_in[sid]))
        if s["recurring"] and len(convs) < 2:
            err(f"recurring {sid} appears in {len(convs)} conversation(s)")
        if not s["recurring"] and (len(convs) != 1 or seg_count[sid] != 1):
            err(f"one-off {sid} appears in {len(convs)} conversations / {seg_count[sid]} segments")
        if not 2 <= len(s["facts"]) <= 6:
            err(f"{sid} has {len(s['facts'])} facts")
    for fid, f in facts.items():
        c, m = where.get(f["message"], (None, None))
        if m is None or m["role"] != "user" or f["first_person"] not in m["text"] or fid not in m["facts"]:
            err(f"{fid}: first_person is not in its user message")
        elif c["id"] != f["conversation"] or c["date"] != f["date"]:
            err(f"{fid}: conversation/date mismatch")
        if f["supersedes"]:
            o = facts[f["supersedes"]]
            if o["key"] != f["key"] or o["value"] == f["value"] or not o["date"] < f["date"]:
                err(f"{fid}: bad supersedes {o['id']}")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--catalogue", choices=["train", "heldout"], required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--conversations", type=int, default=None, help="conversations in the history (default 20-40; casual 8-18)")
    ap.add_argument("--style", choices=["plain", "casual"], default="plain",
                    help="casual: short chats, named things, lower-case project names, everyday nouns (since run 6)")
    ap.add_argument("--named-intros", choices=["base", "wide"], default="base",
                    help="wide (casual style): named things also introduced with what is wrong with them, in one sentence")
    args = ap.parse_args()
    if args.conversations is not None and args.conversations < 2:
        ap.error("--conversations must be at least 2")
    lex = Lexicon()
    g = Generator(lex, args.seed, args.catalogue, args.conversations, args.style, args.named_intros)
    exports, truth = g.run()
    problems = check(truth)
    if problems:
        for p in problems[:30]:
            print("gen_corpus: " + p, file=sys.stderr)
        sys.exit(f"gen_corpus: {len(problems)} problem(s); nothing written")
    for rel, data in exports.items():
        path = os.path.join(args.out, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(json.dumps(data, ensure_ascii=False, indent=1) + "\n")
    with open(os.path.join(args.out, "truth.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(truth, ensure_ascii=False, indent=1) + "\n")
    n_msg = sum(len(c["messages"]) for c in truth["conversations"])
    n_fact = sum(len(s["facts"]) for s in truth["subjects"])
    n_chg = sum(1 for s in truth["subjects"] for f in s["facts"] if f["supersedes"])
    print(f"gen_corpus: {args.out}: {len(truth['conversations'])} conversations, {n_msg} messages, "
          f"{len(truth['subjects'])} subjects, {n_fact} facts ({n_chg} changed)")


if __name__ == "__main__":
    main()
