#!/usr/bin/env bash
# Notifications against a local webhook receiver (tests/t/httpd.py): the
# payload of every notify.kind, retries (5xx, 429 with Retry-After), the time
# budget (a receiver that never answers), refusals (4xx, redirects, file://,
# no URL), the URL never shown beyond scheme and host, and the outbox across
# flushes (kept after a failure, delivered in order by the next flush).
. "$(dirname "$0")/lib.sh"

X=$XLOOP_BIN
S=${XLOOP_ROOT_DIR:?}/schemas
TD=$(cd "$(dirname "$0")" && pwd)
V="/usr/bin/python3 $TD/validate.py"
NOPROXY=127.0.0.1,localhost
LOG=$T_TMP/requests.jsonl
OUT=$T_TMP/out

# the receiver: a free port on 127.0.0.1, every request logged
: >"$LOG"
step "the request log" chmod 644 "$LOG"
/usr/bin/python3 "$TD/httpd.py" "$T_TMP/port" "$LOG" 120 &
HTTPD=$!
trap 'kill "$HTTPD" 2>/dev/null; wait "$HTTPD" 2>/dev/null; rm -rf "$T_TMP"' EXIT
for _ in $(seq 100); do
	[ -s "$T_TMP/port" ] && break
	sleep 0.1
done
PORT=$(cat "$T_TMP/port" 2>/dev/null)
if [ -z "$PORT" ]; then
	not_ok "the test webhook receiver started"
	finish
	exit
fi
BASE=http://127.0.0.1:$PORT
SHOWN="$BASE/***"

d=$(user_dir)
check "init" as_user "$X" -C "$d" init --study nt

# xn URL ARGS...: xloop in the study as the test user with XLOOP_NOTIFY_URL
# set to URL; output (both streams) in $OUT, exit code in $RC, seconds in $SECS
xn() {
	local url=$1 t0=$EPOCHREALTIME
	shift
	as_user env XLOOP_NOTIFY_URL="$url" NO_PROXY=$NOPROXY no_proxy=$NOPROXY \
		"$X" -C "$d" "$@" >"$OUT" 2>&1
	RC=$?
	SECS=$(awk "BEGIN { printf \"%.1f\", $EPOCHREALTIME - $t0 }")
}
# xq KIND ARGS...: notify queue KIND ARGS..., which must succeed (for step)
xq() {
	xn "" notify queue "$@"
	[ "$RC" -eq 0 ] || { cat "$OUT"; return 1; }
}
# the same without the variable
xn_unset() {
	as_user env -u XLOOP_NOTIFY_URL "$X" -C "$d" "$@" >"$OUT" 2>&1
	RC=$?
}
# nreq PATH: requests the receiver saw for PATH
nreq() {
	python3 -c 'import json, sys
print(sum(1 for l in open(sys.argv[1]) if json.loads(l)["path"] == sys.argv[2]))' "$LOG" "$1"
}
# body PATH [N]: the body of the N-th (default: last) request for PATH
body() {
	python3 -c 'import json, sys
r = [json.loads(l) for l in open(sys.argv[1]) if json.loads(l)["path"] == sys.argv[2]]
sys.stdout.write(r[int(sys.argv[3])]["body"] if r else "")' "$LOG" "$1" "${2:--1}"
}
# gap PATH: seconds between the first two requests for PATH
gap() {
	python3 -c 'import json, sys
r = [json.loads(l)["t"] for l in open(sys.argv[1]) if json.loads(l)["path"] == sys.argv[2]]
print("%.2f" % (r[1] - r[0]) if len(r) > 1 else -1)' "$LOG" "$1"
}
# dbq SQL: rows of a query on the study's database ("|"-separated), as the user
dbq() {
	as_user python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
for r in c.execute(sys.argv[2]):
    print("|".join("" if v is None else str(v) for v in r))' "$d/.xloop/state.db" "$1"
}
# set_conf KEY VALUE: notify.KEY in xloop.json (the file keeps its owner)
set_conf() {
	python3 -c 'import json, sys
p = sys.argv[1]
c = json.load(open(p))
c.setdefault("notify", {})[sys.argv[2]] = sys.argv[3]
open(p, "w").write(json.dumps(c, indent=2) + "\n")' "$d/xloop.json" "$1" "$2"
}
# ok_if NAME CONDITION-COMMAND...: pass when the command succeeds, else show $OUT
ok_if() {
	local name=$1
	shift
	if "$@"; then ok "$name"; else not_ok "$name" "exit $RC in ${SECS:-?} s: $(cat "$OUT")"; fi
}
has() { grep -qF -- "$1" "$OUT"; }
lacks() { ! grep -qF -- "$1" "$OUT"; }
under() { awk "BEGIN { exit !($SECS < $1) }"; }

# a payload check for notify.kind $1 on the request to path $2
cat >"$T_TMP/payload.py" <<'EOF'
import json, sys
log, path, kind = sys.argv[1:4]
reqs = [json.loads(l) for l in open(log) if json.loads(l)["path"] == path]
assert len(reqs) == 1, "%d requests to %s" % (len(reqs), path)
r = reqs[0]
h = r["headers"]
assert r["method"] == "POST", r["method"]
assert h.get("user-agent", "").startswith("xloop/"), h
want = "test notification from xloop (study nt)"
if kind == "ntfy":
    assert h.get("content-type", "").startswith("text/plain"), h
    assert h.get("title") == "xloop nt", h
    assert r["body"] == want, r["body"]
else:
    assert h.get("content-type") == "application/json", h
    doc = json.loads(r["body"])
    if kind == "discord":
        assert doc["content"] == want, doc
        assert doc.get("allowed_mentions") == {"parse": []}, doc
    elif kind == "slack":
        assert doc == {"text": want}, doc
    else:
        assert doc["kind"] == "test" and doc["study"] == "nt" and doc["text"] == want, doc
        assert doc["id"] == 0 and doc["tag"] == "", doc
EOF

# --- notify test: one POST per kind, the right body ---------------------------
for kind in discord slack ntfy json; do
	set_conf kind "$kind"
	xn "$BASE/ok/$kind" notify test
	ok_if "notify test ($kind): exit 0, redacted URL shown" eval \
		'[ "$RC" -eq 0 ] && has "sent a test notification (kind $kind) to $SHOWN" && lacks "/ok/$kind"'
	check "notify test ($kind): one POST with the $kind payload" \
		python3 "$T_TMP/payload.py" "$LOG" "/ok/$kind" "$kind"
done
body /ok/json >"$T_TMP/event.json"
validates "the json payload validates against event.schema.json" event "$T_TMP/event.json"
check "a wrong event document is rejected by the schema" \
	sh -c "! echo '{\"kind\": \"party\", \"study\": \"nt\"}' | $V '$S/event.schema.json' 2>/dev/null"
xn "$BASE/ok/js" notify test --json
validates "notify test --json validates" notify "$OUT"

# --- retries ---------------------------------------------------------------------
xn "$BASE/flaky/t" notify test
ok_if "a 500 is retried: delivered on the 2nd request" \
	eval '[ "$RC" -eq 0 ] && [ "$(nreq /flaky/t)" -eq 2 ]'
xn "$BASE/limited/t" notify test
ok_if "a 429 with Retry-After: 1 is waited for, then delivered" \
	eval '[ "$RC" -eq 0 ] && [ "$(nreq /limited/t)" -eq 2 ] && awk "BEGIN { exit !($(gap /limited/t) >= 0.9) }"'
xn "$BASE/later/t" notify test
ok_if "a 429 with Retry-After: 60 is not waited for" \
	eval '[ "$RC" -eq 1 ] && [ "$(nreq /later/t)" -eq 1 ] && under 5 && has "429"'
xn "http://127.0.0.1:1/ok/refused" notify test
ok_if "connection refused: 3 tries with backoff, then exit 1" \
	eval '[ "$RC" -eq 1 ] && under 10 && awk "BEGIN { exit !($SECS >= 1.4) }" && lacks "/ok/refused"'

# --- the time budget and redaction -------------------------------------------------
xn "$BASE/slow/secret-slow-path" notify test
ok_if "a receiver that never answers: exit 1 within 15 s, URL path not shown" \
	eval '[ "$RC" -eq 1 ] && under 15 && lacks "secret-slow-path" && has "$SHOWN"'
ok_if "a request that timed out is not repeated at once" eval '[ "$(nreq /slow/secret-slow-path)" -eq 1 ]'
xn "$BASE/gone/secret-gone-path" notify test
ok_if "a 404 gives up after one request; the echoed path is redacted" \
	eval '[ "$RC" -eq 1 ] && [ "$(nreq /gone/secret-gone-path)" -eq 1 ] && has "404" && lacks "secret-gone-path"'
xn "http://user:hunter2@127.0.0.1:$PORT/gone/pw" notify test
ok_if "a password in the URL is never shown" eval '[ "$RC" -eq 1 ] && lacks "hunter2" && lacks "/gone/pw"'
n_ok=$(nreq /ok)
xn "$BASE/moved/r" notify test
ok_if "a redirect is not followed" \
	eval '[ "$RC" -eq 1 ] && [ "$(nreq /ok)" -eq "$n_ok" ] && has "redirects are not followed"'

# --- configuration errors --------------------------------------------------------------
xn_unset notify test
ok_if "no URL: exit 78 naming XLOOP_NOTIFY_URL" eval '[ "$RC" -eq 78 ] && has "XLOOP_NOTIFY_URL"'
xn "" notify test
ok_if "an empty URL: exit 78" eval '[ "$RC" -eq 78 ] && has "XLOOP_NOTIFY_URL"'
xn "file:///etc/secret-file" notify test
ok_if "a file:// URL is refused (exit 78, not shown)" \
	eval '[ "$RC" -eq 78 ] && has "http:// or https://" && lacks "secret-file"'
step "notify.url_env MY_HOOK" set_conf url_env MY_HOOK
as_user env -u XLOOP_NOTIFY_URL MY_HOOK="$BASE/ok/myhook" NO_PROXY=$NOPROXY no_proxy=$NOPROXY \
	"$X" -C "$d" notify test >"$OUT" 2>&1
RC=$?
ok_if "notify.url_env names another variable" eval '[ "$RC" -eq 0 ] && [ "$(nreq /ok/myhook)" -eq 1 ]'
xn_unset notify test
ok_if "no URL: the message names the configured variable" eval '[ "$RC" -eq 78 ] && has "MY_HOOK"'
step "notify.url_env XLOOP_NOTIFY_URL" set_conf url_env XLOOP_NOTIFY_URL
step "notify.kind telegram" set_conf kind telegram
xn "$BASE/ok/bad" notify test
ok_if "an unknown notify.kind is a config error" eval '[ "$RC" -eq 78 ] && has "notify.kind"'
step "notify.kind json" set_conf kind json
validates "the config with notify.kind validates" config "$d/xloop.json"

# --- the outbox ------------------------------------------------------------------------
xn "" notify queue party "x"
ok_if "an unknown event kind is refused" eval '[ "$RC" -eq 2 ]'
step "queue a failure event" xq failure "lr-0.1 attempt 1 failed: OUT_OF_MEMORY" --tag lr-0.1
step "queue a new_best event" xq new_best "lr-0.2 is the new best: 0.93"
ok_if "events are queued" eval '[ "$(dbq "SELECT count(*) FROM outbox WHERE status = '\''queued'\''")" -eq 2 ]'

xn "$BASE/slow/q" notify flush
ok_if "flush to a receiver that never answers: exit 1 within 15 s, both kept" \
	eval '[ "$RC" -eq 1 ] && under 15 && has "sent 0 notifications; 2 still queued" && lacks "/slow/q"'
ok_if "the flush stopped at the first event (order kept)" eval '[ "$(nreq /slow/q)" -eq 1 ]'
row1=$(dbq "SELECT status, attempts, last_error FROM outbox WHERE id = 1")
case $row1 in
"queued|1|"*"no answer"*) case $row1 in *"/slow/q"*) not_ok "last_error is redacted" "$row1" ;; *) ok "the failed event stays queued with attempts and a redacted last_error" ;; esac ;;
*) not_ok "the failed event stays queued with attempts and a redacted last_error" "$row1" ;;
esac

xn "$BASE/flaky/q" notify flush --json
ok_if "the next flush delivers both (after one 500)" \
	eval '[ "$RC" -eq 0 ] && [ "$(nreq /flaky/q)" -eq 3 ] && [ "$(jget .sent < "$OUT")" -eq 2 ]'
validates "notify flush --json validates" notify "$OUT"
body /flaky/q 1 >"$T_TMP/e1.json"
body /flaky/q 2 >"$T_TMP/e2.json"
check "the delivered events are valid event documents" sh -c \
	"$V '$S/event.schema.json' < '$T_TMP/e1.json' && $V '$S/event.schema.json' < '$T_TMP/e2.json'"
ok_if "delivered oldest first (the retried one before the next)" eval \
	'[ "$(jget .id < "$T_TMP/e1.json")" = 1 ] && [ "$(jget .tag < "$T_TMP/e1.json")" = lr-0.1 ] &&
	 [ "$(jget .kind < "$T_TMP/e1.json")" = failure ] && [ "$(jget .id < "$T_TMP/e2.json")" = 2 ]'
ok_if "both rows are marked sent" eval '[ "$(dbq "SELECT group_concat(status || '\'':'\'' || attempts) FROM outbox")" = "sent:3,sent:1" ]'
n_ok=$(nreq /ok/none)
xn "$BASE/ok/none" notify flush
ok_if "a flush with nothing queued sends nothing" \
	eval '[ "$RC" -eq 0 ] && has "sent 0 notifications; 0 still queued" && [ "$(nreq /ok/none)" -eq 0 ]'

step "queue a stale event" xq stale "lr-0.3: no log line for 20 min"
xn "$BASE/gone/q" notify flush
ok_if "a 404 marks the event failed after one request" \
	eval '[ "$RC" -eq 1 ] && [ "$(nreq /gone/q)" -eq 1 ] && [ "$(dbq "SELECT status FROM outbox WHERE id = 3")" = failed ]'
xn "$BASE/ok/after-gone" notify flush
ok_if "a failed event is not retried" eval '[ "$RC" -eq 0 ] && [ "$(nreq /ok/after-gone)" -eq 0 ]'

step "queue a stuck event" xq stuck "lr-0.4 pending: PartitionTimeLimit"
xn "$BASE/limited/q" notify flush
ok_if "flush honours Retry-After" eval '[ "$RC" -eq 0 ] && [ "$(nreq /limited/q)" -eq 2 ] && has "sent 1 notification;"'

step "queue a queue_empty event" xq queue_empty "the queue is empty"
step "outbox rows made older" as_user python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("UPDATE outbox SET at = at - 90000 WHERE status = '"'queued'"'")
c.commit()' "$d/.xloop/state.db"
xn "$BASE/ok/expired" notify flush
ok_if "an event queued for over 24 h expires unsent" \
	eval '[ "$(nreq /ok/expired)" -eq 0 ] && [ "$(dbq "SELECT status FROM outbox WHERE id = 5")" = expired ] && has "expired"'

step "queue a one_left event" xq one_left "one job left"
xn_unset notify flush
ok_if "flush without a URL drops the queued events" \
	eval '[ "$RC" -eq 0 ] && has "dropped 1 queued notification" && [ "$(dbq "SELECT status FROM outbox WHERE id = 6")" = no_url ]'
xn "$BASE/ok/after-drop" notify flush
ok_if "dropped events are not sent later" eval '[ "$RC" -eq 0 ] && [ "$(nreq /ok/after-drop)" -eq 0 ]'
xn "file:///tmp/x" notify flush
ok_if "flush with a file:// URL: exit 78" eval '[ "$RC" -eq 78 ]'

# event ids never repeat: after a quiet month every done row is pruned but
# the newest, so the next event does not get id 1 again (a receiver that
# drops duplicates by id would drop it)
last=$(dbq "SELECT max(id) FROM outbox")
step "outbox rows made older" as_user python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("UPDATE outbox SET at = at - 40 * 86400, done_at = done_at - 40 * 86400")
c.commit()' "$d/.xloop/state.db"
xn "$BASE/ok/month" notify flush
step "queue a stale event" xq stale "after a quiet month"
ok_if "old rows are pruned, the newest kept" eval '[ "$(dbq "SELECT count(*) FROM outbox")" -eq 2 ]'
ok_if "an event after a quiet month gets a new id ($last -> $(dbq "SELECT max(id) FROM outbox"))" \
	eval '[ "$(dbq "SELECT max(id) FROM outbox")" -gt "$last" ]'

finish
