package ai.onyx.runtime;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.LongByReference;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Engine values (OnyxValue*) to Java values and back, through the C API's value entries. */
final class Values {
  private static Pointer cpuInfo;

  private Values() {}

  static <T extends OnyxValue> T as(OnyxValue value, Class<T> type, ValueKind wanted) {
    if (type.isInstance(value)) {
      return type.cast(value);
    }
    throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT,
        "the value is a " + value.getKind() + ", not a " + wanted);
  }

  static ValueKind kind(Pointer value) {
    IntByReference kind = new IntByReference();
    OnyxNative.check(OnyxNative.Entry.ValueGetKind, value, kind);
    return ValueKind.of(kind.getValue());
  }

  /** The elements of a sequence, map (keys, values) or optional as new owned handles. */
  static List<Pointer> elements(Pointer value) {
    LongByReference n = new LongByReference();
    OnyxNative.check(OnyxNative.Entry.ValueGetElementCount, value, n);
    List<Pointer> items = new ArrayList<>();
    try {
      for (long i = 0; i < n.getValue(); i++) {
        items.add(OnyxNative.out(OnyxNative.Entry.ValueGetElement, value, i));
      }
    } catch (RuntimeException e) {
      releaseAll(items);
      throw e;
    }
    return items;
  }

  static void releaseAll(List<Pointer> values) {
    for (Pointer p : values) {
      OnyxNative.release(OnyxNative.Entry.ValueRelease, p);
    }
  }

  /**
   * The Java value over an engine value, which it takes over: on success the result owns it (and the
   * handles of its elements), on failure it is released before the exception leaves.
   */
  static OnyxValue wrap(Pointer value) {
    List<OnyxValue> made = new ArrayList<>();
    try {
      ValueKind kind = kind(value);
      switch (kind) {
        case TENSOR:
          return Tensor.fromValue(value);
        case SEQUENCE:
          for (Pointer item : elements(value)) {
            made.add(wrapOrRelease(item));
          }
          return new OnyxSequence(new ValueHandle(value, "OnyxSequence"), made);
        case MAP: {
          List<Pointer> kv = elements(value);
          try (Tensor keys = Tensor.fromValue(kv.get(0)); Tensor vals = wrapTensor(kv.get(1))) {
            return new OnyxMap(new ValueHandle(value, "OnyxMap"), keys, vals);
          }
        }
        case OPTIONAL: {
          List<Pointer> inner = elements(value);
          OnyxValue held = inner.isEmpty() ? null : wrapOrRelease(inner.get(0));
          return new OnyxOptional(new ValueHandle(value, "OnyxOptional"), held);
        }
        default:
          throw new OnyxException(OnyxException.Code.NOT_IMPLEMENTED,
              "a " + kind + " value is not read by the Java binding");
      }
    } catch (RuntimeException e) {
      for (OnyxValue v : made) {
        v.close();
      }
      OnyxNative.release(OnyxNative.Entry.ValueRelease, value);
      throw e;
    }
  }

  private static OnyxValue wrapOrRelease(Pointer item) {
    return wrap(item); // wrap releases `item` itself when it fails
  }

  private static Tensor wrapTensor(Pointer value) {
    try {
      return Tensor.fromValue(value);
    } catch (RuntimeException e) {
      OnyxNative.release(OnyxNative.Entry.ValueRelease, value);
      throw e;
    }
  }

  private static synchronized Pointer cpuInfo() {
    if (cpuInfo == null) {
      // ONYX_DEVICE_ALLOCATOR, ONYX_MEM_DEFAULT; kept for the life of the process.
      cpuInfo = OnyxNative.out(OnyxNative.Entry.MemoryInfoCreateCpu, 0, 0);
    }
    return cpuInfo;
  }

  private static Memory dims(long[] shape) {
    Memory dims = new Memory(Math.max(1, shape.length) * 8L);
    dims.write(0, shape, 0, shape.length);
    return dims;
  }

  /**
   * The engine value to pass for `value` during one call. Tensors become new values, added to `temps` for
   * the caller to release after the call: numeric ones lent in place when `lend` (then `keep` holds what must
   * stay reachable until the call returns), else copied into engine memory, as containers that outlive the
   * call need. Containers pass their own handle.
   */
  static Pointer borrow(OnyxValue value, boolean lend, List<Pointer> temps, List<Object> keep) {
    if (value instanceof Tensor) {
      Tensor t = (Tensor) value;
      Pointer p = lend && t.getType() != ElementType.STRING ? lendTensor(t, keep) : copy(t);
      temps.add(p);
      return p;
    }
    if (value instanceof OnyxSequence) {
      return ((OnyxSequence) value).handle().get();
    }
    if (value instanceof OnyxMap) {
      return ((OnyxMap) value).handle().get();
    }
    if (value instanceof OnyxOptional) {
      return ((OnyxOptional) value).handle().get();
    }
    throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, value == null ? "the value is null"
        : value.getClass().getName() + " is not a value made by the onyxruntime binding");
  }

  private static Pointer lendTensor(Tensor t, List<Object> keep) {
    ByteBuffer data = t.data();
    Memory dims = dims(t.getShape());
    Pointer p = data.capacity() == 0 ? new Memory(1) : Native.getDirectBufferPointer(data);
    keep.add(data);
    keep.add(dims);
    keep.add(p);
    return OnyxNative.out(OnyxNative.Entry.ValueCreateTensorWithData, cpuInfo(), p, (long) data.capacity(), dims,
        (long) t.getShape().length, t.getType().value);
  }

  /** A new engine tensor (owned by the caller) holding a copy of `t`'s elements in engine memory. */
  static Pointer copy(Tensor t) {
    long[] shape = t.getShape();
    ElementType type = t.getType();
    if (type.size == 0 && type != ElementType.STRING) {
      throw new OnyxException(OnyxException.Code.NOT_IMPLEMENTED, type + " tensors cannot be copied by the Java binding");
    }
    Pointer value = OnyxNative.out(OnyxNative.Entry.ValueCreateTensor, null, dims(shape), (long) shape.length,
        type.value);
    try {
      if (type == ElementType.STRING) {
        fillStrings(value, t.toStringArray());
      } else {
        ByteBuffer data = t.data();
        if (data.capacity() > 0) {
          Pointer dest = OnyxNative.out(OnyxNative.Entry.ValueGetTensorData, value);
          ByteBuffer src = data.duplicate();
          src.clear();
          dest.getByteBuffer(0, data.capacity()).put(src);
        }
      }
      return value;
    } catch (RuntimeException e) {
      OnyxNative.release(OnyxNative.Entry.ValueRelease, value);
      throw e;
    }
  }

  private static void fillStrings(Pointer value, String[] strings) {
    int n = strings.length;
    if (n == 0) {
      return;
    }
    byte[][] encoded = new byte[n][];
    long total = 0;
    for (int i = 0; i < n; i++) {
      encoded[i] = strings[i].getBytes(StandardCharsets.UTF_8);
      total += encoded[i].length;
    }
    Memory blob = new Memory(Math.max(1, total));
    Memory pointers = new Memory((long) n * Native.POINTER_SIZE);
    Memory lengths = new Memory(n * 8L);
    long offset = 0;
    for (int i = 0; i < n; i++) {
      blob.write(offset, encoded[i], 0, encoded[i].length);
      pointers.setPointer((long) i * Native.POINTER_SIZE, blob.share(offset));
      lengths.setLong(i * 8L, encoded[i].length);
      offset += encoded[i].length;
    }
    OnyxNative.check(OnyxNative.Entry.StringTensorFill, value, pointers, lengths, (long) n);
  }
}
