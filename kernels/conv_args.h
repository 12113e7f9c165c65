// conv_args.h — the argument block of the one host ABI (see common.cuh). Plain C++ so that both the
// nvcc-compiled kernel file and the g++-compiled torch glue in convfuse/build.py can see it.
#pragma once
#include <cuda_runtime.h>

struct ConvArgs {
    const float* x;      // fused variants: conv input [N, Cin, D, H, W]; epilogue variants: conv output [N, Cout, Do, Ho, Wo]
    const float* w;      // conv weight [Cout, Cin, (k,) k, k]; nullptr for epilogue variants
    const float* bias;   // conv bias [Cout]; epilogue variants add it themselves (their conv runs without bias)
    const float* param;  // the per-channel epilogue parameter [Cout]: multiplier (conv2d) or sum_tensor (conv3d)
    float* y;            // output [N, Cout, Do, Ho, Wo]
    int N, Cin, Cout;
    int D, H, W;         // input spatial extent; D = 1 for conv2d
    int Do, Ho, Wo;      // output spatial extent; Do = 1 for conv2d
    int k;               // kernel size along each convolved axis (1 along D for conv2d)
};

// Implemented once per kernel file: launch on `stream`; nullptr on success, else a message saying
// which argument is outside what the kernel supports.
const char* launch(const ConvArgs& a, cudaStream_t stream);
