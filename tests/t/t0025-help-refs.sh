#!/usr/bin/env bash
# Every `xloop help X` (and `help X`) that a help text, a message in src/,
# README.md, AGENTS.md or docs/ points to resolves: `xloop help X` exits 0 (issue 27: `help
# new` pointed to `xloop help best`, which did not exist); the help index
# lists the topics; no user-facing text says "proven" of anything but a run
# (issue 44, help glossary). Every SECTION.KEY a help text names is a key of
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
# issue 44: "proven" has one sense, a run that succeeded (help glossary);
# the paired test's label is "confirmed". Read every user-facing text (the
# manual pages, made from every command's help, the help topics, README.md,
# docs/*.md, the schemas' descriptions) for the word family outside it.
step "mkdir voc" mkdir -p "$T_TMP/voc"
step "the manual pages" "$X" help --man-dir "$T_TMP/voc/man"
for t in best tags logs glossary; do
	step "xloop help $t" sh -c "'$X' help $t >'$T_TMP/voc/help-$t.txt'"
done
step "xloop help" sh -c "'$X' help >'$T_TMP/voc/help-index.txt'"
check "help glossary says what proven and confirmed mean, and what ± is" sh -c \
	"grep -qx proven '$T_TMP/voc/help-glossary.txt' && grep -qx confirmed '$T_TMP/voc/help-glossary.txt' && grep -qx '±' '$T_TMP/voc/help-glossary.txt'"
check "the manual's xloop(1) has the glossary" grep -q '^.SH GLOSSARY' "$T_TMP/voc/man/xloop.1"
check "the help index lists help glossary" sh -c "'$X' help | grep -q \"'xloop help glossary'\""
vocabulary() {
	/usr/bin/python3 - "$R" "$T_TMP/voc" <<'PY'
import glob, json, re, sys
root, gen = sys.argv[1], sys.argv[2]
texts = []
def add(name, s):
    texts.append((name, s))
for p in sorted(glob.glob(gen + "/man/*.1")):
    s = open(p, encoding="utf-8").read()
    s = "\n".join(l for l in s.split("\n") if not l.startswith((".", "'")) or l.startswith("\\&"))
    add(p, re.sub(r"\\f[BIRP]|\\&", "", s).replace("\\-", "-").replace("\\e", "\\"))
for p in sorted(glob.glob(gen + "/help-*.txt")):
    add(p, open(p, encoding="utf-8").read())
for p in [root + "/README.md"] + sorted(glob.glob(root + "/docs/*.md")):
    add(p, open(p, encoding="utf-8").read())
def descr(o, out):
    if isinstance(o, dict):
        for k, v in o.items():
            if k == "description" and isinstance(v, str):
                out.append(v)
            else:
                descr(v, out)
    elif isinstance(o, list):
        for v in o:
            descr(v, out)
for p in sorted(glob.glob(root + "/schemas/*.json")):
    out = []
    descr(json.load(open(p, encoding="utf-8")), out)
    add(p, "\n".join(out))
word = re.compile(r"\b(un)?(prove|proves|proved|proving|proven|proof|proofs)\b", re.I)
# the sense help glossary allows: a run that succeeded
noun = re.compile(r"proven\s+`?(runs?|job\.sh|job\s+scripts?|baselines?|root(\s+runs?)?|parents?)\b", re.I)
pred = re.compile(r"\b(runs?|baseline|parent|job\.sh|'%s'|'[^']*')[^.;:()]{0,30}?\b(is|are|was|were|be|been|makes?\s+[\w ]{1,30}?|mark\s+the\s+run)\s+(not\s+)?(yet\s+)?$", re.I)
obj = re.compile(r"\b(runs?|baselines?|parents?|job\.sh)\s+(not\s+)?(yet\s+)?$", re.I)
bad = []
for name, s in texts:
    for m in word.finditer(s):
        after, before = s[m.start():], s[max(0, m.start() - 70):m.start()]
        line = s[s.rfind("\n", 0, m.start()) + 1:s.find("\n", m.end()) if s.find("\n", m.end()) >= 0 else len(s)]
        if m.group(0).lower() == "proven" and line.strip() in ("proven", "`proven`"):
            continue	# the glossary's own term
        if re.match(r"proven\b", after) and re.search(r"[.`\"]$", before):
            continue	# a field's name: outlook.proven, `proven`, "proven"
        if noun.match(after):
            continue
        if m.group(0).lower() == "proven" and (pred.search(before.replace("\n", " ")) or
                                               obj.search(before.replace("\n", " "))) and \
                not re.match(r"proven\s+(better|on|than)\b", after.replace("\n", " ")):
            continue
        bad.append("%s: ...%s[%s]%s..." % (name.replace(root, "").replace(gen, ""),
                   before[-50:].replace("\n", " "), m.group(0), after[len(m.group(0)):50].replace("\n", " ")))
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
}
check "no user-facing text says proven of anything but a run that succeeded" vocabulary
finish
