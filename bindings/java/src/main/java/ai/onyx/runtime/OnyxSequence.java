package ai.onyx.runtime;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import java.util.AbstractList;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A sequence value (ONNX seq(...)): a read-only List of its elements, tensors or maps, each owned by the
 * sequence and closed with it. Run outputs and sequences made by of() own engine memory until close().
 */
public final class OnyxSequence extends AbstractList<OnyxValue> implements OnyxValue {
  private final ValueHandle handle;
  private final List<OnyxValue> elements;

  OnyxSequence(ValueHandle handle, List<OnyxValue> elements) {
    this.handle = handle;
    this.elements = elements;
  }

  /**
   * A sequence of tensors of one element type, or of maps of one type (an empty list makes an empty
   * sequence). Tensor elements are copied into engine memory; maps are shared.
   */
  public static OnyxSequence of(List<? extends OnyxValue> items) {
    if (items == null) {
      throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, "OnyxSequence.of: items must not be null");
    }
    List<Pointer> temps = new ArrayList<>();
    List<Object> keep = new ArrayList<>();
    try {
      Memory array = new Memory(Math.max(1, items.size()) * (long) Native.POINTER_SIZE);
      for (int i = 0; i < items.size(); i++) {
        OnyxValue item = items.get(i);
        if (item == null) {
          throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, "OnyxSequence.of: item " + i + " is null");
        }
        array.setPointer((long) i * Native.POINTER_SIZE, Values.borrow(item, false, temps, keep));
      }
      Pointer seq = OnyxNative.out(OnyxNative.Entry.ValueCreateSequence, array, (long) items.size());
      return Values.wrap(seq).asSequence();
    } finally {
      Values.releaseAll(temps);
    }
  }

  public static OnyxSequence of(OnyxValue... items) {
    return of(items == null ? null : Arrays.asList(items));
  }

  ValueHandle handle() {
    return handle;
  }

  @Override
  public ValueKind getKind() {
    return ValueKind.SEQUENCE;
  }

  @Override
  public OnyxValue get(int index) {
    handle.get();
    return elements.get(index);
  }

  /** Element `index` as a tensor (INVALID_ARGUMENT when it is a map). */
  public Tensor getTensor(int index) {
    return get(index).asTensor();
  }

  /** Element `index` as a map (INVALID_ARGUMENT when it is a tensor). */
  public OnyxMap getMap(int index) {
    return get(index).asMap();
  }

  @Override
  public int size() {
    handle.get();
    return elements.size();
  }

  @Override
  public boolean isClosed() {
    return handle.isClosed();
  }

  @Override
  public void close() {
    if (handle.close()) {
      for (OnyxValue v : elements) {
        v.close();
      }
    }
  }

  @Override
  public String toString() {
    return isClosed() ? "OnyxSequence(closed)" : "OnyxSequence" + elements;
  }
}
