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
warned=
for p in "$m"/*.1; do
	w=$(MANROFFOPT=-ww man -l "$p" 2>&1 >/dev/null) || w="man -l failed: $w"
	[ -z "$w" ] || warned="$warned${p##*/}: $w
"
done
check "every page renders with man -l without a warning (-ww)" test -z "$warned"
[ -z "$warned" ] || printf '%s' "$warned" | head -n 20 | sed 's/^/    /'
check "a page man cannot read is caught" sh -c "printf '.TH X 1\n.frob\n' >'$T_TMP/bad.1';
	[ -n \"\$(MANROFFOPT=-ww man -l '$T_TMP/bad.1' 2>&1 >/dev/null)\" ]"
check "xloop(1) names every command's page" sh -c "for c in $(echo $cmds); do
	man -l '$m/xloop.1' 2>/dev/null | grep -q \"xloop-\$c(1)\" || { echo \"no \$c\"; exit 1; }; done"

# a page's options, as "SUB --opt ARG" lines (SUB only on a subcommand's),
# from its roff: the .TP entries of one section
page_opts() {
	awk -v sec="$2" '/^\.SH / { on = ($0 == ".SH " sec); next }
		on && /^\.TP/ { getline; gsub(/\\f[BIR]/, ""); gsub(/\\-/, "-"); print }' "$1"
}
all=$("$X" help --all)
bad=
for c in $cmds; do
	# what the table has, subcommands hidden from help left out
	usage=$("$X" help "$c" | grep -E '^(usage|   or): ')
	want=$(printf '%s\n' "$all" | awk -F'\t' -v c="$c" '$1 == c || index($1, c " ") == 1 {
		n = split($1, w, " "); print (n > 1 ? w[2] " " : "") $2 }' | while read -r sub rest; do
		case $sub in -*) echo "$sub${rest:+ $rest}" ;;
		*) grep -q "xloop $c $sub" <<<"$usage" && echo "$sub $rest" ;; esac; done | sort)
	got=$(page_opts "$m/xloop-$c.1" OPTIONS | sort)
	[ "$want" = "$got" ] || bad="$bad $c"
	printf '%s' "$got${got:+
}" >"$T_TMP/opts-$c"
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
bad=
for c in $cmds; do
	while read -r a b c2; do
		[ -n "$a" ] || continue
		case $a in
		-*) sub= opt=$a arg=$b ;;
		*) sub=$a opt=$b arg=$c2 ;;
		esac
		# shellcheck disable=SC2086 # no subcommand, no value: no word
		err=$(as_user "$X" -C "$d" "$c" $sub "$opt" ${arg:+v} --frob-h35 2>&1 </dev/null)
		grep -q "unknown option '--frob-h35'" <<<"$err" || bad="$bad $c${sub:+ $sub} $opt"
	done <"$T_TMP/opts-$c"
done
check "the parser takes every option the pages list:${bad:- all}" test -z "$bad"

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
bad=
for c in $cmds; do
	subs=$("$X" help "$c" | grep -E '^(usage|   or): ' | awk -v c="$c" '$3 == c && $4 ~ /^[a-z][a-z-]*$/ { print $4 }' | sort -u)
	if [ -n "$subs" ] && [ "$c" != help ]; then
		[ "$(offers "$c" '')" = "$subs" ] || bad="$bad $c(subs)"
		for s in $subs; do
			want=$( (awk -v s="$s" '$1 == s { print $2 }' "$T_TMP/opts-$c"; printf '%s\n' --help --json --allow-root --allow-secret) | sort)
			[ "$(offers "$c" "$s" -)" = "$want" ] || bad="$bad $c-$s"
		done
		continue
	fi
	want=$( (awk '{ print $1 }' "$T_TMP/opts-$c"; printf '%s\n' --help --json --allow-root --allow-secret) | sort)
	[ "$(offers "$c" -)" = "$want" ] || bad="$bad $c"
done
check "bash: each command's (and subcommand's) options, exactly:${bad:- all}" test -z "$bad"
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
