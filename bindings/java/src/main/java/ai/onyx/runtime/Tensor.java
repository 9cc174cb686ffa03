package ai.onyx.runtime;

import com.sun.jna.Native;
import com.sun.jna.Pointer;
import java.nio.Buffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.util.Arrays;

/**
 * A tensor: an element type, a shape and its elements in a direct java.nio buffer (native byte order), or
 * Java strings for STRING tensors. Numeric inputs are read in place by the engine (no copy); outputs of
 * Session.run view the engine's memory until close() releases it.
 */
public final class Tensor implements OnyxValue {
  private final ElementType type;
  private final long[] shape;
  private ByteBuffer data;
  private String[] strings; // STRING tensors only
  private Pointer value; // the OnyxValue owning `data` for outputs, null for caller-made tensors
  private boolean closed;

  private Tensor(ElementType type, long[] shape, ByteBuffer data, Pointer value) {
    this.type = type;
    this.shape = shape;
    this.data = data;
    this.value = value;
  }

  private Tensor(long[] shape, String[] strings, Pointer value) {
    this(ElementType.STRING, shape, ByteBuffer.allocateDirect(0), value);
    this.strings = strings;
  }

  static Tensor owning(ElementType type, long[] shape, Pointer data, long bytes, Pointer value) {
    ByteBuffer buffer = data == null || bytes == 0 ? ByteBuffer.allocateDirect(0) : data.getByteBuffer(0, bytes);
    return new Tensor(type, shape, buffer.order(ByteOrder.nativeOrder()), value);
  }

  /** A STRING tensor (an engine copy is made, UTF-8, when it is fed). */
  public static Tensor of(String[] values, long... shape) {
    if (values == null) {
      throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, "Tensor.of: values must not be null");
    }
    long n = elements(shape);
    if (n != values.length) {
      throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, "a STRING array of " + values.length
          + " elements does not fill shape " + Arrays.toString(shape) + " (" + n + " elements)");
    }
    for (int i = 0; i < values.length; i++) {
      if (values[i] == null) {
        throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, "Tensor.of: string " + i + " is null");
      }
    }
    return new Tensor(shape.clone(), values.clone(), null);
  }

  /** A tensor over an engine value (taken over: released by close), read through the C API. */
  static Tensor fromValue(Pointer value) {
    Pointer info = OnyxNative.out(OnyxNative.Entry.ValueGetTensorTypeAndShape, value);
    ElementType type;
    long[] shape;
    try {
      com.sun.jna.ptr.IntByReference t = new com.sun.jna.ptr.IntByReference();
      OnyxNative.check(OnyxNative.Entry.TensorInfoGetElementType, info, t);
      com.sun.jna.ptr.LongByReference rank = new com.sun.jna.ptr.LongByReference();
      OnyxNative.check(OnyxNative.Entry.TensorInfoGetDimCount, info, rank);
      shape = new long[(int) rank.getValue()];
      com.sun.jna.Memory dims = new com.sun.jna.Memory(Math.max(1, shape.length) * 8L);
      OnyxNative.check(OnyxNative.Entry.TensorInfoGetDims, info, dims, (long) shape.length);
      dims.read(0, shape, 0, shape.length);
      type = ElementType.of(t.getValue());
    } finally {
      OnyxNative.release(OnyxNative.Entry.TensorTypeAndShapeInfoRelease, info);
    }
    long count = elements(shape);
    if (type == ElementType.STRING) {
      String[] strings = new String[Math.toIntExact(count)];
      com.sun.jna.ptr.PointerByReference s = new com.sun.jna.ptr.PointerByReference();
      com.sun.jna.ptr.LongByReference length = new com.sun.jna.ptr.LongByReference();
      for (int i = 0; i < strings.length; i++) {
        OnyxNative.check(OnyxNative.Entry.StringTensorGetElement, value, (long) i, s, length);
        byte[] bytes = length.getValue() == 0 ? new byte[0] : s.getValue().getByteArray(0, (int) length.getValue());
        strings[i] = new String(bytes, java.nio.charset.StandardCharsets.UTF_8);
      }
      return new Tensor(shape, strings, value);
    }
    if (type.size == 0) {
      throw new OnyxException(OnyxException.Code.NOT_IMPLEMENTED,
          type + " tensors (packed below a byte) are not read by the Java binding");
    }
    Pointer data = count == 0 ? null : OnyxNative.out(OnyxNative.Entry.ValueGetTensorData, value);
    return owning(type, shape, data, count * type.size, value);
  }

  private static long elements(long[] shape) {
    if (shape == null) {
      throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, "tensor shape is null");
    }
    long n = 1;
    for (long d : shape) {
      if (d < 0) {
        throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT,
            "tensor shape " + Arrays.toString(shape) + " has a negative dimension");
      }
      n = Math.multiplyExact(n, d);
    }
    return n;
  }

  private static ByteBuffer allocate(ElementType type, long[] shape, int length) {
    long n = elements(shape);
    if (n != length) {
      throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, "a " + type + " array of " + length
          + " elements does not fill shape " + Arrays.toString(shape) + " (" + n + " elements)");
    }
    return ByteBuffer.allocateDirect(Math.toIntExact(n * type.size)).order(ByteOrder.nativeOrder());
  }

  public static Tensor of(float[] values, long... shape) {
    ByteBuffer b = allocate(ElementType.FLOAT, shape, values.length);
    b.asFloatBuffer().put(values);
    return new Tensor(ElementType.FLOAT, shape.clone(), b, null);
  }

  public static Tensor of(double[] values, long... shape) {
    ByteBuffer b = allocate(ElementType.DOUBLE, shape, values.length);
    b.asDoubleBuffer().put(values);
    return new Tensor(ElementType.DOUBLE, shape.clone(), b, null);
  }

  public static Tensor of(int[] values, long... shape) {
    ByteBuffer b = allocate(ElementType.INT32, shape, values.length);
    b.asIntBuffer().put(values);
    return new Tensor(ElementType.INT32, shape.clone(), b, null);
  }

  public static Tensor of(long[] values, long... shape) {
    ByteBuffer b = allocate(ElementType.INT64, shape, values.length);
    b.asLongBuffer().put(values);
    return new Tensor(ElementType.INT64, shape.clone(), b, null);
  }

  /** UINT8, INT8 or BOOL elements from bytes. */
  public static Tensor of(ElementType type, byte[] values, long... shape) {
    if (type == null || type.size != 1) {
      throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, "a byte array makes UINT8, INT8 or BOOL tensors, not " + type);
    }
    ByteBuffer b = allocate(type, shape, values.length);
    b.put(values).rewind();
    return new Tensor(type, shape.clone(), b, null);
  }

  /**
   * A tensor over a direct buffer's remaining bytes, read in place: the buffer must stay unchanged while a
   * run uses it. Its size is checked against the shape by the engine when the tensor is fed.
   */
  public static Tensor fromBuffer(ElementType type, Buffer buffer, long... shape) {
    if (type == null || buffer == null) {
      throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, "fromBuffer: type and buffer must not be null");
    }
    if (!buffer.isDirect()) {
      throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT,
          "fromBuffer: the buffer must be direct (ByteBuffer.allocateDirect) so the engine can read it in place");
    }
    elements(shape);
    int unit = buffer instanceof ByteBuffer ? 1 : buffer instanceof FloatBuffer || buffer instanceof IntBuffer ? 4
        : buffer instanceof LongBuffer || buffer instanceof DoubleBuffer ? 8 : 2;
    Pointer base = Native.getDirectBufferPointer(buffer);
    long bytes = (long) buffer.remaining() * unit;
    ByteBuffer view = base.share((long) buffer.position() * unit).getByteBuffer(0, bytes);
    return new Tensor(type, shape.clone(), view.order(ByteOrder.nativeOrder()), null);
  }

  @Override
  public ValueKind getKind() {
    return ValueKind.TENSOR;
  }

  public ElementType getType() {
    return type;
  }

  public long[] getShape() {
    return shape.clone();
  }

  synchronized ByteBuffer data() {
    if (closed) {
      throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, "Tensor is closed");
    }
    return data;
  }

  /** The number of elements. */
  public long getElementCount() {
    return elements(shape);
  }

  /** The elements of a STRING tensor (a copy). */
  public synchronized String[] toStringArray() {
    data();
    if (type != ElementType.STRING) {
      throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, "the tensor holds " + type + ", not STRING");
    }
    return strings.clone();
  }

  /** Element i (flat, row-major) boxed as the Java type of its element type (Float, Long, String, ...). */
  Object element(int i) {
    ByteBuffer b = data();
    switch (type) {
      case FLOAT: return b.getFloat(i * 4);
      case DOUBLE: return b.getDouble(i * 8);
      case INT64: return b.getLong(i * 8);
      case INT32: return b.getInt(i * 4);
      case INT16: return b.getShort(i * 2);
      case INT8: return b.get(i);
      case BOOL: return b.get(i) != 0;
      case STRING: return strings[i];
      default:
        throw new OnyxException(OnyxException.Code.NOT_IMPLEMENTED,
            type + " elements have no boxed Java type in this binding");
    }
  }

  /** The elements (a read-only view; valid until close). */
  public ByteBuffer getByteBuffer() {
    return data().asReadOnlyBuffer().order(ByteOrder.nativeOrder());
  }

  private ByteBuffer expect(ElementType wanted) {
    data();
    if (type != wanted) {
      throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, "the tensor holds " + type + ", not " + wanted);
    }
    return getByteBuffer();
  }

  public float[] toFloatArray() {
    FloatBuffer b = expect(ElementType.FLOAT).asFloatBuffer();
    float[] out = new float[b.remaining()];
    b.get(out);
    return out;
  }

  public double[] toDoubleArray() {
    DoubleBuffer b = expect(ElementType.DOUBLE).asDoubleBuffer();
    double[] out = new double[b.remaining()];
    b.get(out);
    return out;
  }

  public int[] toIntArray() {
    IntBuffer b = expect(ElementType.INT32).asIntBuffer();
    int[] out = new int[b.remaining()];
    b.get(out);
    return out;
  }

  public long[] toLongArray() {
    LongBuffer b = expect(ElementType.INT64).asLongBuffer();
    long[] out = new long[b.remaining()];
    b.get(out);
    return out;
  }

  @Override
  public synchronized boolean isClosed() {
    return closed;
  }

  @Override
  public synchronized void close() {
    if (value != null) {
      OnyxNative.release(OnyxNative.Entry.ValueRelease, value);
      value = null;
    }
    data = null;
    strings = null;
    closed = true;
  }

  @Override
  public String toString() {
    return "Tensor(" + type + ", " + Arrays.toString(shape) + ")";
  }
}
