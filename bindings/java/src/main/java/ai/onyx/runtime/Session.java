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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A loaded model (OnyxSession). run() may be called from many threads at once. */
public final class Session extends NativeHandle {
  private final List<String> inputNames;
  private final List<String> outputNames;

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

  /** The model's outputs, in order, owned by the returned Result. */
  public Result run(Map<String, Tensor> inputs) {
    if (inputs == null) {
      throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, "run: inputs must not be null");
    }
    Pointer session = handle();
    int n = inputs.size();
    Memory indices = new Memory(Math.max(1, n) * 8L);
    TensorArg[] args = (TensorArg[]) new TensorArg().toArray(Math.max(1, n));
    List<Memory> keepAlive = new ArrayList<>();
    int i = 0;
    for (Map.Entry<String, Tensor> e : inputs.entrySet()) {
      int index = inputNames.indexOf(e.getKey());
      if (index < 0) {
        throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT,
            "run: '" + e.getKey() + "' is not an input of the model (inputs: " + inputNames + ")");
      }
      Tensor t = e.getValue();
      if (t == null) {
        throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, "run: input '" + e.getKey() + "' is null");
      }
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
    List<Tensor> outputs = new ArrayList<>();
    RuntimeException failure = null;
    for (TensorResult r : results) {
      if (outputs.size() == m) {
        break;
      }
      r.read();
      try {
        if (r.kind != 1) {
          throw new OnyxException(OnyxException.Code.NOT_IMPLEMENTED, "output '" + outputNames.get(outputs.size())
              + "' is not a tensor (value kind " + r.kind + "): the Java binding reads tensors only");
        }
        long[] shape = r.rank == 0 ? new long[0] : r.shape.getLongArray(0, (int) r.rank);
        ElementType type = ElementType.of(r.type);
        long count = 1;
        for (long d : shape) {
          count *= d;
        }
        outputs.add(Tensor.owning(type, shape, r.data, count * type.size, r.value));
      } catch (RuntimeException e) {
        OnyxNative.release(OnyxNative.Entry.ValueRelease, r.value);
        outputs.add(null);
        if (failure == null) {
          failure = e;
        }
      }
    }
    Result result = new Result(outputNames, outputs);
    if (failure != null) {
      result.close();
      throw failure;
    }
    return result;
  }

  /** The outputs of one run, by name and position; close() releases them all. */
  public static final class Result implements AutoCloseable {
    private final Map<String, Tensor> byName = new LinkedHashMap<>();
    private final List<Tensor> outputs;

    Result(List<String> names, List<Tensor> outputs) {
      this.outputs = outputs;
      for (int i = 0; i < outputs.size(); i++) {
        byName.put(names.get(i), outputs.get(i));
      }
    }

    public Tensor get(int index) {
      return outputs.get(index);
    }

    public Tensor get(String name) {
      Tensor t = byName.get(name);
      if (t == null) {
        throw new OnyxException(OnyxException.Code.INVALID_ARGUMENT, "no output named '" + name + "' (outputs: "
            + byName.keySet() + ")");
      }
      return t;
    }

    public int size() {
      return outputs.size();
    }

    @Override
    public void close() {
      for (Tensor t : outputs) {
        if (t != null) {
          t.close();
        }
      }
    }
  }
}
