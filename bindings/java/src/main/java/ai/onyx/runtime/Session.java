package ai.onyx.runtime;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.NativeLong;
import com.sun.jna.Pointer;
import com.sun.jna.Structure;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/** A loaded model (OnyxSession). run() may be called from many threads at once. */
public final class Session extends NativeHandle {
  private final List<String> inputNames;
  private final List<String> outputNames;
  private List<NodeInfo> inputInfo;
  private List<NodeInfo> outputInfo;

  /** OnyxTensorArg. */
  @Structure.FieldOrder({"data", "data_bytes", "shape", "rank", "type"})
  public static class TensorArg extends Structure {
    public Pointer data;
    public long data_bytes;
    public Pointer shape;
    public long rank;
    public int type;
  }

  /** OnyxTensorResult. */
  @Structure.FieldOrder({"value", "kind", "type", "rank", "shape", "data"})
  public static class TensorResult extends Structure {
    public Pointer value;
    public int kind;
    public int type;
    public long rank;
    public Pointer shape;
    public Pointer data;
  }

  public Session(OnyxEnvironment env, String path, SessionOptions options) {
    super(createFromPath(env, path, options), OnyxNative.Entry.SessionRelease, "Session");
    inputNames = names(OnyxNative.Entry.SessionGetInputCount, OnyxNative.Entry.SessionGetInputName);
    outputNames = names(OnyxNative.Entry.SessionGetOutputCount, OnyxNative.Entry.SessionGetOutputName);
  }

  public Session(OnyxEnvironment env, byte[] model, SessionOptions options) {
    super(createFromBytes(env, model, options), OnyxNative.Entry.SessionRelease, "Session");
    inputNames = names(OnyxNative.Entry.SessionGetInputCount, OnyxNative.Entry.SessionGetInputName);
    outputNames = names(OnyxNative.Entry.SessionGetOutputCount, OnyxNative.Entry.SessionGetOutputName);
  }

  private static Pointer createFromPath(OnyxEnvironment env, String path, SessionOptions options) {
    if (env == null || path == null) {
      throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, "Session: environment and path must not be null");
    }
    PointerByReference out = new PointerByReference();
    OnyxNative.check(OnyxNative.Entry.SessionCreate, env.handle(), path, options == null ? null : options.handle(), out);
    return out.getValue();
  }

  private static Pointer createFromBytes(OnyxEnvironment env, byte[] model, SessionOptions options) {
    if (env == null || model == null) {
      throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, "Session: environment and model must not be null");
    }
    Memory bytes = new Memory(Math.max(1, model.length));
    bytes.write(0, model, 0, model.length);
    PointerByReference out = new PointerByReference();
    OnyxNative.check(OnyxNative.Entry.SessionCreateFromBytes, env.handle(), bytes, (long) model.length,
        options == null ? null : options.handle(), out);
    return out.getValue();
  }

  private List<String> names(OnyxNative.Entry count, OnyxNative.Entry name) {
    LongByReference n = new LongByReference();
    OnyxNative.check(count, handle(), n);
    List<String> out = new ArrayList<>();
    for (long i = 0; i < n.getValue(); i++) {
      PointerByReference s = new PointerByReference();
      OnyxNative.check(name, handle(), i, s);
      out.add(s.getValue().getString(0, "UTF-8"));
    }
    return Collections.unmodifiableList(out);
  }

  public List<String> getInputNames() {
    return inputNames;
  }

  public List<String> getOutputNames() {
    return outputNames;
  }

  /** The declared types of the inputs, in order (read once, on first use). */
  public synchronized List<NodeInfo> getInputInfo() {
    if (inputInfo == null) {
      inputInfo = infos(inputNames, OnyxNative.Entry.SessionGetInputTypeInfo);
    }
    return inputInfo;
  }

  /** The declared types of the outputs, in order. */
  public synchronized List<NodeInfo> getOutputInfo() {
    if (outputInfo == null) {
      outputInfo = infos(outputNames, OnyxNative.Entry.SessionGetOutputTypeInfo);
    }
    return outputInfo;
  }

  private List<NodeInfo> infos(List<String> names, OnyxNative.Entry get) {
    List<NodeInfo> out = new ArrayList<>();
    for (int i = 0; i < names.size(); i++) {
      Pointer info = OnyxNative.out(get, handle(), (long) i);
      try {
        out.add(new NodeInfo(names.get(i), TypeInfo.read(info)));
      } finally {
        OnyxNative.release(OnyxNative.Entry.TypeInfoRelease, info);
      }
    }
    return Collections.unmodifiableList(out);
  }

  /**
   * Runs the model on the named inputs (tensors, sequences, maps, optionals) and returns its outputs, in
   * order, owned by the returned Result. Numeric tensors are read in place; when every input is one, the run
   * goes through SessionRunTensors, else through SessionRun.
   */
  public Result run(Map<String, ? extends OnyxValue> inputs) {
    if (inputs == null) {
      throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, "run: inputs must not be null");
    }
    boolean tensorsOnly = true;
    for (Map.Entry<String, ? extends OnyxValue> e : inputs.entrySet()) {
      if (!inputNames.contains(e.getKey())) {
        throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT,
            "run: '" + e.getKey() + "' is not an input of the model (inputs: " + inputNames + ")");
      }
      if (e.getValue() == null) {
        throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, "run: input '" + e.getKey() + "' is null");
      }
      if (!(e.getValue() instanceof Tensor) || ((Tensor) e.getValue()).getType() == ElementType.STRING) {
        tensorsOnly = false;
      }
    }
    if (!tensorsOnly) {
      return runValues(inputs);
    }
    Pointer session = handle();
    int n = inputs.size();
    Memory indices = new Memory(Math.max(1, n) * 8L);
    TensorArg[] args = (TensorArg[]) new TensorArg().toArray(Math.max(1, n));
    List<Memory> keepAlive = new ArrayList<>();
    int i = 0;
    for (Map.Entry<String, ? extends OnyxValue> e : inputs.entrySet()) {
      int index = inputNames.indexOf(e.getKey());
      Tensor t = (Tensor) e.getValue();
      ByteBuffer data = t.data();
      long[] shape = t.getShape();
      Memory dims = new Memory(Math.max(1, shape.length) * 8L);
      dims.write(0, shape, 0, shape.length);
      keepAlive.add(dims);
      indices.setLong(i * 8L, index);
      args[i].data = data.capacity() == 0 ? null : Native.getDirectBufferPointer(data);
      args[i].data_bytes = data.capacity();
      args[i].shape = dims;
      args[i].rank = shape.length;
      args[i].type = t.getType().value;
      args[i].write();
      i++;
    }
    int m = outputNames.size();
    TensorResult[] results = (TensorResult[]) new TensorResult().toArray(Math.max(1, m));
    OnyxNative.check(OnyxNative.Entry.SessionRunTensors, session, null, indices, args[0].getPointer(), (long) n,
        null, (long) m, results[0].getPointer());
    List<OnyxValue> outputs = new ArrayList<>();
    RuntimeException failure = null;
    for (TensorResult r : results) {
      if (outputs.size() == m) {
        break;
      }
      r.read();
      boolean taken = false;
      try {
        ElementType type = r.kind == ValueKind.TENSOR.ordinal() ? ElementType.of(r.type) : null;
        if (type == null || type.size == 0) {
          taken = true; // wrap releases the value when it fails
          outputs.add(Values.wrap(r.value));
          continue;
        }
        long[] shape = r.rank == 0 ? new long[0] : r.shape.getLongArray(0, (int) r.rank);
        long count = 1;
        for (long d : shape) {
          count *= d;
        }
        outputs.add(Tensor.owning(type, shape, r.data, count * type.size, r.value));
      } catch (RuntimeException e) {
        if (!taken) {
          OnyxNative.release(OnyxNative.Entry.ValueRelease, r.value);
        }
        outputs.add(null);
        if (failure == null) {
          failure = e;
        }
      }
    }
    return result(outputs, failure);
  }

  private Result result(List<OnyxValue> outputs, RuntimeException failure) {
    Result result = new Result(outputNames, outputs);
    if (failure != null) {
      result.close();
      throw failure;
    }
    return result;
  }

  /** A run through SessionRun, for inputs that are not all numeric tensors. */
  private Result runValues(Map<String, ? extends OnyxValue> inputs) {
    Pointer session = handle();
    int n = inputs.size();
    String[] names = new String[n];
    Memory values = new Memory(Math.max(1, n) * (long) Native.POINTER_SIZE);
    List<Pointer> temps = new ArrayList<>();
    List<Object> keep = new ArrayList<>();
    int m = outputNames.size();
    Memory outs = new Memory(Math.max(1, m) * (long) Native.POINTER_SIZE);
    try {
      int i = 0;
      for (Map.Entry<String, ? extends OnyxValue> e : inputs.entrySet()) {
        names[i] = e.getKey();
        values.setPointer((long) i * Native.POINTER_SIZE, Values.borrow(e.getValue(), true, temps, keep));
        i++;
      }
      OnyxNative.check(OnyxNative.Entry.SessionRun, session, null, names, values, (long) n, null, (long) m, outs);
    } finally {
      Values.releaseAll(temps);
    }
    List<OnyxValue> outputs = new ArrayList<>();
    RuntimeException failure = null;
    for (int j = 0; j < m; j++) {
      try {
        outputs.add(Values.wrap(outs.getPointer((long) j * Native.POINTER_SIZE)));
      } catch (RuntimeException e) {
        outputs.add(null);
        if (failure == null) {
          failure = e;
        }
      }
    }
    return result(outputs, failure);
  }

  /**
   * The outputs of one run, by name and position; close() releases them all. get() reads a tensor output;
   * getValue() any output (then asSequence(), asMap(), asOptional()).
   */
  public static final class Result implements AutoCloseable {
    private final List<String> names;
    private final List<OnyxValue> outputs;

    Result(List<String> names, List<OnyxValue> outputs) {
      this.names = names;
      this.outputs = outputs;
    }

    /** Output `index`, which must be a tensor (INVALID_ARGUMENT naming the output and its kind otherwise). */
    public Tensor get(int index) {
      return tensor(index);
    }

    public Tensor get(String name) {
      return tensor(indexOf(name));
    }

    public OnyxValue getValue(int index) {
      return outputs.get(index);
    }

    public OnyxValue getValue(String name) {
      return outputs.get(indexOf(name));
    }

    private Tensor tensor(int index) {
      OnyxValue v = outputs.get(index);
      if (!(v instanceof Tensor)) {
        throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, "output '" + names.get(index) + "' is a "
            + v.getKind() + ", not a TENSOR (read it with getValue)");
      }
      return (Tensor) v;
    }

    private int indexOf(String name) {
      int index = names.indexOf(name);
      if (index < 0 || index >= outputs.size()) {
        throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, "no output named '" + name + "' (outputs: "
            + names + ")");
      }
      return index;
    }

    public int size() {
      return outputs.size();
    }

    @Override
    public void close() {
      for (OnyxValue v : outputs) {
        if (v != null) {
          v.close();
        }
      }
    }
  }
}
