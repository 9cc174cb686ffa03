import ai.onyx.runtime.OnyxEnvironment;
import ai.onyx.runtime.Session;
import ai.onyx.runtime.Tensor;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Collections;

/** test_bindings_same_bytes.py's scenario in Java: MODEL OUT -> the first output's raw bytes. */
public class SameBytes {
  public static void main(String[] args) throws Exception {
    float[] x = new float[3 * 224 * 224];
    for (int i = 0; i < x.length; i++) {
      x[i] = (float) ((double) (((long) i * 7919) % 1000) / 500.0 - 1.0);
    }
    try (OnyxEnvironment env = new OnyxEnvironment();
         Session s = new Session(env, args[0], null);
         Tensor t = Tensor.of(x, 1, 3, 224, 224);
         Session.Result r = s.run(Collections.singletonMap(s.getInputNames().get(0), t))) {
      float[] y = r.get(0).toFloatArray();
      ByteBuffer out = ByteBuffer.allocate(y.length * 4).order(ByteOrder.nativeOrder());
      out.asFloatBuffer().put(y);
      Files.write(Paths.get(args[1]), out.array());
    }
  }
}
