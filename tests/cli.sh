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

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd) # the source tree (tests/models)
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
run --adapter -1 info
check "--adapter -1 is a name that matches nothing, not a huge index" eval 'rc_is 1 && err_has "-1" && ! err_has "18446744073709551615"'

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
run rand --shape 4 --min -1e308 --max 1e308 --out big.npy
check "rand with a bound past float32's range is a usage error" eval 'rc_is 2 && err_has "float32" && no_file big.npy'
run rand --shape 8 --min 16777216 --max 16777218 --out top.npy
check "rand stays below --max where float32 rounds up to it" \
    eval 'rc_is 0 && [ "$(od -v -An -tx4 -j128 -N32 top.npy | tr -s " \n" " ")" = " 4b800000 4b800000 4b800000 4b800000 4b800000 4b800000 4b800000 4b800000 " ]'
run rand --shape 2 --out ""
check "rand --out with an empty path is a usage error" eval 'rc_is 2 && err_has "empty"'
mkdir -p outdir
run rand --shape 2 --out outdir
check "rand --out a directory is refused before any work" eval 'rc_is 2 && err_has "is a directory"'

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

# --- op: the op table, generic -------------------------------------------------------
# Every op `wgnn op --list` names (the lines that are not indented) has a
# --help; nothing here needs to change when an op is added.
run op --list
check "op --list exits 0 and lists sdpa" eval 'rc_is 0 && out_has "^sdpa$" && out_has "^    inputs: q, k, v, \[mask\]"'
ops=$(grep -v '^ ' out.txt | grep -v '^$')
for opname in $ops; do
    run op "$opname" --help
    check "op $opname --help names its inputs, shapes and arguments" \
        eval 'rc_is 0 && out_has "op $opname --in" && out_has "^inputs:" && out_has "^shapes:" && out_has "^arguments"'
    run bench op "$opname" --in-shape f64:2
    check "bench op $opname with a float64 --in-shape exits 2" eval 'rc_is 2 && err_has "bad --in-shape"'
done
run op split_with_sizes --in r1.npy --arg split_sizes=2,2 --out two.npy --out ./two.npy
check "op with two spellings of one --out is a usage error, nothing written" \
    eval 'rc_is 2 && err_has "name the same file" && no_file two.npy'
ln -sf two.npy two_link.npy
run op split_with_sizes --in r1.npy --arg split_sizes=2,2 --out two.npy --out two_link.npy
check "op with an --out and a link to it is a usage error" eval 'rc_is 2 && err_has "name the same file" && no_file two.npy'
run op constant_pad_nd --in r1.npy --arg pad=9223372036854775807,9223372036854775807 --out pad.npy
check "constant_pad_nd whose size passes int64 is refused" eval 'rc_is 1 && err_has "passes int64" && no_file pad.npy'
run op sdpa --help
check "op sdpa --help gives every argument with type, default and help" \
    eval 'rc_is 0 && out_has "scale *float, optional" && out_has "impl *auto|three-pass|fused|channel, default auto" &&
          out_has "multiplies q.k^T" && out_has "D % 4 == 0"'
run op --help
check "op --help prints the usage" eval 'rc_is 0 && out_has "usage: wgnn \[global options\] op NAME --in FILE"'

# --- op sdpa ---------------------------------------------------------------------------
one_line_err() { [ "$(wc -l <err.txt)" -eq 1 ]; }
"$WGNN" sdpa --q q.npy --k k.npy --v v.npy --out sdpa_o.npy >/dev/null 2>&1
run op sdpa --in q.npy --in k.npy --in v.npy --out op_o.npy --check
check "op sdpa --check passes and writes what wgnn sdpa writes" \
    eval 'rc_is 0 && out_has "^check: op_o.npy (float32 \[1,2,8,16\]): max_abs_err=.* PASS$" &&
          out_has "wrote op_o.npy" && cmp -s op_o.npy sdpa_o.npy'
"$WGNN" sdpa --q q.npy --k k.npy --v v.npy --mask mask.npy --scale 0.5 --out sdpa_om.npy >/dev/null 2>&1
run op sdpa --in q.npy --in k.npy --in v.npy --in mask.npy --arg scale=0.5 --out op_om.npy --check
check "op sdpa with a mask and --arg scale=0.5 --check passes, as wgnn sdpa" \
    eval 'rc_is 0 && out_has "PASS" && cmp -s op_om.npy sdpa_om.npy'
run op sdpa --in q5.npy --in k9.npy --in v9.npy --arg impl=three-pass --out op_59.npy --check
check "op sdpa S_q=5 != S_kv=9, --arg impl=three-pass, --check passes" eval 'rc_is 0 && out_has "PASS"'
run op sdpa --in <(cat q.npy) --in k.npy --in <(cat v.npy) --out op_pipe.npy --check
check "op sdpa reads inputs from pipes" eval 'rc_is 0 && cmp -s op_pipe.npy sdpa_o.npy'
# a private link to what /dev/stdout is (see my_stdout below)
ln -s /proc/self/fd/1 op_stdout
"$WGNN" op sdpa --in q.npy --in k.npy --in v.npy --out op_stdout --check >op_stdout.npy 2>err.txt
rc=$?
check "op sdpa --out /dev/stdout gives the .npy bytes alone, messages on stderr" \
    eval 'rc_is 0 && cmp -s op_stdout.npy sdpa_o.npy && err_has "PASS" && [ -L op_stdout ]'

run op frob --in q.npy --out o_frob.npy
check "op with an unknown op exits 2 in one line" \
    eval 'rc_is 2 && err_has "unknown op \"frob\" (\`wgnn op --list\` lists the ops)" && one_line_err && no_file o_frob.npy'
run op sdpa --in q.npy --in k.npy --in v.npy --arg bogus=1 --out o_bogus.npy
check "op with an unknown --arg key exits 2 in one line naming it and the keys" \
    eval 'rc_is 2 && err_has "unknown argument \"bogus\" (it takes: scale, impl, causal, enable_gqa)" && one_line_err && no_file o_bogus.npy'
run op sdpa --in q.npy --in k.npy --in v.npy --arg scale=abc --out o_badval.npy
check "op with a bad --arg value exits 1 in one line naming the argument" \
    eval 'rc_is 1 && err_has "scale=abc: the value is not a number" && one_line_err && no_file o_badval.npy'
run op sdpa --in q.npy --in k.npy --in v.npy --arg impl=warp --out o_badimpl.npy
check "op with a choice outside the list exits 1 naming it" eval 'rc_is 1 && err_has "impl=warp" && no_file o_badimpl.npy'
run op sdpa --in q.npy --in k.npy --in v.npy --arg scale=1 --arg scale=2 --out o_twice.npy
check "op with a --arg given twice exits 2" eval 'rc_is 2 && err_has "scale given twice" && no_file o_twice.npy'
run op sdpa --in q.npy --in k.npy --out o_2in.npy
check "op with too few --in exits 2 naming the counts" \
    eval 'rc_is 2 && err_has "takes 3 to 4 inputs (q, k, v, \[mask\]); 2 --in given" && one_line_err && no_file o_2in.npy'
run op sdpa --in q.npy --in k.npy --in v.npy --in mask.npy --in mask.npy --out o_5in.npy
check "op with too many --in exits 2" eval 'rc_is 2 && err_has "5 --in given" && no_file o_5in.npy'
run op sdpa --in q.npy --in k.npy --in v.npy --out o_a.npy --out o_b.npy
check "op with the wrong number of --out exits 2 naming both counts, writes nothing" \
    eval 'rc_is 2 && err_has "gives 1 output; 2 --out given" && one_line_err && no_file o_a.npy && no_file o_b.npy'
run op sdpa --in q.npy --in k.npy --in v.npy --out o_same.npy --out o_same.npy
check "op with one --out path twice exits 2" eval 'rc_is 2 && err_has "name the same file" && no_file o_same.npy'
run op sdpa --in q.npy --in k.npy --in v.npy
check "op without --out exits 2" eval 'rc_is 2 && err_has "--out"'
run op sdpa --out o_noin.npy
check "op without --in exits 2 naming the count" eval 'rc_is 2 && err_has "0 --in given" && no_file o_noin.npy'
run bench op sdpa
check "bench op without --in-shape exits 2 naming the count" eval 'rc_is 2 && err_has "0 --in-shape given"'
run op sdpa --in q.npy --in k.npy --in v.npy --in badmask.npy --out o_badmask_op.npy
check "op sdpa with a mismatched mask exits 1 in one line, writes nothing" \
    eval 'rc_is 1 && err_has "mask is \[1,2,8,9\] but must be" && one_line_err && no_file o_badmask_op.npy'
run op sdpa --in d6.npy --in d6.npy --in d6.npy --out o_d6_op.npy
check "op sdpa D=6 exits 1 with 'multiple of 4'" eval 'rc_is 1 && err_has "multiple of 4" && no_file o_d6_op.npy'
run op sdpa --in q.npy --in missing_k.npy --in v.npy --out o_missing_op.npy
check "op with a missing input names the path" eval 'rc_is 1 && err_has "missing_k.npy" && no_file o_missing_op.npy'
mkdir -p outdir
run op sdpa --in q.npy --in k.npy --in v.npy --out outdir
check "op --out onto a directory is a usage error, writes nothing" eval 'rc_is 2 && err_has "outdir is a directory" && [ -d outdir ]'

# float16 inputs: written by python3 (standard library) when it is there
have_py=0
command -v python3 >/dev/null 2>&1 && have_py=1
# write_f16 FILE D0,D1,... SEED: a float16 .npy of values in [-1, 1)
write_f16() {
    python3 - "$@" <<'PY'
import random, struct, sys
path, dims, seed = sys.argv[1], [int(x) for x in sys.argv[2].split(",")], int(sys.argv[3])
n = 1
for d in dims: n *= d
shape = "(" + ", ".join(map(str, dims)) + ("," if len(dims) == 1 else "") + ")"
text = "{'descr': '<f2', 'fortran_order': False, 'shape': %s, }" % shape
pad = (64 - (10 + len(text) + 1) % 64) % 64
rng = random.Random(seed)
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text) + 1 + pad) + text.encode() + b" " * pad + b"\n")
    f.write(struct.pack("<%de" % n, *[rng.uniform(-1, 1) for _ in range(n)]))
PY
}
if [ "$have_py" -eq 1 ]; then
    write_f16 qh.npy 1,2,8,16 1 && write_f16 kh.npy 1,2,12,16 2 && write_f16 vh.npy 1,2,12,16 3
    "$WGNN" sdpa --q qh.npy --k kh.npy --v vh.npy --out sdpa_oh.npy >/dev/null 2>&1
    run op sdpa --in qh.npy --in kh.npy --in vh.npy --out op_oh.npy --check
    check "op sdpa float16 --check passes (lavapipe has shader-f16), as wgnn sdpa" \
        eval 'rc_is 0 && out_has "float16 \[1,2,8,16\]" && out_has "PASS" && cmp -s op_oh.npy sdpa_oh.npy'
    run op sdpa --in qh.npy --in k.npy --in v.npy --out o_mixed.npy
    check "op sdpa float16 q with float32 k exits 1 in one line, writes nothing" \
        eval 'rc_is 1 && err_has "q is float16 but k is float32" && one_line_err && no_file o_mixed.npy'
else
    echo "ok - op sdpa float16 # skip python3 is missing"
fi

# --- inputs that are not regular files -------------------------------------------
run sdpa --q /dev/zero --k k.npy --v v.npy --out o_zero.npy
check "sdpa --q /dev/zero says it is not a regular file (character device)" \
    eval 'rc_is 1 && err_has "/dev/zero" && err_has "not a regular file (character device)" && no_file o_zero.npy'
run sdpa --q <(cat q.npy) --k k.npy --v <(cat v.npy) --out o_pipe.npy --check
check "sdpa reads inputs from pipes (<(cat x.npy)) and --check passes" eval 'rc_is 0 && out_has "check: PASS"'
run sdpa --q <(cat q.npy; head -c 100000 /dev/zero) --k k.npy --v v.npy --out o_pipe2.npy
check "sdpa refuses a pipe with trailing bytes" \
    eval 'rc_is 1 && err_has "trailing bytes after the 1024 data bytes" && no_file o_pipe2.npy'

# --- header first: shapes are checked before any data is read ----------------------
# write_npy_header FILE SHAPE: numpy's float32 header for SHAPE, e.g. "(2, 3)"
write_npy_header() {
    local dict="{'descr': '<f4', 'fortran_order': False, 'shape': $2, }"
    local hlen=$((${#dict} + 1))
    local pad=$(((64 - (10 + hlen) % 64) % 64))
    hlen=$((hlen + pad))
    {
        printf '\x93NUMPY\x01\x00'
        printf "\\x$(printf %02x $((hlen & 255)))\\x$(printf %02x $((hlen >> 8)))"
        printf "%s%${pad}s\n" "$dict" ""
    } >"$1"
}
# v declares 1 GiB of data, all there (a sparse file), but k is [1,2,8,16]
write_npy_header big_v.npy "(1, 2, 16384, 8192)"
truncate -s $(($(stat -c %s big_v.npy) + (1 << 30))) big_v.npy
t0=$(date +%s%N)
if [ -x /usr/bin/time ]; then
    /usr/bin/time -o rss.txt -f %M "$WGNN" sdpa --q q.npy --k k.npy --v big_v.npy --out o_big.npy >out.txt 2>err.txt
    rc=$?
    rss_kib=$(tail -1 rss.txt)
else
    run sdpa --q q.npy --k k.npy --v big_v.npy --out o_big.npy
    rss_kib=0 # not measured: the time bound below still holds
fi
ms=$((($(date +%s%N) - t0) / 1000000))
check "sdpa refuses a wrong-shaped 1 GiB input from its header (${ms} ms, max RSS ${rss_kib} KiB)" \
    eval 'rc_is 1 && err_has "k \[1,2,8,16\] and v \[1,2,16384,8192\] must have the same dims" &&
          [ "$rss_kib" -lt 400000 ] && [ "$ms" -lt 5000 ] && no_file o_big.npy'
run op sdpa --in q.npy --in k.npy --in big_v.npy --out o_big_op.npy
check "op sdpa refuses the wrong-shaped 1 GiB input from its header" \
    eval 'rc_is 1 && err_has "must have the same dims" && one_line_err && no_file o_big_op.npy'
rm -f big_v.npy
# a small file whose header says [1,1,1,6]: D=6, refused before the data is read
write_npy_header d6h.npy "(1, 1, 1, 6)"
head -c 24 /dev/zero >>d6h.npy
run sdpa --q d6h.npy --k d6h.npy --v d6h.npy --out o_d6h.npy
check "sdpa refuses D=6 from the header" eval 'rc_is 1 && err_has "multiple of 4" && no_file o_d6h.npy'
write_npy_header short.npy "(1, 2, 8, 16)"
head -c 1000 /dev/zero >>short.npy
run sdpa --q q.npy --k short.npy --v v.npy --out o_short.npy
check "sdpa names a truncated input before reading any data" \
    eval 'rc_is 1 && err_has "short.npy: truncated: expected 1024 data bytes, found 1000" && no_file o_short.npy'

# --- outputs that are not regular files ------------------------------------------
# no_temp NAME: no NAME.tmp.* left behind
no_temp() { ! ls "$1".tmp.* >/dev/null 2>&1; }
"$WGNN" rand --shape 2,3 --seed 9 --out ref.npy >/dev/null 2>&1
if mknod full c 1 7 2>/dev/null; then
    run rand --shape 2,3 --seed 9 --out full
    check "rand --out onto a /dev/full node fails with ENOSPC, in one line, and leaves the node a device" \
        eval 'rc_is 1 && err_has "full: write failed.*No space left on device" && [ "$(wc -l <err.txt)" -eq 1 ] &&
              [ -c full ] && no_temp full'
    run sdpa --q q.npy --k k.npy --v v.npy --out full
    check "sdpa --out onto a /dev/full node fails with ENOSPC and leaves the node a device" \
        eval 'rc_is 1 && err_has "No space left on device" && [ -c full ] && no_temp full'
    run op sdpa --in q.npy --in k.npy --in v.npy --out full
    check "op --out onto a /dev/full node fails with ENOSPC and leaves the node a device" \
        eval 'rc_is 1 && err_has "No space left on device" && [ -c full ] && no_temp full'
    rm -f full
    mknod null c 1 3
    run rand --shape 2,3 --out null
    check "rand --out onto a /dev/null node succeeds and leaves the node a device" eval 'rc_is 0 && [ -c null ] && no_temp null'
    rm -f null
else
    echo "ok - --out onto device nodes # skip mknod needs root"
fi
mkfifo fifo
timeout 20 cat fifo >from_fifo.npy &
reader=$!
run rand --shape 2,3 --seed 9 --out fifo
wait "$reader"
check "rand --out into a FIFO writes through it and leaves it a FIFO" \
    eval 'rc_is 0 && [ -p fifo ] && cmp -s from_fifo.npy ref.npy && no_temp fifo'
# my_stdout is what /dev/stdout is, a link to /proc/self/fd/1; a private one,
# so that a wgnn which replaced its --out could not replace the system's.
ln -s /proc/self/fd/1 my_stdout
"$WGNN" rand --shape 2,3 --seed 9 --out my_stdout 2>err.txt | cat >piped.npy
rc=$?
check "rand --out /dev/stdout into a pipe gives the .npy bytes alone" \
    eval 'cmp -s piped.npy ref.npy && err_has "wrote my_stdout" && [ -L my_stdout ]'
"$WGNN" sdpa --q q.npy --k k.npy --v v.npy --out my_stdout --check >stdout.npy 2>err.txt
rc=$?
"$WGNN" sdpa --q q.npy --k k.npy --v v.npy --out o_ref.npy >/dev/null 2>&1
check "sdpa --out /dev/stdout (a regular file) is written in place, messages go to stderr" \
    eval 'rc_is 0 && cmp -s stdout.npy o_ref.npy && err_has "check: PASS" && [ -L my_stdout ]'
ln -s ref_target.npy link.npy
run rand --shape 2,3 --seed 9 --out link.npy
check "rand --out through a symlink keeps the link" eval 'rc_is 0 && [ -L link.npy ] && cmp -s ref_target.npy ref.npy'
(ulimit -f 4 && exec "$WGNN" rand --shape 64,64 --out fsz.npy) >out.txt 2>err.txt
rc=$?
check "past ulimit -f, rand reports 'File too large' and leaves no temp file" \
    eval 'rc_is 1 && err_has "File too large" && no_file fsz.npy && no_temp fsz.npy'

# A signal while the output is being saved: the temp file must go. A
# preloaded rename() that waits forever holds wgnn at that moment.
cat >block_rename.c <<'EOF'
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
int rename(const char *from, const char *to) {
    const char *mark = getenv("BLOCK_RENAME_MARK");
    (void)from; (void)to;
    if (mark) close(open(mark, O_WRONLY | O_CREAT, 0600));
    for (;;) pause();
}
EOF
if ${CC:-cc} -shared -fPIC -o block_rename.so block_rename.c 2>/dev/null; then
    for sig in TERM INT; do
        rm -f mark
        # a background job starts with SIGINT ignored; env gives it back
        defsig=""
        if [ "$sig" = INT ]; then env --default-signal=INT true 2>/dev/null && defsig="env --default-signal=INT"; fi
        if [ "$sig" = INT ] && [ -z "$defsig" ]; then
            echo "ok - SIGINT while saving # skip env --default-signal is missing"
            continue
        fi
        BLOCK_RENAME_MARK=$PWD/mark LD_PRELOAD=$PWD/block_rename.so \
            ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
            $defsig "$WGNN" rand --shape 4,4 --out sig.npy >out.txt 2>err.txt &
        pid=$!
        for _ in $(seq 200); do [ -e mark ] && break; sleep 0.1; done
        had_temp=0
        [ -e "sig.npy.tmp.$pid" ] && had_temp=1
        kill -s "$sig" "$pid"
        wait "$pid"
        rc=$?
        want=$((128 + $(kill -l "$sig")))
        check "SIG$sig while saving removes sig.npy.tmp.PID, then dies of the signal" \
            eval '[ "$had_temp" -eq 1 ] && rc_is "$want" && no_file sig.npy && no_temp sig.npy'
    done
    # op stages its outputs (op_sig.npy.tmp.XXXXXX, itself saved through a
    # temporary): SIGTERM while the library renames must remove both.
    rm -f mark
    BLOCK_RENAME_MARK=$PWD/mark LD_PRELOAD=$PWD/block_rename.so \
        ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
        "$WGNN" op sdpa --in q.npy --in k.npy --in v.npy --out op_sig.npy >out.txt 2>err.txt &
    pid=$!
    for _ in $(seq 200); do [ -e mark ] && break; sleep 0.1; done
    n_temps=$(ls op_sig.npy.tmp.* 2>/dev/null | wc -l)
    kill -s TERM "$pid"
    wait "$pid"
    rc=$?
    check "SIGTERM while op saves removes its staged and temporary files ($n_temps of them)" \
        eval '[ "$n_temps" -eq 2 ] && rc_is 143 && no_file op_sig.npy && no_temp op_sig.npy'
else
    echo "ok - signals while saving # skip no C compiler for the rename shim"
fi

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

run bench sdpa --shape 1,1,2147483647,1,1024 --iters 1 --warmup 0
check "bench sdpa with a q past the device's buffer size is refused before filling it" \
    eval 'rc_is 1 && err_has "maxBufferSize"'
run bench op relu --in-shape f32:2147483647,1024 --iters 1
check "bench op with an input past the device's buffer size is refused before filling it" \
    eval 'rc_is 1 && err_has "maxBufferSize"'

# --- bench op ---------------------------------------------------------------------
# is_json: out.txt is one line holding one JSON object with the keys given
is_json() {
    [ "$have_py" -eq 1 ] || { out_has "^{.*}$"; return; }
    [ "$(wc -l <out.txt)" -eq 1 ] &&
        python3 -c 'import json,sys; d=json.loads(open("out.txt").read()); sys.exit(0 if all(k in d for k in sys.argv[1:]) else 1)' "$@"
}
s3="--in-shape f32:1,2,16,8 --in-shape f32:1,2,16,8 --in-shape f32:1,2,16,8"
run bench op sdpa $s3 --iters 2 --json
check "bench op sdpa --json prints one JSON object (median_ms, bytes, gbps)" \
    eval 'rc_is 0 && is_json median_ms min_ms max_ms bytes gbps timer adapter && out_has "\"bytes\":4096,"'
run bench op sdpa $s3 --in-shape 'f32:1,2,16,16{-1,0}' --arg scale=0.5 --iters 2 --warmup 1 --flops 16384 --check --json
check "bench op sdpa with a mask, --arg, --flops and --check passes" \
    eval 'rc_is 0 && is_json tflops max_abs_err check && out_has "\"check\":\"PASS\""'
run bench op sdpa --in-shape f16:1,2,16,8 --in-shape f16:1,2,24,8 --in-shape f16:1,2,24,8 --iters 1 --check
check "bench op sdpa float16 --check passes" eval 'rc_is 0 && out_has "float16" && out_has "GB/s" && out_has "check=PASS"'
run bench op sdpa --in-shape f32:1,2,16,6 --in-shape f32:1,2,16,6 --in-shape f32:1,2,16,6 --iters 1 --json
check "bench op sdpa refused by the op prints a JSON error and exits 1" \
    eval 'rc_is 1 && is_json error && err_has "multiple of 4"'
run bench op frob --in-shape f32:4
check "bench op on an unknown op exits 2 in one line" \
    eval 'rc_is 2 && err_has "unknown op \"frob\"" && one_line_err'
run bench op sdpa --in-shape f64:4 --in-shape f32:4 --in-shape f32:4
check "bench op with a bad --in-shape exits 2 naming it" eval 'rc_is 2 && err_has "bad --in-shape .f64:4."'
run bench op sdpa $s3 --arg nope=1
check "bench op with an unknown --arg key exits 2" eval 'rc_is 2 && err_has "unknown argument \"nope\""'
run bench op sdpa $s3 --flops -5
check "bench op --flops must be a number > 0" eval 'rc_is 2 && err_has "--flops"'

# --- wgnn run: a model folder --------------------------------------------------
M=$SRC/tests/models
run run --model "$M/vit" --image "$M/image.png" --out last.npy --pooled-out pool.npy \
    --ref "$M/vit/pil_last_hidden_state.npy" --pooled-ref "$M/vit/pil_pooler_output.npy"
check "run vit on the sample image agrees with PyTorch and writes both outputs" \
    eval 'rc_is 0 && out_has "last_hidden_state vs" && out_has "pooler_output vs" && [ -s last.npy ] && [ -s pool.npy ]'
check "run's --out holds last_hidden_state [1,17,32] float32" \
    eval '[ "$(stat -c %s last.npy)" -eq $((128 + 17 * 32 * 4)) ] && head -c 128 last.npy | grep -q "(1, 17, 32)"'
run run --model "$M/siglip" --input "$M/siglip/input.npy" --ref "$M/siglip/last_hidden_state.npy" \
    --pooled-ref "$M/siglip/pooler_output.npy" --iters 2 --profile
check "run siglip on pixel_values .npy agrees with PyTorch, with a profile" \
    eval 'rc_is 0 && out_has "GPU time" && out_has "sdpa"'
check "run --iters 2 also times two pipelined runs, their outputs equal the single run's" \
    eval 'out_has "pipelined: 2 runs" && out_has "outputs equal the single run"'
check "run --iters 2 then times two resident runs of the graph alone, outputs equal the single run's" \
    eval 'out_has "resident: 2 runs of the graph alone" && ! out_has "DIFFER"'
run run --model "$M/vit" --input "$M/vit/input.npy" --ref "$M/vit_bf16/last_hidden_state.npy" --out bad.npy
check "run with a mismatching --ref exits 3 and writes nothing" eval 'rc_is 3 && no_file bad.npy'
run run --model "$M/vit" --image "$M/image.png" --image "$M/image.png" --out batch.npy
check "run on two images makes a batch of 2" \
    eval 'rc_is 0 && out_has "input \[2,3,32,32\]" && head -c 128 batch.npy | grep -q "(2, 17, 32)"'
run run --model "$M/vit" --image "$M/vit/config.json" --out x.npy
check "run on a file that is not an image exits 1 in one line, nothing written" \
    eval 'rc_is 1 && err_has "config.json" && one_line_err && no_file x.npy'
run run --model "$M/nope" --image "$M/image.png" --out x.npy
check "run on a missing folder exits 1 naming it" eval 'rc_is 1 && err_has "nope" && no_file x.npy'
mkdir -p badmodel && cp "$M/vit/config.json" "$M/vit/preprocessor_config.json" badmodel/ &&
    head -c 3000 "$M/vit/model.safetensors" > badmodel/model.safetensors
run run --model badmodel --input "$M/vit/input.npy" --out x.npy
check "run on a truncated model.safetensors exits 1 naming the file" \
    eval 'rc_is 1 && err_has "model.safetensors" && one_line_err && no_file x.npy'
run run --model "$M/vit" --input "$M/vit/last_hidden_state.npy"
check "run on a rank-3 --input exits 1 naming the shape rule" eval 'rc_is 1 && err_has "\[B, C, H, W\]"'
run run --model "$M/vit" --image "$M/image.png" --input "$M/vit/input.npy"
check "run with both --image and --input is a usage error" eval 'rc_is 2'
run run --model "$M/vit" --input "$M/vit/input.npy" --weights q4
check "run --weights q4 is a usage error" eval 'rc_is 2 && err_has "q4"'

# --- tokenize (tests/data/tokenizers/tiny: ids derived by hand in make_tiny.py) ---
TK="$SRC/tests/data/tokenizers/tiny"
run tokenize --model "$TK" --text "Hello world<|endoftext|>"
check "tokenize --text prints the ids on one line, the special token matched" eval 'rc_is 0 && [ "$(cat out.txt)" = "262 264 265" ]'
run tokenize --model "$TK/tokenizer.json" --decode 262,264,32,72,265
check "tokenize --decode prints the text" eval 'rc_is 0 && [ "$(cat out.txt)" = "Hello world H<|endoftext|>" ]'
run tokenize --model "$TK" --text "$(printf 'ab\377')"
check "tokenize of text that is not UTF-8 names the byte, not the tokenizer file" \
    eval 'rc_is 1 && err_has "text to encode is not valid UTF-8 at byte 2 (0xff)" && ! err_has "tokenizer.json"'
run tokenize --model "$TK" --decode 262,99999
check "tokenize --decode with an id out of range exits 1 and prints nothing" \
    eval 'rc_is 1 && err_has "99999" && [ ! -s out.txt ]'

# --- generate (tests/models/qwen3: PyTorch's greedy continuation in fixtures.json) ---
QW="$SRC/tests/models/qwen3"
GEN="891,88,767,88,767,88,561,232,964,564,561,564,561,564,771,374,904,374,35,464,288,767,88,767"
run tokenize --model "$QW" --decode "$GEN"
cp out.txt want.txt
run generate --model "$QW" --prompt "The quick brown fox can't jump over 13 lazy dogs." --max-new-tokens 24 \
    --ids-out ids.npy --logits-out logits.npy
check "generate --prompt streams PyTorch's greedy continuation" eval 'rc_is 0 && cmp -s out.txt want.txt'
check "generate prints a summary line on stderr" eval 'err_has "prompt 33 tokens" && err_has "generated 24 tokens"'
check "generate --ids-out holds prompt + generated ids (int32), --logits-out [33, 1024]" \
    eval '[ "$(stat -c %s ids.npy)" -eq $((128 + 57 * 4)) ] && [ "$(stat -c %s logits.npy)" -eq $((128 + 33 * 1024 * 4)) ]'
run generate --model "$QW" --prompt "The quick brown fox can't jump over 13 lazy dogs." --max-new-tokens 0 \
    --logits-out logits0.npy --ids-out ids0.npy
check "generate --max-new-tokens 0 writes the prompt's logits (those of a full run) and its ids" \
    eval 'rc_is 0 && err_has "no tokens generated" && cmp -s logits0.npy logits.npy && [ "$(stat -c %s ids0.npy)" -eq $((128 + 33 * 4)) ]'
run generate --model "$QW" --prompt-ids 51,928 --max-new-tokens 0 --ids-out gone.npy
check "generate --max-new-tokens 0 without --logits-out is a usage error" eval 'rc_is 2 && no_file gone.npy'
run generate --model "$QW" --prompt "The quick brown fox can't jump over 13 lazy dogs." --max-new-tokens 24 \
    --max-context 36 --ids-out ids36.npy
check "generate stops at the end of the KV cache and says so" \
    eval 'rc_is 0 && err_has "generated 3 tokens, stopped at the end of the KV cache" && [ "$(stat -c %s ids36.npy)" -eq $((128 + 36 * 4)) ]'
run generate --model "$QW" --prompt-ids 51,928,676 --max-new-tokens 4 --temperature 0.9 --top-k 20 --top-p 0.95 --seed 1
check "generate samples with --temperature/--top-k/--top-p" eval 'rc_is 0 && err_has "generated 4 tokens"'
bind=$("$WGNN" info 2>/dev/null | awk '/max_storage_buffer_binding_size/ {print $2}')
if [ -n "$bind" ] && [ "$bind" -lt 2147483648 ]; then # a layer's cache at 2^24 positions: 2 GiB
    run generate --model "$QW" --prompt-ids 51,928 --max-context 16777216 --ids-out gone.npy
    check "generate with a KV cache past a storage binding is refused at load, naming --max-context" \
        eval 'rc_is 1 && one_line_err && err_has "lower --max-context" && no_file gone.npy'
fi
run generate --model "$QW" --prompt-ids 51,928 --temperature -1
check "generate --temperature -1 is a usage error" eval 'rc_is 2 && err_has "temperature"'
run generate --model "$QW" --prompt-ids 51,928 --top-p -0.5
check "generate --top-p -0.5 is a usage error" eval 'rc_is 2 && err_has "top-p"'
run generate --model "$QW" --prompt-ids 51,928 --ids-out same.npy --logits-out ./same.npy
check "generate with --ids-out and --logits-out naming one file is a usage error" \
    eval 'rc_is 2 && err_has "name the same file" && no_file same.npy'
run generate --model "$QW" --prompt-ids 51,928 --greedy --temperature 0.5
check "generate --greedy with a sampling option is a usage error" eval 'rc_is 2'
run generate --model "$QW" --prompt x --weights q4
check "generate --weights q4 is a usage error" eval 'rc_is 2 && err_has "q4"'
run generate --model "$TMP/nowhere" --prompt-ids 1,2 --ids-out gone.npy
check "generate on a missing folder exits 1 with one line and writes nothing" \
    eval 'rc_is 1 && one_line_err && err_has "config.json" && no_file gone.npy'
mkdir -p badlm && cp "$QW"/config.json "$QW"/tokenizer.json badlm/ && head -c 3000 "$QW/model.safetensors" >badlm/model.safetensors
run generate --model badlm --prompt "hi" --ids-out gone.npy
check "generate on a truncated model.safetensors exits 1 naming it and writes nothing" \
    eval 'rc_is 1 && one_line_err && err_has "model.safetensors" && no_file gone.npy'
mkdir -p badtok && cp "$QW"/config.json "$QW"/model.safetensors badtok/ && head -c 500 "$QW/tokenizer.json" >badtok/tokenizer.json
run generate --model badtok --prompt "hi" --ids-out gone.npy
check "generate with a truncated tokenizer.json exits 1 naming it and writes nothing" \
    eval 'rc_is 1 && one_line_err && err_has "tokenizer.json" && no_file gone.npy'
run generate --model "$QW" --prompt-ids 51,99999
check "generate with an id past the vocabulary exits 1 naming it" eval 'rc_is 1 && err_has "99999"'
for bad in "51,,928" "51,x" "-3" ""; do
    run generate --model "$TMP/nowhere" --prompt-ids "$bad" --ids-out gone.npy
    check "generate --prompt-ids '$bad' is a usage error (exit 2) before the model loads" \
        eval 'rc_is 2 && err_has "prompt-ids" && ! err_has "nowhere" && no_file gone.npy'
    run tokenize --model "$TMP/nowhere" --decode "$bad"
    check "tokenize --decode '$bad' is a usage error (exit 2) before the tokenizer loads" \
        eval 'rc_is 2 && err_has "decode" && ! err_has "nowhere"'
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
