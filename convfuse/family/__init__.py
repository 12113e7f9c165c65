"""The family step (DESIGN.md, "The family"): models of KernelBench level 2 that are a conv and elementwise ops after it,
served by generated code. trace.py reads the model, epilogue.py writes its epilogue as CUDA, template.py compiles that
into a conv template of kernels/family/ (fp32: conv_epilogue.cuh; tf32: conv_epilogue_mma.cuh) and builds the
extension; run.py is the GPU run (scripts/family_gpu.py); models.py holds the nine problems."""
from .trace import UnsupportedModel  # noqa: F401  (trace.trace is the tracer; the module keeps its name)
