using System;
using System.Collections.Generic;

namespace Onyx.Runtime
{
    /// <summary>Tensor element types: OnyxElementType, equal to onnx.TensorProto.DataType.</summary>
    public enum ElementType
    {
        Undefined = 0, Float = 1, UInt8 = 2, Int8 = 3, UInt16 = 4, Int16 = 5, Int32 = 6, Int64 = 7, String = 8,
        Bool = 9, Float16 = 10, Double = 11, UInt32 = 12, UInt64 = 13, Complex64 = 14, Complex128 = 15,
        BFloat16 = 16, Float8E4M3FN = 17, Float8E4M3FNUZ = 18, Float8E5M2 = 19, Float8E5M2FNUZ = 20, UInt4 = 21,
        Int4 = 22, Float4E2M1 = 23, Float8E8M0 = 24, UInt2 = 25, Int2 = 26,
    }

    /// <summary>OnyxValueKind.</summary>
    public enum ValueKind { Unknown = 0, Tensor = 1, Sequence = 2, Map = 3, Optional = 4, SparseTensor = 5 }

    /// <summary>OnyxGraphOptimizationLevel.</summary>
    public enum GraphOptimizationLevel { DisableAll = 0, EnableBasic = 1, EnableExtended = 2, EnableLayout = 3, EnableAll = 99 }

    /// <summary>OnyxExecutionMode.</summary>
    public enum ExecutionMode { Sequential = 0, Parallel = 1 }

    /// <summary>OnyxLoggingLevel.</summary>
    public enum LoggingLevel { Verbose = 0, Info = 1, Warning = 2, Error = 3, Fatal = 4 }

    /// <summary>Which CLR element type holds which tensor element type, and their sizes.</summary>
    internal static class ElementTypes
    {
        // The CLR type each element type is read and written as; 16-bit floats travel as their bits (ushort).
        private static readonly Dictionary<ElementType, Type> Clr = new Dictionary<ElementType, Type>
        {
            { ElementType.Float, typeof(float) }, { ElementType.Double, typeof(double) },
            { ElementType.Int8, typeof(sbyte) }, { ElementType.UInt8, typeof(byte) },
            { ElementType.Int16, typeof(short) }, { ElementType.UInt16, typeof(ushort) },
            { ElementType.Int32, typeof(int) }, { ElementType.UInt32, typeof(uint) },
            { ElementType.Int64, typeof(long) }, { ElementType.UInt64, typeof(ulong) },
            { ElementType.Bool, typeof(bool) }, { ElementType.Float16, typeof(ushort) },
            { ElementType.BFloat16, typeof(ushort) }, { ElementType.Float8E4M3FN, typeof(byte) },
            { ElementType.Float8E4M3FNUZ, typeof(byte) }, { ElementType.Float8E5M2, typeof(byte) },
            { ElementType.Float8E5M2FNUZ, typeof(byte) }, { ElementType.Float8E8M0, typeof(byte) },
        };

        private static readonly Dictionary<Type, ElementType> Natural = new Dictionary<Type, ElementType>
        {
            { typeof(float), ElementType.Float }, { typeof(double), ElementType.Double },
            { typeof(sbyte), ElementType.Int8 }, { typeof(byte), ElementType.UInt8 },
            { typeof(short), ElementType.Int16 }, { typeof(ushort), ElementType.UInt16 },
            { typeof(int), ElementType.Int32 }, { typeof(uint), ElementType.UInt32 },
            { typeof(long), ElementType.Int64 }, { typeof(ulong), ElementType.UInt64 },
            { typeof(bool), ElementType.Bool },
        };

        private static readonly Dictionary<Type, int> Sizes = new Dictionary<Type, int>
        {
            { typeof(float), 4 }, { typeof(double), 8 }, { typeof(sbyte), 1 }, { typeof(byte), 1 }, { typeof(short), 2 },
            { typeof(ushort), 2 }, { typeof(int), 4 }, { typeof(uint), 4 }, { typeof(long), 8 }, { typeof(ulong), 8 },
            { typeof(bool), 1 },
        };

        /// <summary>The element type a T[] holds without being told (float -> Float, ...).</summary>
        internal static ElementType Of<T>()
        {
            return OfType(typeof(T));
        }

        internal static ElementType OfType(Type clr)
        {
            ElementType t;
            if (!Natural.TryGetValue(clr, out t))
                throw OnyxException.InvalidArgument("a " + clr.Name + " array cannot hold tensor elements " +
                                                    "(use float, double, sbyte, byte, short, ushort, int, uint, long, ulong or bool)");
            return t;
        }

        /// <summary>Throws unless T is the CLR type of `type` (what = what is being made or read, for the message).</summary>
        internal static void Expect<T>(ElementType type, string what)
        {
            Type clr;
            if (!Clr.TryGetValue(type, out clr))
                throw new OnyxException(ErrorCode.NotImplemented, what + ": element type " + type + " has no fixed-size CLR type in this binding");
            if (clr != typeof(T))
                throw OnyxException.InvalidArgument(what + ": " + type + " elements are " + clr.Name + ", not " + typeof(T).Name);
        }

        /// <summary>Bytes per element, or -1 for types without a fixed size (strings, packed 2- and 4-bit types).</summary>
        internal static int Size(ElementType type)
        {
            Type clr;
            return Clr.TryGetValue(type, out clr) ? Sizes[clr] : -1;
        }

        internal static long ElementCount(long[] shape, string what)
        {
            if (shape == null) throw OnyxException.InvalidArgument(what + ": shape must not be null");
            long n = 1;
            foreach (long d in shape)
            {
                if (d < 0)
                    throw OnyxException.InvalidArgument(what + ": shape " + Format(shape) + " has a negative dimension");
                n = checked(n * d);
            }
            return n;
        }

        internal static string Format(long[] shape)
        {
            return "[" + string.Join(", ", shape) + "]";
        }
    }
}
