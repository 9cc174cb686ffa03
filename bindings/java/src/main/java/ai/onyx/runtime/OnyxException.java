package ai.onyx.runtime;

/** A failure reported by the engine (or a misuse caught before calling it), with the C API's error code. */
public class OnyxException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** OnyxErrorCode values of the C header. */
  public enum Code {
    OK, FAIL, INVALID_ARGUMENT, NO_SUCHFILE, NO_MODEL, ENGINE_ERROR, RUNTIME_EXCEPTION, INVALID_PROTOBUF,
    MODEL_LOADED, NOT_IMPLEMENTED, INVALID_GRAPH, EP_FAIL;

    static Code of(int value) {
      Code[] all = values();
      return value >= 0 && value < all.length ? all[value] : FAIL;
    }
  }

  private final Code code;

  public OnyxException(Code code, String message) {
    super("[OnyxRuntimeError] : " + code.ordinal() + " : " + code + " : " + message);
    this.code = code;
  }

  public Code getCode() {
    return code;
  }
}
