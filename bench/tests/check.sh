# shellcheck shell=bash
# check.sh - the one `check` the end-to-end test scripts beside the smoke test share (hosts-test.sh,
# own-test.sh): sourced, with TMP set to the script's own directory and PASSED=0 FAILED=0.
#
# check DESCRIPTION COMMAND...: run the command, count and print the outcome with its seconds; a
# failure shows the command's last 15 lines.
check() {
    local what=$1 t0=$SECONDS
    shift
    if "$@" >"$TMP/check.out" 2>&1; then
        PASSED=$((PASSED + 1)); echo "ok   - $what ($((SECONDS - t0)) s)"
    else
        FAILED=$((FAILED + 1)); echo "FAIL - $what ($((SECONDS - t0)) s)"; sed 's/^/       /' "$TMP/check.out" | tail -n 15
    fi
}
