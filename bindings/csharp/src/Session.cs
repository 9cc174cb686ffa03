using System;
using System.Buffers;
using System.Collections.Generic;
using System.Runtime.InteropServices;

namespace Onyx.Runtime
{
    /// <summary>The declared name and type of a model input or output.</summary>
    public sealed class NodeInfo
    {
        internal NodeInfo(string name, ValueKind kind, string typeString, ElementType elementType, bool hasShape,
                          long[] shape, string[] symbolicDims)
        {
            Name = name;
            Kind = kind;
            TypeString = typeString;
            ElementType = elementType;
            HasShape = hasShape;
            this.shape = shape;
            this.symbolicDims = symbolicDims;
        }

        private readonly long[] shape;
        private readonly string[] symbolicDims;

        public string Name { get; }

        public ValueKind Kind { get; }

        /// <summary>The ONNX type, e.g. "tensor(float)" or "seq(tensor(int64))".</summary>
        public string TypeString { get; }

        /// <summary>Tensors only (Undefined otherwise).</summary>
        public ElementType ElementType { get; }

        /// <summary>False when the model does not declare the rank.</summary>
        public bool HasShape { get; }

        /// <summary>Dimensions; -1 where symbolic or unknown.</summary>
        public long[] Shape { get { return (long[])shape.Clone(); } }

        /// <summary>The symbol of each dimension ("" for a known or unnamed one).</summary>
        public string[] SymbolicDims { get { return (string[])symbolicDims.Clone(); } }

        private TypeInfo type;

        /// <summary>The type structurally: element types of sequences and optionals, key and value types of maps.</summary>
        public TypeInfo Type
        {
            get
            {
                if (type == null) type = TypeInfo.Parse(TypeString);
                return type;
            }
        }

        public override string ToString()
        {
            var dims = new List<string>();
            for (int i = 0; i < shape.Length; i++) dims.Add(symbolicDims[i] != "" ? symbolicDims[i] : shape[i].ToString());
            return Name + ": " + TypeString + (HasShape ? " [" + string.Join(", ", dims) + "]" : "");
        }
    }

    /// <summary>A loaded model (OnyxSession). Run may be called from many threads at once.</summary>
    public sealed class Session : IDisposable
    {
        private readonly OnyxHandle handle;

        public Session(OnyxEnvironment env, string modelPath, SessionOptions options = null)
        {
            if (env == null || modelPath == null)
                throw OnyxException.InvalidArgument("Session: environment and model path must not be null");
            IntPtr session;
            using (var e = env.Handle.Borrow())
            using (var o = options == null ? default(OnyxHandle.Lease) : options.Handle.Borrow())
                NativeApi.Check(NativeApi.SessionCreate(e.Ptr, Utf8.ToNative(modelPath), o.Ptr, out session));
            handle = new OnyxHandle(session, NativeApi.SessionRelease, "Session");
            Describe(out InputNames, out Inputs, out OutputNames, out Outputs);
        }

        public unsafe Session(OnyxEnvironment env, byte[] model, SessionOptions options = null)
        {
            if (env == null || model == null)
                throw OnyxException.InvalidArgument("Session: environment and model bytes must not be null");
            IntPtr session;
            using (var e = env.Handle.Borrow())
            using (var o = options == null ? default(OnyxHandle.Lease) : options.Handle.Borrow())
            fixed (byte* bytes = model)
                NativeApi.Check(NativeApi.SessionCreateFromBytes(e.Ptr, bytes, new UIntPtr((ulong)model.LongLength), o.Ptr, out session));
            handle = new OnyxHandle(session, NativeApi.SessionRelease, "Session");
            Describe(out InputNames, out Inputs, out OutputNames, out Outputs);
        }

        public readonly IReadOnlyList<string> InputNames;
        public readonly IReadOnlyList<NodeInfo> Inputs;
        public readonly IReadOnlyList<string> OutputNames;
        public readonly IReadOnlyList<NodeInfo> Outputs;

        /// <summary>The execution providers the session uses, in priority order.</summary>
        public IReadOnlyList<string> Providers
        {
            get
            {
                using (var s = handle.Borrow()) return Names(s.Ptr, NativeApi.SessionGetProviderCount, NativeApi.SessionGetProviderName);
            }
        }

        private void Describe(out IReadOnlyList<string> inputNames, out IReadOnlyList<NodeInfo> inputs,
                              out IReadOnlyList<string> outputNames, out IReadOnlyList<NodeInfo> outputs)
        {
            using (var s = handle.Borrow())
            {
                var ins = Names(s.Ptr, NativeApi.SessionGetInputCount, NativeApi.SessionGetInputName);
                var outs = Names(s.Ptr, NativeApi.SessionGetOutputCount, NativeApi.SessionGetOutputName);
                inputNames = ins;
                outputNames = outs;
                inputs = Infos(s.Ptr, ins, NativeApi.SessionGetInputTypeInfo);
                outputs = Infos(s.Ptr, outs, NativeApi.SessionGetOutputTypeInfo);
            }
        }

        private static List<string> Names(IntPtr session, NativeApi.GetCountFn count, NativeApi.GetNameAtFn name)
        {
            UIntPtr n;
            NativeApi.Check(count(session, out n));
            var names = new List<string>();
            for (ulong i = 0; i < n.ToUInt64(); i++)
            {
                IntPtr s;
                NativeApi.Check(name(session, new UIntPtr(i), out s));
                names.Add(Utf8.FromNative(s));
            }
            return names;
        }

        private static List<NodeInfo> Infos(IntPtr session, List<string> names, NativeApi.GetTypeInfoFn get)
        {
            var infos = new List<NodeInfo>();
            for (int i = 0; i < names.Count; i++)
            {
                IntPtr raw;
                NativeApi.Check(get(session, new UIntPtr((ulong)i), out raw));
                using (var info = new OnyxHandle(raw, NativeApi.TypeInfoRelease, "TypeInfo"))
                    infos.Add(ReadInfo(names[i], info.DangerousGetHandle()));
            }
            return infos;
        }

        private static NodeInfo ReadInfo(string name, IntPtr info)
        {
            int kind;
            IntPtr typeString, tensor;
            NativeApi.Check(NativeApi.TypeInfoGetKind(info, out kind));
            NativeApi.Check(NativeApi.TypeInfoGetTypeString(info, out typeString));
            NativeApi.Check(NativeApi.TypeInfoGetTensorInfo(info, out tensor));
            var type = ElementType.Undefined;
            bool hasShape = false;
            var dims = new long[0];
            var symbols = new string[0];
            if (tensor != IntPtr.Zero)
            {
                int t, has;
                UIntPtr rank;
                NativeApi.Check(NativeApi.TensorInfoGetElementType(tensor, out t));
                NativeApi.Check(NativeApi.TensorInfoHasShape(tensor, out has));
                NativeApi.Check(NativeApi.TensorInfoGetDimCount(tensor, out rank));
                type = (ElementType)t;
                hasShape = has != 0;
                dims = new long[(int)rank.ToUInt64()];
                var names = new IntPtr[dims.Length];
                NativeApi.Check(NativeApi.TensorInfoGetDims(tensor, dims, rank));
                NativeApi.Check(NativeApi.TensorInfoGetSymbolicDims(tensor, names, rank));
                symbols = Array.ConvertAll(names, p => Utf8.FromNative(p) ?? "");
            }
            return new NodeInfo(name, (ValueKind)kind, Utf8.FromNative(typeString), type, hasShape, dims, symbols);
        }

        /// <summary>Runs the model on the named inputs (every input must be given) and returns all its outputs.</summary>
        public RunResult Run(IEnumerable<KeyValuePair<string, Tensor>> inputs, RunOptions runOptions = null)
        {
            return Run(inputs, null, runOptions);
        }

        /// <summary>Runs the model and returns the named outputs, in the order asked (null: all of them).</summary>
        public unsafe RunResult Run(IEnumerable<KeyValuePair<string, Tensor>> inputs, IReadOnlyList<string> outputNames,
                                    RunOptions runOptions = null)
        {
            if (inputs == null) throw OnyxException.InvalidArgument("Run: inputs must not be null");
            var feeds = new List<KeyValuePair<string, Tensor>>(inputs);
            int n = feeds.Count;
            var inputIndices = new UIntPtr[Math.Max(1, n)];
            long totalRank = 0;
            for (int i = 0; i < n; i++)
            {
                string name = feeds[i].Key;
                int index = name == null ? -1 : IndexOf(InputNames, name);
                if (index < 0)
                    throw OnyxException.InvalidArgument("Run: '" + name + "' is not an input of the model (inputs: " +
                                                        string.Join(", ", InputNames) + ")");
                if (feeds[i].Value == null) throw OnyxException.InvalidArgument("Run: input '" + name + "' is null");
                for (int j = 0; j < i; j++)
                    if (feeds[j].Key == name) throw OnyxException.InvalidArgument("Run: input '" + name + "' is given twice");
                inputIndices[i] = new UIntPtr((uint)index);
                totalRank += feeds[i].Value.ShapeRef.Length;
            }
            IReadOnlyList<string> wanted = outputNames ?? OutputNames;
            int m = wanted.Count;
            var outputIndices = new UIntPtr[Math.Max(1, m)];
            for (int i = 0; i < m; i++)
            {
                int index = wanted[i] == null ? -1 : IndexOf(OutputNames, wanted[i]);
                if (index < 0)
                    throw OnyxException.InvalidArgument("Run: '" + wanted[i] + "' is not an output of the model (outputs: " +
                                                        string.Join(", ", OutputNames) + ")");
                outputIndices[i] = new UIntPtr((uint)index);
            }

            var dims = new long[Math.Max(1, totalRank)];
            var args = new TensorArg[Math.Max(1, n)];
            var results = new TensorResult[Math.Max(1, m)];
            var pins = new MemoryHandle[n];
            int pinned = 0;
            using (var s = handle.Borrow())
            using (var r = runOptions == null ? default(OnyxHandle.Lease) : runOptions.Handle.Borrow())
            {
                try
                {
                    fixed (long* dimsPtr = dims)
                    fixed (UIntPtr* inPtr = inputIndices)
                    fixed (UIntPtr* outPtr = outputIndices)
                    fixed (TensorArg* argPtr = args)
                    fixed (TensorResult* resPtr = results)
                    {
                        long offset = 0;
                        for (int i = 0; i < n; i++)
                        {
                            Tensor t = feeds[i].Value;
                            long[] shape = t.ShapeRef;
                            Array.Copy(shape, 0, dims, offset, shape.Length);
                            pins[i] = t.Pin();
                            pinned++;
                            args[i].Data = t.ByteLength == 0 ? IntPtr.Zero : (IntPtr)pins[i].Pointer;
                            args[i].DataBytes = new UIntPtr((ulong)t.ByteLength);
                            args[i].Shape = (IntPtr)(dimsPtr + offset);
                            args[i].Rank = new UIntPtr((uint)shape.Length);
                            args[i].Type = (int)t.ElementType;
                            offset += shape.Length;
                        }
                        NativeApi.Check(NativeApi.SessionRunTensors(s.Ptr, r.Ptr, inPtr, argPtr, new UIntPtr((uint)n),
                                                                    outputNames == null ? null : outPtr, new UIntPtr((uint)m), resPtr));
                    }
                }
                finally
                {
                    for (int i = 0; i < pinned; i++) pins[i].Dispose();
                }
            }
            // Every result is owned by a handle before anything else can throw, so none leaks.
            var owned = new OnyxHandle[m];
            for (int i = 0; i < m; i++) owned[i] = new OnyxHandle(results[i].Value, NativeApi.ValueRelease, "OnyxValue '" + wanted[i] + "'");
            var values = new OnyxValue[m];
            try
            {
                for (int i = 0; i < m; i++) values[i] = new OnyxValue(wanted[i], owned[i], results[i]);
            }
            catch
            {
                foreach (OnyxHandle h in owned) h.Dispose();
                throw;
            }
            return new RunResult(values);
        }

        /// <summary>Runs the model on the named values (tensors, sequences, maps, optionals) and returns all its outputs.</summary>
        public RunResult Run(IEnumerable<KeyValuePair<string, OnyxValue>> inputs, RunOptions runOptions = null)
        {
            return Run(inputs, null, runOptions);
        }

        /// <summary>
        /// Runs the model on the named values (every input must be given; they are read, never changed, and stay
        /// owned by the caller) and returns the named outputs, in the order asked (null: all of them).
        /// </summary>
        public unsafe RunResult Run(IEnumerable<KeyValuePair<string, OnyxValue>> inputs, IReadOnlyList<string> outputNames,
                                    RunOptions runOptions = null)
        {
            if (inputs == null) throw OnyxException.InvalidArgument("Run: inputs must not be null");
            var feeds = new List<KeyValuePair<string, OnyxValue>>(inputs);
            for (int i = 0; i < feeds.Count; i++)
            {
                string name = feeds[i].Key;
                if (name == null || IndexOf(InputNames, name) < 0)
                    throw OnyxException.InvalidArgument("Run: '" + name + "' is not an input of the model (inputs: " +
                                                        string.Join(", ", InputNames) + ")");
                if (feeds[i].Value == null) throw OnyxException.InvalidArgument("Run: input '" + name + "' is null");
            }
            IReadOnlyList<string> wanted = outputNames ?? OutputNames;
            foreach (string name in wanted)
                if (name == null || IndexOf(OutputNames, name) < 0)
                    throw OnyxException.InvalidArgument("Run: '" + name + "' is not an output of the model (outputs: " +
                                                        string.Join(", ", OutputNames) + ")");
            int n = feeds.Count, m = wanted.Count;
            var names = new List<byte[]>();
            foreach (var f in feeds) names.Add(Utf8.ToNative(f.Key));
            foreach (string w in wanted) names.Add(Utf8.ToNative(w));
            var pins = new List<GCHandle>();
            var leases = new List<OnyxHandle.Lease>();
            var namePtrs = new IntPtr[Math.Max(1, n + m)];
            var values = new IntPtr[Math.Max(1, n)];
            var results = new IntPtr[Math.Max(1, m)];
            try
            {
                for (int i = 0; i < names.Count; i++)
                {
                    pins.Add(GCHandle.Alloc(names[i], GCHandleType.Pinned));
                    namePtrs[i] = pins[i].AddrOfPinnedObject();
                }
                for (int i = 0; i < n; i++)
                {
                    leases.Add(feeds[i].Value.Handle.Borrow());
                    values[i] = leases[i].Ptr;
                }
                using (var s = handle.Borrow())
                using (var r = runOptions == null ? default(OnyxHandle.Lease) : runOptions.Handle.Borrow())
                fixed (IntPtr* namesPtr = namePtrs)
                fixed (IntPtr* valuesPtr = values)
                fixed (IntPtr* resultsPtr = results)
                    NativeApi.Check(NativeApi.SessionRun(s.Ptr, r.Ptr, namesPtr, valuesPtr, new UIntPtr((uint)n),
                                                         namesPtr + n, new UIntPtr((uint)m), resultsPtr));
            }
            finally
            {
                foreach (var lease in leases) lease.Dispose();
                foreach (GCHandle pin in pins) pin.Free();
            }
            // Every result is owned by a handle before anything else can throw, so none leaks.
            var owned = new OnyxHandle[m];
            for (int i = 0; i < m; i++) owned[i] = new OnyxHandle(results[i], NativeApi.ValueRelease, "OnyxValue '" + wanted[i] + "'");
            var outputs = new OnyxValue[m];
            try
            {
                for (int i = 0; i < m; i++) outputs[i] = new OnyxValue(wanted[i], owned[i]);
            }
            catch
            {
                foreach (OnyxHandle h in owned) h.Dispose();
                throw;
            }
            return new RunResult(outputs);
        }

        private static int IndexOf(IReadOnlyList<string> names, string name)
        {
            for (int i = 0; i < names.Count; i++)
                if (names[i] == name) return i;
            return -1;
        }

        public bool IsDisposed { get { return handle.IsClosed; } }

        public void Dispose() { handle.Dispose(); }
    }
}
