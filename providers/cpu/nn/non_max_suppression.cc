// NonMaxSuppression (opset 10+): per batch and class, boxes whose score passes
// score_threshold are taken in descending score order (ties: lower box index
// first); a box is kept unless its IoU with a box already kept for that class
// exceeds iou_threshold, up to max_output_boxes_per_class. Output rows are
// [batch, class, box], batch-major then class then selection order.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "providers/cpu/common/indexing.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

// A box as its corners and area, computed in float as the reference does.
struct Corners {
  float x_min, y_min, x_max, y_max, area;
};

Corners ToCorners(const float* b, bool center_point) {
  Corners c;
  if (center_point) {  // [x_center, y_center, width, height]
    const float hw = b[2] / 2, hh = b[3] / 2;
    c.x_min = b[0] - hw;
    c.x_max = b[0] + hw;
    c.y_min = b[1] - hh;
    c.y_max = b[1] + hh;
  } else {  // [y1, x1, y2, x2], either diagonal
    c.y_min = std::min(b[0], b[2]);
    c.y_max = std::max(b[0], b[2]);
    c.x_min = std::min(b[1], b[3]);
    c.x_max = std::max(b[1], b[3]);
  }
  c.area = (c.x_max - c.x_min) * (c.y_max - c.y_min);
  return c;
}

bool Suppresses(const Corners& a, const Corners& b, float iou_threshold) {
  const float ix_min = std::max(a.x_min, b.x_min), ix_max = std::min(a.x_max, b.x_max);
  if (ix_max <= ix_min) return false;
  const float iy_min = std::max(a.y_min, b.y_min), iy_max = std::min(a.y_max, b.y_max);
  if (iy_max <= iy_min) return false;
  const float inter = (ix_max - ix_min) * (iy_max - iy_min);
  if (inter <= 0) return false;
  const float uni = a.area + b.area - inter;
  if (a.area <= 0 || b.area <= 0 || uni <= 0) return false;
  return inter / uni > iou_threshold;
}

// A one-element float input (a scalar or [1]), or `def` when omitted.
Status ReadFloatScalar(const Tensor* t, int index, const char* name, float def, bool* given, float* out) {
  *given = t != nullptr && t->size() > 0;
  *out = def;
  if (t == nullptr || t->size() == 0) return Status::OK();
  ONYX_CHECK_ARG(t->type() == ElemType::kFloat, "NonMaxSuppression: input ", index, " (", name,
                 ") must be float, got ", ElemTypeName(t->type()));
  ONYX_CHECK_ARG(t->size() == 1 && t->rank() <= 1, "NonMaxSuppression: input ", index, " (", name,
                 ") must hold one value, got shape ", ShapeToString(t->dims()));
  *out = t->data<float>()[0];
  return Status::OK();
}

class NonMaxSuppressionKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    const int64_t c = info.AttrInt("center_point_box", 0);
    ONYX_CHECK_ARG(c == 0 || c == 1, "NonMaxSuppression: attribute center_point_box must be 0 or 1, got ", c);
    center_point_ = c == 1;
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* boxes = nullptr;
    const Tensor* scores = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &boxes));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &scores));
    const Dims& bd = boxes->dims();
    const Dims& sd = scores->dims();
    ONYX_CHECK_ARG(bd.size() == 3 && bd[2] == 4, "NonMaxSuppression: input 0 (boxes) must have shape "
                   "[num_batches, spatial_dimension, 4], got ", ShapeToString(bd));
    ONYX_CHECK_ARG(sd.size() == 3, "NonMaxSuppression: input 1 (scores) must have shape "
                   "[num_batches, num_classes, spatial_dimension], got ", ShapeToString(sd));
    ONYX_CHECK_ARG(sd[0] == bd[0] && sd[2] == bd[1], "NonMaxSuppression: input 1 (scores) of shape ",
                   ShapeToString(sd), " does not match input 0 (boxes) of shape ", ShapeToString(bd),
                   " (batches and boxes must agree)");
    int64_t max_out = 0;
    const Tensor* mt = ctx.Input(2);
    if (mt != nullptr && mt->size() > 0) {
      ONYX_CHECK_ARG(mt->type() == ElemType::kInt64, "NonMaxSuppression: input 2 (max_output_boxes_per_class) "
                     "must be int64, got ", ElemTypeName(mt->type()));
      ONYX_RETURN_IF_ERROR(ReadIndexScalar(*mt, "NonMaxSuppression", "input 2 (max_output_boxes_per_class)", &max_out));
      max_out = std::max<int64_t>(max_out, 0);
    }
    float iou = 0, score_threshold = 0;
    bool has_iou = false, has_score = false;
    ONYX_RETURN_IF_ERROR(ReadFloatScalar(ctx.Input(3), 3, "iou_threshold", 0.0f, &has_iou, &iou));
    ONYX_RETURN_IF_ERROR(ReadFloatScalar(ctx.Input(4), 4, "score_threshold", 0.0f, &has_score, &score_threshold));
    ONYX_CHECK_ARG(iou >= 0.0f && iou <= 1.0f, "NonMaxSuppression: input 3 (iou_threshold) must be in [0, 1], got ",
                   iou);

    const int64_t batches = bd[0], classes = sd[1], n = bd[1];
    const float* bp = boxes->data<float>();
    const float* sp = scores->data<float>();
    std::vector<int64_t> rows;  // triples
    std::vector<Corners> corners(static_cast<size_t>(n));
    std::vector<int64_t> order;
    std::vector<int64_t> kept;
    for (int64_t b = 0; b < batches && max_out > 0; ++b) {
      for (int64_t i = 0; i < n; ++i) corners[i] = ToCorners(bp + (b * n + i) * 4, center_point_);
      for (int64_t c = 0; c < classes; ++c) {
        const float* s = sp + (b * classes + c) * n;
        order.clear();
        for (int64_t i = 0; i < n; ++i)
          if (!has_score || s[i] > score_threshold) order.push_back(i);
        // NaN scores sort last, so the order stays a strict weak ordering.
        std::stable_sort(order.begin(), order.end(), [s](int64_t x, int64_t y) {
          return !std::isnan(s[x]) && (std::isnan(s[y]) || s[x] > s[y]);
        });
        kept.clear();
        for (int64_t i : order) {
          if (static_cast<int64_t>(kept.size()) >= max_out) break;
          bool keep = true;
          for (int64_t k : kept)
            if (Suppresses(corners[i], corners[k], iou)) {
              keep = false;
              break;
            }
          if (!keep) continue;
          kept.push_back(i);
          rows.insert(rows.end(), {b, c, i});
        }
      }
    }
    const int64_t count = static_cast<int64_t>(rows.size() / 3);
    Tensor* Y = ctx.Output(0, {count, 3}, ElemType::kInt64);
    if (Y != nullptr && count > 0) std::copy(rows.begin(), rows.end(), Y->data<int64_t>());
    return Status::OK();
  }

 private:
  bool center_point_ = false;
};

}  // namespace

ONYX_REGISTER_KERNEL(NonMaxSuppressionKernel, "", "NonMaxSuppression", 10, kMaxVersion,
                     std::vector<ElemType>{ElemType::kFloat});

}  // namespace onyx
