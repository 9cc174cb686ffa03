package ai.onyx.runtime;

import com.sun.jna.ptr.PointerByReference;

/** Logging settings shared by sessions (OnyxEnv). Sessions keep their own reference, so it may close first. */
public final class OnyxEnvironment extends NativeHandle {
  /** OnyxLoggingLevel. */
  public enum LoggingLevel { VERBOSE, INFO, WARNING, ERROR, FATAL }

  public OnyxEnvironment() {
    this(LoggingLevel.WARNING, "onyxruntime-java");
  }

  public OnyxEnvironment(LoggingLevel level, String logId) {
    super(create(level, logId), OnyxNative.Entry.EnvRelease, "OnyxEnvironment");
  }

  private static com.sun.jna.Pointer create(LoggingLevel level, String logId) {
    if (level == null) {
      throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, "OnyxEnvironment: logging level is null");
    }
    PointerByReference out = new PointerByReference();
    OnyxNative.check(OnyxNative.Entry.EnvCreate, level.ordinal(), logId, out);
    return out.getValue();
  }
}
