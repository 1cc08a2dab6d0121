#!/usr/bin/python3
"""Validate JSON documents against a schema in schemas/ with a real
JSON Schema validator (Debian's python3-jsonschema, draft 2020-12).

    validate.py SCHEMA.json < DOC      one document on stdin
    validate.py --batch LIST           each line of LIST "N<TAB>SCHEMA<TAB>DOC":
                                       prints "N<TAB>ok" or "N<TAB>MESSAGE"
                                       (tests/t/lib.sh's validates: one
                                       import of jsonschema, 0.2 CPU-s, a test)
    validate.py --check-schemas DIR    every schema in DIR is itself valid
    validate.py --check-described DIR  every object of every output schema
                                       in DIR is closed (additionalProperties
                                       false) and each property is described
    validate.py --check-commands SRC DIR
                                       every command whose code in SRC prints
                                       --json has DIR/<command>.schema.json
Exits 1 with the validator's message when a document does not validate."""
import json
import os
import re
import sys

import jsonschema

# Draft 2020-12 (jsonschema 4, bookworm on); an older jsonschema (3.2 in a
# bullseye chroot of the version matrix) checks with its newest draft.
VALIDATOR = getattr(jsonschema, "Draft202012Validator", None) or jsonschema.Draft7Validator


# documents people or jobs write, not xloop's output: extra keys are theirs
INPUTS = ("config.schema.json", "cv.schema.json")
# commands that print another command's document
ALIASES = {"resume": "next"}
# where a schema declares what a document holds (not if/then/not/contains)
DECLARING = ("items", "oneOf", "anyOf", "allOf", "$defs", "prefixItems")


def undescribed(node, path, out):
    """Paths of open objects and of properties without a description."""
    if not isinstance(node, dict):
        return
    if "properties" in node:
        if node.get("additionalProperties") is not False:
            out.append("%s: additionalProperties is not false" % (path or "/"))
        for k, v in node["properties"].items():
            if not isinstance(v, dict) or not v.get("description"):
                out.append("%s.%s: no description" % (path, k))
            undescribed(v, "%s.%s" % (path, k), out)
    for k, v in node.get("patternProperties", {}).items():
        if not isinstance(v, dict) or not v.get("description"):
            out.append("%s./%s/: no description" % (path, k))
        undescribed(v, "%s./%s/" % (path, k), out)
    for k in DECLARING:
        v = node.get(k)
        if isinstance(v, dict):
            if k == "$defs":
                for dk, dv in v.items():
                    undescribed(dv, "%s/$defs/%s" % (path, dk), out)
            else:
                undescribed(v, "%s[]" % path, out)
        elif isinstance(v, list):
            for i, x in enumerate(v):
                undescribed(x, "%s/%s/%d" % (path, k, i), out)


def emitting_commands(src):
    """Names of the commands whose function prints a --json document."""
    names = []
    for n in sorted(os.listdir(src)):
        if not (n.startswith("cmd-") and n.endswith(".c")):
            continue
        with open(os.path.join(src, n)) as f:
            text = f.read()
        bodies = {}
        for m in re.finditer(r"\nstatic [^\n;=]*?\b(\w+)\([^;{]*?\)\n\{.*?\n\}\n", text, re.S):
            bodies[m.group(1)] = m.group(0)
        for m in re.finditer(r"const struct cmd_entry \w+ = \{\s*\"([\w-]+)\"(.*?)\};",
                             text, re.S):
            name, fn = m.group(1), re.findall(r"(cmd_\w+)\s*,?\s*$", m.group(2).strip())
            body = bodies.get(fn[0], "") if fn else ""
            # and the file's static functions it calls (plan add, ls, rm)
            body += "".join(b for f, b in bodies.items() if f != (fn or [""])[0]
                            and re.search(r"\b%s\(" % f, body))
            if name.startswith("test-"):
                continue
            if "cmd_emit_json" in body or "cmd_json_begin" in body:
                names.append(name)
    return names


def main():
    if sys.argv[1] == "--check-described":
        d = sys.argv[2]
        bad = []
        names = sorted(n for n in os.listdir(d) if n.endswith(".schema.json"))
        for n in names:
            if n in INPUTS:
                continue
            with open(os.path.join(d, n)) as f:
                s = json.load(f)
            out = []
            undescribed(s, "", out)
            bad += ["%s: %s" % (n, x) for x in out]
        for x in bad:
            print(x, file=sys.stderr)
        if not bad:
            print("%d output schemas closed and described" % (len(names) - len(INPUTS)))
        return 1 if bad else 0
    if sys.argv[1] == "--check-commands":
        missing = [c for c in emitting_commands(sys.argv[2])
                   if not os.path.exists(os.path.join(sys.argv[3],
                                                      ALIASES.get(c, c) + ".schema.json"))]
        for c in missing:
            print("xloop %s --json has no schemas/%s.schema.json" % (c, c), file=sys.stderr)
        return 1 if missing else 0
    if sys.argv[1] == "--check-schemas":
        d = sys.argv[2]
        names = sorted(n for n in os.listdir(d) if n.endswith(".schema.json"))
        for n in names:
            with open(os.path.join(d, n)) as f:
                VALIDATOR.check_schema(json.load(f))
        print("%d schemas valid" % len(names))
        return 0
    if sys.argv[1] == "--batch":
        schemas = {}
        with open(sys.argv[2]) as f:
            for line in f:
                n, sp, dp = line.rstrip("\n").split("\t")
                try:
                    if sp not in schemas:
                        with open(sp) as g:
                            schemas[sp] = VALIDATOR(json.load(g))
                    with open(dp) as g:
                        schemas[sp].validate(json.load(g))
                    print("%s\tok" % n)
                except (OSError, ValueError, jsonschema.ValidationError) as e:
                    msg = getattr(e, "message", None) or str(e)
                    print("%s\tinvalid against %s: %s" % (n, os.path.basename(sp),
                                                         msg.replace("\n", " ")))
        return 0
    with open(sys.argv[1]) as f:
        schema = json.load(f)
    doc = json.load(sys.stdin)
    try:
        VALIDATOR(schema).validate(doc)
    except jsonschema.ValidationError as e:
        print("invalid against %s: %s" % (sys.argv[1], e.message), file=sys.stderr)
        return 1
    return 0


sys.exit(main())
