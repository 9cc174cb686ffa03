package ai.onyx.runtime;

/**
 * A value a model takes or returns: a {@link Tensor}, an {@link OnyxSequence}, an {@link OnyxMap} or an
 * {@link OnyxOptional}. Values returned by a run, and containers built with their {@code of} methods, own
 * engine memory until close(); closing a container closes the values it holds. Any use after close is an
 * OnyxException, never a crash.
 */
public interface OnyxValue extends AutoCloseable {
  ValueKind getKind();

  boolean isClosed();

  @Override
  void close();

  /** This value as a tensor; INVALID_ARGUMENT naming both kinds when it is something else. */
  default Tensor asTensor() {
    return Values.as(this, Tensor.class, ValueKind.TENSOR);
  }

  default OnyxSequence asSequence() {
    return Values.as(this, OnyxSequence.class, ValueKind.SEQUENCE);
  }

  default OnyxMap asMap() {
    return Values.as(this, OnyxMap.class, ValueKind.MAP);
  }

  default OnyxOptional asOptional() {
    return Values.as(this, OnyxOptional.class, ValueKind.OPTIONAL);
  }
}
