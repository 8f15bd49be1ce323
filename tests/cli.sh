#!/usr/bin/env bash
# cli.sh - end-to-end checks of the wgnn command-line program.
#   tests/cli.sh /path/to/wgnn
# Prints "ok - name" / "not ok - name" per check, then "N passed, M failed";
# exits non-zero when a check failed. Small shapes: fine on lavapipe.
set -u

if [ $# -ne 1 ]; then
    echo "usage: $0 /path/to/wgnn" >&2
    exit 2
fi
case "$1" in
    /*) WGNN=$1 ;;
    *) WGNN=$PWD/$1 ;;
esac
if [ ! -x "$WGNN" ]; then
    echo "$0: $WGNN is not an executable" >&2
    exit 2
fi

TMP=$(mktemp -d) || exit 2
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 2

passed=0
failed=0

# run CMD...: runs wgnn with the arguments, keeping stdout, stderr and the status.
run() {
    "$WGNN" "$@" >out.txt 2>err.txt
    rc=$?
}

# check NAME CONDITION...: CONDITION is a command; on failure show what wgnn said.
check() {
    local name=$1
    shift
    if "$@"; then
        echo "ok - $name"
        passed=$((passed + 1))
    else
        echo "not ok - $name"
        failed=$((failed + 1))
        echo "#   exit status $rc; stdout/stderr:"
        sed 's/^/#   /' out.txt err.txt | head -20
    fi
}

rc_is() { [ "$rc" -eq "$1" ]; }
out_has() { grep -q -- "$1" out.txt; }
err_has() { grep -q -- "$1" err.txt; }
no_file() { [ ! -e "$1" ]; }

# --- usage ---------------------------------------------------------------------
run --help
check "--help exits 0 and prints usage" eval 'rc_is 0 && out_has "usage: wgnn"'
run help sdpa
check "help sdpa prints the sdpa usage" eval 'rc_is 0 && out_has "wgnn \[global options\] sdpa"'
run frobnicate
check "unknown command exits 2" eval 'rc_is 2 && err_has "frobnicate"'
run sdpa --q a.npy --k b.npy --v c.npy --out o.npy --bogus-flag
check "unknown sdpa flag exits 2 and names the flag" eval 'rc_is 2 && err_has "--bogus-flag" && err_has "usage:"'
run sdpa --q a.npy --k b.npy --v c.npy --out o.npy --scale 1.5x
check "bad number exits 2" eval 'rc_is 2 && err_has "1.5x"'
run sdpa --q a.npy --k b.npy --v c.npy --out
check "missing value exits 2" eval 'rc_is 2 && err_has "needs a value"'

# --- info ----------------------------------------------------------------------
run info
check "info exits 0 and lists adapters" eval 'rc_is 0 && { out_has "llvmpipe" || out_has "Adapter"; }'

# --- rand ----------------------------------------------------------------------
ok=1
for spec in "q 1,2,8,16 1" "k 1,2,8,16 2" "v 1,2,8,16 3" "q5 1,2,5,16 4" "k9 1,2,9,16 5" "v9 1,2,9,16 6" \
            "d6 1,2,8,6 7" "badmask 1,2,8,9 8"; do
    set -- $spec
    "$WGNN" rand --shape "$2" --seed "$3" --out "$1.npy" >/dev/null 2>err.txt || ok=0
    [ -s "$1.npy" ] || ok=0
done
"$WGNN" rand --shape 1,2,8,8 --min -1 --max 0 --mask-rows-inf 3 --out mask.npy >/dev/null 2>err.txt || ok=0
rc=$ok
check "rand writes .npy files" eval '[ "$ok" -eq 1 ] && [ -s mask.npy ]'
run rand --shape 4,4 --seed 7 --out r1.npy
run rand --shape 4,4 --seed 7 --out r2.npy
check "rand is deterministic for a seed" cmp -s r1.npy r2.npy
# a 1x4 float32 .npy is a 128-byte header plus 16 bytes; row 0 masked => 4 x -inf
run rand --shape 2,4 --mask-rows-inf 2 --out inf.npy
check "rand --mask-rows-inf sets rows to -inf" \
    eval '[ "$(od -An -tx4 -j128 -N16 inf.npy 2>/dev/null | tr -s " ")" = " ff800000 ff800000 ff800000 ff800000" ]'

# --- sdpa ----------------------------------------------------------------------
for impl in fused three-pass; do
    run sdpa --q q.npy --k k.npy --v v.npy --impl "$impl" --out "o_$impl.npy" --check
    check "sdpa --impl $impl --check passes" \
        eval 'rc_is 0 && out_has "check: PASS" && out_has "impl: $impl" && [ -s o_$impl.npy ]'
done
run sdpa --q q.npy --k k.npy --v v.npy --mask mask.npy --out o_mask.npy --check
check "sdpa with fully-masked rows --check passes" eval 'rc_is 0 && out_has "check: PASS"'
run sdpa --q q.npy --k k.npy --v v.npy --mask mask.npy --impl three-pass --scale 0.3 --out o_mask3.npy --check
check "sdpa three-pass with mask and --scale --check passes" eval 'rc_is 0 && out_has "check: PASS"'
run sdpa --q q5.npy --k k9.npy --v v9.npy --out o_59.npy --check
check "sdpa S_q=5 != S_kv=9 --check passes" eval 'rc_is 0 && out_has "check: PASS"'
run sdpa --q d6.npy --k d6.npy --v d6.npy --out o_d6.npy
check "sdpa D=6 fails with 'multiple of 4' and writes nothing" \
    eval 'rc_is 1 && err_has "multiple of 4" && no_file o_d6.npy'
run sdpa --q q.npy --k k.npy --v v.npy --mask badmask.npy --out o_badmask.npy
check "sdpa with a mismatched mask fails and writes nothing" \
    eval 'rc_is 1 && err_has "mask" && no_file o_badmask.npy'
run sdpa --q q.npy --k missing_k.npy --v v.npy --out o_missing.npy
check "sdpa with a missing input names the path" \
    eval 'rc_is 1 && err_has "missing_k.npy" && no_file o_missing.npy'
run sdpa --q q.npy --k k.npy --v v.npy
check "sdpa without --out exits 2" eval 'rc_is 2 && err_has "--out"'

# --- bench ---------------------------------------------------------------------
run bench sdpa --shape 1,2,64,64,16 --iters 3 --json
check "bench sdpa --json prints one JSON line with median_ms" \
    eval 'rc_is 0 && [ "$(wc -l <out.txt)" -eq 1 ] && out_has "\"median_ms\":" && out_has "^{.*}$"'
run bench sdpa --shape 1,2,32,48,16 --mask --impl three-pass --iters 2 --warmup 1 --check
check "bench sdpa --mask --check passes" eval 'rc_is 0 && out_has "check=PASS"'
run bench sdpa --shape 1,2,32,70,16 --f16 --mask --iters 2 --warmup 1 --check
check "bench sdpa --f16 --check passes (lavapipe has shader-f16)" eval 'rc_is 0 && out_has "float16" && out_has "check=PASS"'
run bench sdpa --shape 1,2,32,70,16 --f16 --impl three-pass --iters 1
check "bench sdpa --f16 three-pass is refused" eval 'rc_is 1 && err_has "only in the fused"'
run bench sdpa --shape 1,2,32,32,6 --iters 1 --json
check "bench sdpa error prints a JSON error and exits 1" \
    eval 'rc_is 1 && out_has "\"error\":" && err_has "multiple of 4"'
run bench sdpa --shape 1,2,3
check "bench sdpa with a 3-dim shape exits 2" eval 'rc_is 2 && err_has "--shape"'

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
