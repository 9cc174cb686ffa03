// ImageDecoder (opset 20+): decodes a 1-D uint8 tensor holding an encoded
// image into a [H, W, C] uint8 tensor: RGB or BGR (C = 3) or Grayscale
// (C = 1). Decoding is done by image_codecs.cc (Debian's codec libraries).
// Grayscale is ITU-R 601-2 luma from the decoded RGB, rounded, as Pillow
// (onnx's reference) converts to "L".
#include <string>

#include "providers/cpu/image/image_codecs.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

enum class PixelFormat { kRGB, kBGR, kGray };

class ImageDecoderKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    const std::string f = info.AttrString("pixel_format", "RGB");
    if (f == "RGB") {
      format_ = PixelFormat::kRGB;
    } else if (f == "BGR") {
      format_ = PixelFormat::kBGR;
    } else {
      ONYX_CHECK_ARG(f == "Grayscale", "ImageDecoder: attribute pixel_format must be RGB, BGR or Grayscale, got '", f,
                     "'");
      format_ = PixelFormat::kGray;
    }
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    ONYX_CHECK_ARG(X->rank() == 1, "ImageDecoder: input 0 (encoded_stream) must be 1-D, got shape ",
                   ShapeToString(X->dims()));
    RgbImage img;
    Status s = DecodeImage(X->data<uint8_t>(), static_cast<size_t>(X->size()), &img);
    if (!s.ok()) return Status(s.code(), StrCat("ImageDecoder: input 0 (encoded_stream): ", s.message()));
    const int64_t n = img.height * img.width;
    const uint8_t* p = img.pixels.data();
    Tensor* Y = ctx.Output(0, {img.height, img.width, format_ == PixelFormat::kGray ? 1 : 3}, ElemType::kUint8);
    if (Y == nullptr) return Status::OK();
    uint8_t* y = Y->data<uint8_t>();
    switch (format_) {
      case PixelFormat::kRGB:
        std::copy(p, p + 3 * n, y);
        break;
      case PixelFormat::kBGR:
        for (int64_t i = 0; i < n; ++i) {
          y[3 * i] = p[3 * i + 2];
          y[3 * i + 1] = p[3 * i + 1];
          y[3 * i + 2] = p[3 * i];
        }
        break;
      case PixelFormat::kGray:
        // 0.299 R + 0.587 G + 0.114 B in 16-bit fixed point, rounded.
        for (int64_t i = 0; i < n; ++i)
          y[i] = static_cast<uint8_t>((p[3 * i] * 19595u + p[3 * i + 1] * 38470u + p[3 * i + 2] * 7471u + 0x8000u) >> 16);
        break;
    }
    return Status::OK();
  }

 private:
  PixelFormat format_ = PixelFormat::kRGB;
};

}  // namespace

ONYX_REGISTER_KERNEL(ImageDecoderKernel, "", "ImageDecoder", 20, kMaxVersion, {ElemType::kUint8});

}  // namespace onyx
