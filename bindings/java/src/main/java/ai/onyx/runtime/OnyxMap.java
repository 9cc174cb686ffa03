package ai.onyx.runtime;

import com.sun.jna.Pointer;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A map value (ONNX map(K, V)): a read-only java.util.Map from Long (INT64 keys) or String (STRING keys) to
 * boxed elements (Float, Double, Long, String, ...), in the engine's order. Looking up a key of the wrong
 * Java type is an OnyxException (INVALID_ARGUMENT) rather than a silent null. Run outputs and maps made by
 * of() own engine memory until close().
 */
public final class OnyxMap extends AbstractMap<Object, Object> implements OnyxValue {
  private final ValueHandle handle;
  private final ElementType keyType;
  private final ElementType valueType;
  private final Map<Object, Object> entries = new LinkedHashMap<>();

  OnyxMap(ValueHandle handle, Tensor keys, Tensor values) {
    this.handle = handle;
    this.keyType = keys.getType();
    this.valueType = values.getType();
    int n = Math.toIntExact(keys.getElementCount());
    for (int i = 0; i < n; i++) {
      entries.put(keys.element(i), values.element(i));
    }
  }

  /**
   * A map with the key and value types its entries' Java types give: Long (or Integer) or String keys;
   * Float, Double, Long or String values. INVALID_ARGUMENT for an empty map, null keys or values, or mixed
   * types.
   */
  public static OnyxMap of(Map<?, ?> entries) {
    if (entries == null || entries.isEmpty()) {
      throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT,
          "OnyxMap.of: the map is " + (entries == null ? "null" : "empty") + "; use of(keyType, valueType, map)");
    }
    Map.Entry<?, ?> first = entries.entrySet().iterator().next();
    return of(typeOf(first.getKey(), "key"), typeOf(first.getValue(), "value"), entries);
  }

  /** A map with INT64 or STRING keys and FLOAT, DOUBLE, INT64, INT32 or STRING values. */
  public static OnyxMap of(ElementType keyType, ElementType valueType, Map<?, ?> entries) {
    if (keyType != ElementType.INT64 && keyType != ElementType.STRING) {
      throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, "OnyxMap.of: keys must be INT64 or STRING, not " + keyType);
    }
    if (entries == null) {
      throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, "OnyxMap.of: the map is null");
    }
    List<Object> keys = new ArrayList<>();
    List<Object> values = new ArrayList<>();
    for (Map.Entry<?, ?> e : entries.entrySet()) {
      keys.add(e.getKey());
      values.add(e.getValue());
    }
    List<Pointer> temps = new ArrayList<>();
    try (Tensor k = column(keyType, keys, "key"); Tensor v = column(valueType, values, "value")) {
      Pointer kp = Values.borrow(k, false, temps, null);
      Pointer vp = Values.borrow(v, false, temps, null);
      return Values.wrap(OnyxNative.out(OnyxNative.Entry.ValueCreateMap, kp, vp)).asMap();
    } finally {
      Values.releaseAll(temps);
    }
  }

  private static ElementType typeOf(Object o, String what) {
    if (o instanceof Long || o instanceof Integer && what.equals("key")) {
      return ElementType.INT64;
    }
    if (o instanceof String) {
      return ElementType.STRING;
    }
    if (o instanceof Float) {
      return ElementType.FLOAT;
    }
    if (o instanceof Double) {
      return ElementType.DOUBLE;
    }
    if (o instanceof Integer) {
      return ElementType.INT32;
    }
    throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, "OnyxMap.of: map " + what + " " + o + " is "
        + (o == null ? "null" : "a " + o.getClass().getSimpleName()) + "; keys are Long or String, values Float, "
        + "Double, Long, Integer or String");
  }

  /** A 1-D tensor of `type` from boxed items; INVALID_ARGUMENT naming the first item of another type. */
  private static Tensor column(ElementType type, List<Object> items, String what) {
    int n = items.size();
    for (int i = 0; i < n; i++) {
      Object o = items.get(i);
      boolean fits = type == ElementType.INT64 ? o instanceof Long || o instanceof Integer
          : type == ElementType.DOUBLE ? o instanceof Double || o instanceof Float
          : javaType(type).isInstance(o);
      if (!fits) {
        throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, "OnyxMap.of: map " + what + " " + o + " ("
            + (o == null ? "null" : o.getClass().getSimpleName()) + ") does not match the " + what + " type " + type
            + " (" + javaType(type).getSimpleName() + ")");
      }
    }
    switch (type) {
      case INT64: {
        long[] a = new long[n];
        for (int i = 0; i < n; i++) {
          a[i] = ((Number) items.get(i)).longValue();
        }
        return Tensor.of(a, n);
      }
      case INT32: {
        int[] a = new int[n];
        for (int i = 0; i < n; i++) {
          a[i] = (Integer) items.get(i);
        }
        return Tensor.of(a, n);
      }
      case FLOAT: {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) {
          a[i] = (Float) items.get(i);
        }
        return Tensor.of(a, n);
      }
      case DOUBLE: {
        double[] a = new double[n];
        for (int i = 0; i < n; i++) {
          a[i] = ((Number) items.get(i)).doubleValue();
        }
        return Tensor.of(a, n);
      }
      default:
        return Tensor.of(items.toArray(new String[0]), n);
    }
  }

  /** The Java class of a map's keys or values of `type`. */
  static Class<?> javaType(ElementType type) {
    switch (type) {
      case FLOAT: return Float.class;
      case DOUBLE: return Double.class;
      case INT64: return Long.class;
      case INT32: return Integer.class;
      case INT16: return Short.class;
      case INT8: return Byte.class;
      case BOOL: return Boolean.class;
      case STRING: return String.class;
      default:
        throw new OnyxException(OnyxException.Code.NOT_IMPLEMENTED, type + " map entries are not supported by the Java binding");
    }
  }

  ValueHandle handle() {
    return handle;
  }

  @Override
  public ValueKind getKind() {
    return ValueKind.MAP;
  }

  /** INT64 or STRING. */
  public ElementType getKeyType() {
    return keyType;
  }

  public ElementType getValueType() {
    return valueType;
  }

  private void checkKey(Object key) {
    handle.get();
    Class<?> want = javaType(keyType);
    if (!want.isInstance(key)) {
      throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, "map key " + key + " ("
          + (key == null ? "null" : key.getClass().getSimpleName()) + ") does not match the map's key type " + keyType
          + " (" + want.getSimpleName() + ")");
    }
  }

  @Override
  public Object get(Object key) {
    checkKey(key);
    return entries.get(key);
  }

  @Override
  public boolean containsKey(Object key) {
    checkKey(key);
    return entries.containsKey(key);
  }

  @Override
  public Set<Map.Entry<Object, Object>> entrySet() {
    handle.get();
    return Collections.unmodifiableMap(entries).entrySet();
  }

  /**
   * A copy typed as Map&lt;K, V&gt; (it stays valid after close); INVALID_ARGUMENT when K or V is not the
   * Java type of the map's keys or values (e.g. Long and Float for map(int64, float)).
   */
  public <K, V> Map<K, V> toMap(Class<K> keyClass, Class<V> valueClass) {
    handle.get();
    if (keyClass != javaType(keyType) || valueClass != javaType(valueType)) {
      throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, "the map is map(" + keyType + ", " + valueType
          + ") of " + javaType(keyType).getSimpleName() + " to " + javaType(valueType).getSimpleName() + ", not "
          + (keyClass == null ? "null" : keyClass.getSimpleName()) + " to "
          + (valueClass == null ? "null" : valueClass.getSimpleName()));
    }
    Map<K, V> out = new LinkedHashMap<>();
    for (Map.Entry<Object, Object> e : entries.entrySet()) {
      out.put(keyClass.cast(e.getKey()), valueClass.cast(e.getValue()));
    }
    return out;
  }

  @Override
  public boolean isClosed() {
    return handle.isClosed();
  }

  @Override
  public void close() {
    handle.close();
  }

  @Override
  public String toString() {
    return isClosed() ? "OnyxMap(closed)" : "OnyxMap" + entries;
  }
}
