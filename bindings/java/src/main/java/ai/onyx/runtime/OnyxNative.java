package ai.onyx.runtime;

import com.sun.jna.Function;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;

/**
 * The C API table of libonyxruntime.so, read through JNA: OnyxGetApiBase()->GetApi(4), then each entry by its
 * slot. The library is the system property onyxruntime.library, else $ONYXRUNTIME_LIBRARY, else
 * PREFIX/lib/libonyxruntime.so beside an installed PREFIX/share/java/onyxruntime.jar, else JNA's search for
 * "onyxruntime". The slots are the ABI baseline's (abi_checks/onyx_api_v4.txt; a test compares them), so this binding
 * needs no native code of its own.
 */
final class OnyxNative {
  static final int API_VERSION = 4;

  /** The OnyxApi entries this binding calls, named as in the header, with their slots. */
  enum Entry {
    StatusGetCode(1), StatusGetMessage(2), StatusRelease(3), EnvCreate(4), EnvRelease(5),
    SessionOptionsCreate(6), SessionOptionsRelease(8), SessionOptionsSetIntraOpThreads(9),
    SessionOptionsSetGraphOptimizationLevel(11), SessionOptionsAddConfigEntry(15),
    SessionOptionsGetConfigEntry(16), SessionCreate(18), SessionCreateFromBytes(19), SessionRelease(20),
    SessionGetInputCount(21), SessionGetOutputCount(22), SessionGetInputName(24), SessionGetOutputName(25),
    SessionGetInputTypeInfo(27), SessionGetOutputTypeInfo(28), SessionRun(33), MemoryInfoCreateCpu(42),
    ValueCreateTensor(52), ValueCreateTensorWithData(53), ValueRelease(55), ValueGetKind(56),
    ValueGetTensorTypeAndShape(57), ValueGetTensorData(58), StringTensorFill(60), StringTensorGetElement(61),
    TypeInfoRelease(62), TypeInfoGetKind(63), TypeInfoGetTypeString(64), TypeInfoGetTensorInfo(65),
    TensorTypeAndShapeInfoRelease(66), TensorInfoGetElementType(67), TensorInfoGetDimCount(68),
    TensorInfoHasShape(69), TensorInfoGetDims(70), TensorInfoGetSymbolicDims(71), ValueGetElementCount(108),
    ValueGetElement(109), ValueCreateSequence(110), ValueCreateMap(111), ValueCreateOptional(112),
    SessionRunTensors(135);

    final int slot;
    private Function function;

    Entry(int slot) {
      this.slot = slot;
    }

    Function function() {
      if (function == null) {
        function = Function.getFunction(API.getPointer((long) slot * Native.POINTER_SIZE));
      }
      return function;
    }
  }

  static final NativeLibrary LIBRARY;
  static final Pointer API;

  static {
    if (Native.SIZE_T_SIZE != 8 || Native.POINTER_SIZE != 8) {
      throw new UnsatisfiedLinkError("onyxruntime's Java binding needs a 64-bit JVM");
    }
    String path = System.getProperty("onyxruntime.library");
    if (path == null) {
      path = System.getenv("ONYXRUNTIME_LIBRARY");
    }
    if (path == null) {
      path = besideJar();
    }
    LIBRARY = NativeLibrary.getInstance(path != null ? path : "onyxruntime");
    Pointer base = LIBRARY.getFunction("OnyxGetApiBase").invokePointer(new Object[0]);
    Pointer api = Function.getFunction(base.getPointer(0)).invokePointer(new Object[] {API_VERSION});
    if (api == null) {
      String why = Function.getFunction(base.getPointer(Native.POINTER_SIZE))
          .invokeString(new Object[] {API_VERSION}, false);
      throw new UnsatisfiedLinkError(LIBRARY.getFile() + " does not provide C API version " + API_VERSION + ": " + why);
    }
    API = api;
  }

  private OnyxNative() {}

  /** PREFIX/lib/libonyxruntime.so when this class comes from PREFIX/share/java/onyxruntime.jar (the install layout). */
  private static String besideJar() {
    try {
      java.security.CodeSource source = OnyxNative.class.getProtectionDomain().getCodeSource();
      if (source == null) {
        return null;
      }
      java.nio.file.Path jar = java.nio.file.Paths.get(source.getLocation().toURI());
      java.nio.file.Path lib = jar.resolveSibling("../../lib/libonyxruntime.so").normalize();
      return java.nio.file.Files.isRegularFile(lib) ? lib.toString() : null;
    } catch (java.net.URISyntaxException | RuntimeException e) {
      return null;
    }
  }

  /** Calls a fallible entry; a returned status becomes an OnyxException with its code and message. */
  static void check(Entry entry, Object... args) {
    Pointer status = entry.function().invokePointer(args);
    if (status != null) {
      int code = Entry.StatusGetCode.function().invokeInt(new Object[] {status});
      String message = Entry.StatusGetMessage.function().invokeString(new Object[] {status}, false);
      Entry.StatusRelease.function().invokeVoid(new Object[] {status});
      throw new OnyxException(OnyxException.Code.of(code), message);
    }
  }

  /** Calls a fallible entry whose last argument is an out pointer and returns what it wrote there. */
  static Pointer out(Entry entry, Object... args) {
    com.sun.jna.ptr.PointerByReference out = new com.sun.jna.ptr.PointerByReference();
    Object[] all = java.util.Arrays.copyOf(args, args.length + 1);
    all[args.length] = out;
    check(entry, all);
    return out.getValue();
  }

  static void release(Entry entry, Pointer handle) {
    entry.function().invokeVoid(new Object[] {handle});
  }
}
