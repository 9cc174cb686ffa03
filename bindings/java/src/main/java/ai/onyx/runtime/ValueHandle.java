package ai.onyx.runtime;

import com.sun.jna.Pointer;

/** An owned OnyxValue* of a container value, released once; use after close is an OnyxException. */
final class ValueHandle {
  private Pointer value;
  private final String what;

  ValueHandle(Pointer value, String what) {
    this.value = value;
    this.what = what;
  }

  synchronized Pointer get() {
    if (value == null) {
      throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, what + " is closed");
    }
    return value;
  }

  synchronized boolean isClosed() {
    return value == null;
  }

  /** Releases the handle; true the first time. */
  synchronized boolean close() {
    if (value == null) {
      return false;
    }
    OnyxNative.release(OnyxNative.Entry.ValueRelease, value);
    value = null;
    return true;
  }
}
