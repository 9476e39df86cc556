#!/usr/bin/python3
"""Reference renders for the template conformance test: Python's Jinja2 set up exactly as
Hugging Face transformers sets it up for chat templates (ImmutableSandboxedEnvironment,
trim_blocks, lstrip_blocks, loopcontrols, the {% generation %} tag, tojson via json.dumps,
raise_exception, strftime_now pinned to a fixed time).

Usage: template_reference.py MANIFEST.json OUT.json
MANIFEST: {"now": epoch_seconds, "params": {...}, "templates": {name: source},
           "fixtures": {name: {"context": {...}, "add_generation_prompt": bool,
                               "enable_thinking": bool|null}}}
OUT: {"<template>|<fixture>": {"ok": true, "text": "..."} | {"ok": false, "error": "..."}}
"""
import datetime
import json
import sys

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment


class AssistantTracker(Extension):
    """transformers' {% generation %} ... {% endgeneration %}: renders its body unchanged."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.CallBlock(self.call_method("_generation_support"), [], [], body).set_lineno(lineno)

    def _generation_support(self, caller):
        return caller()


def main():
    manifest = json.load(open(sys.argv[1], encoding="utf-8"))
    now = datetime.datetime.utcfromtimestamp(manifest["now"])

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(format):
        return now.strftime(format)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[AssistantTracker, loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now

    params = manifest.get("params", {})
    out = {}
    for tname, source in manifest["templates"].items():
        try:
            tmpl = env.from_string(source)
            compile_error = None
        except Exception as e:  # a template Jinja2 cannot compile fails every fixture
            tmpl, compile_error = None, e
        for fname, fx in manifest["fixtures"].items():
            key = tname + "|" + fname
            if compile_error is not None:
                out[key] = {"ok": False, "error": "%s: %s" % (type(compile_error).__name__, compile_error)}
                continue
            ctx = {}
            for k in ("bos_token", "eos_token"):
                if k in params:
                    ctx[k] = params[k]
            ctx["add_generation_prompt"] = bool(fx.get("add_generation_prompt", False))
            if fx.get("enable_thinking") is not None:
                ctx["enable_thinking"] = bool(fx["enable_thinking"])
            ctx.update(fx["context"])
            try:
                out[key] = {"ok": True, "text": tmpl.render(**ctx)}
            except Exception as e:
                out[key] = {"ok": False, "error": "%s: %s" % (type(e).__name__, e)}
    json.dump(out, open(sys.argv[2], "w", encoding="utf-8"), ensure_ascii=False)


if __name__ == "__main__":
    main()
