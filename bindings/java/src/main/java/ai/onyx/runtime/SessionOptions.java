package ai.onyx.runtime;

import com.sun.jna.ptr.PointerByReference;

/** Options of a session (OnyxSessionOptions); the engine keeps them, nothing is copied on the Java side. */
public final class SessionOptions extends NativeHandle {
  /** OnyxGraphOptimizationLevel. */
  public enum OptLevel {
    NO_OPT(0), BASIC_OPT(1), EXTENDED_OPT(2), LAYOUT_OPT(3), ALL_OPT(99);

    final int value;

    OptLevel(int value) {
      this.value = value;
    }
  }

  public SessionOptions() {
    super(create(), OnyxNative.Entry.SessionOptionsRelease, "SessionOptions");
  }

  private static com.sun.jna.Pointer create() {
    PointerByReference out = new PointerByReference();
    OnyxNative.check(OnyxNative.Entry.SessionOptionsCreate, out);
    return out.getValue();
  }

  public void setIntraOpNumThreads(int threads) {
    OnyxNative.check(OnyxNative.Entry.SessionOptionsSetIntraOpThreads, handle(), threads);
  }

  public void setOptimizationLevel(OptLevel level) {
    if (level == null) {
      throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, "SessionOptions: optimization level is null");
    }
    OnyxNative.check(OnyxNative.Entry.SessionOptionsSetGraphOptimizationLevel, handle(), level.value);
  }

  public void addConfigEntry(String key, String value) {
    OnyxNative.check(OnyxNative.Entry.SessionOptionsAddConfigEntry, handle(), key, value);
  }

  /** The value of a config entry, or null when it is not set. */
  public String getConfigEntry(String key) {
    PointerByReference out = new PointerByReference();
    OnyxNative.check(OnyxNative.Entry.SessionOptionsGetConfigEntry, handle(), key, out);
    return out.getValue() == null ? null : out.getValue().getString(0, "UTF-8");
  }
}
