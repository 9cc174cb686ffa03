#include "providers/cpu/image/image_codecs.h"

// clang-format off
#include <csetjmp>
#include <cstdio>
#include <jpeglib.h>
// clang-format on
#include <openjpeg.h>
#include <png.h>
#include <tiffio.h>
#include <webp/decode.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>
#include <string>

// stb_image compiled here, for BMP and PNM only, with internal linkage.
#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_BMP
#define STBI_ONLY_PNM
#define STBI_NO_STDIO
#define STBI_FAILURE_USERMSG
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include <stb_image.h>
#pragma GCC diagnostic pop

namespace onyx {

namespace {

// Larger images are refused before anything is allocated for them.
constexpr int64_t kMaxPixels = int64_t{1} << 28;

Status Fail(const char* format, const std::string& why) {
  return MakeError(ErrorCode::kInvalidArgument, "the ", format, " image does not decode: ", why);
}

Status Allocate(const char* format, int64_t width, int64_t height, RgbImage* out) {
  if (width <= 0 || height <= 0 || width > kMaxPixels / height)
    return Fail(format, StrCat("its size ", width, "x", height, " is empty or larger than ", kMaxPixels, " pixels"));
  out->width = width;
  out->height = height;
  out->pixels.assign(static_cast<size_t>(width * height * 3), 0);
  return Status::OK();
}

// ---------------------------------------------------------------- JPEG
// libjpeg reports errors through error_exit, which must not return: it
// long-jumps back into DecodeJpegInto, whose frame holds only C objects.
struct JpegError {
  jpeg_error_mgr mgr;
  jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void JpegErrorExit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<JpegError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  longjmp(err->jump, 1);
}
void JpegSilence(j_common_ptr) {}

// Returns false with err->message set on failure. `rows` receives the
// decoded rows; it is sized by the caller through `size_rows`.
bool DecodeJpegInto(const uint8_t* data, size_t size, JpegError* err, RgbImage* out, Status* status) {
  jpeg_decompress_struct cinfo;
  cinfo.err = jpeg_std_error(&err->mgr);
  err->mgr.error_exit = JpegErrorExit;
  err->mgr.output_message = JpegSilence;
  if (setjmp(err->jump)) {
    jpeg_destroy_decompress(&cinfo);
    return false;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, data, static_cast<unsigned long>(size));
  jpeg_read_header(&cinfo, TRUE);
  if (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK) {
    std::snprintf(err->message, sizeof(err->message), "CMYK JPEG images are not supported");
    jpeg_destroy_decompress(&cinfo);
    return false;
  }
  cinfo.out_color_space = JCS_RGB;
  jpeg_start_decompress(&cinfo);
  *status = Allocate("JPEG", cinfo.output_width, cinfo.output_height, out);
  if (!status->ok()) {
    jpeg_destroy_decompress(&cinfo);
    return true;
  }
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = out->pixels.data() + static_cast<size_t>(cinfo.output_scanline) * cinfo.output_width * 3;
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return true;
}

Status DecodeJpeg(const uint8_t* data, size_t size, RgbImage* out) {
  JpegError err;
  err.message[0] = '\0';
  Status status;
  if (!DecodeJpegInto(data, size, &err, out, &status)) return Fail("JPEG", err.message);
  return status;
}

// ---------------------------------------------------------------- PNG
// libpng's simplified API keeps its error handling (and its setjmp) inside
// the library and reports through image.message.
Status DecodePng(const uint8_t* data, size_t size, RgbImage* out) {
  png_image image;
  std::memset(&image, 0, sizeof(image));
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&image, data, size)) return Fail("PNG", image.message);
  // 16-bit files are read as they are (libpng takes them as linear and would
  // otherwise gamma-encode them to 8 bits) and keep their high byte, as
  // Pillow and OpenCV do.
  const bool wide = (image.format & PNG_FORMAT_FLAG_LINEAR) != 0;
  image.format = wide ? PNG_FORMAT_LINEAR_RGB : PNG_FORMAT_RGB;
  Status s = Allocate("PNG", image.width, image.height, out);
  if (!s.ok()) {
    png_image_free(&image);
    return s;
  }
  std::vector<uint16_t> wide_pixels(wide ? out->pixels.size() : 0);
  void* buffer = wide ? static_cast<void*>(wide_pixels.data()) : static_cast<void*>(out->pixels.data());
  if (!png_image_finish_read(&image, nullptr, buffer, 0, nullptr)) {
    const std::string why = image.message;
    png_image_free(&image);
    return Fail("PNG", why);
  }
  for (size_t i = 0; i < wide_pixels.size(); ++i) out->pixels[i] = static_cast<uint8_t>(wide_pixels[i] >> 8);
  return Status::OK();
}

// ---------------------------------------------------------------- BMP, PNM
// stb_image reads past the end of a truncated BMP or PNM as zeros; these
// give the bytes that the header says the pixels need (0 when unknown, as for
// run-length-encoded BMP, which stb checks itself).
uint64_t Le(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

uint64_t BmpNeeds(const uint8_t* data, size_t size, int w, int h) {
  if (size < 34) return 0;
  const uint64_t offset = Le(data + 10, 4), header = Le(data + 14, 4);
  const uint64_t bpp = header == 12 ? Le(data + 24, 2) : Le(data + 28, 2);
  const uint64_t compression = header == 12 ? 0 : Le(data + 30, 4);
  if (compression != 0 && compression != 3 && compression != 6) return 0;
  return offset + (static_cast<uint64_t>(w) * bpp + 31) / 32 * 4 * static_cast<uint64_t>(h);
}

uint64_t PnmNeeds(const uint8_t* data, size_t size, int w, int h) {
  // "P5"/"P6", then width, height and maxval, each after whitespace and
  // comments, then one whitespace byte before the pixels.
  const int channels = data[1] == '6' ? 3 : data[1] == '5' ? 1 : 0;
  if (channels == 0) return 0;
  size_t i = 2;
  uint64_t fields[3] = {0, 0, 0};
  for (uint64_t& f : fields) {
    while (i < size && (std::isspace(data[i]) || data[i] == '#')) {
      if (data[i] == '#') {
        while (i < size && data[i] != '\n') ++i;
      } else {
        ++i;
      }
    }
    while (i < size && std::isdigit(data[i]) && f < (uint64_t{1} << 32)) f = f * 10 + (data[i++] - '0');
  }
  const uint64_t bytes = fields[2] > 255 ? 2 : 1;
  return i + 1 + static_cast<uint64_t>(w) * static_cast<uint64_t>(h) * channels * bytes;
}

Status DecodeStb(const char* format, const uint8_t* data, size_t size, RgbImage* out) {
  if (size > static_cast<size_t>(INT32_MAX)) return Fail(format, "the stream is larger than 2 GiB");
  int w = 0, h = 0, n = 0;
  if (!stbi_info_from_memory(data, static_cast<int>(size), &w, &h, &n)) return Fail(format, stbi_failure_reason());
  const uint64_t needs = format[0] == 'B' ? BmpNeeds(data, size, w, h) : PnmNeeds(data, size, w, h);
  if (needs > size) return Fail(format, StrCat("the stream is truncated: ", size, " bytes, its header needs ", needs));
  ONYX_RETURN_IF_ERROR(Allocate(format, w, h, out));
  std::unique_ptr<stbi_uc, void (*)(void*)> pixels(
      stbi_load_from_memory(data, static_cast<int>(size), &w, &h, &n, 3), stbi_image_free);
  if (!pixels) return Fail(format, stbi_failure_reason());
  std::memcpy(out->pixels.data(), pixels.get(), out->pixels.size());
  return Status::OK();
}

// ---------------------------------------------------------------- WebP
Status DecodeWebp(const uint8_t* data, size_t size, RgbImage* out) {
  int w = 0, h = 0;
  if (!WebPGetInfo(data, size, &w, &h)) return Fail("WebP", "the header is not valid");
  ONYX_RETURN_IF_ERROR(Allocate("WebP", w, h, out));
  if (!WebPDecodeRGBInto(data, size, out->pixels.data(), out->pixels.size(), w * 3))
    return Fail("WebP", "the bitstream is not valid");
  return Status::OK();
}

// ---------------------------------------------------------------- TIFF
struct TiffSource {
  const uint8_t* data;
  size_t size;
  size_t pos;
  std::string error;
};

tmsize_t TiffRead(thandle_t h, void* buf, tmsize_t n) {
  auto* s = static_cast<TiffSource*>(h);
  const size_t k = std::min(static_cast<size_t>(n), s->size - std::min(s->pos, s->size));
  std::memcpy(buf, s->data + s->pos, k);
  s->pos += k;
  return static_cast<tmsize_t>(k);
}
tmsize_t TiffWrite(thandle_t, void*, tmsize_t) { return -1; }
toff_t TiffSeek(thandle_t h, toff_t off, int whence) {
  auto* s = static_cast<TiffSource*>(h);
  const uint64_t base = whence == SEEK_CUR ? s->pos : whence == SEEK_END ? s->size : 0;
  s->pos = static_cast<size_t>(base + off);
  return s->pos;
}
int TiffClose(thandle_t) { return 0; }
toff_t TiffSize(thandle_t h) { return static_cast<TiffSource*>(h)->size; }
int TiffMap(thandle_t, void**, toff_t*) { return 0; }
void TiffUnmap(thandle_t, void*, toff_t) {}
int TiffError(TIFF*, void* user, const char* module, const char* fmt, va_list ap) {
  auto* s = static_cast<TiffSource*>(user);
  char buf[512];
  std::vsnprintf(buf, sizeof(buf), fmt, ap);
  if (s->error.empty()) s->error = buf;
  return 1;  // handled: libtiff prints nothing
}
int TiffWarning(TIFF*, void*, const char*, const char*, va_list) { return 1; }

Status DecodeTiff(const uint8_t* data, size_t size, RgbImage* out) {
  TiffSource src{data, size, 0, {}};
  std::unique_ptr<TIFFOpenOptions, void (*)(TIFFOpenOptions*)> opts(TIFFOpenOptionsAlloc(), TIFFOpenOptionsFree);
  TIFFOpenOptionsSetErrorHandlerExtR(opts.get(), TiffError, &src);
  TIFFOpenOptionsSetWarningHandlerExtR(opts.get(), TiffWarning, &src);
  TIFFOpenOptionsSetMaxSingleMemAlloc(opts.get(), static_cast<tmsize_t>(kMaxPixels * 4));
  std::unique_ptr<TIFF, void (*)(TIFF*)> tif(TIFFClientOpenExt("memory", "rm", &src, TiffRead, TiffWrite, TiffSeek,
                                                               TiffClose, TiffSize, TiffMap, TiffUnmap, opts.get()),
                                             TIFFClose);
  if (!tif) return Fail("TIFF", src.error.empty() ? "the header is not valid" : src.error);
  uint32_t w = 0, h = 0;
  TIFFGetField(tif.get(), TIFFTAG_IMAGEWIDTH, &w);
  TIFFGetField(tif.get(), TIFFTAG_IMAGELENGTH, &h);
  ONYX_RETURN_IF_ERROR(Allocate("TIFF", w, h, out));
  std::vector<uint32_t> rgba(static_cast<size_t>(w) * h);
  if (!TIFFReadRGBAImageOriented(tif.get(), w, h, rgba.data(), ORIENTATION_TOPLEFT, 0))
    return Fail("TIFF", src.error.empty() ? "its pixels do not decode" : src.error);
  for (size_t i = 0; i < rgba.size(); ++i) {
    out->pixels[3 * i] = static_cast<uint8_t>(TIFFGetR(rgba[i]));
    out->pixels[3 * i + 1] = static_cast<uint8_t>(TIFFGetG(rgba[i]));
    out->pixels[3 * i + 2] = static_cast<uint8_t>(TIFFGetB(rgba[i]));
  }
  return Status::OK();
}

// ---------------------------------------------------------------- JPEG 2000
struct Jp2Source {
  const uint8_t* data;
  size_t size;
  size_t pos;
  std::string error;
};

OPJ_SIZE_T Jp2Read(void* buf, OPJ_SIZE_T n, void* user) {
  auto* s = static_cast<Jp2Source*>(user);
  if (s->pos >= s->size) return static_cast<OPJ_SIZE_T>(-1);
  const size_t k = std::min(static_cast<size_t>(n), s->size - s->pos);
  std::memcpy(buf, s->data + s->pos, k);
  s->pos += k;
  return k;
}
OPJ_OFF_T Jp2Skip(OPJ_OFF_T n, void* user) {
  auto* s = static_cast<Jp2Source*>(user);
  const int64_t to = std::max<int64_t>(0, std::min<int64_t>(static_cast<int64_t>(s->pos) + n, s->size));
  const OPJ_OFF_T moved = to - static_cast<int64_t>(s->pos);
  s->pos = static_cast<size_t>(to);
  return moved;
}
OPJ_BOOL Jp2Seek(OPJ_OFF_T n, void* user) {
  auto* s = static_cast<Jp2Source*>(user);
  if (n < 0 || static_cast<uint64_t>(n) > s->size) return OPJ_FALSE;
  s->pos = static_cast<size_t>(n);
  return OPJ_TRUE;
}
void Jp2Error(const char* msg, void* user) {
  auto* s = static_cast<Jp2Source*>(user);
  if (s->error.empty()) {
    s->error = msg;
    while (!s->error.empty() && s->error.back() == '\n') s->error.pop_back();
  }
}
void Jp2Quiet(const char*, void*) {}

Status DecodeJp2(const uint8_t* data, size_t size, bool codestream, RgbImage* out) {
  Jp2Source src{data, size, 0, {}};
  std::unique_ptr<opj_codec_t, void (*)(opj_codec_t*)> codec(
      opj_create_decompress(codestream ? OPJ_CODEC_J2K : OPJ_CODEC_JP2), opj_destroy_codec);
  opj_set_error_handler(codec.get(), Jp2Error, &src);
  opj_set_warning_handler(codec.get(), Jp2Quiet, &src);
  opj_set_info_handler(codec.get(), Jp2Quiet, &src);
  opj_dparameters_t params;
  opj_set_default_decoder_parameters(&params);
  if (!opj_setup_decoder(codec.get(), &params)) return Fail("JPEG 2000", "the decoder could not be set up");
  std::unique_ptr<opj_stream_t, void (*)(opj_stream_t*)> stream(opj_stream_default_create(OPJ_TRUE),
                                                                 opj_stream_destroy);
  opj_stream_set_user_data(stream.get(), &src, nullptr);
  opj_stream_set_user_data_length(stream.get(), size);
  opj_stream_set_read_function(stream.get(), Jp2Read);
  opj_stream_set_skip_function(stream.get(), Jp2Skip);
  opj_stream_set_seek_function(stream.get(), Jp2Seek);
  opj_image_t* raw = nullptr;
  const bool header = opj_read_header(stream.get(), codec.get(), &raw);
  std::unique_ptr<opj_image_t, void (*)(opj_image_t*)> image(raw, opj_image_destroy);
  if (!header) return Fail("JPEG 2000", src.error.empty() ? "the header is not valid" : src.error);
  if (image->numcomps == 0) return Fail("JPEG 2000", "it has no components");
  const int64_t w = static_cast<int64_t>(image->x1) - image->x0, h = static_cast<int64_t>(image->y1) - image->y0;
  ONYX_RETURN_IF_ERROR(Allocate("JPEG 2000", w, h, out));
  if (!opj_decode(codec.get(), stream.get(), image.get()) || !opj_end_decompress(codec.get(), stream.get()))
    return Fail("JPEG 2000", src.error.empty() ? "its pixels do not decode" : src.error);
  // Gray (one component) or the first three as RGB; components must cover
  // the whole image at full resolution and 1 to 16 bits.
  const OPJ_UINT32 used = image->numcomps >= 3 ? 3 : 1;
  for (OPJ_UINT32 c = 0; c < used; ++c) {
    const opj_image_comp_t& comp = image->comps[c];
    if (comp.data == nullptr || comp.w != static_cast<OPJ_UINT32>(w) || comp.h != static_cast<OPJ_UINT32>(h) ||
        comp.prec < 1 || comp.prec > 16)
      return Fail("JPEG 2000", StrCat("component ", c, " is subsampled or of an unsupported precision"));
  }
  for (int64_t i = 0; i < w * h; ++i) {
    for (int ch = 0; ch < 3; ++ch) {
      const opj_image_comp_t& comp = image->comps[used == 3 ? ch : 0];
      int64_t v = comp.data[i];
      if (comp.sgnd) v += int64_t{1} << (comp.prec - 1);
      if (comp.prec > 8) v >>= (comp.prec - 8);
      if (comp.prec < 8) v = v * 255 / ((int64_t{1} << comp.prec) - 1);
      out->pixels[static_cast<size_t>(3 * i + ch)] = static_cast<uint8_t>(std::clamp<int64_t>(v, 0, 255));
    }
  }
  return Status::OK();
}

bool StartsWith(const uint8_t* data, size_t size, const char* magic, size_t n) {
  return size >= n && std::memcmp(data, magic, n) == 0;
}

}  // namespace

Status DecodeImage(const uint8_t* data, size_t size, RgbImage* out) {
  if (StartsWith(data, size, "\xFF\xD8\xFF", 3)) return DecodeJpeg(data, size, out);
  if (StartsWith(data, size, "\x89PNG\r\n\x1A\n", 8)) return DecodePng(data, size, out);
  if (StartsWith(data, size, "BM", 2)) return DecodeStb("BMP", data, size, out);
  if (size >= 2 && data[0] == 'P' && data[1] >= '1' && data[1] <= '7') return DecodeStb("PNM", data, size, out);
  if (StartsWith(data, size, "II*\0", 4) || StartsWith(data, size, "MM\0*", 4)) return DecodeTiff(data, size, out);
  if (size >= 12 && StartsWith(data, size, "RIFF", 4) && std::memcmp(data + 8, "WEBP", 4) == 0)
    return DecodeWebp(data, size, out);
  if (StartsWith(data, size, "\0\0\0\x0CjP  \r\n\x87\n", 12)) return DecodeJp2(data, size, false, out);
  if (StartsWith(data, size, "\xFF\x4F\xFF\x51", 4)) return DecodeJp2(data, size, true, out);
  return MakeError(ErrorCode::kInvalidArgument, "the ", size, "-byte stream is not a JPEG, PNG, BMP, PNM, TIFF, WebP ",
                   "or JPEG 2000 image (unknown signature)");
}

}  // namespace onyx
