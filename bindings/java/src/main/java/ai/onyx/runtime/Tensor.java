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
 * A tensor: an element type, a shape and its elements in a direct java.nio buffer (native byte order).
 * Inputs are read in place by the engine (no copy); outputs of Session.run view the engine's memory until
 * close() releases it.
 */
public final class Tensor implements AutoCloseable {
  private final ElementType type;
  private final long[] shape;
  private ByteBuffer data;
  private Pointer value; // the OnyxValue owning `data` for outputs, null for caller-made tensors

  private Tensor(ElementType type, long[] shape, ByteBuffer data, Pointer value) {
    this.type = type;
    this.shape = shape;
    this.data = data;
    this.value = value;
  }

  static Tensor owning(ElementType type, long[] shape, Pointer data, long bytes, Pointer value) {
    ByteBuffer buffer = data == null || bytes == 0 ? ByteBuffer.allocateDirect(0) : data.getByteBuffer(0, bytes);
    return new Tensor(type, shape, buffer.order(ByteOrder.nativeOrder()), value);
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

  public ElementType getType() {
    return type;
  }

  public long[] getShape() {
    return shape.clone();
  }

  synchronized ByteBuffer data() {
    if (data == null) {
      throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, "Tensor is closed");
    }
    return data;
  }

  /** The elements (a read-only view; valid until close). */
  public ByteBuffer getByteBuffer() {
    return data().asReadOnlyBuffer().order(ByteOrder.nativeOrder());
  }

  private ByteBuffer expect(ElementType wanted) {
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
  public synchronized void close() {
    if (value != null) {
      OnyxNative.release(OnyxNative.Entry.ValueRelease, value);
      value = null;
    }
    data = null;
  }
}
