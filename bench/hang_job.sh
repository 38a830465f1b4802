#!/bin/sh
# A hang a minute into a job (issue 47): `reprokit capture --compile-timeout` of bench/hang_job.py (60 s of steps,
# then a compile that never ends), then `reprokit bisect --from-capture` to its verdict and verified repro.py.
# Prints the capture's seconds to a written case, and the offline bisect's to its verdict and repro (its phase
# table). Run from the repository root: sh bench/hang_job.sh [COMPILE_TIMEOUT]; its default, 120s, because a
# loaded 2-core machine took over 60 s for the training step's own compile.
limit=${1:-120s}
work=$(mktemp -d)
cp bench/hang_job.py "$work/"
cd "$work" || exit 1
start=$(date +%s.%N)
python -m reprokit.cli capture --output-dir cap --compile-timeout "$limit" -- python hang_job.py >capture.out 2>capture.err
status=$?
written=$(date +%s.%N)
echo "capture: exit $status, $(echo "$written - $start" | bc) s to a written case ($(ls cap/rank0 | tr '\n' ' '))"
grep '^reprokit capture' capture.err
python -m reprokit.cli bisect --from-capture cap -o runs --no-pack >bisect.out 2>bisect.err
echo "bisect --from-capture: exit $?"
sed -n '/^failing stage/,$p' bisect.out
grep -E 'a hang:|repro.py verified|minified graph' bisect.err
echo "folder: $work"
