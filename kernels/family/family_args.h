// family_args.h — the argument block of the family's generated kernels (convfuse/family/template.py). Plain C++ so that
// both the nvcc-compiled kernel and the g++-compiled torch glue see it; template.py prepends it to both as text.
#pragma once
#include <cuda_runtime.h>

namespace cf_family {

constexpr int kMaxParams = 8;   // tensors of the model an epilogue may read (convfuse/family/epilogue.py reads this)

// The model's tensors the epilogue reads, in the generator's slot order: per-channel ones [Cout], scalars [1].
struct Params {
    const float* p[kMaxParams];
};

struct FamilyArgs {
    const float* x;      // conv input [N, Cin, D, H, W], contiguous (D = 1 for 2-D)
    const float* w;      // conv weight [Cout, Cin, (3,) 3, 3]
    const float* bias;   // conv bias [Cout], or nullptr for a conv without bias
    float* y;            // output [N, Cout, Do, Ho, Wo], or [N, 1 or none, Do, Ho, Wo] after a reduction over channels
    Params params;
    int N, Cin, Cout;
    int D, H, W;
    int Do, Ho, Wo;
};

// What both designs' launchers refuse before anything else: channels other than the generated ones, or an output extent
// that is not a valid k=3, stride-1 conv's. nullptr where the arguments are the kernel's.
template <int CIN, int COUT, int DIMS>
inline const char* shape_error(const FamilyArgs& a) {
    static_assert(DIMS == 2 || DIMS == 3, "the family's convs are 2-D or 3-D");
    if (a.Cin != CIN) return "in_channels differ from the ones this kernel was generated for";
    if (a.Cout != COUT) return "out_channels differ from the ones this kernel was generated for";
    if (a.Wo != a.W - 2 || a.Ho != a.H - 2 || (DIMS == 3 ? a.Do != a.D - 2 : (a.D != 1 || a.Do != 1)))
        return "output extent is not the input's minus 2 (kernel size 3, stride 1, no padding)";
    return nullptr;
}

}  // namespace cf_family

// Implemented by each generated source: launch on `stream`; nullptr on success, else what is outside the kernel.
const char* family_launch(const cf_family::FamilyArgs& a, cudaStream_t stream);
// Channels of the output: Cout, or 1 where the epilogue reduces over channels.
int family_out_channels();
