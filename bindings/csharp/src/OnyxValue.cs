using System;
using System.Collections;
using System.Collections.Generic;
using System.Runtime.InteropServices;

namespace Onyx.Runtime
{
    /// <summary>
    /// An output of Session.Run: owns the engine's value (OnyxValue) until Dispose. Tensors are read through
    /// AsSpan (a view of the engine's memory, valid until Dispose) or ToArray (a copy); other kinds (sequence,
    /// map, optional) report their Kind only.
    /// </summary>
    public sealed class OnyxValue : IDisposable
    {
        private readonly OnyxHandle handle;
        private readonly long[] shape;
        private readonly IntPtr data;

        internal OnyxValue(string name, OnyxHandle handle, in TensorResult r)
        {
            Name = name;
            this.handle = handle;
            Kind = (ValueKind)r.Kind;
            ElementType = (ElementType)r.Type;
            shape = new long[(int)r.Rank.ToUInt64()];
            if (shape.Length > 0) Marshal.Copy(r.Shape, shape, 0, shape.Length);
            data = r.Data;
        }

        public string Name { get; }

        public ValueKind Kind { get; }

        /// <summary>The element type of a tensor (Undefined for other kinds).</summary>
        public ElementType ElementType { get; }

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

        private int CheckedCount<T>(string what)
        {
            if (Kind != ValueKind.Tensor)
                throw new OnyxException(ErrorCode.NotImplemented, what + ": output '" + Name + "' is a " + Kind +
                                        ", not a tensor: the C# binding reads tensors only");
            ElementTypes.Expect<T>(ElementType, what + " of output '" + Name + "'");
            long n = ElementCount;
            if (n > int.MaxValue)
                throw new OnyxException(ErrorCode.NotImplemented, what + ": output '" + Name + "' has " + n + " elements, more than a span holds");
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

        public bool IsDisposed { get { return handle.IsClosed; } }

        public void Dispose() { handle.Dispose(); }
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
