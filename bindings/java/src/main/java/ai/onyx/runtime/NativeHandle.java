package ai.onyx.runtime;

import com.sun.jna.Pointer;

/** An owned C handle: released once by close(); any use after close is an OnyxException, never a crash. */
abstract class NativeHandle implements AutoCloseable {
  private Pointer handle;
  private final OnyxNative.Entry release;
  private final String what;

  NativeHandle(Pointer handle, OnyxNative.Entry release, String what) {
    this.handle = handle;
    this.release = release;
    this.what = what;
  }

  synchronized Pointer handle() {
    if (handle == null) {
      throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, what + " is closed");
    }
    return handle;
  }

  public synchronized boolean isClosed() {
    return handle == null;
  }

  @Override
  public synchronized void close() {
    if (handle != null) {
      OnyxNative.release(release, handle);
      handle = null;
    }
  }
}
