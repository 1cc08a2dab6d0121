#!/usr/bin/python3
"""Validate JSON documents against a schema in schemas/ with a real
JSON Schema validator (Debian's python3-jsonschema, draft 2020-12).

    validate.py SCHEMA.json < DOC      one document on stdin
    validate.py --check-schemas DIR    every schema in DIR is itself valid
Exits 1 with the validator's message when a document does not validate."""
import json
import os
import sys

import jsonschema

# Draft 2020-12 (jsonschema 4, bookworm on); an older jsonschema (3.2 in a
# bullseye chroot of the version matrix) checks with its newest draft.
VALIDATOR = getattr(jsonschema, "Draft202012Validator", None) or jsonschema.Draft7Validator


def main():
    if sys.argv[1] == "--check-schemas":
        d = sys.argv[2]
        names = sorted(n for n in os.listdir(d) if n.endswith(".schema.json"))
        for n in names:
            with open(os.path.join(d, n)) as f:
                VALIDATOR.check_schema(json.load(f))
        print("%d schemas valid" % len(names))
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
