// Host-side declarations of the CUDA launchers (the *_impl.cu files). They
// take raw device pointers, counts, element types and the stream; kernel
// classes (*.cc) check inputs and compute shapes before calling them.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "core/framework/data_type.h"
#include "core/framework/status.h"

namespace onyx {
namespace cuda {

constexpr int kMaxRank = 8;

// Per output dimension: its size and the matching element stride of each
// operand (0 where the operand is broadcast along it).
struct IndexMap {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t strides[3][kMaxRank] = {};
  int64_t offset = 0;  // of operand 0 (Slice's start)
};
// Row-major strides of `dims`.
std::vector<int64_t> Strides(const std::vector<int64_t>& dims);
// The IndexMap broadcasting each of `inputs` (1 to 3 shapes) to `out`.
Status BroadcastMap(const std::vector<int64_t>& out, const std::vector<std::vector<int64_t>>& inputs, IndexMap* map);
// Output shape of broadcasting `a` and `b`; INVALID_ARGUMENT when they do not.
Status BroadcastShape(const std::vector<int64_t>& a, const std::vector<int64_t>& b, std::vector<int64_t>* out);

enum class BinaryOp { kAdd, kSub, kMul, kDiv, kPow, kMax, kMin };
enum class CompareOp { kEqual, kLess, kLessOrEqual, kGreater, kGreaterOrEqual };
// y (bool) = a <op> b, broadcast by `map`; the arithmetic types of LaunchBinary.
Status LaunchCompare(CompareOp op, ElemType t, const IndexMap& map, int64_t n, const void* a, const void* b, bool* y,
                     cudaStream_t s);
enum class UnaryOp { kRelu, kSigmoid, kTanh, kExp, kLog, kSqrt, kNeg, kAbs, kErf, kGelu, kGeluTanh, kReciprocal };

// Types the arithmetic launchers take (float16 computes in float).
bool BinarySupported(ElemType t);
bool UnarySupported(ElemType t);
Status LaunchBinary(BinaryOp op, ElemType t, const IndexMap& map, int64_t n, const void* a, const void* b, void* y,
                    cudaStream_t s);
Status LaunchUnary(UnaryOp op, ElemType t, int64_t n, const void* x, void* y, cudaStream_t s);
// y[i] = x[map(i)] for any element size (Transpose, Expand, Slice).
Status LaunchStridedCopy(size_t elem_size, const IndexMap& map, int64_t n, const void* x, void* y, cudaStream_t s);
Status LaunchCast(ElemType from, ElemType to, int64_t n, const void* x, void* y, cudaStream_t s);
bool CastSupported(ElemType t);
// y = cond ? a : b, all broadcast by `map` (operands 0 cond, 1 a, 2 b).
Status LaunchWhere(size_t elem_size, const IndexMap& map, int64_t n, const bool* cond, const void* a, const void* b,
                   void* y, cudaStream_t s);
// Gather along an axis: x viewed as [outer, axis_dim, inner], indices int32
// or int64 (negative ones count from the end; out-of-range ones give zeros).
Status LaunchGather(size_t elem_size, int64_t outer, int64_t axis_dim, int64_t inner, const void* x,
                    ElemType index_type, const void* indices, int64_t n_indices, void* y, cudaStream_t s);
// Softmax (log_softmax when `log`) over the middle axis of [outer, d, inner].
Status LaunchSoftmax(ElemType t, int64_t outer, int64_t d, int64_t inner, bool log, const void* x, void* y,
                     cudaStream_t s);
// LayerNormalization over the last `d` elements of each of `rows` rows;
// mean and inv_std (float, may be null) get one value per row.
Status LaunchLayerNorm(ElemType t, int64_t rows, int64_t d, float epsilon, const void* x, const void* scale,
                       const void* bias, void* y, float* mean, float* inv_std, cudaStream_t s);
// Mean over the middle axis of [outer, r, inner].
Status LaunchReduceMean(ElemType t, int64_t outer, int64_t r, int64_t inner, const void* x, void* y, cudaStream_t s);


// A reduction over any set of axes (launch_reduce.cu): the kept dimensions
// (one output element per index, in order) and the reduced ones, each with
// its row-major stride in the input.
struct ReduceMap {
  int kept_rank = 0, red_rank = 0;
  int64_t kept_dims[kMaxRank] = {}, kept_strides[kMaxRank] = {};
  int64_t red_dims[kMaxRank] = {}, red_strides[kMaxRank] = {};
  int64_t n_out = 1, count = 1;  // output elements; input elements per output
};
// The map of an input of shape `dims` reducing the axes where `reduce` is true.
Status MakeReduceMap(const std::vector<int64_t>& dims, const std::vector<bool>& reduce, ReduceMap* map);
// The ONNX Reduce* operators. Each output is the reduced elements mapped
// (x^2 for SumSquare and L2, |x| for L1, exp(x - max) for LogSumExp),
// combined (sum, product, max, min) and finished (/count for Mean, sqrt for
// L2, log for LogSum, log + max for LogSumExp). Float types accumulate in
// double, int32 and int64 (Sum, Max, Min only) in int64. An empty reduction
// gives the identity (0, 1, -inf or the lowest value, +inf or the highest)
// finished, as onnxruntime.
enum class ReduceOp { kSum, kMean, kMax, kMin, kProd, kSumSquare, kL1, kL2, kLogSum, kLogSumExp };
// Element types LaunchReduce takes for `op`.
bool ReduceSupported(ReduceOp op, ElemType t);
// y (map.n_out values) = `op` over the reduced axes of x.
Status LaunchReduce(ReduceOp op, ElemType t, const ReduceMap& map, const void* x, void* y, cudaStream_t s);
// y = x / divisor for n values (float types, double; computed in double).
Status LaunchDivide(ElemType t, int64_t n, double divisor, const void* x, void* y, cudaStream_t s);

}  // namespace cuda
}  // namespace onyx

namespace onyx {
namespace cuda {

// Inference BatchNormalization of x viewed as [n, c, spatial]: per channel,
// y = (x - mean) / sqrt(var + epsilon) * scale + bias (all of x's type).
Status LaunchBatchNorm(ElemType t, int64_t n, int64_t c, int64_t spatial, float epsilon, const void* x,
                       const void* scale, const void* bias, const void* mean, const void* var, void* y,
                       cudaStream_t s);

}  // namespace cuda
}  // namespace onyx

namespace onyx {
namespace cuda {

// A convolution's output y ([n / (channels * spatial), channels, spatial],
// n values) becomes act(y + bias[c] + z) in one pass; bias (channels values)
// and z (y's shape) may be null, act is Relu or nothing.
Status LaunchConvEpilogue(ElemType t, int64_t n, int64_t channels, int64_t spatial, const void* bias, const void* z,
                          bool relu, void* y, cudaStream_t s);

}  // namespace cuda
}  // namespace onyx
