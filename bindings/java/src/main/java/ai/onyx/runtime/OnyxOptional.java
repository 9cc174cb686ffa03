package ai.onyx.runtime;

import com.sun.jna.Pointer;
import java.util.ArrayList;
import java.util.List;

/** An optional value (ONNX optional(...)): empty, or holding one value that it owns and closes with itself. */
public final class OnyxOptional implements OnyxValue {
  private final ValueHandle handle;
  private final OnyxValue value;

  OnyxOptional(ValueHandle handle, OnyxValue value) {
    this.handle = handle;
    this.value = value;
  }

  /** An empty optional, fit for any optional input. */
  public static OnyxOptional empty() {
    return Values.wrap(OnyxNative.out(OnyxNative.Entry.ValueCreateOptional, (Pointer) null)).asOptional();
  }

  /** An optional holding `value`: a tensor (copied into engine memory) or a sequence or map (shared). */
  public static OnyxOptional of(OnyxValue value) {
    if (value == null) {
      throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, "OnyxOptional.of: the value is null (use empty())");
    }
    if (value instanceof OnyxOptional) {
      throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, "OnyxOptional.of: an optional cannot hold an optional");
    }
    List<Pointer> temps = new ArrayList<>();
    try {
      Pointer inner = Values.borrow(value, false, temps, new ArrayList<>());
      return Values.wrap(OnyxNative.out(OnyxNative.Entry.ValueCreateOptional, inner)).asOptional();
    } finally {
      Values.releaseAll(temps);
    }
  }

  ValueHandle handle() {
    return handle;
  }

  @Override
  public ValueKind getKind() {
    return ValueKind.OPTIONAL;
  }

  public boolean isPresent() {
    handle.get();
    return value != null;
  }

  /** The value held; INVALID_ARGUMENT when the optional is empty. */
  public OnyxValue get() {
    handle.get();
    if (value == null) {
      throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, "the optional is empty");
    }
    return value;
  }

  @Override
  public boolean isClosed() {
    return handle.isClosed();
  }

  @Override
  public void close() {
    if (handle.close() && value != null) {
      value.close();
    }
  }

  @Override
  public String toString() {
    return isClosed() ? "OnyxOptional(closed)" : value == null ? "OnyxOptional.empty" : "OnyxOptional[" + value + "]";
  }
}
