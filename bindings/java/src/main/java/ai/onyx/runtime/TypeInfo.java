package ai.onyx.runtime;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.LongByReference;
import java.util.Arrays;

/**
 * The declared type of a model input or output, structurally: a tensor's element type and shape, a
 * sequence's or optional's element type, a map's key type and value type. Nested types come from the C API's
 * type string ("seq(map(int64,tensor(float)))"), read by a small parser of its grammar; shapes are known for
 * the outermost tensor only.
 */
public final class TypeInfo {
  private final ValueKind kind;
  private final String typeString;
  private final ElementType elementType; // tensors, sparse tensors
  private final ElementType keyType; // maps
  private final TypeInfo element; // sequences, optionals: the element; maps: the value
  private final long[] shape; // null when not known
  private final String[] symbolicDims;

  private TypeInfo(ValueKind kind, String typeString, ElementType elementType, ElementType keyType, TypeInfo element,
                   long[] shape, String[] symbolicDims) {
    this.kind = kind;
    this.typeString = typeString;
    this.elementType = elementType;
    this.keyType = keyType;
    this.element = element;
    this.shape = shape;
    this.symbolicDims = symbolicDims;
  }

  public ValueKind getKind() {
    return kind;
  }

  /** onnxruntime's spelling: "tensor(float)", "seq(tensor(int64))", "map(string,tensor(float))", ... */
  public String getTypeString() {
    return typeString;
  }

  /** The element type of a tensor; INVALID_ARGUMENT for other kinds. */
  public ElementType getElementType() {
    require(kind == ValueKind.TENSOR || kind == ValueKind.SPARSE_TENSOR, "element type");
    return elementType;
  }

  /** Whether the shape (rank and dims) is declared: tensors at the outermost level only. */
  public boolean hasShape() {
    return shape != null;
  }

  /** Dimensions, -1 where symbolic or unknown; INVALID_ARGUMENT when hasShape() is false. */
  public long[] getShape() {
    require(shape != null, "declared shape");
    return shape.clone();
  }

  /** Each dimension's symbol ("" for a known or unnamed one). */
  public String[] getSymbolicDims() {
    require(shape != null, "declared shape");
    return symbolicDims.clone();
  }

  /** The element type of a sequence or optional. */
  public TypeInfo getElement() {
    require(kind == ValueKind.SEQUENCE || kind == ValueKind.OPTIONAL, "element");
    return element;
  }

  /** The key element type of a map (INT64 or STRING). */
  public ElementType getMapKeyType() {
    require(kind == ValueKind.MAP, "key type");
    return keyType;
  }

  /** The value type of a map (a tensor type, e.g. tensor(float)). */
  public TypeInfo getMapValueType() {
    require(kind == ValueKind.MAP, "value type");
    return element;
  }

  private void require(boolean ok, String what) {
    if (!ok) {
      throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, typeString + " has no " + what);
    }
  }

  @Override
  public String toString() {
    if (shape == null) {
      return typeString;
    }
    String[] dims = new String[shape.length];
    for (int i = 0; i < shape.length; i++) {
      dims[i] = symbolicDims[i].isEmpty() ? Long.toString(shape[i]) : symbolicDims[i];
    }
    return typeString + " " + Arrays.toString(dims);
  }

  /** Reads an OnyxTypeInfo (borrowed). */
  static TypeInfo read(Pointer info) {
    IntByReference kind = new IntByReference();
    OnyxNative.check(OnyxNative.Entry.TypeInfoGetKind, info, kind);
    String text = OnyxNative.out(OnyxNative.Entry.TypeInfoGetTypeString, info).getString(0, "UTF-8");
    TypeInfo parsed = parse(text);
    if (ValueKind.of(kind.getValue()) != parsed.kind) {
      throw new OnyxException(OnyxException.Code.FAIL, "type string '" + text + "' disagrees with kind "
          + ValueKind.of(kind.getValue()));
    }
    Pointer tensor = OnyxNative.out(OnyxNative.Entry.TypeInfoGetTensorInfo, info);
    if (tensor == null) {
      return parsed;
    }
    IntByReference has = new IntByReference();
    OnyxNative.check(OnyxNative.Entry.TensorInfoHasShape, tensor, has);
    IntByReference type = new IntByReference();
    OnyxNative.check(OnyxNative.Entry.TensorInfoGetElementType, tensor, type);
    long[] dims = null;
    String[] symbols = null;
    if (has.getValue() != 0) {
      LongByReference rank = new LongByReference();
      OnyxNative.check(OnyxNative.Entry.TensorInfoGetDimCount, tensor, rank);
      int n = (int) rank.getValue();
      Memory d = new Memory(Math.max(1, n) * 8L);
      Memory s = new Memory(Math.max(1, n) * (long) Native.POINTER_SIZE);
      OnyxNative.check(OnyxNative.Entry.TensorInfoGetDims, tensor, d, (long) n);
      OnyxNative.check(OnyxNative.Entry.TensorInfoGetSymbolicDims, tensor, s, (long) n);
      dims = d.getLongArray(0, n);
      symbols = new String[n];
      for (int i = 0; i < n; i++) {
        Pointer p = s.getPointer((long) i * Native.POINTER_SIZE);
        symbols[i] = p == null ? "" : p.getString(0, "UTF-8");
      }
    }
    return new TypeInfo(parsed.kind, text, ElementType.of(type.getValue()), null, null, dims, symbols);
  }

  /**
   * Parses a type string: tensor(E) | sparse_tensor(E) | seq(T) | optional(T) | map(E,T), E an element type
   * name; "unknown" (an element type the model leaves open) is kind UNKNOWN.
   */
  static TypeInfo parse(String text) {
    int[] pos = {0};
    TypeInfo t = parse(text, pos);
    if (pos[0] != text.length()) {
      throw malformed(text, pos[0]);
    }
    return t;
  }

  private static TypeInfo parse(String text, int[] pos) {
    int start = pos[0];
    String head = word(text, pos);
    if (head.equals("unknown")) {
      return new TypeInfo(ValueKind.UNKNOWN, head, null, null, null, null, null);
    }
    expect(text, pos, '(');
    TypeInfo result;
    switch (head) {
      case "tensor":
      case "sparse_tensor":
        result = new TypeInfo(head.equals("tensor") ? ValueKind.TENSOR : ValueKind.SPARSE_TENSOR, null,
            ElementType.named(word(text, pos)), null, null, null, null);
        break;
      case "seq":
      case "optional":
        result = new TypeInfo(head.equals("seq") ? ValueKind.SEQUENCE : ValueKind.OPTIONAL, null, null, null,
            parse(text, pos), null, null);
        break;
      case "map": {
        ElementType key = ElementType.named(word(text, pos));
        expect(text, pos, ',');
        result = new TypeInfo(ValueKind.MAP, null, null, key, parse(text, pos), null, null);
        break;
      }
      default:
        throw malformed(text, start);
    }
    expect(text, pos, ')');
    return new TypeInfo(result.kind, text.substring(start, pos[0]), result.elementType, result.keyType,
        result.element, null, null);
  }

  private static String word(String text, int[] pos) {
    int start = pos[0];
    while (pos[0] < text.length() && (Character.isLetterOrDigit(text.charAt(pos[0])) || text.charAt(pos[0]) == '_')) {
      pos[0]++;
    }
    if (start == pos[0]) {
      throw malformed(text, start);
    }
    return text.substring(start, pos[0]);
  }

  private static void expect(String text, int[] pos, char c) {
    if (pos[0] >= text.length() || text.charAt(pos[0]) != c) {
      throw malformed(text, pos[0]);
    }
    pos[0]++;
  }

  private static OnyxException malformed(String text, int at) {
    return new OnyxException(OnyxException.Code.FAIL, "cannot read type string '" + text + "' at offset " + at);
  }
}
