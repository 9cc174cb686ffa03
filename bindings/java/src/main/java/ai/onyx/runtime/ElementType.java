package ai.onyx.runtime;

/** Tensor element types (OnyxElementType, equal to onnx.TensorProto.DataType) with their sizes in bytes. */
public enum ElementType {
  FLOAT(1, 4), UINT8(2, 1), INT8(3, 1), UINT16(4, 2), INT16(5, 2), INT32(6, 4), INT64(7, 8), BOOL(9, 1),
  FLOAT16(10, 2), DOUBLE(11, 8), UINT32(12, 4), UINT64(13, 8), BFLOAT16(16, 2);

  final int value;
  final int size;

  ElementType(int value, int size) {
    this.value = value;
    this.size = size;
  }

  public int getValue() {
    return value;
  }

  public int getSize() {
    return size;
  }

  static ElementType of(int value) {
    for (ElementType t : values()) {
      if (t.value == value) {
        return t;
      }
    }
    throw new OnyxException(OnyxException.Code.NOT_IMPLEMENTED,
        "element type " + value + " (onnx.TensorProto.DataType) is not supported by the Java binding");
  }
}
