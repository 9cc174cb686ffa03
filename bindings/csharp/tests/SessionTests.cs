using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Runtime.InteropServices;
using System.Threading.Tasks;
using NUnit.Framework;

namespace Onyx.Runtime.Tests
{
    [TestFixture]
    public class SessionTests
    {
        static readonly string Models = Environment.GetEnvironmentVariable("ONYX_TEST_MODELS");
        static readonly string Baseline = Environment.GetEnvironmentVariable("ONYX_ABI_BASELINE");
        OnyxEnvironment env;

        [TestFixtureSetUp]
        public void SetUp() { env = new OnyxEnvironment(); }

        [TestFixtureTearDown]
        public void TearDown() { env.Dispose(); }

        static string Model(string name) { return Path.Combine(Models, name); }

        static Dictionary<string, Tensor> Feeds(params object[] kv)
        {
            var d = new Dictionary<string, Tensor>();
            for (int i = 0; i < kv.Length; i += 2) d[(string)kv[i]] = (Tensor)kv[i + 1];
            return d;
        }

        static OnyxException Expect(ErrorCode code, string text, Action body)
        {
            try
            {
                body();
            }
            catch (OnyxException e)
            {
                Assert.AreEqual(code, e.Code, e.Message);
                StringAssert.Contains(text, e.Message);
                return e;
            }
            Assert.Fail("no OnyxException " + code + " containing '" + text + "'");
            return null;
        }

        [Test]
        public void RunsAddFromPathWithArrays()
        {
            using (var s = new Session(env, Model("add.onnx")))
            using (var r = s.Run(Feeds("x", Tensor.Create(new float[] { 1, 2, 3, 4, 5, 6 }, 2, 3),
                                       "y", Tensor.Create(new float[] { 0.5f, -2, 0, 10, 1e-3f, -6 }, 2, 3))))
            {
                CollectionAssert.AreEqual(new[] { "x", "y" }, s.InputNames);
                CollectionAssert.AreEqual(new[] { "z" }, s.OutputNames);
                Assert.AreEqual(ElementType.Float, s.Inputs[0].ElementType);
                Assert.AreEqual("tensor(float)", s.Inputs[1].TypeString);
                CollectionAssert.AreEqual(new long[] { 2, 3 }, s.Outputs[0].Shape);
                Assert.AreEqual(1, r.Count);
                OnyxValue z = r["z"];
                Assert.AreEqual(ValueKind.Tensor, z.Kind);
                Assert.AreEqual(ElementType.Float, z.ElementType);
                CollectionAssert.AreEqual(new long[] { 2, 3 }, z.Shape);
                CollectionAssert.AreEqual(new float[] { 1.5f, 0, 3, 14, 5.001f, 0 }, z.ToArray<float>());
            }
        }

        [Test]
        public void RunsFromBytesWithMemoryAndSpans()
        {
            byte[] bytes = File.ReadAllBytes(Model("add.onnx"));
            using (var o = new SessionOptions())
            {
                o.SetIntraOpNumThreads(1);
                o.SetGraphOptimizationLevel(GraphOptimizationLevel.EnableAll);
                using (var s = new Session(env, bytes, o))
                {
                    float[] backing = { 99, 1, 1, 1, 1, 1, 1, 99 };
                    Memory<float> x = new Memory<float>(backing, 1, 6);  // read in place from offset 1
                    ReadOnlySpan<float> y = new float[] { 1, 2, 3, 4, 5, 6 };
                    using (var r = s.Run(Feeds("x", Tensor.Create(x, 2, 3), "y", Tensor.FromSpan(y, 2, 3))))
                    {
                        ReadOnlySpan<float> z = r[0].AsSpan<float>();
                        Assert.AreEqual(6, z.Length);
                        for (int i = 0; i < 6; i++) Assert.AreEqual(i + 2f, z[i]);
                    }
                }
            }
        }

        [Test]
        public void MixedTypesScalarsAndSymbolicDims()
        {
            using (var s = new Session(env, Model("mixed.onnx")))
            using (var r = s.Run(Feeds("ids", Tensor.Create(new long[] { 3, -4, 5000000000L }, 3),
                                       "n", Tensor.Create(new int[] { 7, -8 }, 2))))
            {
                NodeInfo ids = s.Inputs[0];
                Assert.AreEqual(ElementType.Int64, ids.ElementType);
                Assert.IsTrue(ids.HasShape);
                CollectionAssert.AreEqual(new long[] { -1 }, ids.Shape);
                CollectionAssert.AreEqual(new[] { "n" }, ids.SymbolicDims);
                Assert.AreEqual(0, s.Outputs[1].Shape.Length);
                CollectionAssert.AreEqual(new double[] { 3, -4, 5e9 }, r["ids_f"].ToArray<double>());
                Assert.AreEqual(0, r["total"].Shape.Length);
                CollectionAssert.AreEqual(new long[] { 4999999999L }, r["total"].ToArray<long>());
                CollectionAssert.AreEqual(new int[] { -7, 8 }, r["neg"].ToArray<int>());
                Expect(ErrorCode.InvalidArgument, "Int32 elements are Int32, not Single", () => r["neg"].ToArray<float>());
                Expect(ErrorCode.InvalidArgument, "no output named 'nope'", () => { var _ = r["nope"]; });
            }
        }

        [Test]
        public void Float16BitsAndBools()
        {
            using (var s = new Session(env, Model("half.onnx")))
            {
                // 1.0, -2.0, 0.5, 65504 as IEEE half bits.
                var h = Tensor.Create(ElementType.Float16, new ushort[] { 0x3C00, 0xC000, 0x3800, 0x7BFF }, 4);
                using (var r = s.Run(Feeds("h", h, "mask", Tensor.Create(new[] { true, false, true }, 3))))
                {
                    CollectionAssert.AreEqual(new float[] { 1, -2, 0.5f, 65504 }, r["h_f"].ToArray<float>());
                    CollectionAssert.AreEqual(new[] { false, true, false }, r["not_mask"].ToArray<bool>());
                }
                Expect(ErrorCode.InvalidArgument, "Float16 elements are UInt16, not Single",
                       () => Tensor.Create(ElementType.Float16, new float[] { 1, 2, 3, 4 }, 4));
            }
        }

        [Test]
        public void SelectedOutputsInTheOrderAsked()
        {
            using (var s = new Session(env, Model("mixed.onnx")))
            {
                var feeds = Feeds("ids", Tensor.Create(new long[] { 1, 2 }, 2), "n", Tensor.Create(new int[] { 1, 2 }, 2));
                using (var r = s.Run(feeds, new[] { "neg", "ids_f" }))
                {
                    Assert.AreEqual(2, r.Count);
                    Assert.AreEqual("neg", r[0].Name);
                    CollectionAssert.AreEqual(new int[] { -1, -2 }, r[0].ToArray<int>());
                    CollectionAssert.AreEqual(new double[] { 1, 2 }, r[1].ToArray<double>());
                }
                Expect(ErrorCode.InvalidArgument, "'w' is not an output", () => s.Run(feeds, new[] { "w" }));
            }
        }

        [Test]
        public void ConcurrentRuns()
        {
            using (var s = new Session(env, Model("add.onnx")))
            {
                var tasks = Enumerable.Range(0, 16).Select(t => Task.Run(() =>
                {
                    float k = t;
                    using (var r = s.Run(Feeds("x", Tensor.Create(new float[] { k, k, k, k, k, k }, 2, 3),
                                               "y", Tensor.Create(new float[] { 1, 1, 1, 1, 1, 1 }, 2, 3))))
                        return r[0].ToArray<float>();
                })).ToArray();
                for (int t = 0; t < 16; t++) Assert.AreEqual(t + 1f, tasks[t].Result[5]);
            }
        }

        [Test]
        public void OptionsRunOptionsAndTerminate()
        {
            using (var o = new SessionOptions())
            {
                Assert.IsNull(o.GetConfigEntry("session.intra_op.allow_spinning"));
                o.AddConfigEntry("session.intra_op.allow_spinning", "0");
                Assert.AreEqual("0", o.GetConfigEntry("session.intra_op.allow_spinning"));
                Expect(ErrorCode.InvalidArgument, "got -1", () => o.SetIntraOpNumThreads(-1));
                o.AddFreeDimensionOverrideByName("n", 3);
                using (var s = new Session(env, Model("mixed.onnx"), o))
                using (var ro = new RunOptions())
                {
                    ro.Tag = "csharp-run";
                    Assert.AreEqual("csharp-run", ro.Tag);
                    ro.AddConfigEntry("disable_synchronize_execution_providers", "0");
                    Assert.AreEqual("0", ro.GetConfigEntry("disable_synchronize_execution_providers"));
                    var feeds = Feeds("ids", Tensor.Create(new long[] { 1, 2, 3 }, 3), "n", Tensor.Create(new int[] { 1, 2 }, 2));
                    using (var r = s.Run(feeds, ro)) Assert.AreEqual(6L, r["total"].ToArray<long>()[0]);
                    ro.SetTerminate(true);
                    Expect(ErrorCode.RuntimeException, "terminate", () => s.Run(feeds, ro));
                    ro.SetTerminate(false);
                    using (var r = s.Run(feeds, ro)) Assert.AreEqual(6L, r["total"].ToArray<long>()[0]);
                }
            }
        }

        [Test]
        public void MissingFileInvalidBytesAndNulls()
        {
            Expect(ErrorCode.NoSuchFile, "no_such_model.onnx", () => new Session(env, Model("no_such_model.onnx")));
            Expect(ErrorCode.InvalidProtobuf, "", () => new Session(env, new byte[] { 1, 2, 3, 4, 5 }));
            Expect(ErrorCode.InvalidArgument, "must not be null", () => new Session(env, (string)null));
            Expect(ErrorCode.InvalidArgument, "must not be null", () => new Session(null, Model("add.onnx")));
            Expect(ErrorCode.InvalidArgument, "must not be null", () => new Session(env, (byte[])null));
        }

        [Test]
        public void BadFeedsLeaveTheSessionUsable()
        {
            using (var s = new Session(env, Model("add.onnx")))
            {
                var x = Tensor.Create(new float[] { 1, 2, 3, 4, 5, 6 }, 2, 3);
                var ints = Tensor.Create(new int[] { 1, 2, 3, 4, 5, 6 }, 2, 3);
                var wrongShape = Tensor.Create(new float[] { 1, 2, 3, 4, 5, 6 }, 3, 2);
                Expect(ErrorCode.InvalidArgument, "'w' is not an input", () => s.Run(Feeds("x", x, "w", x)));
                Expect(ErrorCode.InvalidArgument, "input 'y'", () => s.Run(Feeds("x", x, "y", ints)));
                Expect(ErrorCode.InvalidArgument, "y", () => s.Run(Feeds("x", x, "y", wrongShape)));
                Expect(ErrorCode.InvalidArgument, "Missing Input: y", () => s.Run(Feeds("x", x)));
                Expect(ErrorCode.InvalidArgument, "given twice",
                       () => s.Run(new[] { new KeyValuePair<string, Tensor>("x", x), new KeyValuePair<string, Tensor>("x", x) }));
                Expect(ErrorCode.InvalidArgument, "input 'y' is null", () => s.Run(Feeds("x", x, "y", null)));
                Expect(ErrorCode.InvalidArgument, "inputs must not be null", () => s.Run((Dictionary<string, Tensor>)null));
                Expect(ErrorCode.InvalidArgument, "do not fill shape [2, 3]", () => Tensor.Create(new float[] { 1, 2 }, 2, 3));
                Expect(ErrorCode.InvalidArgument, "negative dimension", () => Tensor.Create(new float[0], -1));
                Expect(ErrorCode.InvalidArgument, "shape must not be null", () => Tensor.Create(new float[0], null));
                Expect(ErrorCode.InvalidArgument, "data must not be null", () => Tensor.Create<float>(null, 2, 3));
                Expect(ErrorCode.InvalidArgument, "Float elements are Single, not Int32",
                       () => Tensor.Create(ElementType.Float, new int[] { 1 }, 1));
                Expect(ErrorCode.InvalidArgument, "a Decimal array cannot hold tensor elements",
                       () => Tensor.Create(new decimal[] { 1 }, 1));
                Expect(ErrorCode.NotImplemented, "String has no fixed-size CLR type",
                       () => Tensor.Create(ElementType.String, new byte[] { 1 }, 1));
                using (var r = s.Run(Feeds("x", x, "y", x)))
                    Assert.AreEqual(12f, r["z"].ToArray<float>()[5]);
            }
        }

        [Test]
        public void DisposedObjectsThrowInsteadOfCrashing()
        {
            var s = new Session(env, Model("add.onnx"));
            var x = Tensor.Create(new float[] { 1, 2, 3, 4, 5, 6 }, 2, 3);
            var r = s.Run(Feeds("x", x, "y", x));
            OnyxValue z = r[0];
            r.Dispose();
            Assert.IsTrue(z.IsDisposed);
            Expect(ErrorCode.InvalidArgument, "OnyxValue 'z' is disposed", () => z.ToArray<float>());
            Expect(ErrorCode.InvalidArgument, "OnyxValue 'z' is disposed", () => z.AsSpan<float>());
            s.Dispose();
            s.Dispose();
            Assert.IsTrue(s.IsDisposed);
            Expect(ErrorCode.InvalidArgument, "Session is disposed", () => s.Run(Feeds("x", x, "y", x)));
            Expect(ErrorCode.InvalidArgument, "Session is disposed", () => { var _ = s.Providers; });
            var o = new SessionOptions();
            o.Dispose();
            Expect(ErrorCode.InvalidArgument, "SessionOptions is disposed", () => o.AddConfigEntry("a", "b"));
            Expect(ErrorCode.InvalidArgument, "SessionOptions is disposed", () => new Session(env, Model("add.onnx"), o));
            var ro = new RunOptions();
            ro.Dispose();
            Expect(ErrorCode.InvalidArgument, "RunOptions is disposed", () => ro.Tag = "t");
            var e2 = new OnyxEnvironment(LoggingLevel.Error, "second");
            var kept = new Session(e2, Model("add.onnx"));
            e2.Dispose();
            Expect(ErrorCode.InvalidArgument, "OnyxEnvironment is disposed", () => new Session(e2, Model("add.onnx")));
            using (kept)
            using (var r2 = kept.Run(Feeds("x", x, "y", x)))  // a session outlives its environment's wrapper
                Assert.AreEqual(2f, r2[0].ToArray<float>()[0]);
        }

        [Test]
        public void NonTensorOutputsReportTheirKind()
        {
            using (var s = new Session(env, Model("seq.onnx")))
            using (var r = s.Run(Feeds("a", Tensor.Create(new float[] { 1, 2 }, 2))))
            {
                Assert.AreEqual(ValueKind.Sequence, s.Outputs[0].Kind);
                Assert.AreEqual("seq(tensor(float))", s.Outputs[0].TypeString);
                Assert.AreEqual(ValueKind.Sequence, r[0].Kind);
                Expect(ErrorCode.InvalidArgument, "'s' is a Sequence, not a Tensor", () => r[0].ToArray<float>());
                Assert.AreEqual(2, r[0].AsSequence().Count);
                CollectionAssert.AreEqual(new float[] { 1, 2 }, r[0].AsSequence()[1].ToArray<float>());
            }
        }

        [Test]
        public void VersionAndProviders()
        {
            StringAssert.IsMatch(@"^\d+\.\d+\.\d+", OnyxEnvironment.Version);
            CollectionAssert.Contains(OnyxEnvironment.AvailableProviders, "CPUExecutionProvider");
            using (var s = new Session(env, Model("add.onnx")))
                CollectionAssert.AreEqual(new[] { "CPUExecutionProvider" }, s.Providers);
        }

        // "Onyx" + C header type -> the CLR parameter kinds a delegate may use for it.
        static bool ParameterMatches(string c, Type clr)
        {
            c = c.Trim();
            if (c.EndsWith("*") || c == "OnyxDeleter" || c == "OnyxRunAsyncCallback")
                return clr == typeof(IntPtr) || clr.IsPointer || clr.IsByRef || clr.IsArray || clr == typeof(string);
            switch (c)
            {
                case "size_t": return clr == typeof(UIntPtr);
                case "int64_t": return clr == typeof(long);
                case "uint64_t": return clr == typeof(ulong);
                case "uint32_t": return clr == typeof(uint);
                case "int": return clr == typeof(int);
                case "void": return clr == typeof(void);
            }
            return c.StartsWith("Onyx") && clr == typeof(int);  // the header's enums
        }

        [Test]
        public void EntrySlotsAndSignaturesMatchTheAbiBaseline()
        {
            var lines = File.ReadAllLines(Baseline);
            var fields = NativeApi.Entries();
            Assert.Greater(fields.Length, 40);
            foreach (FieldInfo f in fields)
            {
                int slot = f.GetCustomAttribute<SlotAttribute>().Slot;
                string prefix = "api " + slot + " " + f.Name + ": ";
                string line = lines.FirstOrDefault(l => l.StartsWith(prefix));
                Assert.IsNotNull(line, f.Name + " at slot " + slot + " is not in " + Baseline);
                string sig = line.Substring(prefix.Length);
                int open = sig.IndexOf('(');
                string ret = sig.Substring(0, open);
                string[] cparams = sig.Substring(open + 1, sig.Length - open - 2).Split(',')
                    .Where(p => p.Trim() != "void" && p.Trim() != "").ToArray();
                MethodInfo invoke = f.FieldType.GetMethod("Invoke");
                Assert.IsTrue(ParameterMatches(ret, invoke.ReturnType), f.Name + " returns " + ret + ", delegate " + invoke.ReturnType);
                ParameterInfo[] ps = invoke.GetParameters();
                Assert.AreEqual(cparams.Length, ps.Length, f.Name + ": " + sig);
                for (int i = 0; i < ps.Length; i++)
                    Assert.IsTrue(ParameterMatches(cparams[i], ps[i].ParameterType),
                                  f.Name + " parameter " + i + ": C " + cparams[i] + ", delegate " + ps[i].ParameterType);
                var attr = f.FieldType.GetCustomAttribute<UnmanagedFunctionPointerAttribute>();
                Assert.AreEqual(CallingConvention.Cdecl, attr.CallingConvention, f.Name);
            }
        }

        [Test]
        public void StructsMatchTheAbiBaseline()
        {
            var lines = File.ReadAllLines(Baseline);
            foreach (var pair in new[] { Tuple.Create("OnyxTensorArg", typeof(TensorArg)), Tuple.Create("OnyxTensorResult", typeof(TensorResult)) })
            {
                FieldInfo[] fields = pair.Item2.GetFields(BindingFlags.Instance | BindingFlags.Public);
                Assert.IsTrue(lines.Contains("struct " + pair.Item1 + " members " + fields.Length), pair.Item1);
                long offset = 0;
                for (int i = 0; i < fields.Length; i++)
                {
                    string prefix = "struct " + pair.Item1 + " " + i + ": ";
                    string line = lines.First(l => l.StartsWith(prefix)).Substring(prefix.Length);
                    int space = line.LastIndexOf(' ');
                    string ctype = line.Substring(0, space), cname = line.Substring(space + 1);
                    string pascal = string.Concat(cname.Split('_').Select(w => char.ToUpperInvariant(w[0]) + w.Substring(1)));
                    Assert.AreEqual(pascal, fields[i].Name, pair.Item1 + " member " + i);
                    Assert.IsTrue(ParameterMatches(ctype, fields[i].FieldType), pair.Item1 + "." + cname + ": " + ctype);
                    // C's layout: each member at the next multiple of its own size (8 for pointers and size_t, 4 for enums).
                    int size = Marshal.SizeOf(fields[i].FieldType);
                    offset = (offset + size - 1) / size * size;
                    Assert.AreEqual(offset, Marshal.OffsetOf(pair.Item2, fields[i].Name).ToInt64(), pair.Item1 + "." + cname);
                    offset += size;
                }
                Assert.AreEqual((offset + 7) / 8 * 8, Marshal.SizeOf(pair.Item2), pair.Item1);
            }
        }
    }
}
