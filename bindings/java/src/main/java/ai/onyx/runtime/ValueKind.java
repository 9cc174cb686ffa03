package ai.onyx.runtime;

/** What a value is (OnyxValueKind). */
public enum ValueKind {
  UNKNOWN, TENSOR, SEQUENCE, MAP, OPTIONAL, SPARSE_TENSOR;

  static ValueKind of(int value) {
    ValueKind[] all = values();
    return value >= 0 && value < all.length ? all[value] : UNKNOWN;
  }
}
