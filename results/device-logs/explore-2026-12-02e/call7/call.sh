#!/bin/bash
# Session call 7 (untracked): ncu source pages of CF_XWIN_LATE and CF_XWIN_LATE + CF_XWIN_W1 + CF_GROUP_DOUBLE (fp16).
D=$OUT/call7; mkdir -p $D; date > $D/start.txt
F=conv3d:04b_wgmma_fp16; L=CF_GROUP_STORE,CF_XWIN,CF_XWIN_LATE; B=$L,CF_XWIN_W1,CF_GROUP_DOUBLE
timeout 60 python3 xk.py build $F@$L $F@$B > $D/build.log 2>&1; echo "build rc $?" | tee -a $D/build.log
for v in "$F@$L" "$F@$B"; do
  tag=$(echo "$v" | tr ':@,=' '____')
  timeout 55 ncu --clock-control none --profile-from-start off --section SourceCounters --section WarpStateStats --page source --print-source sass --csv python3 scripts/ncu_sections.py "$v" 2> $D/ncu_err_$tag.log | gzip > $D/ncu_source_$tag.csv.gz
done
date > $D/end.txt
cd $OUT && tar czf call7.tgz call7
ls -la $D
