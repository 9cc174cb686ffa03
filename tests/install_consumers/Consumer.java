import ai.onyx.runtime.OnyxEnvironment;
import ai.onyx.runtime.Session;
import ai.onyx.runtime.Tensor;
import java.util.HashMap;
import java.util.Map;

/** Java consumer of the installed jar (share/java/onyxruntime.jar finds lib/libonyxruntime.so itself). */
public class Consumer {
  public static void main(String[] args) {
    try (OnyxEnvironment env = new OnyxEnvironment();
         Session s = new Session(env, args[0], null);
         Tensor x = Tensor.of(new float[] {1, 2, 3, 4, 5, 6}, 2, 3);
         Tensor y = Tensor.of(new float[] {10, 20, 30, 40, 50, 60}, 2, 3)) {
      Map<String, Tensor> feeds = new HashMap<>();
      feeds.put("x", x);
      feeds.put("y", y);
      try (Session.Result r = s.run(feeds)) {
        StringBuilder line = new StringBuilder("z =");
        for (float v : r.get("z").toFloatArray()) {
          line.append(' ').append((int) v);
        }
        System.out.println(line);
      }
    }
  }
}
