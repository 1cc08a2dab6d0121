#!/usr/bin/env bash
# Agent integration without Slurm: agent-setup for Claude Code and Codex
# (merged, idempotent, refuses a broken settings file without touching it)
# and the AGENTS.md section init keeps up to date.
. "$(dirname "$0")/lib.sh"

X=$XLOOP_BIN
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }
new_study "$d" ag ''

step "mkdir .claude" as_user mkdir -p "$d/.claude"
step "the user's .claude/settings.json" as_user sh -c "printf '%s' '{\"model\": \"opus\", \"permissions\": {\"allow\": [\"Bash(make:*)\"]}}' >'$d/.claude/settings.json'"
step "agent-setup claude" u agent-setup claude >"$T_TMP/claude.txt" 2>&1
check "agent-setup claude says how many rules it added" grep -q 'rules added' "$T_TMP/claude.txt"
check "and that deny rules can be bypassed" grep -q 'xloop itself is the guard' "$T_TMP/claude.txt"
perm() { /usr/bin/python3 -c "import json,sys
d=json.load(open(sys.argv[1])); p=d['permissions']
print(d.get('model'), ' '.join(sorted(p)), *[len(p[k]) for k in ('allow','ask','deny')])
for k in ('allow','ask','deny'):
    for r in p[k]: print(k, r)" "$d/.claude/settings.json"; }
step "permissions read" perm >"$T_TMP/perm1.txt"
check "the user's settings and rules are kept" sh -c "head -1 '$T_TMP/perm1.txt' | grep -q '^opus allow ask deny' && grep -qx 'allow Bash(make:\*)' '$T_TMP/perm1.txt'"
check "read-only queries are allowed" sh -c "grep -qx 'allow Bash(xloop status:\*)' '$T_TMP/perm1.txt' && grep -qx 'allow Bash(squeue:\*)' '$T_TMP/perm1.txt'"
check "submissions ask" sh -c "grep -qx 'ask Bash(xloop next:\*)' '$T_TMP/perm1.txt' && grep -qx 'ask Bash(xloop submit:\*)' '$T_TMP/perm1.txt'"
check "cancelling and hand-written sbatch are denied" sh -c "grep -qx 'deny Bash(scancel:\*)' '$T_TMP/perm1.txt' && grep -qx 'deny Bash(xloop cancel:\*)' '$T_TMP/perm1.txt' && grep -qx 'deny Bash(sbatch:\*)' '$T_TMP/perm1.txt'"
step "agent-setup claude --json" u agent-setup claude --json >"$T_TMP/claude2.json"
check "a second run adds nothing" test "$(jget .rules_added <"$T_TMP/claude2.json")" = 0
check "agent-setup --json validates" sh -c "/usr/bin/python3 '$(dirname "$0")/validate.py' '${XLOOP_ROOT_DIR:?}/schemas/agent-setup.schema.json' <'$T_TMP/claude2.json'"
check "and changes nothing" test "$(perm)" = "$(cat "$T_TMP/perm1.txt")"

step "a broken settings.json" as_user sh -c "printf '{\"permissions\": [' >'$d/.claude/settings.json'"
h=$(sha256sum <"$d/.claude/settings.json")
expect_rc 65 "a broken settings.json is refused" u agent-setup claude
check "and left as it was" test "$h" = "$(sha256sum <"$d/.claude/settings.json")"
expect_rc 2 "an unknown agent is a usage error" u agent-setup cursor

expect_rc 0 "agent-setup codex" u agent-setup codex
r=$d/.codex/rules/xloop.rules
check "codex: scancel is forbidden with a reason" sh -c "grep -A2 'pattern = \[\"scancel\"\]' '$r' | grep -q 'decision = \"forbidden\"'"
check "codex: xloop status is allowed" sh -c "grep -A1 'pattern = \[\"xloop\", \"status\"\]' '$r' | grep -q 'decision = \"allow\"'"
check "codex: xloop next prompts" sh -c "grep -A1 'pattern = \[\"xloop\", \"next\"\]' '$r' | grep -q 'decision = \"prompt\"'"
check "codex: every rule is a complete prefix_rule" sh -c "[ \$(grep -c '^prefix_rule(' '$r') = \$(grep -c '^)' '$r') ]"

check "the AGENTS.md section says what never to do" grep -q 'Never: scancel' "$d/AGENTS.md"
check "and how to sweep" grep -q 'xloop sweep --set' "$d/AGENTS.md"
# an old section is replaced in place; the user's text around it stays
step "AGENTS.md edited by the user" as_user /usr/bin/python3 - "$d/AGENTS.md" <<'PY'
import re, sys
p = sys.argv[1]
s = open(p).read()
s = re.sub(r"(<!-- xloop:begin[^\n]*\n).*?(<!-- xloop:end -->)", r"\1old text\n\2", s, flags=re.S)
open(p, "w").write("# Mine\nkeep me\n\n" + s + "\nafter\n")
PY
step "init again" u init >/dev/null 2>&1
check "init brings the section up to date" sh -c "! grep -q '^old text' '$d/AGENTS.md' && grep -q 'Never: scancel' '$d/AGENTS.md'"
check "and keeps the user's text" sh -c "grep -qx 'keep me' '$d/AGENTS.md' && grep -qx 'after' '$d/AGENTS.md' && [ \$(grep -c 'xloop:begin' '$d/AGENTS.md') = 1 ]"
finish
