// Decoding of encoded images (JPEG, PNG, BMP, PNM, TIFF, WebP, JPEG 2000) into
// 8-bit interleaved RGB, through Debian's codec libraries: libjpeg-turbo,
// libpng, libtiff, libwebp, OpenJPEG, and stb_image (BMP, PNM). Every decoder
// turns its library's errors into a Status; none lets a C library print,
// abort or exit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/framework/status.h"

namespace onyx {

struct RgbImage {
  int64_t height = 0;
  int64_t width = 0;
  std::vector<uint8_t> pixels;  // height * width * 3, row-major, R G B
};

// Decodes `data` (the format is read from its first bytes). On failure the
// status says which format was detected and why it did not decode.
Status DecodeImage(const uint8_t* data, size_t size, RgbImage* out);

}  // namespace onyx
