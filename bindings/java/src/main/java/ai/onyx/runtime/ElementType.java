package ai.onyx.runtime;

/**
 * Tensor element types (OnyxElementType, equal to onnx.TensorProto.DataType) with their sizes in bytes: 0 for
 * STRING and for the packed 2- and 4-bit types, which have no fixed byte size.
 */
public enum ElementType {
  FLOAT(1, 4), UINT8(2, 1), INT8(3, 1), UINT16(4, 2), INT16(5, 2), INT32(6, 4), INT64(7, 8), STRING(8, 0),
  BOOL(9, 1), FLOAT16(10, 2), DOUBLE(11, 8), UINT32(12, 4), UINT64(13, 8), COMPLEX64(14, 8), COMPLEX128(15, 16),
  BFLOAT16(16, 2), FLOAT8E4M3FN(17, 1), FLOAT8E4M3FNUZ(18, 1), FLOAT8E5M2(19, 1), FLOAT8E5M2FNUZ(20, 1),
  UINT4(21, 0), INT4(22, 0), FLOAT4E2M1(23, 0), FLOAT8E8M0(24, 1), UINT2(25, 0), INT2(26, 0);

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

  /** By the C API's spelling in type strings ("float", "int64", "float8e4m3fn"). */
  static ElementType named(String name) {
    for (ElementType t : values()) {
      if (t.name().toLowerCase(java.util.Locale.ROOT).equals(name)) {
        return t;
      }
    }
    throw new OnyxException(OnyxException.Code.NOT_IMPLEMENTED, "element type '" + name + "' is not known to the Java binding");
  }
}
