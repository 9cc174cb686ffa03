package ai.onyx.runtime;

import static ai.onyx.runtime.SessionTest.expect;
import static ai.onyx.runtime.SessionTest.model;
import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

/** Sequences, maps and optionals: outputs, inputs, declared types and misuse. */
public class ValuesTest {
  static OnyxEnvironment env;

  // make_test_models.py's LinearClassifier: 3 classes (labels 10, 20, 30 / cat, dog, eel) x 3 features.
  static final double[] COEFS = {0.5, -1.0, 2.0, 1.5, 0.25, -0.5, -2.0, 1.0, 0.75};
  static final double[] INTERCEPTS = {0.1, -0.2, 0.3};

  @BeforeClass
  public static void setUp() {
    env = new OnyxEnvironment();
  }

  @AfterClass
  public static void tearDown() {
    env.close();
  }

  static Map<String, OnyxValue> feeds(Object... kv) {
    Map<String, OnyxValue> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put((String) kv[i], (OnyxValue) kv[i + 1]);
    }
    return m;
  }

  /** Softmax of the classifier's scores for one row. */
  static double[] probabilities(float[] x) {
    double[] p = new double[3];
    double sum = 0;
    for (int c = 0; c < 3; c++) {
      double s = INTERCEPTS[c];
      for (int f = 0; f < 3; f++) {
        s += COEFS[c * 3 + f] * x[f];
      }
      p[c] = Math.exp(s);
      sum += p[c];
    }
    for (int c = 0; c < 3; c++) {
      p[c] /= sum;
    }
    return p;
  }

  @Test
  public void zipMapOutputsAreSequencesOfMaps() {
    float[][] rows = {{1, 2, 3}, {0, -1, 0.5f}, {-3, 0.25f, 2}};
    float[] flat = new float[9];
    for (int r = 0; r < 3; r++) {
      System.arraycopy(rows[r], 0, flat, r * 3, 3);
    }
    try (Session s = new Session(env, model("zipmap.onnx"), null);
         Tensor x = Tensor.of(flat, 3, 3);
         Session.Result r = s.run(feeds("X", x))) {
      OnyxSequence byId = r.getValue("by_id").asSequence();
      OnyxSequence byName = r.getValue(2).asSequence();
      assertEquals(3, byId.size());
      long[] labels = r.get("label").toLongArray();
      for (int row = 0; row < 3; row++) {
        double[] p = probabilities(rows[row]);
        OnyxMap m = byId.getMap(row);
        assertEquals(ElementType.INT64, m.getKeyType());
        assertEquals(ElementType.FLOAT, m.getValueType());
        assertEquals(Arrays.asList(10L, 20L, 30L), Arrays.asList(m.keySet().toArray()));
        Map<Long, Float> typed = m.toMap(Long.class, Float.class);
        Map<String, Float> named = byName.getMap(row).toMap(String.class, Float.class);
        int best = 0;
        for (int c = 0; c < 3; c++) {
          assertEquals(p[c], typed.get(10L * (c + 1)), 1e-6);
          assertEquals(p[c], (Float) m.get(10L * (c + 1)), 1e-6);
          assertEquals(p[c], named.get(new String[] {"cat", "dog", "eel"}[c]), 1e-6);
          best = p[c] > p[best] ? c : best;
        }
        assertEquals(10L * (best + 1), labels[row]);
      }
      // Declared types, structurally.
      TypeInfo t = s.getOutputInfo().get(1).getType();
      assertEquals(ValueKind.SEQUENCE, t.getKind());
      assertEquals("seq(map(int64,tensor(float)))", t.getTypeString());
      assertEquals(ValueKind.MAP, t.getElement().getKind());
      assertEquals(ElementType.INT64, t.getElement().getMapKeyType());
      assertEquals(ElementType.FLOAT, t.getElement().getMapValueType().getElementType());
      assertEquals(ElementType.STRING, s.getOutputInfo().get(2).getType().getElement().getMapKeyType());
      TypeInfo in = s.getInputInfo().get(0).getType();
      assertEquals(ElementType.FLOAT, in.getElementType());
      assertArrayEquals(new long[] {-1, 3}, in.getShape());
      assertEquals("N", in.getSymbolicDims()[0]);
    }
  }

  @Test
  public void mapsInAndOut() {
    Map<Long, Float> ids = new LinkedHashMap<>();
    ids.put(1L, 1.5f);
    ids.put(7L, -2f);
    Map<String, Double> words = new HashMap<>();
    words.put("c", 3.0);
    words.put("a", 0.5);
    try (Session s = new Session(env, model("maps.onnx"), null);
         OnyxMap idsMap = OnyxMap.of(ids);
         OnyxMap wordsMap = OnyxMap.of(ElementType.STRING, ElementType.DOUBLE, words);
         Session.Result r = s.run(feeds("ids", idsMap, "words", wordsMap))) {
      assertArrayEquals(new float[] {1.5f, 0, 0, -2}, r.get("ids_dense").toFloatArray(), 0f);
      assertArrayEquals(new double[] {0.5, 0, 3}, r.get("words_dense").toDoubleArray(), 0);
      OnyxMap back = r.getValue(2).asMap();
      assertEquals(ids, back.toMap(Long.class, Float.class));
      assertEquals(2, back.size());
      TypeInfo t = s.getInputInfo().get(1).getType();
      assertEquals(ValueKind.MAP, t.getKind());
      assertEquals(ElementType.STRING, t.getMapKeyType());
      assertEquals(ElementType.DOUBLE, t.getMapValueType().getElementType());
    }
    // Integer keys are widened to INT64.
    Map<Integer, Float> small = new HashMap<>();
    small.put(5, 4f);
    try (OnyxMap m = OnyxMap.of(small)) {
      assertEquals(ElementType.INT64, m.getKeyType());
      assertEquals(4f, (Float) m.get(5L), 0f);
    }
  }

  @Test
  public void sequencesInAndOut() {
    try (Session s = new Session(env, model("seqcat.onnx"), null);
         Tensor a = Tensor.of(new float[] {1, 1}, 1, 2);
         Tensor b = Tensor.of(new float[] {0, 1, 2, 3}, 2, 2);
         OnyxSequence seq = OnyxSequence.of(a, b);
         Tensor i = Tensor.of(new long[] {1});
         Session.Result r = s.run(feeds("s", seq, "i", i))) {
      assertEquals(2, seq.size());
      assertArrayEquals(new float[] {0, 1, 2, 3}, seq.getTensor(1).toFloatArray(), 0f);
      assertArrayEquals(new float[] {1, 1, 0, 1, 2, 3}, r.get("cat").toFloatArray(), 0f);
      assertArrayEquals(new long[] {3, 2}, r.get("cat").getShape());
      assertArrayEquals(new long[] {2}, r.get("len").toLongArray());
      assertArrayEquals(new float[] {0, 1, 2, 3}, r.get("at").toFloatArray(), 0f);
      OnyxSequence rows = r.getValue("rows").asSequence();
      assertEquals(3, rows.size());
      for (int k = 0; k < 3; k++) {
        assertArrayEquals(new long[] {2}, rows.getTensor(k).getShape());
      }
      assertArrayEquals(new float[] {2, 3}, rows.getTensor(2).toFloatArray(), 0f);
      // An output sequence goes back in as an input.
      try (Tensor zero = Tensor.of(new long[] {0});
           Session.Result again = s.run(feeds("s", rows, "i", zero))) {
        assertArrayEquals(new float[] {1, 1, 0, 1, 2, 3}, again.get("cat").toFloatArray(), 0f);
        assertArrayEquals(new float[] {1, 1}, again.get("at").toFloatArray(), 0f);
      }
      TypeInfo t = s.getInputInfo().get(0).getType();
      assertEquals(ValueKind.SEQUENCE, t.getKind());
      assertEquals(ElementType.FLOAT, t.getElement().getElementType());
      assertFalse(t.getElement().hasShape());
    }
  }

  @Test
  public void sequencesOfMapsAndEmptySequences() {
    Map<String, Float> m1 = new HashMap<>();
    m1.put("x", 1f);
    Map<String, Float> m2 = new HashMap<>();
    m2.put("y", 2f);
    m2.put("z", 3f);
    try (OnyxMap a = OnyxMap.of(m1); OnyxMap b = OnyxMap.of(m2); OnyxSequence seq = OnyxSequence.of(a, b);
         OnyxSequence empty = OnyxSequence.of()) {
      assertEquals(2, seq.size());
      assertEquals(3f, (Float) seq.getMap(1).get("z"), 0f);
      assertEquals(m2, seq.getMap(1).toMap(String.class, Float.class));
      assertEquals(0, empty.size());
      expect(OnyxException.Code.INVALID_ARGUMENT, "is a MAP, not a TENSOR", () -> seq.getTensor(0));
      try (Tensor t = Tensor.of(new float[] {1}, 1)) {
        expect(OnyxException.Code.INVALID_ARGUMENT, "differs in type", () -> OnyxSequence.of(a, t));
      }
    }
  }

  @Test
  public void optionalsPresentAndAbsent() {
    try (Session s = new Session(env, model("optional.onnx"), null);
         Tensor a = Tensor.of(new float[] {1, 2}, 2);
         OnyxOptional none = OnyxOptional.empty();
         Session.Result r = s.run(feeds("a", a, "o", none))) {
      OnyxOptional present = r.getValue("present").asOptional();
      assertTrue(present.isPresent());
      assertArrayEquals(new float[] {1, 2}, present.get().asTensor().toFloatArray(), 0f);
      OnyxOptional absent = r.getValue("absent").asOptional();
      assertFalse(absent.isPresent());
      expect(OnyxException.Code.INVALID_ARGUMENT, "the optional is empty", absent::get);
      assertArrayEquals(new boolean[] {false}, new boolean[] {r.get("has").getByteBuffer().get(0) != 0});
      try (Tensor v = Tensor.of(new float[] {3, 4}, 2);
           OnyxOptional some = OnyxOptional.of(v);
           Session.Result r2 = s.run(feeds("a", a, "o", some))) {
        assertTrue(some.isPresent());
        assertEquals(1, r2.get("has").getByteBuffer().get(0));
      }
      TypeInfo t = s.getInputInfo().get(1).getType();
      assertEquals(ValueKind.OPTIONAL, t.getKind());
      assertEquals(ElementType.FLOAT, t.getElement().getElementType());
      assertEquals("optional(tensor(float))", s.getOutputInfo().get(1).getType().getTypeString());
    }
  }

  @Test
  public void wrongKindsAndKeyTypes() {
    try (Session s = new Session(env, model("zipmap.onnx"), null);
         Tensor x = Tensor.of(new float[] {1, 2, 3}, 1, 3);
         Session.Result r = s.run(feeds("X", x))) {
      expect(OnyxException.Code.INVALID_ARGUMENT, "output 'by_id' is a SEQUENCE, not a TENSOR", () -> r.get("by_id"));
      expect(OnyxException.Code.INVALID_ARGUMENT, "is a SEQUENCE, not a MAP", () -> r.getValue("by_id").asMap());
      expect(OnyxException.Code.INVALID_ARGUMENT, "is a TENSOR, not a SEQUENCE", () -> r.getValue(0).asSequence());
      OnyxMap m = r.getValue("by_id").asSequence().getMap(0);
      expect(OnyxException.Code.INVALID_ARGUMENT, "map key 10 (Integer) does not match the map's key type INT64 (Long)",
          () -> m.get(10));
      expect(OnyxException.Code.INVALID_ARGUMENT, "key type INT64", () -> m.containsKey("cat"));
      expect(OnyxException.Code.INVALID_ARGUMENT, "not String to Float", () -> m.toMap(String.class, Float.class));
      expect(OnyxException.Code.INVALID_ARGUMENT, "has no key type",
          () -> s.getOutputInfo().get(1).getType().getMapKeyType());
    }
    Map<Object, Object> mixed = new LinkedHashMap<>();
    mixed.put(1L, 1f);
    mixed.put("two", 2f);
    expect(OnyxException.Code.INVALID_ARGUMENT, "map key two (String) does not match the key type INT64", () -> OnyxMap.of(mixed));
    expect(OnyxException.Code.INVALID_ARGUMENT, "does not match the value type FLOAT",
        () -> OnyxMap.of(ElementType.INT64, ElementType.FLOAT, java.util.Collections.singletonMap(1L, "a")));
    expect(OnyxException.Code.INVALID_ARGUMENT, "use of(keyType, valueType, map)", () -> OnyxMap.of(new HashMap<>()));
    expect(OnyxException.Code.INVALID_ARGUMENT, "keys must be INT64 or STRING",
        () -> OnyxMap.of(ElementType.FLOAT, ElementType.FLOAT, new HashMap<>()));
    expect(OnyxException.Code.INVALID_ARGUMENT, "the value is null (use empty())", () -> OnyxOptional.of(null));
    expect(OnyxException.Code.INVALID_ARGUMENT, "item 1 is null", () -> OnyxSequence.of(Tensor.of(new float[] {1}, 1), null));
  }

  @Test
  public void badFeedsNameTheInputAndLeaveTheSessionUsable() {
    Map<String, Float> words = new HashMap<>();
    words.put("a", 1f);
    Map<Long, Float> ids = new HashMap<>();
    ids.put(1L, 1f);
    Map<String, Double> w = new HashMap<>();
    w.put("b", 2.0);
    try (Session s = new Session(env, model("maps.onnx"), null);
         OnyxMap stringKeys = OnyxMap.of(words);
         OnyxMap good = OnyxMap.of(ids);
         OnyxMap goodWords = OnyxMap.of(w);
         Tensor t = Tensor.of(new float[] {1}, 1)) {
      // A map with string keys where int64 keys are declared, and a tensor where a map is.
      expect(OnyxException.Code.INVALID_ARGUMENT, "ids", () -> s.run(feeds("ids", stringKeys, "words", goodWords)));
      expect(OnyxException.Code.INVALID_ARGUMENT, "ids", () -> s.run(feeds("ids", t, "words", goodWords)));
      expect(OnyxException.Code.INVALID_ARGUMENT, "'nope' is not an input", () -> s.run(feeds("nope", good)));
      try (Session.Result r = s.run(feeds("ids", good, "words", goodWords))) {
        assertArrayEquals(new float[] {1, 0, 0, 0}, r.get(0).toFloatArray(), 0f);
      }
    }
    try (Session s = new Session(env, model("seqcat.onnx"), null);
         Tensor i = Tensor.of(new long[] {0});
         OnyxMap m = OnyxMap.of(ids);
         OnyxSequence maps = OnyxSequence.of(m)) {
      expect(OnyxException.Code.INVALID_ARGUMENT, "'s'", () -> s.run(feeds("s", maps, "i", i)));
    }
  }

  @Test
  public void closedValuesThrowInsteadOfCrashing() {
    Session s = new Session(env, model("seqcat.onnx"), null);
    Tensor a = Tensor.of(new float[] {1, 2}, 1, 2);
    OnyxSequence seq = OnyxSequence.of(a);
    Tensor i = Tensor.of(new long[] {0});
    Session.Result r = s.run(feeds("s", seq, "i", i));
    OnyxSequence rows = r.getValue("rows").asSequence();
    Tensor row = rows.getTensor(0);
    r.close();
    assertTrue(rows.isClosed());
    assertTrue(row.isClosed());
    expect(OnyxException.Code.INVALID_ARGUMENT, "OnyxSequence is closed", rows::size);
    expect(OnyxException.Code.INVALID_ARGUMENT, "OnyxSequence is closed", () -> rows.get(0));
    expect(OnyxException.Code.INVALID_ARGUMENT, "Tensor is closed", row::toFloatArray);
    seq.close();
    seq.close();
    expect(OnyxException.Code.INVALID_ARGUMENT, "OnyxSequence is closed", () -> s.run(feeds("s", seq, "i", i)));
    Map<Long, Float> ids = new HashMap<>();
    ids.put(3L, 1f);
    OnyxMap m = OnyxMap.of(ids);
    m.close();
    expect(OnyxException.Code.INVALID_ARGUMENT, "OnyxMap is closed", () -> m.get(3L));
    expect(OnyxException.Code.INVALID_ARGUMENT, "OnyxMap is closed", m::entrySet);
    expect(OnyxException.Code.INVALID_ARGUMENT, "OnyxMap is closed", () -> OnyxSequence.of(m));
    expect(OnyxException.Code.INVALID_ARGUMENT, "OnyxMap is closed", () -> OnyxOptional.of(m));
    OnyxOptional o = OnyxOptional.of(a);
    o.close();
    expect(OnyxException.Code.INVALID_ARGUMENT, "OnyxOptional is closed", o::isPresent);
    // The session still runs with fresh values.
    try (OnyxSequence again = OnyxSequence.of(a); Session.Result r2 = s.run(feeds("s", again, "i", i))) {
      assertArrayEquals(new float[] {1, 2}, r2.get("cat").toFloatArray(), 0f);
    }
    a.close();
    expect(OnyxException.Code.INVALID_ARGUMENT, "Tensor is closed", () -> OnyxSequence.of(a));
    i.close();
    s.close();
  }

  @Test
  public void typeStringsParseStructurally() {
    TypeInfo t = TypeInfo.parse("optional(seq(map(string,tensor(double))))");
    assertEquals(ValueKind.OPTIONAL, t.getKind());
    assertEquals(ValueKind.SEQUENCE, t.getElement().getKind());
    assertEquals("seq(map(string,tensor(double)))", t.getElement().getTypeString());
    assertEquals(ElementType.STRING, t.getElement().getElement().getMapKeyType());
    assertEquals(ElementType.DOUBLE, t.getElement().getElement().getMapValueType().getElementType());
    assertEquals(ElementType.FLOAT8E4M3FN, TypeInfo.parse("sparse_tensor(float8e4m3fn)").getElementType());
    assertEquals(ValueKind.UNKNOWN, TypeInfo.parse("seq(unknown)").getElement().getKind());
    expect(OnyxException.Code.FAIL, "at offset 17", () -> TypeInfo.parse("seq(tensor(float)"));
    expect(OnyxException.Code.FAIL, "at offset 0", () -> TypeInfo.parse("list(tensor(float))"));
    expect(OnyxException.Code.NOT_IMPLEMENTED, "'float128'", () -> TypeInfo.parse("tensor(float128)"));
  }
}
