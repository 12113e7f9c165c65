export PYTHONPATH=$PWD; L=$OUT/l; mkdir -p $L
S="$*"
python3 -c "import sys; sys.path.insert(0,'scripts'); import check_variant as C; from convfuse import build as B; B.build_all([C.parse_spec(s) for s in '$S'.split()])" > $L/build.log 2>&1; tail -1 $L/build.log
timeout 90 python3 -c "
import torch,sys; sys.path.insert(0,'scripts'); import check_variant as C
from convfuse import build as B, problems as P, registry as R
for s in ['conv2d:04c_ws_tf32','conv2d:04c_ws_3xfp16']:
  v=C.parse_spec(s); m=B.build_all([v],log=lambda *a:None)[(v.problem,v.key)]; prob=P.get('conv2d'); model=prob.make_model(seed=0,device='cuda'); x=prob.make_input(prob.odd_shapes[0],device='cuda',dist='randn')
  y=R.kernel_runner(v,m)(x,*P.conv_params(model)); torch.cuda.synchronize(); ref=P.ground_truth(model,x).float(); print(s,'smoke',(y-ref).abs().max().item(),flush=True)
" > $L/smoke.log 2>&1; tail -3 $L/smoke.log
grep -q "04c_ws_3xfp16 smoke" $L/smoke.log || exit 0
timeout 200 python3 scripts/check_variant.py $S > $L/explore.log 2>&1; grep -E "rel_l2|timing|^  " $L/explore.log | tail -30
[ -n "$NOSAN" ] && exit 0
timeout 100 python3 -m convfuse.sanitize --problem conv2d --variant 04c_ws_3xfp16 --variant 04c_ws_tf32 --out $L/sanitize_04c.json --logs $L/sanlogs > $L/sanitize.log 2>&1; tail -4 $L/sanitize.log
timeout 100 python3 -m pytest -q -m gpu -p no:cacheprovider -rfE tests/test_gpu_hardening.py -k "04c and not beyond" > $L/harden.log 2>&1; tail -4 $L/harden.log
for so in build/convfuse_conv2d_04c*/*.so; do cuobjdump -sass $so > $L/$(basename $so .so).sass 2>/dev/null; done
timeout 150 ncu --profile-from-start off --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section Occupancy python3 scripts/ncu_sections.py conv2d/04c_ws_3xfp16 conv2d/04c_ws_tf32 > $L/ncu_sections_04c.txt 2>&1; grep -E "ncu-sections|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Eligible Warps" $L/ncu_sections_04c.txt | head -20
