#!/usr/bin/env python3
"""oracle.py — a ground-truth model server for recording dream-mini's training data.

    python3 train/oracle.py --truth DIR/truth.json --records OUT.jsonl --port P

Serves the OpenAI-compatible chat completions API that `dream run --backend URL` speaks
(src/seam/remote.c: one POST /v1/chat/completions per stage call, messages [system, user],
temperature 0). For every call it identifies the stage from the system turn and the prompt kind
from the user turn's markers (train/PROMPTS.md lists them all), computes the GOLD answer from the
generator's truth.json, appends {"stage", "kind", "system", "user", "answer"} to the records file
and answers it.

The one rule every answer follows: the model being trained only ever sees the prompt, so a gold
answer says only what the prompt shows. The truth is the labeler, never a source: a fact is used
only when its first_person sentence is visible in the prompt, a subject is named only when one of
its surface forms is in the text, a message is cited only with the marker the prompt gives its
source. Answers are in exactly the form the stage's parser accepts and the gate lets through.

A prompt of no known kind is logged loudly on stderr, counted, recorded nowhere, and answered with
text every parser refuses. Counts per kind are written to OUT.jsonl.stats.json on every call (and
printed at exit).
"""
import argparse
import json
import os
import re
import signal
import sys
import threading
import unicodedata
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# ==============================================================================================
# The stages: their system turns (src/seam/stages.c; chunk's own from src/dreaming/segment.c;
# resolve's own from src/dreaming/resolve.c)
# ==============================================================================================

SYSTEMS = {
    "You split conversations into single-topic chunks. You answer with JSON only.": "chunk",
    "You name the subjects a conversation excerpt is about. Reply with one wiki article title per line "
    "and nothing else.": "entity",
    "Reply with exactly one word: yes or no.": "route",
    "You decide where a conversation excerpt belongs in an article. Follow the instructions in the "
    "message and answer briefly, without preamble.": "section",
    "You write encyclopedia articles from a person's own conversations. Follow the editorial "
    "instructions in the message exactly and reply with only the requested article text.": "synthesis",
    "You edit one section of an encyclopedia article. Follow the editorial instructions in the message "
    "exactly and reply with only the requested text.": "editor",
    "You decide whether two names from a person's notes mean the same thing. Reply with one word: yes or no.": "resolve",
    "You answer a person's question from their own notes only. Reply with the answer and its footnote markers and "
    "nothing else, or exactly NOTHING ON FILE.": "answer",
}

# An answer every parser refuses (kept off the records): not JSON, a bracket first (no heading,
# no name, no yes), no `key: value`, and leaky as prose. The entity stage's refusal is an empty
# answer (a name would be stored).
REFUSAL = "[I cannot help with that.]"

POLICY_END = "--- end of policy ---\n"
RESERVED_ANCHORS = {"references", "see-also", "notes", "history"}

# ==============================================================================================
# Text helpers
# ==============================================================================================


def norm(s):
    """Whitespace squeezed, casefolded: how prompt text and truth text are compared."""
    return " ".join(s.split()).casefold()


LINK_RE = re.compile(r"\[\[([^\[\]|]*)(?:\|([^\[\]]*))?\]\]")
MARKER_RE = re.compile(r"\[\^(\d+)\]")


def plain(s):
    """Article prose as read: [[T|d]] shown as d, [[T]] as T, markers and bold dropped."""
    s = LINK_RE.sub(lambda m: m.group(2) if m.group(2) is not None else m.group(1), s)
    s = MARKER_RE.sub("", s)
    return s.replace("**", "")


def name_normal(name):
    """The entity normal form (src/names/entity_name.c): casefolded, spaces squeezed, one
    leading article then one possessive dropped, a trailing 's dropped."""
    s = unicodedata.normalize("NFC", name).casefold()
    s = " ".join(s.replace("_", " ").split())
    for words in (("the", "a", "an"), ("my", "our", "your")):
        for w in words:
            if s.startswith(w + " ") and len(s) > len(w) + 1:
                s = s[len(w) + 1:]
                break
    if len(s) > 2 and s.endswith("'s"):
        s = s[:-2]
    elif len(s) > 2 and s.endswith("\u2019s"):
        s = s[:-2]
    return s


def squeeze(s):
    return "".join(c for c in s if c.isalnum())


def anchor(heading):
    """An approximation of dream_article_anchor: lowercase words joined by '-'."""
    return "-".join(re.findall(r"[0-9a-z]+", heading.casefold()))


def title_case(phrase):
    small = {"a", "an", "the", "of", "and", "or", "for", "in", "on", "to", "at", "by", "with"}
    out = []
    for i, w in enumerate(phrase.split()):
        if i and w.lower() in small:
            out.append(w.lower())
        else:
            out.append("-".join(p[:1].upper() + p[1:] for p in w.split("-")))
    return " ".join(out)


def sentence(s):
    """s as one sentence: trimmed, ending in . ! or ?"""
    s = " ".join(s.split())
    if s and s[-1] not in ".!?":
        s += "."
    return s


def cite(s, markers):
    """Sentence s with its markers right after its final punctuation."""
    return sentence(s) + "".join(f"[^{m}]" for m in markers)


def between(text, start, end, last=False):
    i = text.rfind(start) if last else text.find(start)
    if i < 0:
        return None
    i += len(start)
    j = text.find(end, i)
    return text[i:j] if j >= 0 else None


def line_value(text, key):
    """The rest of the first line starting with key, or None."""
    m = re.search(r"^" + re.escape(key) + r"(.*)$", text, re.M)
    return m.group(1) if m else None


def quoted_line(text, key):
    """X of a line `key "X"` (the last quote of the line closes it)."""
    m = re.search(r"^" + re.escape(key) + r'"(.*)"[ \t]*$', text, re.M)
    return m.group(1) if m else None


def after_policy(text):
    i = text.rfind(POLICY_END)
    return text[i + len(POLICY_END):] if i >= 0 else text


SENT_RE = re.compile(r"(?<=[.!?])((?:\[\^\d+\])*)(?:\s+|$)")


def split_sentences(text):
    """Prose into sentences, each keeping the markers right after it."""
    out, pos = [], 0
    for m in SENT_RE.finditer(text):
        end = m.end(1)
        piece = text[pos:end].strip()
        if piece:
            out.append(piece)
        pos = m.end()
    rest = text[pos:].strip()
    if rest:
        out.append(rest)
    return out


def sentence_markers(s):
    """(the sentence without its trailing markers, the trailing markers' numbers)."""
    m = re.search(r"((?:\[\^\d+\])+)$", s)
    if not m:
        return s, []
    return s[: m.start()], [int(x) for x in MARKER_RE.findall(m.group(1))]


# --- the reconcile stage's detectors (src/dreaming/synth_reconcile.c), ported -------------------

PRESENT_CUES = (" is ", " are ", "favourite", "favorite", "prefer", "current", " now ", "pick", "go-to", " uses ", " use ")
PAST_CUES = ("previous", "originally", "used to", "no longer", " was ", " were ", "switched", "earlier", "before", "had ")
PAST_CUES_STATES = ("previous", "originally", "used to", "no longer", " was ", " were ", "switched from", "earlier", "before", "had ")


def _clauses(text):
    return [" " + c + " " for c in re.split(r"[.;!?\n]", text)]


def asserts_current(text, value):
    v = value.casefold()
    for c in _clauses(text):
        cf = c.casefold()
        if v and v in cf and any(p in cf for p in PRESENT_CUES) and not any(p in cf for p in PAST_CUES):
            return True
    return False


def states(text, value):
    v = value.casefold()
    for c in _clauses(text):
        cf = c.casefold()
        if v and v in cf and not any(p in cf for p in PAST_CUES_STATES):
            return True
    return False


# --- tense and voice ----------------------------------------------------------------------------
#
# The truth gives each fact one present-tense article sentence ("They oil the Kenton espresso
# maker every week."). A section states a replaced value in the past tense, and a paragraph's
# first sentence names the person instead of starting with "They".

ADVERBS = ("now", "currently", "still", "nowadays", "usually", "always", "often", "mostly", "also", "only",
           "never", "normally", "generally", "regularly", "sometimes", "rarely", "typically", "mainly", "largely",
           "once", "first", "really", "just", "recently", "finally", "already")
DROP_IN_PAST = {"now", "currently", "still", "nowadays"}
PAST_OF = {"is": "was", "are": "were", "has": "had", "have": "had", "does": "did", "do": "did", "can": "could",
           "will": "would"}
PAST_FORMS = {"bought", "paid", "gave", "met", "got", "made", "took", "sold", "built", "began", "found", "had",
              "was", "were", "did", "went", "came", "kept", "left", "lost", "said", "told", "thought", "won"}
PRONOUN_RE = r"(?:They|they|The person|the person|He|he|She|she)"


def _base_verb(v):
    """The base form of a third-person-singular verb (oils → oil, watches → watch, flies → fly)."""
    if v in ("is",):
        return "be"
    if v == "has":
        return "have"
    if v.endswith("ies") and len(v) > 4:
        return v[:-3] + "y"
    if re.search(r"(ch|sh|ss|x|z|o)es$", v):
        return v[:-2]
    if v.endswith("s") and not v.endswith("ss"):
        return v[:-1]
    return v


def _third_singular(v):
    """oil → oils, watch → watches, fly → flies; are → is, have → has; past forms unchanged."""
    if v == "are":
        return "is"
    if v == "have":
        return "has"
    if v.endswith("ed") or v in PAST_FORMS:
        return v
    if re.search(r"(s|sh|ch|x|z|o)$", v):
        return v + "es"
    if re.search(r"[^aeiou]y$", v):
        return v[:-1] + "ies"
    return v + "s"


def _verb_past(subject, adverbs, verb, rest, singular):
    """(subject) (adverbs) (verb) (rest) told as the past."""
    keep = [a for a in adverbs if a.lower() not in DROP_IN_PAST]
    rest = re.sub(r"^\s+(?:now|currently|still|nowadays)\b", "", rest)
    low = verb.lower()
    if low in PAST_OF:
        words = [PAST_OF[low]] + keep
    elif low.endswith("ed") or low in PAST_FORMS:
        words = keep + [verb]  # already the past
    else:
        base = _base_verb(low) if singular else low
        words = ["used", "to"] + keep + [base]
    return " ".join([subject] + words) + rest


def past(s, names=()):
    """A present-tense statement told as the past ("They oil it every week." → "They used to oil
    it every week."; "Rex eats dry food." → "Rex used to eat dry food."); markers after it and
    links inside it are kept. names: the subject's names, for a sentence it starts."""
    body, markers = sentence_markers(s.strip())
    tail = "".join(f"[^{m}]" for m in markers)
    adv = r"((?:(?:" + "|".join(ADVERBS) + r")\s+)*)"
    # a possessive subject: "Their budget for X is £300." → "... was £300."
    if re.match(r"^(Their|The person's|His|Her|Its)\s", body) or any(
            body.startswith(n + "'s ") for n in names if n):
        out = re.sub(r"\b(is|are|has|have)\b(\s+now\b)?", lambda x: PAST_OF[x.group(1)], body, count=1)
        if out != body:
            return out + tail
    # a pronoun or the subject's name, then the verb
    subjects = [PRONOUN_RE] + [re.escape(n) for n in sorted({x for x in names if x}, key=len, reverse=True)]
    for i, subj in enumerate(subjects):
        m = re.search(r"(?:^|(?<=\s))(" + subj + r")\s+" + adv + r"([a-z][a-z'-]*)\b(.*)$", body, re.S)
        if not m or (i > 0 and m.start() > 0):
            continue
        if i == 0 and m.start() > 0 and not re.match(r"^(In|At|On|For|With|When|During)\b", body):
            continue
        who = m.group(1)
        singular = who.lower() not in ("they",)
        adverbs = m.group(2).split()
        out = body[: m.start(1)] + _verb_past(who, adverbs, m.group(3), m.group(4), singular)
        return out + tail
    out = re.sub(r"\b(is|are|has|have)\b(\s+now\b)?", lambda x: PAST_OF[x.group(1)], body, count=1)
    if out != body:
        return out + tail
    return "Earlier, " + body[:1].lower() + body[1:] + tail


def person_form(s):
    """A sentence starting "They"/"Their" made to name the person ("They oil it." → "The person
    oils it."), for the first sentence of a paragraph; any other sentence as it is."""
    m = re.match(r"^Their\s(.*)$", s, re.S)
    if m:
        return "The person's " + m.group(1)
    adv = r"((?:(?:" + "|".join(ADVERBS) + r")\s+)*)"
    m = re.match(r"^They\s+" + adv + r"([a-z][a-z'-]*)\b(.*)$", s, re.S)
    if not m:
        return s
    return "The person " + m.group(1) + _third_singular(m.group(2)) + m.group(3)


# What a fact's prose sentence is (--prose): "restate", the person's own sentence told about them
# (restate(); the default since run 7: every word of the gold prose is in the cited source), or
# "catalogue", the generator's third_person paraphrase (runs 1-6).
PROSE = "restate"

# A correction's wrapping (train/gen_corpus.py, fact_sentence): the statement inside it.
CORRECTION_RES = [re.compile(r"^Correction: (.*) \u2014 not .*, as I said before\.$", re.S),
                  re.compile(r"^Sorry, I got that wrong earlier\. (.*?) It was never .*\.$", re.S),
                  re.compile(r"^I need to correct myself \u2014 (.*), not .*\.$", re.S),
                  re.compile(r"^Small correction to what I told you before: (.*?)\. I mixed it up with .*\.$", re.S)]

# first-person words and what they become about the person (case of the first letter kept)
RESTATE_WORDS = [(r"I'm", "they are"), (r"I am", "they are"), (r"I was", "they were"), (r"I wasn't", "they weren't"),
                 (r"I've", "they have"), (r"I'd", "they'd"), (r"I'll", "they will"), (r"I", "they"),
                 (r"myself", "themselves"), (r"mine", "theirs"), (r"my", "their"), (r"me", "them"),
                 (r"we're", "they are"), (r"we've", "they have"), (r"we", "they"), (r"our", "their"), (r"us", "them")]
RESTATE_RE = re.compile(r"(?<![\w'])(" + "|".join(w for w, _ in RESTATE_WORDS) + r")(?![\w'])", re.I)
RESTATE_OF = {w.casefold(): t for w, t in RESTATE_WORDS}


def restate(fp):
    """The person's own sentence told about them, words kept: "For the finish on Killdeer I'm
    going with tung oil." -> "For the finish on Killdeer they're going with tung oil."; "Sergei and
    I meet every Thursday." -> "Sergei and the person meet every Thursday."; a correction's
    wrapping dropped ("Correction: X — not Y, as I said before." -> X). The prose a small model
    can learn to write from any source: what it says is what the source says."""
    s = " ".join((fp or "").split())
    for rx in CORRECTION_RES:
        m = rx.match(s)
        if m:
            s = m.group(1)
            break
    s = re.sub(r"^Update on (.+?): it's ", lambda m: m.group(1)[:1].upper() + m.group(1)[1:] + " is ", s)
    s = re.sub(r"^Update: ", "", s)
    s = re.sub(r"(?<![\w'])(and|with) (I|me)(?![\w'])", lambda m: m.group(1) + " the person", s)
    s = re.sub(r"(?<![\w'])(I|me) and (?=\w)", "the person and ", s)

    def swap(m):
        w = m.group(1)
        if w == "i" or (w.islower() and w.casefold().startswith("i")):
            return w  # a lowercase "i..." is not the pronoun
        t = RESTATE_OF[w.casefold()]
        return t[:1].upper() + t[1:] if m.start() == 0 else t

    s = RESTATE_RE.sub(swap, s)
    s = s[:1].upper() + s[1:]
    return sentence(s)


def voiced(sentences):
    """A paragraph's sentences with the first that starts with They/Their naming the person."""
    out = list(sentences)
    for i, x in enumerate(out):
        if re.match(r"^(They|Their)\s", x):
            out[i] = person_form(x)
            break
        if re.match(r"^(The person)\b", x):
            break
    return out


# ==============================================================================================
# The truth
# ==============================================================================================


class Truth:
    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            t = json.load(f)
        self.raw = t
        self.person = (t.get("person") or {}).get("name") or ""
        self.subjects = {}
        self.facts = {}
        for s in t.get("subjects", []):
            s = dict(s)
            s["facts"] = [dict(f, subject=f.get("subject") or s["id"]) for f in s.get("facts", [])]
            self.subjects[s["id"]] = s
            for f in s["facts"]:
                f["_fp"] = norm(f.get("first_person") or "")
                f["_prose"] = (restate(f.get("first_person")) if PROSE == "restate" and f.get("first_person")
                               else sentence(f.get("third_person") or ""))
                f["_tp"] = norm(f.get("third_person") or "")
                self.facts[f["id"]] = f
        for sid, s in self.subjects.items():
            names = [s["name"]] + list(s.get("surface") or [])
            caps = []
            for n in names:
                caps += [n, n[:1].upper() + n[1:]]
                if not n.lower().startswith("the "):
                    caps.append("The " + n)
            s["_names"] = list(dict.fromkeys(caps))
            for f in s["facts"]:
                forms = set()
                for tp in {sentence(f.get("third_person") or ""), f["_prose"]}:
                    if tp and tp != ".":
                        forms |= {tp, person_form(tp), past(tp, s["_names"]), past(person_form(tp), s["_names"])}
                f["_forms"] = {norm(plain(x)).rstrip(".!?") for x in forms if x}
        self.superseded_by = {}
        for f in self.facts.values():
            if f.get("supersedes"):
                self.superseded_by.setdefault(f["supersedes"], []).append(f["id"])
        self.convs = {}
        self.msgs = {}
        for c in t.get("conversations", []):
            self.convs[c["id"]] = c
            for i, m in enumerate(c.get("messages", [])):
                m = dict(m, conv=c["id"], index=i)
                m["_n"] = norm(m.get("text") or "")
                self.msgs[m["id"]] = m
        # names → subjects
        self.by_name = {}
        self.by_squeeze = {}
        self.surface_res = {}
        for sid, s in self.subjects.items():
            forms = [s["name"]] + [x for x in s.get("surface", []) if x]
            for x in forms:
                self.by_name.setdefault(name_normal(x), set()).add(sid)
                self.by_squeeze.setdefault(squeeze(name_normal(x)), set()).add(sid)
            res = []
            for x in s.get("surface", []) or [s["name"]]:
                pat = r"\s+".join(re.escape(w) for w in x.split())
                res.append((x, re.compile(r"(?<!\w)" + pat + r"(?!\w)", re.I)))
            self.surface_res[sid] = res

    # --- subjects -----------------------------------------------------------------------------
    def subject_for_name(self, name):
        """The subject an article title, stem or extracted name names, or None."""
        if not name:
            return None
        n = name_normal(name.replace("_", " "))
        ids = self.by_name.get(n) or self.by_squeeze.get(squeeze(n))
        if ids and len(ids) == 1:
            return next(iter(ids))
        if ids:
            exact = [i for i in ids if name_normal(self.subjects[i]["name"]) == n]
            if len(exact) == 1:
                return exact[0]
        return None

    def surfaces_in(self, sid, text):
        """(position of the first mention, [surface forms present]) of subject sid in text."""
        first, present = None, []
        for x, rx in self.surface_res[sid]:
            m = rx.search(text)
            if m:
                present.append(x)
                first = m.start() if first is None else min(first, m.start())
        return first, present

    # --- facts --------------------------------------------------------------------------------
    def facts_in(self, text, sid=None):
        """The facts (of subject sid, else any) whose first_person sentence is shown whole in text,
        in the order the text shows them. Two facts saying the same words: the one whose message
        is shown wins."""
        nt = norm(text)
        pool = self.subjects[sid]["facts"] if sid else self.facts.values()
        hits = []
        for f in pool:
            if not f["_fp"]:
                continue
            pos = nt.find(f["_fp"])
            if pos >= 0:
                hits.append((pos, f))
        if not hits:
            return []
        by_words = {}
        for pos, f in hits:
            by_words.setdefault(f["_fp"], []).append((pos, f))
        out = []
        for group in by_words.values():
            if len(group) > 1:
                shown = [(p, f) for p, f in group if self.message_shown(f.get("message"), nt)]
                if shown:
                    group = shown[:1] if len({f["message"] for _, f in shown}) == 1 else shown
            out.extend(group)
        out.sort(key=lambda pf: (pf[0], pf[1].get("date") or ""))
        seen, res = set(), []
        for _, f in out:
            if f["id"] not in seen:
                seen.add(f["id"])
                res.append(f)
        return res

    def said_in(self, f, text_norm):
        """Whether article text (plain, normalized) states fact f, in any tense or voice."""
        return any(x and x in text_norm for x in f["_forms"])

    def message_shown(self, mid, nt):
        m = self.msgs.get(mid)
        if not m or not m["_n"]:
            return False
        return m["_n"][:80] in nt

    def newer(self, f, pool_ids):
        """Whether some fact in pool_ids supersedes f (directly or down the chain)."""
        stack, seen = list(self.superseded_by.get(f["id"], [])), set()
        while stack:
            x = stack.pop()
            if x in seen:
                continue
            seen.add(x)
            if x in pool_ids:
                return True
            stack.extend(self.superseded_by.get(x, []))
        return False

    def is_error(self, f):
        """Whether the truth marks f as correcting a simple mistake (not a change of view)."""
        return bool(f.get("error") or f.get("correction") or f.get("change") == "error")


# ==============================================================================================
# Prompt parsing
# ==============================================================================================

SRC_HEAD = re.compile(r"^\[\^(\d+)\] \((\d{4}-\d\d-\d\d)\) ", re.M)


def sources(block):
    """[(marker, date, text after the date)] of a "[^n] (date) ..." list."""
    heads = list(SRC_HEAD.finditer(block))
    out = []
    for i, h in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(block)
        out.append((int(h.group(1)), h.group(2), block[h.end():end]))
    return out


def note_of(user):
    """(date, text) of a fold prompt's note."""
    m = re.search(r"--- Note \((\d{4}-\d\d-\d\d|[^,]*), .*?\) ---\n(.*?)--- end of note ---", user, re.S)
    if not m:
        return None, None
    return m.group(1), m.group(2)


# ==============================================================================================
# The oracle: one method per prompt kind
# ==============================================================================================


class Unknown(Exception):
    pass


class Oracle:
    def __init__(self, truth, questions=None):
        self.t = truth
        self.questions = questions or {}  # question -> {"subject": id or None, "key": fact key or None}

    # --- dispatch -----------------------------------------------------------------------------
    def classify(self, system, user):
        stage = SYSTEMS.get(system or "")
        if stage is None:
            low = (system or "").casefold()
            if "single-topic chunks" in low:
                stage = "chunk"
            elif "wiki article title per line" in low:
                stage = "entity"
            elif "two names" in low:
                stage = "resolve"
            elif "where a conversation excerpt belongs" in low:
                stage = "section"
            elif "write encyclopedia articles" in low:
                stage = "synthesis"
            elif "edit one section" in low:
                stage = "editor"
            else:
                stage = "unknown"
        u = user
        if stage == "chunk" and '{"chunks": [' in u and "(id: " in u:
            return stage, "segment"
        if stage == "entity" and "--- Conversation chunk ---\n" in u and "--- end chunk ---" in u:
            return stage, "entities"
        if stage == "resolve" and "Do A and B name the same thing?" in u:
            return stage, "tie_break"
        if stage == "synthesis":
            retry = "A previous answer to this talked about the task" in u
            if "List the sections this article needs" in u:
                return stage, "outline"
            if "Write the prose of this one section" in u:
                return stage, "section_retry" if retry else "section"
            if "Write the lead of this article" in u:
                return stage, "lead_retry" if retry else "lead"
            if "Write the infobox of this article" in u:
                return stage, "infobox"
        if stage == "section" and "Does this note belong in this section?" in u:
            return stage, "route_lead" if quoted_line(u, "Section: ") == "Lead Summary" else "route_section"
        if stage == "editor":
            if "Name one new section for it" in u:
                return stage, "new_section"
            if "Is the later note an EVOLUTION" in u:
                return stage, "classify_note"
            if "Is the later value an EVOLUTION" in u:
                return stage, "classify_value"
            if "Fold the note above (dated" in u:
                body = between(u, "Current text:\n<<<\n", ">>>\n")
                return stage, "patch_new" if body is not None and not body.strip() else "patch"
            if "Rewrite the lead with the note above" in u:
                return stage, "lead_patch_error" if "the lead stated a wrong value" in u else "lead_patch"
            if "Does the field still agree with the lead?" in u:
                return stage, "field_check"
            if "Answer that earlier value only, or NONE." in u:
                return stage, "earlier_value"
            if "Output only the section's new prose." in u and "Section text:\n<<<\n" in u:
                return stage, "rewrite_error" if "state only the current value" in u else "rewrite"
            if "Tighten this section of the article" in u:
                return stage, "tighten"
            if "Update the infobox of this article" in u:
                return stage, "refresh"
        if stage == "answer" and "Answer the person's question from these notes" in u and "\nQuestion: " in u:
            return stage, "answer"
        return stage, None

    def answer(self, kind, user):
        return getattr(self, "a_" + kind)(user)

    def subject(self, title):
        sid = self.t.subject_for_name(title)
        if sid is None:
            raise Unknown(f"the article title {title!r} names no subject of the truth")
        return sid

    # --- chunk --------------------------------------------------------------------------------
    def a_segment(self, user):
        transcript = user[user.find(POLICY_END):] if POLICY_END in user else user
        shown = re.findall(r"^\[(?:user|assistant)\] \(id: (.+), position (\d+)\)$", transcript, re.M)
        if not shown:
            raise Unknown("a chunk prompt without messages")
        ids = [i for i, _ in shown]
        conv = None
        m = re.search(r"^Conversation: .* \(id: (.+)\)$", transcript, re.M)
        if m and m.group(1) in self.t.convs:
            conv = self.t.convs[m.group(1)]
        if conv is None:
            owners = {self.t.msgs[i]["conv"] for i in ids if i in self.t.msgs}
            if len(owners) == 1:
                conv = self.t.convs[owners.pop()]
        if conv is None:
            raise Unknown("a chunk prompt whose conversation is not in the truth")
        shown_set = set(ids)
        order = [mm["id"] for mm in conv["messages"]]
        pos = {mid: i for i, mid in enumerate(order)}
        chunks = []
        for seg in conv.get("segments", []):
            if seg.get("subject") is None:
                continue  # small talk: the policy leaves it out
            a, b = pos.get(seg["start"]), pos.get(seg["end"])
            if a is None or b is None:
                continue
            inside = [order[i] for i in range(a, b + 1) if order[i] in shown_set]
            if not inside:
                continue
            chunks.append({"start_message_id": inside[0], "end_message_id": inside[-1], "label": seg["label"]})
        return json.dumps({"chunks": chunks}, ensure_ascii=False)

    # --- entity -------------------------------------------------------------------------------
    def a_entities(self, user):
        chunk = between(user, "--- Conversation chunk ---\n", "--- end chunk ---")
        found = []
        for sid in self.t.subjects:
            first, present = self.t.surfaces_in(sid, chunk)
            if not present:
                continue
            surf = self.t.subjects[sid].get("surface") or [self.t.subjects[sid]["name"]]
            name = surf[0] if surf[0] in present else max(present, key=len)
            found.append((first, name))
        found.sort()
        names, seen = [], set()
        for _, n in found:
            if name_normal(n) not in seen:
                seen.add(name_normal(n))
                names.append(n)
        return "\n".join(names) if names else "NONE"

    # --- resolve ------------------------------------------------------------------------------
    def a_tie_break(self, user):
        a = quoted_line(user, "Name A: ")
        m = re.search(r'^Name B: "(.*?)"(?: \(also written: (.*)\))?[ \t]*$', user, re.M)
        if a is None or not m:
            raise Unknown("a tie-break prompt without its two names")
        sa = self.t.subject_for_name(a)
        sb = self.t.subject_for_name(m.group(1))
        if sb is None and m.group(2):
            others = {self.t.subject_for_name(x.strip()) for x in m.group(2).split(";")}
            others.discard(None)
            sb = others.pop() if len(others) == 1 else None
        return "yes" if sa is not None and sa == sb else "no"

    # --- synthesis: create ----------------------------------------------------------------------
    def notes_digest(self, user):
        body = between(user, "Notes, oldest first:\n", "\n\n")
        if body is None:
            return []
        out = []
        for line in body.split("\n"):
            m = re.match(r"^\[(\d{4}-\d\d-\d\d)\] (.*)$", line)
            if m:
                out.append((m.group(1), m.group(2)))
        return out

    def a_outline(self, user):
        sid = self.subject(quoted_line(user, "Article: "))
        heads = []
        for _, text in self.notes_digest(user):
            for f in self.t.facts_in(text, sid):
                h = outline_heading(f.get("aspect") or "")
                if h and anchor(h) not in {anchor(x) for x in heads}:
                    heads.append(h)
        if len(heads) < 2:
            return "NONE"
        return "\n".join(heads[:6])

    def fact_sentences(self, sid, shown, marker_of):
        """Sentences for the facts shown [(date, order, fact)], oldest first: each fact's
        prose sentence (its "_prose": see PROSE) with its markers (marker_of(fact) → [n]); a fact another shown fact
        replaces told in the past; one statement made twice one sentence with both markers; the
        first sentence naming the person."""
        ids = {f["id"] for _, _, f in shown}
        names = self.t.subjects[sid]["_names"]
        sentences, index = [], {}
        for _, _, f in sorted(shown, key=lambda x: (x[0], x[1])):
            tp = f["_prose"]
            if not tp:
                continue
            if self.t.newer(f, ids):
                tp = past(tp, names)
            k = norm(tp)
            ms = marker_of(f)
            if k in index:
                have = sentences[index[k]][1]
                have.extend(m for m in ms if m not in have)
                continue
            index[k] = len(sentences)
            sentences.append([tp, list(ms)])
        return voiced([cite(s, ms) for s, ms in sentences])

    def shown_facts(self, sid, srcs):
        """[(date, order, fact)] and {fact id: [markers]} of the facts of sid in srcs."""
        shown, markers, order = [], {}, 0
        for marker, date, text in srcs:
            for f in self.t.facts_in(text, sid):
                if f["id"] not in markers:
                    shown.append((f.get("date") or date, order, f))
                    order += 1
                markers.setdefault(f["id"], [])
                if marker not in markers[f["id"]]:
                    markers[f["id"]].append(marker)
        return shown, markers

    def a_section(self, user):
        title = quoted_line(user, "Article: ")
        sid = self.subject(title)
        block = between(user, "Sources (each with its marker and date):\n", "\nWrite the prose of this one section")
        if block is None:
            raise Unknown("a section prompt without sources")
        srcs = sources(block)
        if not srcs:
            raise Unknown("a section prompt whose sources do not parse")
        shown, markers = self.shown_facts(sid, srcs)
        out = self.fact_sentences(sid, shown, lambda f: markers[f["id"]])
        if not out:
            # the sources name the subject but state nothing about it
            marker, date, _ = srcs[0]
            out = [f"The person brought up {title} in a conversation on {date}.[^{marker}]"]
        return self.link_others(user, " ".join(out))

    a_section_retry = a_section

    @staticmethod
    def link_others(user, text):
        """The prose with the first mention of each other article the prompt lists (its title as
        a whole word, outside bold and links) made a [[Stem|as written]] link, as the prompt asks."""
        line = line_value(user, "Other articles, to link as [[Stem]] where the prose names them:")
        if not line or line.strip() == "none":
            return text
        for stem in sorted((s.strip() for s in line.split(",") if s.strip()), key=len, reverse=True):
            title = stem.replace("_", " ")
            if len(title) < 3:
                continue
            pat = re.compile(r"(?<![\w\[|*])" + re.escape(title) + r"(?![\w\]|*])", re.I)
            for m in pat.finditer(text):
                before = text[: m.start()]
                if before.count("[[") > before.count("]]") or before.count("**") % 2:
                    continue  # inside a link or the bold title
                shown = m.group(0)
                link = f"[[{stem}]]" if shown == stem else f"[[{stem}|{shown}]]"
                text = text[: m.start()] + link + text[m.end():]
                break
        return text

    def a_lead(self, user):
        title = quoted_line(user, "Article: ")
        sid = self.subject(title)
        s = self.t.subjects[sid]
        block = between(user, "Sources (each with its marker and date):\n", "\nWrite the lead of this article")
        if block is None:
            raise Unknown("a lead prompt without sources")
        srcs = sources(block)
        if not srcs:
            raise Unknown("a lead prompt whose sources do not parse")
        first_marker = srcs[0][0]
        for marker, _, text in srcs:
            if self.t.surfaces_in(sid, text)[1]:
                first_marker = marker
                break
        desc = (s.get("description") or s.get("type") or "a subject of the person's conversations").strip().rstrip(".")
        # the description's gloss ("a tent (a tent that can be carried in a backpack) ...") only
        # where a source says it, and then cited to that source: the lead restates, never invents
        gloss = re.search(r" \(([^()]*)\)", desc)
        if gloss:
            said = [marker for marker, _, text in srcs if gloss.group(1).casefold() in text.casefold()]
            if said:
                first_marker = said[0]
            else:
                desc = desc[:gloss.start()] + desc[gloss.end():]
        lead = [f"**{title}** is {desc}.[^{first_marker}]"]
        shown, markers = self.shown_facts(sid, srcs)
        ids = {f["id"] for _, _, f in shown}
        current = [(d, o, f) for d, o, f in shown if not self.t.newer(f, ids)]
        keyed = {}
        for d, o, f in current:
            if f.get("key") and (f["key"] not in keyed or (d, o) >= keyed[f["key"]][:2]):
                keyed[f["key"]] = (d, o, f)
        pick = sorted(keyed.values(), key=lambda x: (x[0], x[1]), reverse=True)[:2]
        if not pick and current:
            pick = [max(current, key=lambda x: (x[0], x[1]))]
        said = self.fact_sentences(sid, pick, lambda f: markers[f["id"]][-1:])
        if not said:
            # the sources state nothing about it: when it last came up
            marker, date, _ = max(srcs, key=lambda x: (x[1], x[0]))
            said = [f"The person brought up {title} in a conversation on {date}.[^{marker}]"]
        return self.link_others(user, " ".join(lead + said))

    a_lead_retry = a_lead

    def a_infobox(self, user):
        sid = self.subject(quoted_line(user, "Article: "))
        s = self.t.subjects[sid]
        block = between(user, "Sources (each with its marker and date):\n", "\nWrite the infobox of this article")
        shown, _ = self.shown_facts(sid, sources(block or ""))
        lines = []
        if s.get("type"):
            lines.append(f"type: {clean_value(s['type'])}")
        if s.get("category"):
            lines.append(f"category: {clean_value(s['category'])}")
        fields = {}
        for d, o, f in shown:
            k, v = f.get("key"), f.get("value")
            if not k or not v or k in ("type", "kind", "aliases", "category", "categories"):
                continue
            if k not in fields:
                fields[k] = [len(fields), (d, o), v]
            elif (d, o) >= fields[k][1]:
                fields[k][1:] = [(d, o), v]
        for k, (_, _, v) in sorted(fields.items(), key=lambda kv: kv[1][0]):
            lines.append(f"{k}: {clean_value(v)}")
        return "\n".join(lines) if lines else f"type: {s.get('type') or 'subject'}"

    # --- section: fold's section-route ----------------------------------------------------------
    def note_facts(self, user, sid):
        _, text = note_of(user)
        if text is None:
            raise Unknown("a fold prompt without its note")
        return self.t.facts_in(text, sid)

    def heading_aspects(self, sid, heading):
        """The aspects of sid a heading names (its outline or new-section name)."""
        a = anchor(heading)
        return {anchor(f.get("aspect") or "") for f in self.t.subjects[sid]["facts"]
                if a in (anchor(f.get("aspect") or ""), anchor(outline_heading(f.get("aspect") or "") or ""),
                         anchor(new_heading(f.get("aspect") or "") or ""))}

    def section_aspects(self, sid, heading, said):
        """The aspects a section covers: those its heading names, else those of the facts its text
        states (an "Overview")."""
        named = self.heading_aspects(sid, heading)
        if named:
            return named
        text = norm(plain(said or ""))
        return {anchor(f.get("aspect") or "") for f in self.t.subjects[sid]["facts"] if self.t.said_in(f, text)}

    def replaces_said(self, sid, facts, said):
        """The facts of the note that replace a fact the text (plain, normalized) states."""
        out = []
        for f in facts:
            old = self.t.facts.get(f.get("supersedes") or "")
            while old is not None:
                if self.t.said_in(old, said):
                    out.append(f)
                    break
                old = self.t.facts.get(old.get("supersedes") or "")
        return out

    def a_route_section(self, user):
        """yes when the note is about what the section's heading names, or gives a newer value
        than the section states (the route task's own two cases)."""
        sid = self.subject(quoted_line(user, "Article: "))
        heading = quoted_line(user, "Section: ")
        said = line_value(user, "What it says: ")
        facts = self.note_facts(user, sid)
        mine = {anchor(f.get("aspect") or "") for f in facts}
        if mine & self.section_aspects(sid, heading, said):
            return "yes"
        return "yes" if self.replaces_said(sid, facts, norm(plain(said or ""))) else "no"

    def a_route_lead(self, user):
        sid = self.subject(quoted_line(user, "Article: "))
        return "yes" if any(f.get("supersedes") for f in self.note_facts(user, sid)) else "no"

    # --- editor: fold -------------------------------------------------------------------------
    def a_new_section(self, user):
        sid = self.subject(quoted_line(user, "Article: "))
        existing = set()
        for line in (between(user, "Existing sections:", "\n\n") or "").split("\n"):
            if line.startswith("- "):
                existing.add(anchor(line[2:]))
        for f in self.note_facts(user, sid):
            name = new_heading(f.get("aspect") or "")
            if name and anchor(name) not in existing:
                return name
        return "NONE"

    def a_patch(self, user, lead=False, error=False):
        sid = self.subject(quoted_line(user, "Article: "))
        names = self.t.subjects[sid]["_names"]
        heading = None if lead else quoted_line(user, "Section: ")
        body = between(user, "Current text:\n<<<\n", ">>>\n")
        m = re.search(r"citing it as \[\^(\d+)\]", user)
        if body is None or not m:
            raise Unknown("a patch prompt without its text or marker")
        marker = int(m.group(1))
        facts = self.note_facts(user, sid)
        newer = self.replaces_said(sid, facts, norm(plain(body)))
        if lead:
            facts = newer or [f for f in facts if f.get("supersedes")] or facts
        else:
            named = self.heading_aspects(sid, heading) if anchor(heading) != anchor("Overview") else set()
            same = [f for f in facts if anchor(f.get("aspect") or "") in named or f in newer]
            facts = same or facts
        text = body.strip()
        paras = [split_sentences(p) for p in text.split("\n\n")] if text else []
        pnorm = lambda: [[norm(plain(x)) for x in p] for p in paras]
        said = pnorm()
        additions = []
        fresh = set()  # the sentences this answer writes
        for f in facts:
            tp = f["_prose"]
            if not tp or any(self.t.said_in(f, x) for p in said for x in p):
                continue  # already said
            old = self.t.facts.get(f.get("supersedes") or "")
            done = False
            if old is not None:
                for pi, p in enumerate(paras):
                    for si, x in enumerate(p):
                        if not self.t.said_in(old, said[pi][si]):
                            continue
                        if lead:
                            _, ms = sentence_markers(x)
                            ms = [] if error else [k for k in ms if k != marker]
                            new = person_form(tp) if x.startswith("The person") else tp
                            p[si] = cite(new, ms + [marker])
                            fresh.add(p[si])
                        else:
                            p[si] = past(x, names)
                            p.insert(si + 1, cite(tp, [marker]))
                            fresh.add(p[si + 1])
                        said = pnorm()
                        done = True
                        break
                    if done:
                        break
            if done:
                continue
            newer = [self.t.facts[x] for x in self.t.superseded_by.get(f["id"], []) if x in self.t.facts]
            if any(self.t.said_in(n, x) for n in newer for p in said for x in p):
                additions.append(cite(past(tp, names), [marker]))  # an older note: told as the past
            else:
                additions.append(cite(tp, [marker]))
        fresh.update(additions)
        if additions:
            if paras:
                paras[-1].extend(additions)
            else:
                paras.append(additions)
        # a paragraph's first "They" sentence names the person; only a sentence this answer
        # writes is ever changed for it
        for p in paras:
            for i, x in enumerate(p):
                if re.match(r"^(They|Their|The person)\b", x):
                    if x in fresh and not x.startswith("The person"):
                        p[i] = person_form(x)
                    break
        out = "\n\n".join(" ".join(p) for p in paras if p)
        if f"[^{marker}]" not in out:
            raise Unknown("a patch prompt whose note states nothing to add")
        return out

    def a_patch_new(self, user):
        return self.a_patch(user)

    def a_lead_patch(self, user):
        return self.a_patch(user, lead=True)

    def a_lead_patch_error(self, user):
        return self.a_patch(user, lead=True, error=True)

    # --- ask ----------------------------------------------------------------------------------
    def a_answer(self, user):
        """`dream ask`'s answer: the sentences of the notes that state what the question asks
        (record_ask.sh wrote the question from a fact: its subject and key, --questions), with
        their markers, the newest fact of that key first; "What do I know about X?" (no key):
        the lead's first two sentences with a marker; NOTHING ON FILE when the question is about
        no subject of the truth or the notes state nothing of it."""
        q = user.rsplit("\nQuestion: ", 1)[1].strip()
        notes = between(user, "Notes:\n\n", "\nFootnotes:\n")
        meta = self.questions.get(q)
        if meta is None:
            raise Unknown(f"a question record_ask.sh did not write: {q!r}")
        sid = meta.get("subject")
        if not sid or notes is None:
            return "NOTHING ON FILE"
        blocks = re.split(r"^## ", notes, flags=re.M)
        said = []  # (block index, sentence) with markers, in the notes' order
        for bi, blk in enumerate(blocks):
            head, _, body = blk.partition("\n")
            if head.endswith(": facts"):
                continue  # an infobox: no markers to cite
            for para in body.split("\n"):
                for x in split_sentences(para.strip()):
                    if MARKER_RE.search(x):
                        said.append((bi, x))
        facts = self.t.subjects[sid]["facts"]
        key = meta.get("key")
        if key:
            pool = [f for f in facts if f.get("key") == key]
            shown = [(f, x) for f in pool for _, x in said if self.t.said_in(f, norm(plain(x)))]
            if not shown:
                return "NOTHING ON FILE"
            ids = {f["id"] for f, _ in shown}
            current = [(f, x) for f, x in shown if not self.t.newer(f, ids) and not re.match(r"^(Earlier|.*\bused to\b)", x)]
            return max(current or shown, key=lambda fx: fx[0].get("date") or "")[1]
        if not said:
            return "NOTHING ON FILE"
        lead = [x for bi, x in said if bi == said[0][0]]  # the first read: the article's lead
        return " ".join(x.replace("**", "") for x in lead[:2])

    def a_classify_note(self, user):
        # the prompt names no article: the subject is the one the lead's bold names
        lead = between(user, "Earlier text:\n", "\n\n")
        m = re.search(r"\*\*(.+?)\*\*", lead or "")
        sid = self.t.subject_for_name(m.group(1)) if m else None
        facts = self.note_facts(user, sid) if sid else []
        if any(self.t.is_error(f) for f in facts if f.get("supersedes")):
            return "ERROR"
        return "EVOLUTION"

    # --- editor: reconcile ----------------------------------------------------------------------
    def a_field_check(self, user):
        sid = self.subject(quoted_line(user, "Article: "))
        lead = between(user, "Its lead (the current position):\n", "\nInfobox field: ")
        fl = line_value(user, "Infobox field: ")
        if lead is None or fl is None or ": " not in fl:
            raise Unknown("a field check prompt without its lead or field")
        key, value = fl.split(": ", 1)
        lead_plain = plain(lead)
        best = None
        for f in self.t.subjects[sid]["facts"]:
            if f.get("key") != key or not f.get("value"):
                continue
            if states(lead_plain, f["value"]) and (best is None or (f.get("date") or "") > (best.get("date") or "")):
                best = f
        if best is None or best["value"].casefold() == value.strip().casefold():
            return "KEEP"
        return clean_value(best["value"])

    def a_earlier_value(self, user):
        sid = self.subject(quoted_line(user, "Article: "))
        text = between(user, "Its text:\n<<<\n", ">>>\n")
        fl = line_value(user, "Infobox field (current): ")
        if text is None or fl is None or ": " not in fl:
            raise Unknown("an earlier-value prompt without its text or field")
        key, value = fl.split(": ", 1)
        value = value.strip()
        tp = plain(text).casefold()
        facts = [f for f in self.t.subjects[sid]["facts"] if f.get("key") == key and f.get("value")]
        cur_date = max((f.get("date") or "" for f in facts if f["value"].casefold() == value.casefold()), default="9999")
        older = [f for f in facts if f["value"].casefold() != value.casefold() and (f.get("date") or "") < cur_date
                 and f["value"].casefold() in tp]
        if not older:
            return "NONE"
        return clean_value(max(older, key=lambda f: f.get("date") or "")["value"])

    def a_classify_value(self, user):
        l_ = line_value(user, "Later: ")
        if line_value(user, "Earlier: ") is None or l_ is None:
            raise Unknown("a value classifier prompt without its two values")
        key, new = (l_.split(": ", 1) + [""])[:2]
        for f in self.t.facts.values():
            if f.get("key") == key and (f.get("value") or "").casefold() == new.casefold() and f.get("supersedes") and self.t.is_error(f):
                return "ERROR"
        return "EVOLUTION"

    def a_rewrite(self, user, error=False):
        sid = self.subject(quoted_line(user, "Article: "))
        names = self.t.subjects[sid]["_names"]
        body = between(user, "Section text:\n<<<\n", ">>>\n")
        m = re.search(r"The person's (.+?) is now (.+), no longer (.+?)\. Rewrite", user)
        if body is None or not m:
            raise Unknown("a rewrite prompt without its text or values")
        new, old = m.group(2), m.group(3)
        out = []
        for p in body.strip().split("\n\n"):
            ss = split_sentences(p)
            for i, x in enumerate(ss):
                if not states(plain(x), old):
                    continue  # not the old value, or told as the past already
                if error:
                    ss[i] = re.sub(re.escape(old), new, x, flags=re.I)
                    continue
                y = past(x, names)
                if asserts_current(y, old):
                    b, ms = sentence_markers(x)
                    y = "Earlier, " + b[:1].lower() + b[1:] + "".join(f"[^{k}]" for k in ms)
                ss[i] = y
            out.append(" ".join(ss))
        return "\n\n".join(out)

    def a_rewrite_error(self, user):
        return self.a_rewrite(user, error=True)

    # --- editor: wikify -----------------------------------------------------------------------
    def a_tighten(self, user):
        body = between(user, "Current text:\n<<<\n", ">>>\n")
        if body is None:
            raise Unknown("a tighten prompt without its text")
        out = []
        for p in body.strip().split("\n\n"):
            ss = split_sentences(p)
            keep, index = [], {}
            for x in ss:
                b, ms = sentence_markers(x)
                k = norm(plain(b))
                if ms and k in index:
                    j = index[k]
                    b0, m0 = sentence_markers(keep[j])
                    keep[j] = b0 + "".join(f"[^{n}]" for n in m0 + [n for n in ms if n not in m0])
                    continue
                index[k] = len(keep)
                keep.append(x)
            out.append(" ".join(keep))
        return "\n\n".join(out)

    def a_refresh(self, user):
        stem = quoted_line(user, "Article: ")
        sid = self.subject(stem)
        s = self.t.subjects[sid]
        cur = between(user, "Current infobox (keep every field as it is):\n", "Current categories")
        fields = []
        for line in (cur or "").split("\n"):
            if ": " in line:
                k, v = line.split(": ", 1)
                if k != "kind":
                    fields.append((k, v))
        cats_line = line_value(user, "Current categories")
        cats = [c.strip() for c in (cats_line or "").lstrip(":").split(",") if c.strip() and c.strip() != "none"]
        text = between(user, "The article's start:\n<<<\n", ">>>\n") or ""
        have = {k for k, _ in fields}
        lines = [f"{k}: {v}" for k, v in fields if k != "aliases"]
        if "type" not in have and s.get("type"):
            lines.append(f"type: {s['type']}")
        body_plain = plain(text)
        added = {}
        for f in self.t.subjects[sid]["facts"]:
            k, v = f.get("key"), f.get("value")
            if not k or not v or k in have or k in ("type", "kind", "aliases", "category", "categories"):
                continue
            if self.t.said_in(f, norm(body_plain)) and states(body_plain, v):
                if k not in added or (f.get("date") or "") >= added[k][0]:
                    added[k] = (f.get("date") or "", v)
        for k, (_, v) in added.items():
            lines.append(f"{k}: {clean_value(v)}")
        aliases = [v for k, v in fields if k == "aliases"]
        alias_list = [a.strip() for a in aliases[0].split(",")] if aliases else []
        title = stem.replace("_", " ")
        longer = sorted({s["name"]} | set(s.get("surface") or []), key=len, reverse=True)
        for x, rx in self.t.surface_res[sid]:
            rest = body_plain
            for y in longer:
                if len(y) > len(x) and x.casefold() in y.casefold():
                    rest = re.sub(re.escape(y), " ", rest, flags=re.I)
            if name_normal(x) == name_normal(title) or not rx.search(rest):
                continue
            if re.search(r"[\[\]{}|`#*:;<>\\]", x) or x.casefold().startswith(("the ", "a ", "an ", "my ")):
                continue
            if x.casefold() not in {a.casefold() for a in alias_list}:
                alias_list.append(x)
        if alias_list:
            lines.append("aliases: " + ", ".join(alias_list))
        if s.get("category") and s["category"].casefold() not in {c.casefold() for c in cats}:
            lines.append(f"category: {s['category']}")
        elif cats:
            lines.append("category: " + cats[0])
        if not lines:
            lines.append(f"type: {s.get('type') or 'subject'}")
        return "\n".join(lines)


PROSE_KINDS = {"section", "section_retry", "lead", "lead_retry", "patch", "patch_new", "lead_patch", "lead_patch_error",
               "rewrite", "rewrite_error", "tighten", "refresh"}
LEAK_TELLS = ("the user is asking", "the user asks", "the user wants", "source material", "i will draft", "i'll draft",
              "here is the section", "here is the lead", "here's the", "here is the article", "as an ai", "i cannot",
              "i can't", "i'm sorry", "i am sorry", "i apologize", "the task is", "output only")


def leaky(text):
    """synth_leaky (synth.c): the draft narrates the task instead of being prose."""
    low = text.casefold()
    return any(t in low for t in LEAK_TELLS)


def clean_value(v):
    """An infobox value the parsers keep: one line, no backticks or markup."""
    v = " ".join(str(v).split()).replace("`", "'")
    v = v.replace("[^", "(").replace("{{", "(").replace("}}", ")")
    return v[:150]


# A new section's name must have 2 to 5 words (synth_fold.c); the generator's aspects are mostly
# one word, so each gets one fixed two-word form (an unknown one: "<Aspect> Details"). The outline
# has no such floor: its headings are the aspects themselves. "History" is a tail name the
# parsers refuse, so it is never a heading as it is.
NEW_HEADINGS = {
    "acquisition": "Purchase Details", "costs": "Costs and Prices", "maintenance": "Care and Maintenance",
    "storage": "Storage Place", "usage": "Everyday Use", "repairs": "Repairs Done", "opinion": "Personal Opinion",
    "status": "Current Status", "appearance": "Look and Finish", "background": "Early Background",
    "diet": "Diet and Feeding", "health": "Health and Weight", "exercise": "Exercise and Walks",
    "training": "Training Progress", "technology": "Technology Choices", "goals": "Goals and Plans",
    "design": "Code Design", "testing": "Testing Progress", "deployment": "Deployment and Hosting",
    "materials": "Materials Used", "budget": "Budget Plans", "schedule": "Schedule and Deadlines",
    "tools": "Tools Used", "finish": "Surface Finish", "progress": "Building Progress",
    "workspace": "Workspace Location", "visits": "Regular Visits", "travel": "Getting There",
    "accommodation": "Places to Stay", "food": "Food and Drink", "connections": "Family Connections",
    "plans": "Future Plans", "season": "Best Season", "work": "Work and Career", "location": "Home Location",
    "meetings": "Regular Meetings", "interests": "Interests and Hobbies", "personal": "Personal Details",
    "gifts": "Gifts Given", "history": "Shared History", "venue": "Practice Venue",
    "equipment": "Equipment Used", "technique": "Technique Focus", "instruction": "Classes and Lessons",
}


def _aspect_title(aspect):
    a = " ".join(aspect.split())
    return title_case(a) if a.islower() else a


def outline_heading(aspect):
    """The outline's heading of an aspect (the aspect itself; a tail name gets its two-word form)."""
    a = _aspect_title(aspect)
    if not a or not re.match(r"^[\w' -]+$", a):
        return None
    if anchor(a) in RESERVED_ANCHORS:
        return NEW_HEADINGS.get(anchor(a))
    return a


def new_heading(aspect):
    """A new section's name for an aspect: 2 to 5 words of letters and digits."""
    a = _aspect_title(aspect)
    if not a or not re.match(r"^[\w' -]+$", a):
        return None
    n = len(a.split())
    if 2 <= n <= 5 and anchor(a) not in RESERVED_ANCHORS:
        return a
    if n == 1:
        return NEW_HEADINGS.get(anchor(a), f"{a} Details")
    return None


# ==============================================================================================
# The server
# ==============================================================================================


class Recorder:
    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()
        self.f = open(path, "a", encoding="utf-8")
        self.counts = {}
        self.unknown = 0
        self.errors = 0
        self.warnings = {}

    def write(self, rec):
        line = json.dumps(rec, ensure_ascii=False)
        with self.lock:
            self.f.write(line + "\n")
            self.f.flush()
            self.counts[rec["kind"]] = self.counts.get(rec["kind"], 0) + 1
            self.dump()

    def miss(self, unknown):
        with self.lock:
            if unknown:
                self.unknown += 1
            else:
                self.errors += 1
            self.dump()

    def warn(self, what):
        with self.lock:
            self.warnings[what] = self.warnings.get(what, 0) + 1

    def dump(self):
        stats = {"records": sum(self.counts.values()), "by_kind": dict(sorted(self.counts.items())),
                 "unknown": self.unknown, "unanswerable": self.errors, "warnings": self.warnings}
        with open(self.path + ".stats.json", "w", encoding="utf-8") as f:
            json.dump(stats, f, indent=1)


def make_handler(oracle, rec, verbose):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):
            if verbose:
                sys.stderr.write("oracle: " + fmt % args + "\n")

        def reply(self, code, obj):
            data = json.dumps(obj, ensure_ascii=False).encode("utf-8")
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path.rstrip("/") in ("/v1/models", "/models"):
                self.reply(200, {"object": "list", "data": [{"id": "dream", "object": "model", "owned_by": "oracle"}]})
            elif self.path.rstrip("/") in ("/health", ""):
                self.reply(200, {"status": "ok"})
            else:
                self.reply(404, {"error": {"message": "not found"}})

        def do_POST(self):
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self.reply(404, {"error": {"message": "not found"}})
                return
            try:
                n = int(self.headers.get("Content-Length") or 0)
                req = json.loads(self.rfile.read(n).decode("utf-8"))
            except Exception as e:  # noqa: BLE001
                self.reply(400, {"error": {"message": f"bad request: {e}"}})
                return
            msgs = req.get("messages") or []
            system = next((m.get("content") for m in msgs if m.get("role") == "system"), None)
            user = next((m.get("content") for m in reversed(msgs) if m.get("role") == "user"), "") or ""
            max_tokens = int(req.get("max_tokens") or 0)
            stage, kind = oracle.classify(system, user)
            answer = None
            if kind is None:
                rec.miss(True)
                why = (" (the request has no user turn: remote.c drops a message jansson refuses, e.g. a prompt cut "
                       "inside a UTF-8 character)") if not user else ""
                sys.stderr.write(f"oracle: UNKNOWN PROMPT KIND (stage {stage}){why}: system={str(system)[:80]!r} "
                                 f"user={user[:300]!r} ... {user[-300:]!r}\n")
                with open(rec.path + ".unknown.jsonl", "a", encoding="utf-8") as f:
                    f.write(json.dumps({"stage": stage, "system": system, "user": user}, ensure_ascii=False) + "\n")
            else:
                try:
                    answer = oracle.answer(kind, user)
                except Unknown as e:
                    rec.miss(False)
                    sys.stderr.write(f"oracle: UNANSWERABLE {kind} ({stage}): {e}\n")
                    with open(rec.path + ".unanswerable.jsonl", "a", encoding="utf-8") as f:
                        f.write(json.dumps({"stage": stage, "kind": kind, "why": str(e), "system": system, "user": user},
                                           ensure_ascii=False) + "\n")
                except Exception as e:  # noqa: BLE001
                    rec.miss(False)
                    import traceback
                    sys.stderr.write(f"oracle: ERROR answering {kind} ({stage}): {e}\n{traceback.format_exc()}")
                    with open(rec.path + ".unanswerable.jsonl", "a", encoding="utf-8") as f:
                        f.write(json.dumps({"stage": stage, "kind": kind, "why": repr(e), "system": system, "user": user},
                                           ensure_ascii=False) + "\n")
            if answer is not None and kind in PROSE_KINDS and leaky(answer):
                sys.stderr.write(f"oracle: WARNING: the gold {kind} answer reads as leaky to the pipeline: {answer[:200]!r}\n")
                rec.warn(f"{kind}: leaky")
            if answer is None:
                text = "" if stage == "entity" else REFUSAL
            else:
                text = answer
                if max_tokens and len(text.encode("utf-8")) / 3.0 > max_tokens:
                    rec.warn(f"{kind}: maybe over max_tokens")
                    sys.stderr.write(f"oracle: {kind}: the gold answer ({len(text)} chars) may not fit max_tokens={max_tokens}\n")
                rec.write({"stage": stage, "kind": kind, "system": system, "user": user, "answer": text})
            self.reply(200, {
                "id": "oracle", "object": "chat.completion", "model": req.get("model") or "dream",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
            })

    return Handler


class Server(ThreadingHTTPServer):
    # socketserver's default listen backlog is 5: the seam's 8 parallel requests of a batch then
    # overflow it, and the kernel retries the dropped connections a second later (a 1 s stall
    # per batch of the remote backend and of replay).
    request_queue_size = 128
    daemon_threads = True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--truth", required=True)
    ap.add_argument("--records", required=True)
    ap.add_argument("--port", type=int, required=True, help="0: any free port (see --port-file)")
    ap.add_argument("--port-file", help="write the port listened on here once serving")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--prose", choices=("restate", "catalogue"), default=os.environ.get("ORACLE_PROSE", "restate"),
                    help="a fact's prose: the person's sentence restated (default) or the catalogue's "
                         "third-person paraphrase (runs 1-6); env ORACLE_PROSE")
    ap.add_argument("--questions", help="record_ask.sh's questions (JSON: question, subject, key), for the answer stage")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    global PROSE
    PROSE = args.prose
    truth = Truth(args.truth)
    questions = {}
    if args.questions:
        with open(args.questions, encoding="utf-8") as f:
            questions = {q["question"]: q for q in json.load(f)}
    oracle = Oracle(truth, questions)
    rec = Recorder(args.records)
    rec.dump()
    server = Server((args.host, args.port), make_handler(oracle, rec, args.verbose))

    def stop(*_):
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    port = server.server_address[1]
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as f:
            f.write(f"{port}\n")
        os.replace(args.port_file + ".tmp", args.port_file)
    sys.stderr.write(f"oracle: serving {len(truth.subjects)} subjects, {len(truth.facts)} facts, "
                     f"{len(truth.convs)} conversations on http://{args.host}:{port}\n")
    server.serve_forever()
    server.server_close()
    rec.dump()
    sys.stderr.write(f"oracle: {sum(rec.counts.values())} records, {rec.unknown} unknown, {rec.errors} unanswerable; "
                     + ", ".join(f"{k} {v}" for k, v in sorted(rec.counts.items())) + "\n")


if __name__ == "__main__":
    main()
