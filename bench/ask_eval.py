#!/usr/bin/env python3
"""ask_eval.py — `dream ask` over a wiki the model itself dreamed, scored against the corpus truth.

  ask_eval.py --dream BIN --truth TRUTH.json --home DREAM_HOME --corpus NAME [--model GGUF]
              [--verbose] [--min MEASURE=V]... [--max MEASURE=V]...

bench_ask (bench/ask.cmake) asks over a vault the scripted fake wrote. This asks the questions
train/ask_questions.py writes for a generated corpus (one about each subject with an article,
up to three about its fact keys, and negatives) over the home `dream run` made with the model, and
answers each with `dream ask --json` (the model, or $DREAM_BACKEND). Scoring is deterministic:

  keyed      a question about a fact key whose newest value the subject's article states: the
             answer must be an answer (not "nothing on file") and hold that value;
  about      "What do I know about X?": an answer, with at least one citation;
  negative   a key no fact of the subject has, a subject the corpus never names, a personal
             question: the answer must be "nothing on file";
  (a keyed question whose newest value the article does not state is counted, not scored).

Prints `DREAM-EVAL corpus=C measure=M value=V` lines, as bench/eval.py: ask_keyed, ask_about,
ask_negatives (%), ask_cites_real (%), ask_context_mean and ask_read_max (bytes), and the counts.
--min/--max turn a measure into a threshold (exit 1 when one fails).
"""
import argparse
import json
import os
import re
import sqlite3
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "train"))
from oracle import Truth  # noqa: E402


def questions(truth, wiki):
    out = subprocess.run([sys.executable, os.path.join(HERE, "..", "train", "ask_questions.py"), "--truth", truth,
                          "--wiki", wiki], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def article_text(wiki, t, sid):
    """The plain text of the article whose title names subject sid (lower case), or ''."""
    d = os.path.join(wiki, "articles")
    for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        if not f.endswith(".md"):
            continue
        with open(os.path.join(d, f), encoding="utf-8") as fh:
            text = fh.read()
        m = re.search(r"^# (.+)$", text, re.M)
        if m and t.subject_for_name(m.group(1).strip()) == sid:
            return text.lower()
    return ""


def newest(t, sid, key):
    pool = [f for f in t.subjects[sid]["facts"] if f.get("key") == key and f.get("value")]
    ids = {f["id"] for f in pool}
    cur = [f for f in pool if not t.newer(f, ids)]
    return max(cur or pool, key=lambda f: f.get("date") or "") if pool else None


def cite_real(db, cite):
    m = re.match(r"^conv:([0-9a-f]+)#(.+)$", cite or "")
    if not m:
        return False
    return db.execute("SELECT 1 FROM messages m JOIN conversations c ON c.id = m.conversation "
                      "WHERE c.cite = ? AND m.source_id = ?", (m.group(1), m.group(2))).fetchone() is not None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dream", required=True)
    ap.add_argument("--truth", required=True)
    ap.add_argument("--home", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--model")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--min", action="append", default=[])
    ap.add_argument("--max", action="append", default=[])
    a = ap.parse_args()
    t = Truth(a.truth)
    wiki = os.path.join(a.home, "wiki")
    env = dict(os.environ, DREAM_HOME=a.home)
    db = sqlite3.connect(os.path.join(a.home, "memory.sqlite"))
    n = {"keyed": 0, "about": 0, "negative": 0, "unscored": 0}
    ok = {"keyed": 0, "about": 0, "negative": 0}
    cites = real = 0
    ctx = []
    read_max = 0
    for q in questions(a.truth, wiki):
        sid, key = q["subject"], q["key"]
        if not sid or key == "absent":
            kind, point = "negative", None
        elif key is None:
            kind, point = "about", None
        else:
            f = newest(t, sid, key)
            point = f["value"].lower() if f else None
            kind = "keyed" if point and point in article_text(wiki, t, sid) else "unscored"
        cmd = [a.dream, "ask", "--json"] + (["--model", a.model] if a.model else []) + [q["question"]]
        r = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if r.returncode:
            sys.exit(f"ask_eval: {' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
        o = json.loads(r.stdout)
        answered, answer = o.get("answered"), o.get("answer") or ""
        cs = [c.get("cite") for c in o.get("citations") or []]
        cites += len(cs)
        real += sum(cite_real(db, c) for c in cs)
        if o.get("model_calls"):
            ctx.append(o.get("context_bytes") or 0)
        for rd in o.get("reads") or []:
            read_max = max(read_max, rd.get("bytes") or 0)
        n[kind] += 1
        good = None
        if kind == "negative":
            good = not answered
        elif kind == "about":
            good = bool(answered and cs)
        elif kind == "keyed":
            good = bool(answered and point in answer.lower())
        if good:
            ok[kind] += 1
        if a.verbose:
            mark = "-" if good is None else ("ok" if good else "MISS")
            print(f"{mark:4} {kind:8} {q['question'][:60]:60} | {point or ''} | {answer[:110]}")
    pct = lambda k: round(100.0 * ok[k] / n[k], 1) if n[k] else "n/a"
    vals = {
        "ask_keyed": pct("keyed"), "ask_keyed_questions": n["keyed"], "ask_about": pct("about"),
        "ask_about_questions": n["about"], "ask_negatives": pct("negative"), "ask_negative_questions": n["negative"],
        "ask_unscored": n["unscored"], "ask_cites_real": round(100.0 * real / cites, 1) if cites else "n/a",
        "ask_context_mean": round(sum(ctx) / len(ctx)) if ctx else 0, "ask_read_max": read_max,
    }
    for k, v in vals.items():
        print(f"DREAM-EVAL corpus={a.corpus} measure={k} value={v}")
    bad = []
    for spec, cmp in [(s, "min") for s in a.min] + [(s, "max") for s in a.max]:
        m, _, v = spec.partition("=")
        got = vals.get(m)
        if not isinstance(got, (int, float)) or (got < float(v) if cmp == "min" else got > float(v)):
            bad.append(f"{m}={got} ({cmp} {v})")
    if bad:
        sys.exit("ask_eval: below threshold: " + ", ".join(bad))


if __name__ == "__main__":
    main()
