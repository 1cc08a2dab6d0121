#!/usr/bin/env bash
# Every schema is a valid JSON Schema, every --json output validates against
# its schema, and the defaults xloop writes validate against the config schema.
. "$(dirname "$0")/lib.sh"

X=$XLOOP_BIN
S=${XLOOP_ROOT_DIR:?}/schemas
V="/usr/bin/python3 $(dirname "$0")/validate.py"

check "every schema is valid" $V --check-schemas "$S"

d=$(user_dir)
check "init --json validates" sh -c "runuser -u '$XLOOP_TEST_USER' -- '$X' -C '$d' init --json | $V '$S/init.schema.json'"
check "init --json (again) validates" sh -c "runuser -u '$XLOOP_TEST_USER' -- '$X' -C '$d' init --json | $V '$S/init.schema.json'"
check "version --json validates" sh -c "'$X' version --json | $V '$S/version.schema.json'"
check "the written xloop.json validates" sh -c "$V '$S/config.schema.json' < '$d/xloop.json'"

# the validator itself rejects what it must (the checks above can fail)
expect_rc 1 "a wrong document is rejected" sh -c "echo '{\"version\": 1}' | $V '$S/version.schema.json'"
check "a config with an unknown key is rejected by the schema too" sh -c \
	"! echo '{\"colour\": \"blue\"}' | $V '$S/config.schema.json' 2>/dev/null"
check "cv.json without a score is rejected" sh -c "! echo '{\"metric\": \"auc\"}' | $V '$S/cv.schema.json' 2>/dev/null"
check "cv.json with a score validates" sh -c "echo '{\"score\": 0.91, \"fold\": 3}' | $V '$S/cv.schema.json'"
check "cv.json with the configured metric key (accuracy) validates" sh -c "echo '{\"accuracy\": 0.91}' | $V '$S/cv.schema.json'"

finish
