#!/bin/bash
# Session call 4 (untracked): write bandwidth of tensor-copy stores by geometry (sp.py), and ncu's L2 write sectors.
D=$OUT/call4; mkdir -p $D; date > $D/start.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $D/gpu.txt 2>&1
python3 sp.py > $D/patterns.log 2>&1; echo "rc $?" >> $D/patterns.log
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_write.sum,lts__t_requests_op_write.sum
ncu --clock-control none -k regex:"pattern|fill|elementwise" --metrics $M python3 sp.py ncu A B C D H > $D/ncu.log 2>&1
echo "ncu rc $?" >> $D/ncu.log
date > $D/end.txt
cd $OUT && tar czf call4.tgz call4
cat $D/patterns.log | grep -v Warning
grep -E "pattern|vectorized|elementwise|gpu__time|dram__bytes|lts__t" $D/ncu.log | awk '{print $1, $(NF-1), $NF}'
