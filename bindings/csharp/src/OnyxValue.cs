using System;
using System.Collections;
using System.Collections.Generic;
using System.Buffers;
using System.Runtime.InteropServices;

namespace Onyx.Runtime
{
    /// <summary>
    /// A value the engine holds (OnyxValue): an output of Session.Run, or an input made by the Create methods.
    /// Owns it until Dispose. Tensors are read through AsSpan (a view of the engine's memory, valid until
    /// Dispose), ToArray or ToStringArray (copies); a sequence through AsSequence, a map through AsMap, an
    /// optional through HasValue and Value. A container owns the values it holds and disposes them with itself.
    /// Reading a value as the wrong kind or type is an OnyxException (InvalidArgument), never a crash.
    /// </summary>
    public sealed class OnyxValue : IDisposable
    {
        private readonly OnyxHandle handle;
        private long[] shape = new long[0];
        private IntPtr data;
        private string[] strings;        // string tensors
        private OnyxValue[] items;        // sequences; optionals (0 or 1); maps (keys, values)

        internal OnyxValue(string name, OnyxHandle handle, in TensorResult r)
        {
            Name = name;
            this.handle = handle;
            Kind = (ValueKind)r.Kind;
            ElementType = (ElementType)r.Type;
            if (Kind != ValueKind.Tensor || ElementType == ElementType.String)
            {
                Read();
                return;
            }
            shape = new long[(int)r.Rank.ToUInt64()];
            if (shape.Length > 0) Marshal.Copy(r.Shape, shape, 0, shape.Length);
            data = r.Data;
        }

        /// <summary>Takes over `handle` and reads the value's kind, type and contents through the C API.</summary>
        internal OnyxValue(string name, OnyxHandle handle)
        {
            Name = name;
            this.handle = handle;
            int kind;
            try
            {
                NativeApi.Check(NativeApi.ValueGetKind(handle.DangerousGetHandle(), out kind));
                Kind = (ValueKind)kind;
                Read();
            }
            catch
            {
                Dispose();
                throw;
            }
        }

        private unsafe void Read()
        {
            IntPtr v = handle.DangerousGetHandle();
            switch (Kind)
            {
                case ValueKind.Tensor:
                {
                    IntPtr info;
                    NativeApi.Check(NativeApi.ValueGetTensorTypeAndShape(v, out info));
                    try
                    {
                        int type;
                        UIntPtr rank;
                        NativeApi.Check(NativeApi.TensorInfoGetElementType(info, out type));
                        NativeApi.Check(NativeApi.TensorInfoGetDimCount(info, out rank));
                        ElementType = (ElementType)type;
                        shape = new long[(int)rank.ToUInt64()];
                        NativeApi.Check(NativeApi.TensorInfoGetDims(info, shape, rank));
                    }
                    finally
                    {
                        NativeApi.TensorTypeAndShapeInfoRelease(info);
                    }
                    long n = ElementCount;
                    if (ElementType == ElementType.String)
                    {
                        strings = new string[n];
                        for (long i = 0; i < n; i++)
                        {
                            IntPtr s;
                            UIntPtr length;
                            NativeApi.Check(NativeApi.StringTensorGetElement(v, new UIntPtr((ulong)i), out s, out length));
                            strings[i] = System.Text.Encoding.UTF8.GetString((byte*)s, checked((int)length.ToUInt64()));
                        }
                    }
                    else if (n > 0 && ElementTypes.Size(ElementType) > 0)
                    {
                        NativeApi.Check(NativeApi.ValueGetTensorData(v, out data));
                    }
                    break;
                }
                case ValueKind.Sequence:
                case ValueKind.Map:
                case ValueKind.Optional:
                {
                    UIntPtr count;
                    NativeApi.Check(NativeApi.ValueGetElementCount(v, out count));
                    var read = new List<OnyxValue>();
                    try
                    {
                        for (ulong i = 0; i < count.ToUInt64(); i++)
                        {
                            IntPtr item;
                            NativeApi.Check(NativeApi.ValueGetElement(v, new UIntPtr(i), out item));
                            string what = Kind == ValueKind.Map ? (i == 0 ? ".keys" : ".values") : "[" + i + "]";
                            read.Add(new OnyxValue(Name + what, new OnyxHandle(item, NativeApi.ValueRelease, "OnyxValue '" + Name + what + "'")));
                        }
                    }
                    catch
                    {
                        foreach (OnyxValue item in read) item.Dispose();
                        throw;
                    }
                    items = read.ToArray();
                    if (Kind == ValueKind.Map)
                    {
                        MapKeyType = items[0].ElementType;
                        MapValueType = items[1].ElementType;
                    }
                    break;
                }
                default:
                    throw new OnyxException(ErrorCode.NotImplemented, "value '" + Name + "' is a " + Kind + ": the C# binding does not read it");
            }
        }

        /// <summary>The output's name (for values made by Create: "value"; for elements: "name[i]").</summary>
        public string Name { get; }

        public ValueKind Kind { get; }

        /// <summary>The element type of a tensor (Undefined for other kinds).</summary>
        public ElementType ElementType { get; private set; }

        /// <summary>A map's key type (Int64 or String); Undefined for other kinds.</summary>
        public ElementType MapKeyType { get; private set; }

        /// <summary>A map's value type; Undefined for other kinds.</summary>
        public ElementType MapValueType { get; private set; }

        public long[] Shape { get { return (long[])shape.Clone(); } }

        public long ElementCount
        {
            get
            {
                long n = 1;
                foreach (long d in shape) n *= d;
                return n;
            }
        }

        internal OnyxHandle Handle { get { return handle; } }

        private void ExpectKind(ValueKind kind, string what)
        {
            if (Kind != kind)
                throw OnyxException.InvalidArgument(what + ": '" + Name + "' is a " + Kind + ", not a " + kind);
        }

        private int CheckedCount<T>(string what)
        {
            ExpectKind(ValueKind.Tensor, what);
            ElementTypes.Expect<T>(ElementType, what + " of '" + Name + "'");
            long n = ElementCount;
            if (n > int.MaxValue)
                throw new OnyxException(ErrorCode.NotImplemented, what + ": '" + Name + "' has " + n + " elements, more than a span holds");
            return (int)n;
        }

        /// <summary>The elements in place; valid until this value is disposed.</summary>
        public unsafe ReadOnlySpan<T> AsSpan<T>() where T : struct
        {
            using (handle.Borrow())
            {
                int n = CheckedCount<T>("AsSpan");
                return n == 0 ? ReadOnlySpan<T>.Empty : new ReadOnlySpan<T>((void*)data, n);
            }
        }

        /// <summary>A copy of the elements.</summary>
        public T[] ToArray<T>() where T : struct
        {
            using (handle.Borrow())
            {
                return AsSpan<T>().ToArray();
            }
        }

        /// <summary>A copy of a string tensor's elements.</summary>
        public string[] ToStringArray()
        {
            using (handle.Borrow())
            {
                ExpectKind(ValueKind.Tensor, "ToStringArray");
                if (ElementType != ElementType.String)
                    throw OnyxException.InvalidArgument("ToStringArray: '" + Name + "' holds " + ElementType + " elements, not String");
                return (string[])strings.Clone();
            }
        }

        /// <summary>A sequence's elements (owned by this value, disposed with it).</summary>
        public IReadOnlyList<OnyxValue> AsSequence()
        {
            using (handle.Borrow())
            {
                ExpectKind(ValueKind.Sequence, "AsSequence");
                return Array.AsReadOnly(items);
            }
        }

        /// <summary>
        /// A copy of a map's entries as a dictionary: K is long (Int64 keys) or string (String keys), V the CLR
        /// type of the values (float, double, long, string, ...); InvalidArgument naming both when they differ.
        /// </summary>
        public IReadOnlyDictionary<K, V> AsMap<K, V>()
        {
            using (handle.Borrow())
            {
                ExpectKind(ValueKind.Map, "AsMap");
                K[] keys = ReadColumn<K>(items[0], "key");
                V[] values = ReadColumn<V>(items[1], "value");
                var map = new Dictionary<K, V>(keys.Length);
                for (int i = 0; i < keys.Length; i++) map[keys[i]] = values[i];
                return map;
            }
        }

        private T[] ReadColumn<T>(OnyxValue column, string role)
        {
            Array read = column.ReadArray();
            T[] typed = read as T[];
            if (typed == null)
                throw OnyxException.InvalidArgument("AsMap: the " + role + "s of map '" + Name + "' are " + column.ElementType +
                                                    " (" + read.GetType().GetElementType().Name + "), not " + typeof(T).Name);
            return typed;
        }

        /// <summary>A copy of a tensor's elements as an array of their CLR type (string[] for String).</summary>
        private Array ReadArray()
        {
            switch (ElementType)
            {
                case ElementType.Float: return ToArray<float>();
                case ElementType.Double: return ToArray<double>();
                case ElementType.Int64: return ToArray<long>();
                case ElementType.Int32: return ToArray<int>();
                case ElementType.Int16: return ToArray<short>();
                case ElementType.Int8: return ToArray<sbyte>();
                case ElementType.UInt8: return ToArray<byte>();
                case ElementType.UInt16: return ToArray<ushort>();
                case ElementType.UInt32: return ToArray<uint>();
                case ElementType.UInt64: return ToArray<ulong>();
                case ElementType.Bool: return ToArray<bool>();
                case ElementType.String: return ToStringArray();
                default:
                    throw new OnyxException(ErrorCode.NotImplemented, "'" + Name + "': " + ElementType + " map entries are not read by the C# binding");
            }
        }

        /// <summary>Whether an optional holds a value.</summary>
        public bool HasValue
        {
            get
            {
                using (handle.Borrow())
                {
                    ExpectKind(ValueKind.Optional, "HasValue");
                    return items.Length > 0;
                }
            }
        }

        /// <summary>The value an optional holds (owned by it); InvalidArgument when it is empty.</summary>
        public OnyxValue Value
        {
            get
            {
                using (handle.Borrow())
                {
                    ExpectKind(ValueKind.Optional, "Value");
                    if (items.Length == 0) throw OnyxException.InvalidArgument("Value: the optional '" + Name + "' is empty");
                    return items[0];
                }
            }
        }

        public bool IsDisposed { get { return handle.IsClosed; } }

        public void Dispose()
        {
            if (items != null)
                foreach (OnyxValue item in items) item.Dispose();
            handle.Dispose();
        }

        // ---- Inputs ----------------------------------------------------------------------------------------

        private static OnyxValue Own(IntPtr created)
        {
            return new OnyxValue("value", new OnyxHandle(created, NativeApi.ValueRelease, "OnyxValue"));
        }

        /// <summary>A tensor value holding a copy of the tensor's elements in engine memory.</summary>
        public static OnyxValue CreateTensor(Tensor tensor)
        {
            if (tensor == null) throw OnyxException.InvalidArgument("CreateTensor: the tensor is null");
            return Own(CopyTensor(tensor));
        }

        /// <summary>A string tensor (copied, UTF-8).</summary>
        public static OnyxValue CreateTensor(string[] strings, params long[] shape)
        {
            if (strings == null) throw OnyxException.InvalidArgument("CreateTensor: strings must not be null");
            return Own(StringTensor(strings, shape));
        }

        /// <summary>
        /// A sequence of tensors of one element type (each copied into engine memory); an empty array makes an
        /// empty sequence.
        /// </summary>
        public static OnyxValue CreateSequence(params Tensor[] tensors)
        {
            if (tensors == null) throw OnyxException.InvalidArgument("CreateSequence: tensors must not be null");
            var made = new List<OnyxValue>();
            try
            {
                for (int i = 0; i < tensors.Length; i++)
                {
                    if (tensors[i] == null) throw OnyxException.InvalidArgument("CreateSequence: item " + i + " is null");
                    made.Add(CreateTensor(tensors[i]));
                }
                return CreateSequence((IReadOnlyList<OnyxValue>)made);
            }
            finally
            {
                foreach (OnyxValue v in made) v.Dispose();
            }
        }

        /// <summary>A sequence of tensor values of one element type, or of maps of one type (shared, not copied).</summary>
        public static unsafe OnyxValue CreateSequence(IReadOnlyList<OnyxValue> items)
        {
            if (items == null) throw OnyxException.InvalidArgument("CreateSequence: items must not be null");
            var leases = new List<OnyxHandle.Lease>();
            try
            {
                var ptrs = new IntPtr[Math.Max(1, items.Count)];
                for (int i = 0; i < items.Count; i++)
                {
                    if (items[i] == null) throw OnyxException.InvalidArgument("CreateSequence: item " + i + " is null");
                    var lease = items[i].handle.Borrow();
                    leases.Add(lease);
                    ptrs[i] = lease.Ptr;
                }
                IntPtr created;
                fixed (IntPtr* p = ptrs)
                    NativeApi.Check(NativeApi.ValueCreateSequence(p, new UIntPtr((uint)items.Count), out created));
                return Own(created);
            }
            finally
            {
                foreach (var lease in leases) lease.Dispose();
            }
        }

        /// <summary>
        /// A map: K long or string; V float, double, long, int or string. The entries are copied.
        /// </summary>
        public static OnyxValue CreateMap<K, V>(IEnumerable<KeyValuePair<K, V>> entries)
        {
            if (entries == null) throw OnyxException.InvalidArgument("CreateMap: entries must not be null");
            if (typeof(K) != typeof(long) && typeof(K) != typeof(string))
                throw OnyxException.InvalidArgument("CreateMap: map keys are long or string, not " + typeof(K).Name);
            var keys = new List<K>();
            var values = new List<V>();
            foreach (var e in entries)
            {
                if (e.Key == null) throw OnyxException.InvalidArgument("CreateMap: a key is null");
                if (e.Value == null) throw OnyxException.InvalidArgument("CreateMap: the value of key '" + e.Key + "' is null");
                keys.Add(e.Key);
                values.Add(e.Value);
            }
            IntPtr k = IntPtr.Zero, v = IntPtr.Zero;
            try
            {
                k = Column(keys.ToArray(), "key");
                v = Column(values.ToArray(), "value");
                IntPtr created;
                NativeApi.Check(NativeApi.ValueCreateMap(k, v, out created));
                return Own(created);
            }
            finally
            {
                if (k != IntPtr.Zero) NativeApi.ValueRelease(k);
                if (v != IntPtr.Zero) NativeApi.ValueRelease(v);
            }
        }

        /// <summary>An optional holding `value` (shared), or an empty optional when it is null.</summary>
        public static OnyxValue CreateOptional(OnyxValue value)
        {
            IntPtr created;
            if (value == null)
            {
                NativeApi.Check(NativeApi.ValueCreateOptional(IntPtr.Zero, out created));
            }
            else
            {
                if (value.Kind == ValueKind.Optional)
                    throw OnyxException.InvalidArgument("CreateOptional: an optional cannot hold an optional");
                using (var lease = value.handle.Borrow())
                    NativeApi.Check(NativeApi.ValueCreateOptional(lease.Ptr, out created));
            }
            return Own(created);
        }

        /// <summary>An optional holding a copy of `tensor`.</summary>
        public static OnyxValue CreateOptional(Tensor tensor)
        {
            using (var t = CreateTensor(tensor)) return CreateOptional(t);
        }

        /// <summary>A 1-D engine tensor (owned by the caller) of a map's keys or values.</summary>
        private static IntPtr Column<T>(T[] items, string role)
        {
            if (typeof(T) == typeof(string)) return StringTensor((string[])(object)items, new long[] { items.Length });
            if (typeof(T) != typeof(long) && typeof(T) != typeof(int) && typeof(T) != typeof(float) && typeof(T) != typeof(double))
                throw OnyxException.InvalidArgument("CreateMap: map " + role + "s of type " + typeof(T).Name + " are not supported " +
                                                    "(keys: long or string; values: float, double, long, int or string)");
            return CopyBytes(ElementTypes.OfType(typeof(T)), new long[] { items.Length }, items);
        }

        private static unsafe IntPtr CopyTensor(Tensor tensor)
        {
            using (MemoryHandle pin = tensor.Pin())
                return CopyRaw(tensor.ElementType, tensor.ShapeRef, (IntPtr)pin.Pointer, tensor.ByteLength);
        }

        private static IntPtr CopyBytes<T>(ElementType type, long[] shape, T[] items)
        {
            GCHandle pin = GCHandle.Alloc(items, GCHandleType.Pinned);
            try
            {
                return CopyRaw(type, shape, pin.AddrOfPinnedObject(), (long)items.Length * ElementTypes.Size(type));
            }
            finally
            {
                pin.Free();
            }
        }

        private static unsafe IntPtr CopyRaw(ElementType type, long[] shape, IntPtr src, long bytes)
        {
            IntPtr value;
            NativeApi.Check(NativeApi.ValueCreateTensor(IntPtr.Zero, shape, new UIntPtr((uint)shape.Length), (int)type, out value));
            try
            {
                if (bytes > 0)
                {
                    IntPtr dest;
                    NativeApi.Check(NativeApi.ValueGetTensorData(value, out dest));
                    Buffer.MemoryCopy((void*)src, (void*)dest, bytes, bytes);
                }
                return value;
            }
            catch
            {
                NativeApi.ValueRelease(value);
                throw;
            }
        }

        private static unsafe IntPtr StringTensor(string[] strings, long[] shape)
        {
            long n = ElementTypes.ElementCount(shape, "CreateTensor");
            if (n != strings.Length)
                throw OnyxException.InvalidArgument("CreateTensor: " + strings.Length + " strings do not fill shape " +
                                                    ElementTypes.Format(shape) + " (" + n + " elements)");
            var bytes = new byte[strings.Length][];
            for (int i = 0; i < strings.Length; i++)
            {
                if (strings[i] == null) throw OnyxException.InvalidArgument("CreateTensor: string " + i + " is null");
                bytes[i] = System.Text.Encoding.UTF8.GetBytes(strings[i]);
            }
            IntPtr value;
            NativeApi.Check(NativeApi.ValueCreateTensor(IntPtr.Zero, shape, new UIntPtr((uint)shape.Length), (int)ElementType.String, out value));
            var pins = new GCHandle[bytes.Length];
            try
            {
                var ptrs = new IntPtr[Math.Max(1, bytes.Length)];
                var lengths = new UIntPtr[Math.Max(1, bytes.Length)];
                for (int i = 0; i < bytes.Length; i++)
                {
                    pins[i] = GCHandle.Alloc(bytes[i], GCHandleType.Pinned);
                    ptrs[i] = pins[i].AddrOfPinnedObject();
                    lengths[i] = new UIntPtr((uint)bytes[i].Length);
                }
                if (bytes.Length > 0)
                    fixed (IntPtr* p = ptrs)
                    fixed (UIntPtr* l = lengths)
                        NativeApi.Check(NativeApi.StringTensorFill(value, p, l, new UIntPtr((uint)bytes.Length)));
                return value;
            }
            catch
            {
                NativeApi.ValueRelease(value);
                throw;
            }
            finally
            {
                foreach (GCHandle pin in pins)
                    if (pin.IsAllocated) pin.Free();
            }
        }
    }

    /// <summary>The outputs of one run, by position and by name; Dispose releases them all.</summary>
    public sealed class RunResult : IReadOnlyList<OnyxValue>, IDisposable
    {
        private readonly OnyxValue[] values;

        internal RunResult(OnyxValue[] values) { this.values = values; }

        public OnyxValue this[int index] { get { return values[index]; } }

        public OnyxValue this[string name]
        {
            get
            {
                foreach (OnyxValue v in values)
                    if (v.Name == name) return v;
                var names = new List<string>();
                foreach (OnyxValue v in values) names.Add(v.Name);
                throw OnyxException.InvalidArgument("no output named '" + name + "' (outputs: " + string.Join(", ", names) + ")");
            }
        }

        public int Count { get { return values.Length; } }

        public IEnumerator<OnyxValue> GetEnumerator() { return ((IEnumerable<OnyxValue>)values).GetEnumerator(); }

        IEnumerator IEnumerable.GetEnumerator() { return values.GetEnumerator(); }

        public void Dispose()
        {
            foreach (OnyxValue v in values) v.Dispose();
        }
    }
}
