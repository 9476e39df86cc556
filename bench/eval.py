#!/usr/bin/env python3
"""eval.py — the Dreaming's quality measured against a corpus's known truth.

Reads a dreamed home (the store at HOME/memory.sqlite and the wiki at HOME/wiki) and the
corpus's truth.json (train/gen_corpus.py writes it), and prints one line per measure:

    DREAM-EVAL corpus=C measure=M value=V

Measures (README of train/ and docs/BENCHMARKS.md say how each is read):
  segment_valid       % of segment answers that parsed and were in range: conversations
                      segmented / (segmented + failed attempts)
  boundary_f1         topic boundaries (a chunk starting after position 0) against the truth's
                      segment starts, micro-averaged over conversations
  extract_precision   names extracted per chunk that name a subject the chunk's messages are about
  extract_recall      (chunk, subject) pairs of the truth that got a name
  route_precision     articles whose title names a recurring subject
  route_recall        recurring subjects (>= 2 conversations) with an article
  recurring_with_article   the same, as a percentage
  footnote_support    % of (sentence, footnote) pairs whose cited message shares the sentence's
                      words (token-overlap rule below)
  later_wins          % of changed positions (a fact that supersedes another) whose article's
                      infobox field, or else its lead, states the later value
  leaks               prompt text found in articles (count)
  check_problems      `dream check` problems (count)
  articles            articles written

With --min MEASURE=V (repeatable) it exits 1 when a measure is below V (--max for counts), so a
short version runs in `make test` with fixed thresholds: greedy decoding on the CPU is exact.
"""
import argparse
import json
import math
import os
import re
import sqlite3
import subprocess
import sys
import unicodedata

STOP = set("""the and for that with this from have has had are was were will would could should
their they them then than there these those into onto about after before over under your you
our its it's what when where which who whom why how also just very much more most some any
all one two per not but can may might each other such only own same both few many person""".split())

# Prompt text that must never reach an article (the prompts' own markers and scaffolding).
LEAK_MARKERS = ["--- Note (", "--- end", "Sources (each", "<<<", ">>>", "[user]", "[assistant]",
                "Current text:", "citing it as", "(id: ", "end of policy", "<|", "|>",
                "Write the prose", "Write the lead", "Notes, oldest first", "Conversation chunk"]


def norm(s):
    s = unicodedata.normalize("NFC", s).casefold()
    s = s.replace("_", " ")
    return " ".join(re.sub(r"[^\w\s'-]", " ", s).split())


def words(s):
    return {w for w in re.findall(r"[a-z0-9]+", s.casefold()) if len(w) >= 3 and w not in STOP}


def supported(sentence, message):
    """The token-overlap rule: at least 40% of the sentence's content words (3+ letters, not
    stopwords), and at least one, appear in the cited message."""
    s = words(sentence)
    if not s:
        return True
    shared = len(s & words(message))
    return shared >= max(1, math.ceil(0.4 * len(s)))


class Eval:
    def __init__(self, truth, home, dream):
        self.truth = truth
        self.home = home
        self.dream = dream
        self.db = sqlite3.connect(os.path.join(home, "memory.sqlite"))
        self.wiki = os.path.join(home, "wiki")
        self.subjects = {s["id"]: s for s in truth["subjects"]}
        self.msg_truth = {}  # (conversation source id, message id) -> truth message
        for c in truth["conversations"]:
            for m in c["messages"]:
                self.msg_truth[(c["id"], m["id"])] = m
        # every form that names a subject, normalized -> subject id
        self.name_of = {}
        for s in truth["subjects"]:
            for form in [s["name"]] + list(s.get("surface", [])):
                self.name_of.setdefault(norm(form), s["id"])
        # conversations per subject (recurrence as the truth has it)
        self.conv_count = {s["id"]: len(s["conversations"]) for s in truth["subjects"] if "conversations" in s}
        for c in truth["conversations"] if not self.conv_count else []:
            subs = {x for m in c["messages"] for x in m.get("subjects", [])}
            for x in subs:
                self.conv_count[x] = self.conv_count.get(x, 0) + 1

    def subject_named(self, name):
        n = norm(name)
        if n in self.name_of:
            return self.name_of[n]
        for pre in ("my ", "the ", "our "):
            if n.startswith(pre) and n[len(pre):] in self.name_of:
                return self.name_of[n[len(pre):]]
        return None

    # ---- segment ----------------------------------------------------------------------------
    def segment(self):
        done = self.db.execute("SELECT count(*) FROM stage_state WHERE stage='segment' AND status='done'").fetchone()[0]
        failed = self.db.execute("SELECT coalesce(sum(attempts),0) FROM stage_state WHERE stage='segment'").fetchone()[0]
        valid = 100.0 * done / (done + failed) if done + failed else 0.0
        tp = fp = fn = 0
        for cid, src in self.db.execute("SELECT id, source_id FROM conversations"):
            tc = next((c for c in self.truth["conversations"] if c["id"] == src), None)
            if tc is None:
                continue
            pos = {m["id"]: i for i, m in enumerate(tc["messages"])}
            truth_b = {pos[s["start"]] for s in tc["segments"] if pos.get(s["start"], 0) > 0}
            pred_b = {r[0] for r in self.db.execute("SELECT first_position FROM chunks WHERE conversation=? AND first_position>0", (cid,))}
            if not self.db.execute("SELECT 1 FROM stage_state WHERE stage='segment' AND item=? AND status='done'", (cid,)).fetchone():
                fn += len(truth_b)  # not segmented: every boundary missed
                continue
            tp += len(truth_b & pred_b)
            fp += len(pred_b - truth_b)
            fn += len(truth_b - pred_b)
        f1 = 2 * tp / (2 * tp + fp + fn) if (tp + fp + fn) else 1.0
        return valid, f1

    # ---- extract ----------------------------------------------------------------------------
    def extract(self):
        pred_ok = pred_all = 0
        pairs = pairs_hit = 0
        rows = self.db.execute("SELECT ch.id, c.source_id, ch.first_position, ch.last_position FROM chunks ch JOIN conversations c ON c.id = ch.conversation")
        for chunk, src, first, last in rows.fetchall():
            tc = next((c for c in self.truth["conversations"] if c["id"] == src), None)
            if tc is None:
                continue
            about = set()
            for m in tc["messages"][first:last + 1]:
                about.update(m.get("subjects", []))
            named = set()
            for (surface,) in self.db.execute("SELECT surface FROM chunk_mentions WHERE chunk=?", (chunk,)):
                pred_all += 1
                s = self.subject_named(surface)
                if s is not None and s in about:
                    pred_ok += 1
                    named.add(s)
            pairs += len(about)
            pairs_hit += len(about & named)
        p = pred_ok / pred_all if pred_all else 0.0
        r = pairs_hit / pairs if pairs else 0.0
        return p, r

    # ---- articles ---------------------------------------------------------------------------
    def articles(self):
        out = {}
        adir = os.path.join(self.wiki, "articles")
        for f in sorted(os.listdir(adir)) if os.path.isdir(adir) else []:
            if f.endswith(".md"):
                with open(os.path.join(adir, f), encoding="utf-8") as fh:
                    out[f] = fh.read()
        return out

    @staticmethod
    def title(text):
        m = re.search(r"^# (.+)$", text, re.M)
        return m.group(1).strip() if m else ""

    @staticmethod
    def front_matter(text):
        """The front matter's lists (aliases, tags) as dream writes them: `key:` then `  - item`."""
        m = re.match(r"---\n(.*?)^---\n", text, re.M | re.S)
        lists, key = {}, None
        for line in (m.group(1).splitlines() if m else []):
            if re.match(r"^\S.*:\s*$", line):
                key = line.split(":", 1)[0].strip()
                lists[key] = []
            elif key and re.match(r"^\s*- ", line):
                lists[key].append(line.split("- ", 1)[1].strip().strip('"'))
            else:
                key = None
        return lists

    @staticmethod
    def body(text):
        """The text after the front matter."""
        return re.sub(r"\A---\n.*?^---\n", "", text, flags=re.M | re.S)

    @staticmethod
    def infobox(text):
        m = re.search(r"^```info\n(.*?)^```", text, re.M | re.S)
        fields = {}
        for line in (m.group(1).splitlines() if m else []):
            if ":" in line:
                k, v = line.split(":", 1)
                fields[k.strip()] = v.strip()
        return fields

    def aliases(self, text):
        """The front matter's aliases, then an older article's infobox aliases line."""
        return self.front_matter(text).get("aliases", []) + self.infobox(text).get("aliases", "").split(",")

    @staticmethod
    def lead(text):
        body = re.sub(r"^```info\n.*?^```\n", "", Eval.body(text), flags=re.M | re.S)
        m = re.search(r"^\*\*.*?(?=^## |\Z)", body, re.M | re.S)
        return m.group(0) if m else ""

    def article_subject(self, text):
        s = self.subject_named(self.title(text))
        if s is None:
            for a in self.aliases(text):
                s = s or (self.subject_named(a) if a.strip() else None)
        return s

    def route(self, arts):
        recurring = {s for s, n in self.conv_count.items() if n >= 2}
        got = set()
        hits = 0
        for text in arts.values():
            s = self.article_subject(text)
            if s in recurring:
                hits += 1
                got.add(s)
        p = hits / len(arts) if arts else 0.0
        r = len(got) / len(recurring) if recurring else 1.0
        return p, r

    def footnotes(self, arts):
        cites = {}
        for cite, src in self.db.execute("SELECT cite, source_id FROM conversations"):
            cites[cite] = src
        pairs = ok = 0
        for text in arts.values():
            defs = {}
            # the key plain, `conv:HASH#MSG`, or as a link's text, [[Sources/NOTE#^BLOCK|conv:HASH#MSG]]
            for n, cite, msg in re.findall(r"^\[\^(\d+)\]: (?:`|\[\[[^|\]\n]*\|)conv:([0-9a-f]+)#([^`\]\s]+)(?:`|\]\])", text, re.M):
                defs[n] = (cites.get(cite), msg)
            body = self.body(text).split("\n## References", 1)[0]
            body = re.sub(r"^```info\n.*?^```", "", body, flags=re.M | re.S)
            prose = [ln for ln in body.splitlines() if ln.strip() and not ln.startswith(("#", "categories:", "[^"))]
            for sentence in (x for ln in prose for x in re.split(r"(?<=[.!?\]])\s+(?=[A-Z*\"])", ln)):
                marks = re.findall(r"\[\^(\d+)\]", sentence)
                if not marks:
                    continue
                plain = re.sub(r"\[\^\d+\]|\*\*|\[\[|\]\]", "", sentence)
                for n in marks:
                    pairs += 1
                    conv, msg = defs.get(n, (None, None))
                    m = self.msg_truth.get((conv, msg))
                    if m is None:
                        row = self.db.execute("SELECT m.text FROM messages m JOIN conversations c ON c.id=m.conversation WHERE c.source_id=? AND m.source_id=?", (conv, msg)).fetchone()
                        mtext = row[0] if row else ""
                    else:
                        mtext = m["text"]
                    ok += supported(plain, mtext)
        return 100.0 * ok / pairs if pairs else 0.0

    def later_wins(self, arts):
        by_subject = {}
        for text in arts.values():
            s = self.article_subject(text)
            if s is not None:
                by_subject[s] = text
        facts = {f["id"]: f for s in self.truth["subjects"] for f in s.get("facts", [])}
        total = wins = 0
        for f in facts.values():
            if not f.get("supersedes") or f["subject"] not in by_subject:
                continue
            text = by_subject[f["subject"]]
            total += 1
            later = norm(f["value"] or "")
            box = self.infobox(text)
            if f.get("key") in box:
                wins += bool(later) and later in norm(box[f["key"]])
            else:
                wins += bool(later) and later in norm(self.lead(text))
        return (100.0 * wins / total if total else 100.0), total

    def leaks(self, arts):
        return sum(text.count(mk) for text in arts.values() for mk in LEAK_MARKERS)

    def check(self):
        env = dict(os.environ, DREAM_HOME=self.home)
        p = subprocess.run([self.dream, "check"], env=env, capture_output=True, text=True)
        if p.returncode == 0:
            return 0
        return sum(1 for line in p.stdout.splitlines() + p.stderr.splitlines() if re.match(r"^\S+:\d+: ", line)) or 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--truth", required=True)
    ap.add_argument("--home", required=True, help="the DREAM_HOME that was dreamed")
    ap.add_argument("--corpus", required=True, help="the corpus name printed on each line")
    ap.add_argument("--dream", default="build/bin/dream")
    ap.add_argument("--min", action="append", default=[], metavar="MEASURE=V")
    ap.add_argument("--max", action="append", default=[], metavar="MEASURE=V")
    a = ap.parse_args()
    with open(a.truth, encoding="utf-8") as fh:
        truth = json.load(fh)
    e = Eval(truth, a.home, a.dream)
    arts = e.articles()
    valid, f1 = e.segment()
    ep, er = e.extract()
    rp, rr = e.route(arts)
    lw, lw_n = e.later_wins(arts)
    per_message = bool(truth["conversations"])  # segments and names per message are known
    na = "n/a"
    values = {
        "segment_valid": round(valid, 1),
        "boundary_f1": round(f1, 3) if per_message else na,
        "extract_precision": round(ep, 3) if per_message else na,
        "extract_recall": round(er, 3) if per_message else na,
        "route_precision": round(rp, 3),
        "route_recall": round(rr, 3),
        "recurring_with_article": round(100 * rr, 1),
        "footnote_support": round(e.footnotes(arts), 1),
        "later_wins": round(lw, 1),
        "later_wins_cases": lw_n,
        "leaks": e.leaks(arts),
        "check_problems": e.check(),
        "articles": len(arts),
    }
    for k, v in values.items():
        print(f"DREAM-EVAL corpus={a.corpus} measure={k} value={v}")
    bad = []
    for spec, below in [(s, True) for s in a.min] + [(s, False) for s in a.max]:
        k, v = spec.split("=", 1)
        if k not in values:
            sys.exit(f"eval.py: unknown measure '{k}' in --min/--max (known: {', '.join(values)})")
        if values[k] == na:
            continue
        if (values[k] < float(v)) if below else (values[k] > float(v)):
            bad.append(f"{k}={values[k]} ({'below' if below else 'above'} {v})")
    if bad:
        print("eval.py: thresholds missed: " + "; ".join(bad), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
