using System;
using System.Buffers;

namespace Onyx.Runtime
{
    /// <summary>
    /// An input tensor: an element type, a shape and the caller's elements (an array or a Memory), which the
    /// engine reads in place during Session.Run (pinned for the call, never copied). A ReadOnlySpan is copied
    /// (FromSpan), since a span cannot outlive the call that made it. Holds no native resource.
    /// </summary>
    public abstract class Tensor
    {
        private readonly long[] shape;

        internal Tensor(ElementType type, long[] shape)
        {
            ElementType = type;
            this.shape = shape;
        }

        public ElementType ElementType { get; }

        public long[] Shape { get { return (long[])shape.Clone(); } }

        internal long[] ShapeRef { get { return shape; } }

        internal abstract long ByteLength { get; }

        internal abstract MemoryHandle Pin();

        /// <summary>A tensor over an array, of the element type the array's CLR type holds (float -> Float, ...).</summary>
        public static Tensor Create<T>(T[] data, params long[] shape) where T : struct
        {
            return Create(ElementTypes.Of<T>(), data, shape);
        }

        public static Tensor Create<T>(ReadOnlyMemory<T> data, params long[] shape) where T : struct
        {
            return new MemoryTensor<T>(ElementTypes.Of<T>(), data, shape);
        }

        public static Tensor Create<T>(Memory<T> data, params long[] shape) where T : struct
        {
            return new MemoryTensor<T>(ElementTypes.Of<T>(), data, shape);
        }

        /// <summary>
        /// A tensor of an explicit element type; T must be its CLR type (ushort for Float16 and BFloat16 bits,
        /// byte for the float8 types, else the natural one).
        /// </summary>
        public static Tensor Create<T>(ElementType type, T[] data, params long[] shape) where T : struct
        {
            if (data == null) throw OnyxException.InvalidArgument("Tensor.Create: data must not be null");
            return new MemoryTensor<T>(type, data, shape);
        }

        public static Tensor Create<T>(ElementType type, ReadOnlyMemory<T> data, params long[] shape) where T : struct
        {
            return new MemoryTensor<T>(type, data, shape);
        }

        /// <summary>A tensor holding a copy of the span's elements.</summary>
        public static Tensor FromSpan<T>(ReadOnlySpan<T> data, params long[] shape) where T : struct
        {
            return new MemoryTensor<T>(ElementTypes.Of<T>(), data.ToArray(), shape);
        }
    }

    internal sealed class MemoryTensor<T> : Tensor where T : struct
    {
        private readonly ReadOnlyMemory<T> data;

        internal MemoryTensor(ElementType type, ReadOnlyMemory<T> data, long[] shape)
            : base(type, shape == null ? null : (long[])shape.Clone())
        {
            ElementTypes.Expect<T>(type, "Tensor.Create");
            long n = ElementTypes.ElementCount(ShapeRef, "Tensor.Create");
            if (n != data.Length)
                throw OnyxException.InvalidArgument("Tensor.Create: " + data.Length + " " + typeof(T).Name +
                                                    " elements do not fill shape " + ElementTypes.Format(ShapeRef) +
                                                    " (" + n + " elements)");
            this.data = data;
        }

        internal override long ByteLength { get { return (long)data.Length * ElementTypes.Size(ElementType); } }

        internal override MemoryHandle Pin() { return data.Pin(); }
    }
}
