// Col2Im (opset 18): input [N, C*prod(block_shape), L] -> [N, C, image_shape...],
// summing every block column back into the image it was taken from, with
// dilations, pads (begin..., end...) and strides per spatial dim. L must be
// the number of sliding blocks the geometry gives.
#include <algorithm>
#include <string>
#include <vector>

#include "providers/cpu/common/dispatch.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

class Col2ImKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    const std::string who = info.node().Describe();
    dilations_ = info.AttrInts("dilations");
    pads_ = info.AttrInts("pads");
    strides_ = info.AttrInts("strides");
    for (int64_t v : dilations_) ONYX_CHECK(v > 0, ErrorCode::kInvalidGraph, who, ": dilations must be positive");
    for (int64_t v : strides_) ONYX_CHECK(v > 0, ErrorCode::kInvalidGraph, who, ": strides must be positive");
    for (int64_t v : pads_) ONYX_CHECK(v >= 0, ErrorCode::kInvalidGraph, who, ": pads must be non-negative");
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor *x = nullptr, *img = nullptr, *blk = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &img));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(2, &blk));
    ONYX_CHECK_ARG(x->rank() == 3, "Col2Im: input 'input' ", ShapeToString(x->dims()), " must be [N, C*prod(block), L]");
    ONYX_CHECK_ARG(img->type() == ElemType::kInt64 && img->rank() == 1 && img->size() > 0,
                   "Col2Im: input 'image_shape' must be a non-empty 1-D int64 tensor");
    ONYX_CHECK_ARG(blk->type() == ElemType::kInt64 && blk->dims() == img->dims(), "Col2Im: input 'block_shape' ",
                   ShapeToString(blk->dims()), " must be int64 with the shape of input 'image_shape' ",
                   ShapeToString(img->dims()));
    const size_t nd = static_cast<size_t>(img->size());
    const std::vector<int64_t> image(img->data<int64_t>(), img->data<int64_t>() + nd);
    const std::vector<int64_t> block(blk->data<int64_t>(), blk->data<int64_t>() + nd);
    auto pick = [&](const std::vector<int64_t>& v, size_t n, int64_t dflt, const char* name,
                    std::vector<int64_t>* out) -> Status {
      if (v.empty()) {
        out->assign(n, dflt);
        return Status::OK();
      }
      ONYX_CHECK_ARG(v.size() == n, "Col2Im: attribute ", name, " has ", v.size(), " values; ", n, " are needed");
      *out = v;
      return Status::OK();
    };
    std::vector<int64_t> d, p, s;
    ONYX_RETURN_IF_ERROR(pick(dilations_, nd, 1, "dilations", &d));
    ONYX_RETURN_IF_ERROR(pick(pads_, 2 * nd, 0, "pads", &p));
    ONYX_RETURN_IF_ERROR(pick(strides_, nd, 1, "strides", &s));
    int64_t kvol = 1, L = 1, isz = 1;
    std::vector<int64_t> nb(nd);
    for (size_t j = 0; j < nd; ++j) {
      ONYX_CHECK_ARG(block[j] > 0 && image[j] >= 0, "Col2Im: inputs 'image_shape' and 'block_shape' must be positive");
      ONYX_CHECK_ARG(s[j] > 0 && d[j] > 0 && p[j] >= 0 && p[j + nd] >= 0,
                     "Col2Im: strides and dilations must be positive and pads non-negative along dim ", j);
      // Hostile values overflow int64 here: checked, not wrapped.
      int64_t span = 0, reach = 0;
      const bool overflow = __builtin_mul_overflow(d[j], block[j] - 1, &reach) ||
                            __builtin_add_overflow(image[j], p[j], &span) ||
                            __builtin_add_overflow(span, p[j + nd], &span) ||
                            __builtin_sub_overflow(span, reach + 1, &span) || reach == INT64_MAX;
      ONYX_CHECK_ARG(!overflow && span >= 0, "Col2Im: input 'block_shape' does not fit input 'image_shape' along dim ", j);
      nb[j] = span / s[j] + 1;
      ONYX_CHECK_ARG(!__builtin_mul_overflow(kvol, block[j], &kvol) && !__builtin_mul_overflow(L, nb[j], &L) &&
                         !__builtin_mul_overflow(isz, image[j], &isz),
                     "Col2Im: image_shape or block_shape has more elements than fit in int64");
    }
    const Dims& xd = x->dims();
    ONYX_CHECK_ARG(xd[1] % kvol == 0, "Col2Im: input 'input' ", ShapeToString(xd), " dim 1 is not a multiple of ",
                   kvol, " (the product of input 'block_shape')");
    ONYX_CHECK_ARG(xd[2] == L, "Col2Im: input 'input' ", ShapeToString(xd), " has ", xd[2], " blocks but ", L,
                   " are needed for this image_shape, block_shape, pads, strides and dilations");
    const int64_t N = xd[0], C = xd[1] / kvol;
    Dims yd{N, C};
    yd.insert(yd.end(), image.begin(), image.end());
    Tensor* y = ctx.Output(0, yd, x->type());
    if (y == nullptr || y->size() == 0) return Status::OK();
    return DispatchOver(FloatOrHalfTypeSet{}, x->type(), "Col2Im", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      const T* xv = x->data<T>();
      T* yv = y->data<T>();
      ThreadPool::For(ctx.threads(), N * C, 1, [&](int64_t b0, int64_t b1) {
        std::vector<double> acc(static_cast<size_t>(isz));
        std::vector<int64_t> kk(nd), bb(nd);
        for (int64_t nc = b0; nc < b1; ++nc) {
          std::fill(acc.begin(), acc.end(), 0.0);
          for (int64_t kr = 0; kr < kvol; ++kr) {
            int64_t rem = kr;
            for (size_t j = nd; j-- > 0;) {
              kk[j] = rem % block[j];
              rem /= block[j];
            }
            const T* src = xv + (nc * kvol + kr) * L;
            std::fill(bb.begin(), bb.end(), 0);
            for (int64_t l = 0; l < L; ++l) {
              bool inside = true;
              int64_t off = 0;
              for (size_t j = 0; j < nd; ++j) {
                const int64_t o = bb[j] * s[j] - p[j] + kk[j] * d[j];
                inside = inside && o >= 0 && o < image[j];
                off = off * image[j] + o;
              }
              if (inside) acc[off] += static_cast<double>(src[l]);
              for (size_t j = nd; j-- > 0;) {
                if (++bb[j] < nb[j]) break;
                bb[j] = 0;
              }
            }
          }
          for (int64_t i = 0; i < isz; ++i) yv[nc * isz + i] = static_cast<T>(acc[i]);
        }
      });
      return Status::OK();
    });
  }

 private:
  std::vector<int64_t> dilations_, pads_, strides_;
};

}  // namespace

ONYX_REGISTER_KERNEL(Col2ImKernel, "", "Col2Im", 18, kMaxVersion, FloatOrHalfTypes());

}  // namespace onyx
