using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using NUnit.Framework;

namespace Onyx.Runtime.Tests
{
    /// <summary>Sequences, maps and optionals: outputs, inputs, declared types and misuse.</summary>
    [TestFixture]
    public class ValuesTests
    {
        static readonly string Models = Environment.GetEnvironmentVariable("ONYX_TEST_MODELS");
        OnyxEnvironment env;

        // make_test_models.py's LinearClassifier: 3 classes (labels 10, 20, 30 / cat, dog, eel) x 3 features.
        static readonly double[] Coefs = { 0.5, -1.0, 2.0, 1.5, 0.25, -0.5, -2.0, 1.0, 0.75 };
        static readonly double[] Intercepts = { 0.1, -0.2, 0.3 };

        [TestFixtureSetUp]
        public void SetUp() { env = new OnyxEnvironment(); }

        [TestFixtureTearDown]
        public void TearDown() { env.Dispose(); }

        static string Model(string name) { return Path.Combine(Models, name); }

        static Dictionary<string, OnyxValue> Feeds(params object[] kv)
        {
            var d = new Dictionary<string, OnyxValue>();
            for (int i = 0; i < kv.Length; i += 2) d[(string)kv[i]] = (OnyxValue)kv[i + 1];
            return d;
        }

        static void Expect(ErrorCode code, string text, Action body)
        {
            try
            {
                body();
            }
            catch (OnyxException e)
            {
                Assert.AreEqual(code, e.Code, e.Message);
                StringAssert.Contains(text, e.Message);
                if (Environment.GetEnvironmentVariable("ONYX_TEST_VERBOSE") != null) Console.Error.WriteLine(e.Message);
                return;
            }
            Assert.Fail("no OnyxException " + code + " containing '" + text + "'");
        }

        static double[] Probabilities(float[] x)
        {
            var p = new double[3];
            double sum = 0;
            for (int c = 0; c < 3; c++)
            {
                double s = Intercepts[c];
                for (int f = 0; f < 3; f++) s += Coefs[c * 3 + f] * x[f];
                p[c] = Math.Exp(s);
                sum += p[c];
            }
            for (int c = 0; c < 3; c++) p[c] /= sum;
            return p;
        }

        [Test]
        public void ZipMapOutputsAreSequencesOfMaps()
        {
            float[][] rows = { new float[] { 1, 2, 3 }, new float[] { 0, -1, 0.5f }, new float[] { -3, 0.25f, 2 } };
            using (var s = new Session(env, Model("zipmap.onnx")))
            using (var r = s.Run(new Dictionary<string, Tensor> { { "X", Tensor.Create(rows.SelectMany(x => x).ToArray(), 3, 3) } }))
            {
                IReadOnlyList<OnyxValue> byId = r["by_id"].AsSequence();
                IReadOnlyList<OnyxValue> byName = r[2].AsSequence();
                Assert.AreEqual(3, byId.Count);
                long[] labels = r["label"].ToArray<long>();
                string[] names = { "cat", "dog", "eel" };
                for (int row = 0; row < 3; row++)
                {
                    double[] p = Probabilities(rows[row]);
                    OnyxValue m = byId[row];
                    Assert.AreEqual(ValueKind.Map, m.Kind);
                    Assert.AreEqual(ElementType.Int64, m.MapKeyType);
                    Assert.AreEqual(ElementType.Float, m.MapValueType);
                    IReadOnlyDictionary<long, float> typed = m.AsMap<long, float>();
                    IReadOnlyDictionary<string, float> named = byName[row].AsMap<string, float>();
                    CollectionAssert.AreEquivalent(new long[] { 10, 20, 30 }, typed.Keys);
                    int best = 0;
                    for (int c = 0; c < 3; c++)
                    {
                        Assert.AreEqual(p[c], typed[10L * (c + 1)], 1e-6);
                        Assert.AreEqual(p[c], named[names[c]], 1e-6);
                        if (p[c] > p[best]) best = c;
                    }
                    Assert.AreEqual(10L * (best + 1), labels[row]);
                }
                TypeInfo t = s.Outputs[1].Type;
                Assert.AreEqual(ValueKind.Sequence, t.Kind);
                Assert.AreEqual("seq(map(int64,tensor(float)))", t.TypeString);
                Assert.AreEqual(ValueKind.Map, t.Element.Kind);
                Assert.AreEqual(ElementType.Int64, t.Element.MapKeyType);
                Assert.AreEqual(ElementType.Float, t.Element.MapValueType.ElementType);
                Assert.AreEqual(ElementType.String, s.Outputs[2].Type.Element.MapKeyType);
                Assert.AreEqual(ElementType.Float, s.Inputs[0].Type.ElementType);
            }
        }

        [Test]
        public void MapsInAndOut()
        {
            var ids = new Dictionary<long, float> { { 1, 1.5f }, { 7, -2f } };
            using (var s = new Session(env, Model("maps.onnx")))
            using (var idsMap = OnyxValue.CreateMap(ids))
            using (var wordsMap = OnyxValue.CreateMap(new Dictionary<string, double> { { "c", 3.0 }, { "a", 0.5 } }))
            using (var r = s.Run(Feeds("ids", idsMap, "words", wordsMap)))
            {
                CollectionAssert.AreEqual(new float[] { 1.5f, 0, 0, -2 }, r["ids_dense"].ToArray<float>());
                CollectionAssert.AreEqual(new double[] { 0.5, 0, 3 }, r["words_dense"].ToArray<double>());
                CollectionAssert.AreEquivalent(ids, r[2].AsMap<long, float>());
                CollectionAssert.AreEquivalent(ids, idsMap.AsMap<long, float>());
                TypeInfo t = s.Inputs[1].Type;
                Assert.AreEqual(ValueKind.Map, t.Kind);
                Assert.AreEqual(ElementType.String, t.MapKeyType);
                Assert.AreEqual(ElementType.Double, t.MapValueType.ElementType);
            }
        }

        [Test]
        public void SequencesInAndOut()
        {
            using (var s = new Session(env, Model("seqcat.onnx")))
            using (var seq = OnyxValue.CreateSequence(Tensor.Create(new float[] { 1, 1 }, 1, 2), Tensor.Create(new float[] { 0, 1, 2, 3 }, 2, 2)))
            using (var i = OnyxValue.CreateTensor(Tensor.Create(new long[] { 1 })))
            using (var r = s.Run(Feeds("s", seq, "i", i)))
            {
                Assert.AreEqual(2, seq.AsSequence().Count);
                CollectionAssert.AreEqual(new float[] { 1, 1, 0, 1, 2, 3 }, r["cat"].ToArray<float>());
                CollectionAssert.AreEqual(new long[] { 3, 2 }, r["cat"].Shape);
                CollectionAssert.AreEqual(new long[] { 2 }, r["len"].ToArray<long>());
                CollectionAssert.AreEqual(new float[] { 0, 1, 2, 3 }, r["at"].ToArray<float>());
                IReadOnlyList<OnyxValue> rows = r["rows"].AsSequence();
                Assert.AreEqual(3, rows.Count);
                CollectionAssert.AreEqual(new float[] { 2, 3 }, rows[2].ToArray<float>());
                // An output sequence goes back in as an input, and only some outputs are asked for.
                using (var zero = OnyxValue.CreateTensor(Tensor.Create(new long[] { 0 })))
                using (var again = s.Run(Feeds("s", r["rows"], "i", zero), new[] { "at", "cat" }))
                {
                    CollectionAssert.AreEqual(new float[] { 1, 1 }, again[0].ToArray<float>());
                    CollectionAssert.AreEqual(new float[] { 1, 1, 0, 1, 2, 3 }, again["cat"].ToArray<float>());
                }
                TypeInfo t = s.Inputs[0].Type;
                Assert.AreEqual(ValueKind.Sequence, t.Kind);
                Assert.AreEqual(ElementType.Float, t.Element.ElementType);
            }
        }

        [Test]
        public void SequencesOfMapsStringTensorsAndEmptySequences()
        {
            using (var a = OnyxValue.CreateMap(new Dictionary<string, float> { { "x", 1 } }))
            using (var b = OnyxValue.CreateMap(new Dictionary<string, float> { { "y", 2 }, { "z", 3 } }))
            using (var seq = OnyxValue.CreateSequence(new[] { a, b }))
            using (var empty = OnyxValue.CreateSequence())
            using (var words = OnyxValue.CreateTensor(new[] { "héllo", "", "wörld" }, 3))
            {
                Assert.AreEqual(2, seq.AsSequence().Count);
                Assert.AreEqual(3f, seq.AsSequence()[1].AsMap<string, float>()["z"]);
                Assert.AreEqual(0, empty.AsSequence().Count);
                CollectionAssert.AreEqual(new[] { "héllo", "", "wörld" }, words.ToStringArray());
                Expect(ErrorCode.InvalidArgument, "differs in type",
                       () => OnyxValue.CreateSequence(new[] { a, words }));
            }
        }

        [Test]
        public void OptionalsPresentAndAbsent()
        {
            using (var s = new Session(env, Model("optional.onnx")))
            using (var a = OnyxValue.CreateTensor(Tensor.Create(new float[] { 1, 2 }, 2)))
            using (var none = OnyxValue.CreateOptional((OnyxValue)null))
            using (var r = s.Run(Feeds("a", a, "o", none)))
            {
                OnyxValue present = r["present"];
                Assert.IsTrue(present.HasValue);
                CollectionAssert.AreEqual(new float[] { 1, 2 }, present.Value.ToArray<float>());
                Assert.IsFalse(r["absent"].HasValue);
                Expect(ErrorCode.InvalidArgument, "the optional 'absent' is empty", () => { var v = r["absent"].Value; });
                CollectionAssert.AreEqual(new[] { false }, r["has"].ToArray<bool>());
                using (var some = OnyxValue.CreateOptional(Tensor.Create(new float[] { 3, 4 }, 2)))
                using (var r2 = s.Run(Feeds("a", a, "o", some)))
                {
                    Assert.IsTrue(some.HasValue);
                    CollectionAssert.AreEqual(new[] { true }, r2["has"].ToArray<bool>());
                }
                Assert.AreEqual(ValueKind.Optional, s.Inputs[1].Type.Kind);
                Assert.AreEqual(ElementType.Float, s.Inputs[1].Type.Element.ElementType);
            }
        }

        [Test]
        public void WrongKindsAndKeyTypes()
        {
            using (var s = new Session(env, Model("zipmap.onnx")))
            using (var r = s.Run(new Dictionary<string, Tensor> { { "X", Tensor.Create(new float[] { 1, 2, 3 }, 1, 3) } }))
            {
                Expect(ErrorCode.InvalidArgument, "AsMap: 'by_id' is a Sequence, not a Map", () => r["by_id"].AsMap<long, float>());
                Expect(ErrorCode.InvalidArgument, "AsSequence: 'label' is a Tensor, not a Sequence", () => r["label"].AsSequence());
                Expect(ErrorCode.InvalidArgument, "HasValue: 'label' is a Tensor, not a Optional", () => { bool b = r["label"].HasValue; });
                OnyxValue m = r["by_id"].AsSequence()[0];
                Expect(ErrorCode.InvalidArgument, "the keys of map 'by_id[0]' are Int64 (Int64), not String", () => m.AsMap<string, float>());
                Expect(ErrorCode.InvalidArgument, "the values of map 'by_id[0]' are Float (Single), not Double", () => m.AsMap<long, double>());
                Expect(ErrorCode.InvalidArgument, "'by_id[0]' is a Map, not a Tensor", () => m.ToArray<float>());
                Expect(ErrorCode.InvalidArgument, "has no key type", () => { var k = s.Outputs[1].Type.MapKeyType; });
            }
            Expect(ErrorCode.InvalidArgument, "map keys are long or string, not Int32",
                   () => OnyxValue.CreateMap(new Dictionary<int, float> { { 1, 1 } }));
            Expect(ErrorCode.InvalidArgument, "map values of type Boolean are not supported",
                   () => OnyxValue.CreateMap(new Dictionary<long, bool> { { 1, true } }));
            Expect(ErrorCode.InvalidArgument, "the value of key 'k' is null",
                   () => OnyxValue.CreateMap(new Dictionary<string, string> { { "k", null } }));
            Expect(ErrorCode.InvalidArgument, "item 1 is null", () => OnyxValue.CreateSequence(Tensor.Create(new float[] { 1 }, 1), null));
            using (var none = OnyxValue.CreateOptional((OnyxValue)null))
                Expect(ErrorCode.InvalidArgument, "cannot hold an optional", () => OnyxValue.CreateOptional(none));
        }

        [Test]
        public void BadFeedsNameTheInputAndLeaveTheSessionUsable()
        {
            using (var s = new Session(env, Model("maps.onnx")))
            using (var stringKeys = OnyxValue.CreateMap(new Dictionary<string, float> { { "a", 1 } }))
            using (var good = OnyxValue.CreateMap(new Dictionary<long, float> { { 1, 1 } }))
            using (var words = OnyxValue.CreateMap(new Dictionary<string, double> { { "b", 2 } }))
            using (var t = OnyxValue.CreateTensor(Tensor.Create(new float[] { 1 }, 1)))
            {
                Expect(ErrorCode.InvalidArgument, "ids", () => s.Run(Feeds("ids", stringKeys, "words", words)));
                Expect(ErrorCode.InvalidArgument, "Input 'ids' expects a map", () => s.Run(Feeds("ids", t, "words", words)));
                Expect(ErrorCode.InvalidArgument, "'nope' is not an input", () => s.Run(Feeds("nope", good)));
                Expect(ErrorCode.InvalidArgument, "'nope' is not an output", () => s.Run(Feeds("ids", good, "words", words), new[] { "nope" }));
                Expect(ErrorCode.InvalidArgument, "input 'ids' is null", () => s.Run(Feeds("ids", null, "words", words)));
                Expect(ErrorCode.InvalidArgument, "inputs must not be null", () => s.Run((Dictionary<string, OnyxValue>)null));
                Expect(ErrorCode.InvalidArgument, "Missing Input: words", () => s.Run(Feeds("ids", good)));
                using (var r = s.Run(Feeds("ids", good, "words", words)))
                    CollectionAssert.AreEqual(new float[] { 1, 0, 0, 0 }, r[0].ToArray<float>());
            }
            using (var s = new Session(env, Model("seqcat.onnx")))
            using (var i = OnyxValue.CreateTensor(Tensor.Create(new long[] { 0 })))
            using (var m = OnyxValue.CreateMap(new Dictionary<long, float> { { 1, 1 } }))
            using (var maps = OnyxValue.CreateSequence(new[] { m }))
                Expect(ErrorCode.InvalidArgument, "Input 's' expects seq(tensor(float))", () => s.Run(Feeds("s", maps, "i", i)));
        }

        [Test]
        public void DisposedValuesThrowInsteadOfCrashing()
        {
            using (var s = new Session(env, Model("seqcat.onnx")))
            {
                var seq = OnyxValue.CreateSequence(Tensor.Create(new float[] { 1, 2 }, 1, 2));
                var i = OnyxValue.CreateTensor(Tensor.Create(new long[] { 0 }));
                var r = s.Run(Feeds("s", seq, "i", i));
                OnyxValue rows = r["rows"];
                OnyxValue row = rows.AsSequence()[0];
                r.Dispose();
                Assert.IsTrue(rows.IsDisposed);
                Assert.IsTrue(row.IsDisposed);
                Expect(ErrorCode.InvalidArgument, "OnyxValue 'rows' is disposed", () => rows.AsSequence());
                Expect(ErrorCode.InvalidArgument, "OnyxValue 'rows[0]' is disposed", () => row.ToArray<float>());
                seq.Dispose();
                seq.Dispose();
                Expect(ErrorCode.InvalidArgument, "is disposed", () => s.Run(Feeds("s", seq, "i", i)));
                Expect(ErrorCode.InvalidArgument, "is disposed", () => OnyxValue.CreateSequence(new[] { seq }));
                Expect(ErrorCode.InvalidArgument, "is disposed", () => OnyxValue.CreateOptional(seq));
                var m = OnyxValue.CreateMap(new Dictionary<long, float> { { 3, 1 } });
                m.Dispose();
                Expect(ErrorCode.InvalidArgument, "is disposed", () => m.AsMap<long, float>());
                var o = OnyxValue.CreateOptional(Tensor.Create(new float[] { 1 }, 1));
                OnyxValue inner = o.Value;
                o.Dispose();
                Expect(ErrorCode.InvalidArgument, "is disposed", () => { bool b = o.HasValue; });
                Expect(ErrorCode.InvalidArgument, "is disposed", () => inner.ToArray<float>());
                // The session still runs with fresh values.
                using (var again = OnyxValue.CreateSequence(Tensor.Create(new float[] { 5, 6 }, 1, 2)))
                using (var r2 = s.Run(Feeds("s", again, "i", i)))
                    CollectionAssert.AreEqual(new float[] { 5, 6 }, r2["cat"].ToArray<float>());
                i.Dispose();
            }
        }

        [Test]
        public void TypeStringsParseStructurally()
        {
            TypeInfo t = TypeInfo.Parse("optional(seq(map(string,tensor(double))))");
            Assert.AreEqual(ValueKind.Optional, t.Kind);
            Assert.AreEqual("seq(map(string,tensor(double)))", t.Element.TypeString);
            Assert.AreEqual(ElementType.String, t.Element.Element.MapKeyType);
            Assert.AreEqual(ElementType.Double, t.Element.Element.MapValueType.ElementType);
            Assert.AreEqual(ElementType.Float8E4M3FN, TypeInfo.Parse("sparse_tensor(float8e4m3fn)").ElementType);
            Assert.AreEqual(ValueKind.Unknown, TypeInfo.Parse("seq(unknown)").Element.Kind);
            Expect(ErrorCode.Fail, "at offset 17", () => TypeInfo.Parse("seq(tensor(float)"));
            Expect(ErrorCode.Fail, "at offset 0", () => TypeInfo.Parse("list(tensor(float))"));
            Expect(ErrorCode.NotImplemented, "'float128'", () => TypeInfo.Parse("tensor(float128)"));
        }
    }
}
