"""ImageDecoder: images encoded by Pillow in every format the spec lists,
decoded by onyxruntime and compared with onnx.reference.ReferenceEvaluator
(which decodes with Pillow) and, for lossless formats, with the pixels that
were encoded; broken streams must fail with an error naming the node and the
input, and leave the session usable."""

import io

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import onyxruntime as rt

PIL = pytest.importorskip("PIL.Image")
SELF_CHECK = rt.__name__ == "onnxruntime"
if SELF_CHECK:
    pytest.skip("onnxruntime has no ImageDecoder kernel", allow_module_level=True)


def _model(pixel_format="RGB"):
    node = helper.make_node("ImageDecoder", ["x"], ["y"], name="node", pixel_format=pixel_format)
    m = helper.make_model(helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.UINT8, [None])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, None)]), opset_imports=[helper.make_opsetid("", 20)])
    m.ir_version = 10
    return m


def _encode(pixels, fmt, mode="RGB", **kw):
    buf = io.BytesIO()
    img = PIL.fromarray(pixels)
    if mode != img.mode:
        img = img.convert(mode)
    img.save(buf, format=fmt, **kw)
    return np.frombuffer(buf.getvalue(), np.uint8)


def _pixels(h=23, w=37, seed=0):
    rng = np.random.default_rng(seed)
    # Smooth gradients plus noise: realistic for lossy codecs, exact for lossless.
    yy, xx = np.mgrid[0:h, 0:w]
    base = np.stack([xx * 255 // max(w - 1, 1), yy * 255 // max(h - 1, 1), (xx + yy) * 127 // (h + w)], -1)
    return np.clip(base + rng.integers(-20, 20, size=(h, w, 3)), 0, 255).astype(np.uint8)


def _run(model, data):
    return rt.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": data})[0]


LOSSLESS = [("PNG", {}), ("BMP", {}), ("PPM", {}), ("TIFF", {}), ("TIFF", {"compression": "tiff_lzw"}),
            ("WEBP", {"lossless": True})]


@pytest.mark.parametrize("fmt,kw", LOSSLESS)
@pytest.mark.parametrize("pixel_format", ["RGB", "BGR", "Grayscale"])
def test_lossless_formats_give_the_encoded_pixels(fmt, kw, pixel_format):
    px = _pixels()
    data = _encode(px, fmt, **kw)
    m = _model(pixel_format)
    ours = _run(m, data)
    ref = ReferenceEvaluator(m).run(None, {"x": data})[0]
    np.testing.assert_array_equal(ours, ref)
    if pixel_format == "RGB":
        np.testing.assert_array_equal(ours, px)
    elif pixel_format == "BGR":
        np.testing.assert_array_equal(ours, px[:, :, ::-1])
    else:
        np.testing.assert_array_equal(ours[:, :, 0], np.asarray(PIL.fromarray(px).convert("L")))


@pytest.mark.parametrize("fmt,kw", [("JPEG", {"quality": 90}), ("JPEG", {"quality": 50, "subsampling": 0}),
                                    ("JPEG", {"progressive": True}), ("WEBP", {"quality": 80}),
                                    ("JPEG2000", {}), ("JPEG2000", {"quality_mode": "rates", "quality_layers": [20]})])
@pytest.mark.parametrize("pixel_format", ["RGB", "BGR", "Grayscale"])
@pytest.mark.parametrize("size", [(23, 37), (64, 48), (1, 1)])
def test_lossy_formats_match_reference(fmt, kw, pixel_format, size):
    if fmt == "JPEG2000" and size == (1, 1):
        size = (2, 2)
    data = _encode(_pixels(*size), fmt, **kw)
    m = _model(pixel_format)
    ours = _run(m, data)
    ref = ReferenceEvaluator(m).run(None, {"x": data})[0]
    assert ours.shape == ref.shape and ours.dtype == np.uint8
    # Same libraries' algorithms (libjpeg-turbo, libwebp, OpenJPEG) as Pillow's
    # wheels, possibly other versions: allow one level of rounding.
    assert np.abs(ours.astype(int) - ref.astype(int)).max() <= 1


@pytest.mark.parametrize("fmt,mode", [("PNG", "L"), ("PNG", "RGBA"), ("PNG", "P"), ("PNG", "I;16"),
                                      ("BMP", "L"), ("BMP", "P"), ("JPEG", "L"), ("TIFF", "L"), ("TIFF", "RGBA"),
                                      ("PPM", "L")])
def test_other_source_modes_come_out_as_rgb(fmt, mode):
    px = _pixels()
    if mode == "I;16":
        img = PIL.fromarray(px[:, :, 0].astype(np.uint16) * 257)
        buf = io.BytesIO()
        img.save(buf, format=fmt)
        data = np.frombuffer(buf.getvalue(), np.uint8)
        expected = np.repeat(px[:, :, :1], 3, axis=2)
    else:
        data = _encode(px, fmt, mode=mode)
        expected = np.asarray(PIL.open(io.BytesIO(data.tobytes())).convert("RGB"))
    ours = _run(_model("RGB"), data)
    assert ours.shape == expected.shape
    tol = 1 if fmt == "JPEG" else 0
    assert np.abs(ours.astype(int) - expected.astype(int)).max() <= tol


def _fails(data, match, pixel_format="RGB"):
    sess = rt.InferenceSession(_model(pixel_format).SerializeToString(), providers=["CPUExecutionProvider"])
    with pytest.raises(Exception) as e:
        sess.run(None, {"x": data})
    msg = str(e.value)
    assert "INVALID_ARGUMENT" in msg and "ImageDecoder" in msg and "node" in msg, msg
    assert "encoded_stream" in msg, msg
    for part in match:
        assert part in msg, msg
    # The session stays usable.
    good = _encode(_pixels(4, 5), "PNG")
    assert sess.run(None, {"x": good})[0].shape[:2] == (4, 5)


@pytest.mark.parametrize("fmt,name", [("JPEG", "JPEG"), ("PNG", "PNG"), ("BMP", "BMP"), ("PPM", "PNM"),
                                      ("TIFF", "TIFF"), ("WEBP", "WebP"), ("JPEG2000", "JPEG 2000")])
def test_broken_streams_fail_cleanly(fmt, name):
    data = _encode(_pixels(), fmt)
    _fails(data[: max(len(data) // 3, 16)].copy(), ("does not decode", name))
    corrupt = data.copy()
    corrupt[len(corrupt) // 2:] ^= 0x5A
    sess = rt.InferenceSession(_model().SerializeToString(), providers=["CPUExecutionProvider"])
    try:
        # A corrupt body may still decode into some pixels (lossy codecs
        # resynchronise); what matters is no crash and a clear error if not.
        y = sess.run(None, {"x": corrupt})[0]
        assert y.shape == (23, 37, 3)
    except Exception as e:  # noqa: BLE001
        assert "does not decode" in str(e) and name in str(e), str(e)


def test_unknown_and_empty_streams():
    _fails(np.frombuffer(b"GIF89a" + bytes(40), np.uint8), ("unknown signature",))
    _fails(np.zeros((0,), np.uint8), ("0-byte",))
    _fails(np.frombuffer(b"\xff\xd8\xff", np.uint8), ("JPEG",))


def test_huge_declared_size_is_refused_before_allocation():
    # A valid BMP header claiming 100000 x 100000 pixels.
    import struct
    hdr = b"BM" + struct.pack("<IHHI", 54, 0, 0, 54) + struct.pack("<IiiHHIIiiII", 40, 100000, 100000, 1, 24, 0, 0,
                                                                     0, 0, 0, 0)
    sess = rt.InferenceSession(_model().SerializeToString(), providers=["CPUExecutionProvider"])
    with pytest.raises(Exception) as e:
        sess.run(None, {"x": np.frombuffer(hdr, np.uint8)})
    assert "BMP" in str(e.value) and "encoded_stream" in str(e.value)


def test_bad_attribute_and_shape():
    with pytest.raises(Exception) as e:
        rt.InferenceSession(_model("CMYK").SerializeToString(), providers=["CPUExecutionProvider"])
    assert "pixel_format" in str(e.value) and "CMYK" in str(e.value)
