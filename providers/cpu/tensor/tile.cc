// Tile: opset 6+ takes one repeat count per dim; opset 1 takes a scalar count
// (input 1, tiles) for the one dim named by input 2 (axis).
#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "providers/cpu/common/indexing.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

class TileKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    opset_ = info.opset();
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    const Tensor* R = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &R));
    const int64_t rank = static_cast<int64_t>(X->rank());
    const Dims& in = X->dims();
    std::vector<int64_t> reps;
    if (opset_ < 6) {
      const Tensor* A = nullptr;
      ONYX_RETURN_IF_ERROR(ctx.RequiredInput(2, &A));
      int64_t tiles = 0, axis_value = 0, axis = 0;
      ONYX_RETURN_IF_ERROR(ReadIndexScalar(*R, "Tile", "input 1 (tiles)", &tiles));
      ONYX_RETURN_IF_ERROR(ReadIndexScalar(*A, "Tile", "input 2 (axis)", &axis_value));
      ONYX_RETURN_IF_ERROR(NormalizeAxis(axis_value, rank, "Tile", "input 2 (axis)", &axis));
      reps.assign(static_cast<size_t>(rank), 1);
      reps[axis] = tiles;
    } else {
      ONYX_CHECK_ARG(R->rank() == 1, "Tile: input 1 (repeats) must be 1-D, got shape ", ShapeToString(R->dims()));
      ONYX_RETURN_IF_ERROR(ReadIndexTensor(*R, "Tile", "input 1 (repeats)", &reps));
      ONYX_CHECK_ARG(static_cast<int64_t>(reps.size()) == rank, "Tile: input 1 (repeats) has ", reps.size(),
                     " values but input 0 (input) shape ", ShapeToString(in), " has rank ", rank);
    }
    Dims out(static_cast<size_t>(rank));
    for (int64_t d = 0; d < rank; ++d) {
      ONYX_CHECK_ARG(reps[d] >= 0, "Tile: ", opset_ < 6 ? "input 1 (tiles)" : "input 1 (repeats)",
                     " must be >= 0, got ", ShapeToString(reps));
      ONYX_CHECK_ARG(in[d] == 0 || reps[d] <= INT64_MAX / in[d], "Tile: input 1 (repeats) ", ShapeToString(reps),
                     " overflows the size of input 0 (input) shape ", ShapeToString(in));
      out[d] = in[d] * reps[d];
    }
    ONYX_CHECK_ARG(ShapeFits(out), "Tile: output shape ", ShapeToString(out), " is too large");
    Tensor* Y = ctx.Output(0, out, X->type());
    if (Y == nullptr || Y->size() == 0) return Status::OK();
    const Dims xs = RowMajorStrides(in);
    return DispatchByStorage(X->type(), "Tile", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      const T* x = X->data<T>();
      T* y = Y->data<T>();
      if (rank == 0) {
        y[0] = x[0];
        return Status::OK();
      }
      // First the input's rows, each repeated along the last dim, at the
      // output coordinates of the input; then, from the innermost dim out,
      // each filled block is copied reps[d] - 1 times after itself: large
      // contiguous copies instead of element-wise index arithmetic.
      const Dims os = RowMajorStrides(out);
      const int64_t in_inner = in[rank - 1];
      const int64_t in_rows = X->size() / in_inner;
      ThreadPool::For(ctx.threads(), in_rows, std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, out[rank - 1])),
                      [&](int64_t b, int64_t e) {
                        for (int64_t r = b; r < e; ++r) {
                          int64_t rem = r, off = 0;
                          for (int64_t d = rank - 2; d >= 0; --d) {
                            off += (rem % in[d]) * os[d];
                            rem /= in[d];
                          }
                          const T* src = x + r * in_inner;
                          for (int64_t k = 0; k < reps[rank - 1]; ++k)
                            std::copy(src, src + in_inner, y + off + k * in_inner);
                        }
                      });
      for (int64_t d = rank - 2; d >= 0; --d) {
        if (reps[d] == 1) continue;
        const int64_t block = in[d] * os[d];
        const int64_t blocks = DimProduct(in, 0, d);  // filled blocks so far: one per input coordinate before d
        ThreadPool::For(ctx.threads(), blocks, std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(1, block * reps[d])),
                        [&](int64_t b, int64_t e) {
                          for (int64_t q = b; q < e; ++q) {
                            int64_t rem = q, off = 0;
                            for (int64_t k = d - 1; k >= 0; --k) {
                              off += (rem % in[k]) * os[k];
                              rem /= in[k];
                            }
                            T* base = y + off;
                            for (int64_t t = 1; t < reps[d]; ++t) std::copy(base, base + block, base + t * block);
                          }
                        });
      }
      return Status::OK();
    });
  }

 private:
  int opset_ = 0;
};

}  // namespace

ONYX_REGISTER_KERNEL(TileKernel, "", "Tile", 1, kMaxVersion, MovableTypes());

}  // namespace onyx
