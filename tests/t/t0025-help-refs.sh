#!/usr/bin/env bash
# Every `xloop help X` (and `help X`) that a help text, a message in src/,
# README.md, AGENTS.md or docs/ points to resolves: `xloop help X` exits 0 (issue 27: `help
# new` pointed to `xloop help best`, which did not exist); the help index
# lists the topics. Every SECTION.KEY a help text names is a key of
# xloop.json (config.c's table). Needs no Slurm.
. "$(dirname "$0")/lib.sh"

X=$XLOOP_BIN
R=${XLOOP_ROOT_DIR:?}

# every SECTION.KEY a help text names (the manual pages, made from the
# command table, and the topics) must be a key of config.c's table (issue
# 44: help best named metric.min_delta, which `config get` did not know)
"$X" help --man-dir "$T_TMP/man" >/dev/null
for t in best tags logs; do "$X" help "$t"; done >"$T_TMP/topics.txt"

# the references, one a line ("best", "plan add"): C string literals are
# joined first, so a reference split over two lines of a help text counts;
# then "#keys" and the keys the help texts name that the table lacks
out=$(/usr/bin/python3 - "$R" "$T_TMP/man" "$T_TMP/topics.txt" <<'PY'
import glob, re, sys
root = sys.argv[1]
texts = []
for p in glob.glob(root + "/src/**/*.[ch]", recursive=True):
    s = open(p, encoding="utf-8", errors="replace").read()
    # adjacent literals "a\n" "b" -> one string; escapes kept as text
    s = re.sub(r'\\n"\s*\n\s*"', " ", s)
    s = re.sub(r'"\s*\n\s*"', "", s)
    texts.append(s.replace("\\n", " "))
for p in [root + "/README.md", root + "/AGENTS.md"] + sorted(glob.glob(root + "/docs/*.md")):
    texts.append(open(p, encoding="utf-8").read())
found = set()
for s in texts:
    for m in re.finditer(r"`(?:xloop )?help\s+([a-z][a-z-]*)((?:\s+[a-z][a-z-]*)?)`", s):
        found.add((m.group(1) + " " + m.group(2).strip()).strip())
    for m in re.finditer(r"'xloop help ([a-z][a-z-]*)'", s):
        found.add(m.group(1))
print("\n".join(sorted(found)))
table = open(root + "/src/config.c", encoding="utf-8").read()
keys = set("%s.%s" % m for m in re.findall(r'\{ "([a-z_]+)", "([a-z_]+)", F_', table))
sections = {k.split(".")[0] for k in keys}
help_text = "".join(open(p, encoding="utf-8").read()
                    for p in glob.glob(sys.argv[2] + "/*") + [sys.argv[3]])
help_text = help_text.replace("\\-", "-").replace("\\&", "")
named = set(re.findall(r"\b(?:%s)\.[a-z_]+\b" % "|".join(sorted(sections)), help_text))
print("#keys " + (" ".join(sorted(named - keys)) if len(keys) > 30 and len(named) > 20
                  else "(the table or the help texts not found)"))
PY
)
refs=$(grep -v '^#keys' <<<"$out")
badkeys=$(sed -n 's/^#keys *//p' <<<"$out")
check "every key a help text names is in the config table${badkeys:+; not: $badkeys}" test -z "$badkeys"
check "the sources point to some help topics" test -n "$refs"
bad=
while read -r ref; do
	[ -n "$ref" ] || continue
	# shellcheck disable=SC2086 # "plan add": a command and its subcommand
	"$X" help $ref >/dev/null 2>&1 || bad="$bad '$ref'"
done <<<"$refs"
check "every referenced help topic exists:${bad:- all of: $(echo $refs | tr '\n' ' ')}" test -z "$bad"
check "help best says what best means" sh -c "'$X' help best | grep -q 'A configuration is a job.sh'"
check "the help index lists help best" sh -c "'$X' help | grep -q \"'xloop help best'\""
check "and help tags" sh -c "'$X' help | grep -q \"'xloop help tags'\""
check "help space still ends with the rule" sh -c "'$X' help space | grep -q 'What \"best\" means'"
finish
