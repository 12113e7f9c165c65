#!/bin/bash
# Session call 5 (untracked): three conv2d benchmark runs (04d TF32, 04c fp16) into files of their own, not a record.
D=$OUT/call5; mkdir -p $D; date > $D/start.txt
for i in 1 2 3; do timeout 80 python3 -m convfuse bench --problem conv2d --variant 04d_rs_tf32 --variant 04c_ws_fp16 --no-odd --out $D/bench$i.json > $D/bench$i.log 2>&1; echo "rc $?" >> $D/bench$i.log; date >> $D/start.txt; done
date > $D/end.txt; cp call5.sh $D/
python3 - <<'PY'
import json, os
D = os.environ["OUT"] + "/call5"
for i in (1, 2, 3):
    try:
        r = json.load(open(f"{D}/bench{i}.json"))
    except Exception as e:
        print(i, "no file", e); continue
    b = r["env"].get("board_during_timing", {}).get("conv2d", {})
    for x in r["records"]:
        if x["problem"] == "conv2d" and x["variant"] in ("04d_rs_tf32", "04c_ws_fp16", "compile", "eager"):
            print(i, x["variant"], round(x["median_ms"], 3), round(x["speedup_vs_compile"], 3), round(x["speedup_vs_eager"], 2),
                  "capped", round(b.get("power_capped", -1), 2), "MHz", round(b.get("clock_mhz", 0)))
PY
cd $OUT && tar czf call5.tgz call5 && rm -rf call5
