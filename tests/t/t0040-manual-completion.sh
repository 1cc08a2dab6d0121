#!/usr/bin/env bash
# One source for usage, manual and completion (issue 35): `xloop help --man`
# pages render with man -l without a warning and list exactly the options
# each command parses; `xloop completion bash|zsh` offers exactly the
# commands, subcommands and options of the table, and the study's tags and
# space variables; `xloop help` groups the commands. Needs no Slurm.
. "$(dirname "$0")/lib.sh"

X=$XLOOP_BIN
export LC_ALL=C.UTF-8 MANWIDTH=80

# the visible commands, in help's order (the lines under its group headings)
help_out=$("$X" help)
cmds=$(printf '%s\n' "$help_out" | awk '/^[a-z].*:$/ { g = 1; next } /^$/ { g = 0 } g && /^  [a-z]/ { print $1 }')
check "help lists the commands under groups" test "$(printf '%s\n' "$cmds" | wc -l)" -gt 30
check "the first group is a first study's" sh -c "printf '%s\n' \"\$1\" | grep -A6 '^start a study' |
	awk 'NR > 1 { print \$1 }' | paste -sd' ' | grep -qx 'init adopt plan space auto next'" _ "$help_out"
for g in "start a study" "run the loop by hand" "look at the study" "fix a bad night" \
	"keep it going without you" "agents and remote sites"; do
	check "help has the group '$g'" sh -c "printf '%s\n' \"\$1\" | grep -q '^$g.*:\$'" _ "$help_out"
done
# every command the table has (help --all names those with options; the
# parser knows the rest) is listed once
check "each command listed once" test -z "$(printf '%s\n' "$cmds" | sort | uniq -d)"
for c in init next resume tick doctor completion; do
	check "help lists $c" grep -qx "$c" <<<"$cmds"
done

# the pages
m=$T_TMP/man
step "help --man-dir" "$X" help --man-dir "$m"
check "one page per command, and xloop.1" test "$(ls "$m" | wc -l)" -eq $(($(printf '%s\n' "$cmds" | wc -l) + 1))
check "help --man CMD prints the page --man-dir wrote" sh -c "'$X' help --man next | cmp - '$m/xloop-next.1'"
check "help --man prints xloop(1)" sh -c "'$X' help --man | cmp - '$m/xloop.1'"
expect_rc 2 "help --man of an unknown command" "$X" help --man frobnicate
# one man for every page (each page's warnings carry no file name: on a
# failure, man each page alone to see which)
w=$(MANROFFOPT=-ww man -l "$m"/*.1 2>&1 >"$T_TMP/pages.txt") || w="man -l failed: $w"
check "every page renders with man -l without a warning (-ww)" test -z "$w"
[ -z "$w" ] || printf '%s\n' "$w" | head -n 20 | sed 's/^/    /'
check "a page man cannot read is caught" sh -c "printf '.TH X 1\n.frob\n' >'$T_TMP/bad.1';
	[ -n \"\$(MANROFFOPT=-ww man -l '$T_TMP/bad.1' 2>&1 >/dev/null)\" ]"
man -l "$m/xloop.1" >"$T_TMP/xloop.txt" 2>/dev/null
missing=$(for c in $cmds; do grep -q "xloop-$c(1)" "$T_TMP/xloop.txt" || echo "$c"; done)
check "xloop(1) names every command's page${missing:+ (not: $missing)}" test -z "$missing"

# a page's options, as "SUB --opt ARG" lines (SUB only on a subcommand's),
# from its roff: the .TP entries of one section
page_opts() {
	awk -v sec="$2" '/^\.SH / { on = ($0 == ".SH " sec); next }
		on && /^\.TP/ { getline; gsub(/\\f[BIR]/, ""); gsub(/\\-/, "-"); print }' "$1"
}
# what the table has (help --all), subcommands hidden from help (their
# usage lines) left out: $T_TMP/table-CMD, "SUB --opt ARG" lines as
# page_opts prints them; $T_TMP/subs-CMD, its subcommands
for c in $cmds; do "$X" help "$c" | grep -E '^(usage|   or): ' >"$T_TMP/usage-$c"; done
"$X" help --all | /usr/bin/python3 -c '
import sys
d, cmds = sys.argv[1], sys.argv[2].split()
rows = [l.rstrip("\n").split("\t") for l in sys.stdin]
for c in cmds:
    usage = open("%s/usage-%s" % (d, c)).read().split("\n")
    words = [u.split()[3] for u in usage if len(u.split()) > 3 and u.split()[2] == c]
    subs = sorted({w for w in words if w[0].islower() and all(ch.islower() or ch == "-" for ch in w)})
    out = []
    for r in rows:
        n = r[0].split(" ")
        if n[0] != c:
            continue
        if len(n) > 1 and n[1] not in subs:
            continue
        out.append((n[1] + " " if len(n) > 1 else "") + r[1])
    open("%s/table-%s" % (d, c), "w").write("".join(x + "\n" for x in sorted(out)))
    open("%s/subs-%s" % (d, c), "w").write("".join(x + "\n" for x in subs) if c != "help" else "")
' "$T_TMP" "$(echo $cmds)"
bad=
for c in $cmds; do
	page_opts "$m/xloop-$c.1" OPTIONS | sort >"$T_TMP/opts-$c"
	cmp -s "$T_TMP/table-$c" "$T_TMP/opts-$c" || bad="$bad $c"
	[ "$(page_opts "$m/xloop-$c.1" "COMMON OPTIONS" | paste -sd' ')" = "--help --json --allow-root --allow-secret" ] ||
		bad="$bad $c(common)"
done
check "each page lists exactly its command's options:${bad:- all}" test -z "$bad"
check "every option on a page has its help" sh -c "awk '/^\\.TP/ { getline; getline; if (\$0 == \"\" || \$0 ~ /^\\./) bad = 1 } END { exit bad }' '$m'/*.1"

# the parser takes each option its page lists: with an unknown option after
# it, the error names that one (an option the parser did not know would be
# named first)
d=$(user_dir)
new_study "$d" mc "" 2>/dev/null
step "train.sh" as_user sh -c "printf '#!/bin/bash\nLR=0.1\nSEED=1\necho START\n' >'$d/train.sh'; echo '{\"score\": 0.5}' >'$d/cv.json'"
step "adopt base" as_user "$X" -C "$d" adopt train.sh --tag base --cv cv.json >/dev/null
step "space set LR" as_user "$X" -C "$d" space set LR=0.01,0.1,1 >/dev/null
step "space seed SEED" as_user "$X" -C "$d" space seed SEED >/dev/null
# all in one process as the user (a runuser per option is slow)
for c in $cmds; do sed "s/^/$c /" "$T_TMP/opts-$c"; done >"$T_TMP/parse-queries"
bad=$(as_user bash -c 'X=$1 d=$2
while read -r c a b c2; do
	case $a in
	-*) sub= opt=$a arg=$b ;;
	*) sub=$a opt=$b arg=$c2 ;;
	esac
	# no subcommand, no value: no word
	err=$("$X" -C "$d" "$c" $sub "$opt" ${arg:+v} --frob-h35 2>&1 </dev/null)
	case $err in *"unknown option '\''--frob-h35'\''"*) ;; *) printf " %s" "$c${sub:+ $sub} $opt" ;; esac
done' _ "$X" "$d" <"$T_TMP/parse-queries")
check "the parser takes every option the pages list:${bad:- all $(wc -l <"$T_TMP/parse-queries")}" test -z "$bad"

# the completion: bash
cb=$T_TMP/xloop.bash
step "completion bash" "$X" completion bash >"$cb"
check "the bash completion is bash" bash -n "$cb"
# what the completion offers at the last word of "xloop WORDS...", sorted
offers() {
	(cd "${OFFERS_DIR:-$d}" && as_user bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMPREPLY=(); _xloop; printf "%s\n" "${COMPREPLY[@]}"' _ "$cb" "$X" "$@" | sort)
}
check "bash: the commands, exactly" test "$(offers '')" = "$(printf '%s\n' "$cmds" | sort)"
check "bash: a prefix" test "$(offers ne | paste -sd' ')" = "new next"
# each command's (and subcommand's) words: the queries ("@" for an empty
# last word) and what each must offer, then one bash answers them all
: >"$T_TMP/queries"
n=0
# (not at a pipeline's end: n must count in this shell)
want() { n=$((n + 1)); printf '%s\n' "$1" >>"$T_TMP/queries"; sort >"$T_TMP/want-$n"; }
common() { printf '%s\n' --help --json --allow-root --allow-secret; }
for c in $cmds; do
	subs=$(cat "$T_TMP/subs-$c")
	if [ -n "$subs" ]; then
		want "$c @" < <(printf '%s\n' $subs)
		for s in $subs; do
			want "$c $s -" < <(awk -v s="$s" '$1 == s { print $2 }' "$T_TMP/opts-$c"; common)
		done
		continue
	fi
	want "$c -" < <(awk '{ print $1 }' "$T_TMP/opts-$c"; common)
done
bash -c '. "$1"; i=0
while IFS= read -r q; do
	i=$((i + 1)); read -ra w <<<"$q"
	[ "${w[${#w[@]}-1]}" = @ ] && w[${#w[@]}-1]=
	COMP_WORDS=(xloop "${w[@]}") COMP_CWORD=${#w[@]} COMPREPLY=()
	_xloop
	printf "%s\n" "${COMPREPLY[@]}" | sed "/^\$/d" | sort >"$2/got-$i"
done <"$2/queries"' _ "$cb" "$T_TMP"
bad=$(i=0; while IFS= read -r q; do i=$((i + 1)); cmp -s "$T_TMP/want-$i" "$T_TMP/got-$i" || printf ' [%s]' "$q"; done <"$T_TMP/queries")
check "bash: each command's (and subcommand's) options, exactly:${bad:- all $n}" test -z "$bad"
check "bash: the study's tags" test "$(offers status '')" = base
check "bash: the tags and best for --from" test "$(offers plan add --from '' | paste -sd' ')" = "base best"
check "bash: the space variables as VAR=" test "$(offers plan add '' | paste -sd' ')" = "LR= SEED="
check "bash: the space variables for space rm" test "$(offers space rm '' | paste -sd' ')" = "LR SEED"
check "bash: -C DIR's study" test "$(OFFERS_DIR=$T_TMP offers -C "$d" show '')" = base
check "bash: no study, no tags" test -z "$(OFFERS_DIR=$T_TMP offers show '')"
check "bash: a choice" test "$(offers init --goal '' | paste -sd' ')" = "max min"

# zsh: the same words
cz=$T_TMP/_xloop
step "completion zsh" "$X" completion zsh >"$cz"
check "the zsh completion starts with #compdef" sh -c "head -n1 '$cz' | grep -qx '#compdef xloop'"
if command -v zsh >/dev/null; then
	check "the zsh completion is zsh" zsh -n "$cz"
	zw() { (cd "$d" && as_user zsh -fc 'compdef() { :; }; . "$1"; _xloop_bin=$2; shift 2; _xloop_words "$@"' _ "$cz" "$X" "$@" | tr ' ' '\n' | sed '/^$/d' | sort); }
	check "zsh: the commands, exactly" test "$(zw '')" = "$(printf '%s\n' "$cmds" | sort)"
	check "zsh: plan's subcommands" test "$(zw '' plan | paste -sd' ')" = "add ls rm"
	check "zsh: the study's tags" test "$(zw '' status)" = base
else
	skip "the zsh completion is zsh" "no zsh"
fi
expect_rc 2 "completion for another shell is a usage error" "$X" completion fish

finish
