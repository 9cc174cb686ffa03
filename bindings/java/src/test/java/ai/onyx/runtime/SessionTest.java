package ai.onyx.runtime;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

public class SessionTest {
  static final String MODELS = System.getProperty("onyx.test.models");
  static OnyxEnvironment env;

  @BeforeClass
  public static void setUp() {
    env = new OnyxEnvironment();
  }

  @AfterClass
  public static void tearDown() {
    env.close();
  }

  static String model(String name) {
    return Paths.get(MODELS, name).toString();
  }

  interface Body {
    void run();
  }

  static OnyxException expect(OnyxException.Code code, String text, Body body) {
    try {
      body.run();
    } catch (OnyxException e) {
      assertEquals(e.getMessage(), code, e.getCode());
      assertTrue(e.getMessage(), e.getMessage().contains(text));
      if (System.getProperty("onyx.test.verbose") != null) {
        System.err.println(e.getMessage());
      }
      return e;
    }
    fail("no OnyxException " + code);
    return null;
  }

  static Map<String, Tensor> feeds(Object... kv) {
    Map<String, Tensor> m = new HashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put((String) kv[i], (Tensor) kv[i + 1]);
    }
    return m;
  }

  @Test
  public void runsAddFromPathWithArrays() {
    try (Session s = new Session(env, model("add.onnx"), null);
         Tensor x = Tensor.of(new float[] {1, 2, 3, 4, 5, 6}, 2, 3);
         Tensor y = Tensor.of(new float[] {0.5f, -2, 0, 10, 1e-3f, -6}, 2, 3);
         Session.Result r = s.run(feeds("x", x, "y", y))) {
      assertEquals(Arrays.asList("x", "y"), s.getInputNames());
      assertEquals(Arrays.asList("z"), s.getOutputNames());
      Tensor z = r.get("z");
      assertEquals(ElementType.FLOAT, z.getType());
      assertArrayEquals(new long[] {2, 3}, z.getShape());
      assertArrayEquals(new float[] {1.5f, 0, 3, 14, 5.001f, 0}, z.toFloatArray(), 0f);
    }
  }

  @Test
  public void runsFromBytesWithDirectBuffers() throws Exception {
    byte[] bytes = Files.readAllBytes(Paths.get(model("add.onnx")));
    try (SessionOptions o = new SessionOptions()) {
      o.setIntraOpNumThreads(1);
      o.setOptimizationLevel(SessionOptions.OptLevel.ALL_OPT);
      try (Session s = new Session(env, bytes, o)) {
        FloatBuffer xb = ByteBuffer.allocateDirect(24).order(ByteOrder.nativeOrder()).asFloatBuffer();
        xb.put(new float[] {1, 1, 1, 1, 1, 1}).rewind();
        ByteBuffer yb = ByteBuffer.allocateDirect(24).order(ByteOrder.nativeOrder());
        yb.asFloatBuffer().put(new float[] {1, 2, 3, 4, 5, 6});
        try (Tensor x = Tensor.fromBuffer(ElementType.FLOAT, xb, 2, 3);
             Tensor y = Tensor.fromBuffer(ElementType.FLOAT, yb, 2, 3);
             Session.Result r = s.run(feeds("x", x, "y", y))) {
          assertArrayEquals(new float[] {2, 3, 4, 5, 6, 7}, r.get(0).toFloatArray(), 0f);
        }
      }
    }
  }

  @Test
  public void mixedTypesAndScalars() {
    try (Session s = new Session(env, model("mixed.onnx"), null);
         Tensor ids = Tensor.of(new long[] {3, -4, 5000000000L}, 3);
         Tensor n = Tensor.of(new int[] {7, -8}, 2);
         Session.Result r = s.run(feeds("ids", ids, "n", n))) {
      assertArrayEquals(new double[] {3, -4, 5e9}, r.get("ids_f").toDoubleArray(), 0);
      assertEquals(0, r.get("total").getShape().length);
      assertArrayEquals(new long[] {4999999999L}, r.get("total").toLongArray());
      assertArrayEquals(new int[] {-7, 8}, r.get("neg").toIntArray());
      expect(OnyxException.Code.INVALID_ARGUMENT, "holds INT32, not FLOAT", () -> r.get("neg").toFloatArray());
    }
  }

  @Test
  public void concurrentRuns() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try (Session s = new Session(env, model("add.onnx"), null)) {
      List<Future<float[]>> futures = new ArrayList<>();
      for (int t = 0; t < 16; t++) {
        final float k = t;
        futures.add(pool.submit(() -> {
          try (Tensor x = Tensor.of(new float[] {k, k, k, k, k, k}, 2, 3);
               Tensor y = Tensor.of(new float[] {1, 1, 1, 1, 1, 1}, 2, 3);
               Session.Result r = s.run(feeds("x", x, "y", y))) {
            return r.get(0).toFloatArray();
          }
        }));
      }
      for (int t = 0; t < 16; t++) {
        float[] got = futures.get(t).get();
        assertEquals(t + 1f, got[5], 0f);
      }
    } finally {
      pool.shutdown();
    }
  }

  @Test
  public void configEntries() {
    try (SessionOptions o = new SessionOptions()) {
      assertNull(o.getConfigEntry("session.some_key"));
      o.addConfigEntry("session.some_key", "1");
      assertEquals("1", o.getConfigEntry("session.some_key"));
      expect(OnyxException.Code.INVALID_ARGUMENT, "got -1", () -> o.setIntraOpNumThreads(-1));
    }
  }

  @Test
  public void missingFileInvalidBytesAndNulls() {
    expect(OnyxException.Code.NO_SUCHFILE, "no_such_model.onnx",
        () -> new Session(env, model("no_such_model.onnx"), null));
    expect(OnyxException.Code.INVALID_PROTOBUF, "", () -> new Session(env, new byte[] {1, 2, 3, 4, 5}, null));
    expect(OnyxException.Code.INVALID_ARGUMENT, "must not be null", () -> new Session(env, (String) null, null));
  }

  @Test
  public void badFeeds() {
    try (Session s = new Session(env, model("add.onnx"), null);
         Tensor x = Tensor.of(new float[] {1, 2, 3, 4, 5, 6}, 2, 3);
         Tensor small = Tensor.fromBuffer(ElementType.FLOAT,
             ByteBuffer.allocateDirect(20).order(ByteOrder.nativeOrder()), 2, 3);
         Tensor ints = Tensor.of(new int[] {1, 2, 3, 4, 5, 6}, 2, 3)) {
      expect(OnyxException.Code.INVALID_ARGUMENT, "'w' is not an input", () -> s.run(feeds("x", x, "w", x)));
      expect(OnyxException.Code.INVALID_ARGUMENT, "input 'y': buffer of 20 bytes does not match shape", () -> s.run(feeds("x", x, "y", small)));
      expect(OnyxException.Code.INVALID_ARGUMENT, "for input 'y'", () -> s.run(feeds("x", x, "y", ints)));
      expect(OnyxException.Code.INVALID_ARGUMENT, "Missing Input: y", () -> s.run(feeds("x", x)));
      expect(OnyxException.Code.INVALID_ARGUMENT, "does not fill shape", () -> Tensor.of(new float[] {1, 2}, 2, 3));
      expect(OnyxException.Code.INVALID_ARGUMENT, "negative", () -> Tensor.of(new float[] {}, -1));
      expect(OnyxException.Code.INVALID_ARGUMENT, "direct",
          () -> Tensor.fromBuffer(ElementType.FLOAT, FloatBuffer.allocate(6), 2, 3));
      // The session still runs after the errors.
      try (Session.Result r = s.run(feeds("x", x, "y", x))) {
        assertEquals(12f, r.get("z").toFloatArray()[5], 0f);
      }
    }
  }

  @Test
  public void closedObjects() {
    Session s = new Session(env, model("add.onnx"), null);
    Tensor x = Tensor.of(new float[] {1, 2, 3, 4, 5, 6}, 2, 3);
    Session.Result r = s.run(feeds("x", x, "y", x));
    Tensor z = r.get(0);
    r.close();
    expect(OnyxException.Code.INVALID_ARGUMENT, "Tensor is closed", z::toFloatArray);
    s.close();
    s.close();
    assertTrue(s.isClosed());
    expect(OnyxException.Code.INVALID_ARGUMENT, "Session is closed", () -> s.run(feeds("x", x, "y", x)));
    x.close();
    SessionOptions o = new SessionOptions();
    o.close();
    expect(OnyxException.Code.INVALID_ARGUMENT, "SessionOptions is closed", () -> o.addConfigEntry("a", "b"));
  }

  @Test
  public void slotsMatchTheAbiBaseline() throws Exception {
    List<String> baseline = Files.readAllLines(Paths.get(System.getProperty("onyx.abi.baseline")));
    for (OnyxNative.Entry e : OnyxNative.Entry.values()) {
      String prefix = "api " + e.slot + " " + e.name() + ":";
      assertTrue(e.name() + " at slot " + e.slot, baseline.stream().anyMatch(l -> l.startsWith(prefix)));
    }
  }
}
