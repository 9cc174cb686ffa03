using System;
using System.Collections.Generic;

namespace Onyx.Runtime
{
    /// <summary>
    /// A declared type, structurally: a tensor's element type, a sequence's or optional's element type, a map's
    /// key type and value type. Read from the C API's type string ("seq(map(int64,tensor(float)))") by a small
    /// parser of its grammar; shapes are in NodeInfo (the outermost tensor's only).
    /// </summary>
    public sealed class TypeInfo
    {
        private readonly ElementType elementType;
        private readonly ElementType keyType;
        private readonly TypeInfo element;

        private TypeInfo(ValueKind kind, string text, ElementType elementType, ElementType keyType, TypeInfo element)
        {
            Kind = kind;
            TypeString = text;
            this.elementType = elementType;
            this.keyType = keyType;
            this.element = element;
        }

        public ValueKind Kind { get; }

        /// <summary>onnxruntime's spelling: "tensor(float)", "seq(tensor(int64))", "map(string,tensor(float))", ...</summary>
        public string TypeString { get; }

        /// <summary>The element type of a tensor or sparse tensor; InvalidArgument for other kinds.</summary>
        public ElementType ElementType
        {
            get { Require(Kind == ValueKind.Tensor || Kind == ValueKind.SparseTensor, "element type"); return elementType; }
        }

        /// <summary>The element type of a sequence or optional.</summary>
        public TypeInfo Element
        {
            get { Require(Kind == ValueKind.Sequence || Kind == ValueKind.Optional, "element"); return element; }
        }

        /// <summary>A map's key type (Int64 or String).</summary>
        public ElementType MapKeyType
        {
            get { Require(Kind == ValueKind.Map, "key type"); return keyType; }
        }

        /// <summary>A map's value type (a tensor type, e.g. tensor(float)).</summary>
        public TypeInfo MapValueType
        {
            get { Require(Kind == ValueKind.Map, "value type"); return element; }
        }

        private void Require(bool ok, string what)
        {
            if (!ok) throw OnyxException.InvalidArgument(TypeString + " has no " + what);
        }

        public override string ToString() { return TypeString; }

        private static readonly Dictionary<string, ElementType> Names = BuildNames();

        private static Dictionary<string, ElementType> BuildNames()
        {
            var names = new Dictionary<string, ElementType>();
            foreach (ElementType t in Enum.GetValues(typeof(ElementType)))
                if (t != ElementType.Undefined) names[t.ToString().ToLowerInvariant()] = t;
            return names;
        }

        /// <summary>
        /// Parses tensor(E) | sparse_tensor(E) | seq(T) | optional(T) | map(E,T), E an element type name;
        /// "unknown" (a type the model leaves open) is kind Unknown. Fail naming the offset when malformed.
        /// </summary>
        internal static TypeInfo Parse(string text)
        {
            int pos = 0;
            TypeInfo t = Parse(text, ref pos);
            if (pos != text.Length) throw Malformed(text, pos);
            return t;
        }

        private static TypeInfo Parse(string text, ref int pos)
        {
            int start = pos;
            string head = Word(text, ref pos);
            if (head == "unknown") return new TypeInfo(ValueKind.Unknown, head, ElementType.Undefined, ElementType.Undefined, null);
            Expect(text, ref pos, '(');
            ValueKind kind;
            ElementType elem = ElementType.Undefined, key = ElementType.Undefined;
            TypeInfo inner = null;
            switch (head)
            {
                case "tensor":
                case "sparse_tensor":
                    kind = head == "tensor" ? ValueKind.Tensor : ValueKind.SparseTensor;
                    elem = ElementNamed(text, ref pos);
                    break;
                case "seq":
                case "optional":
                    kind = head == "seq" ? ValueKind.Sequence : ValueKind.Optional;
                    inner = Parse(text, ref pos);
                    break;
                case "map":
                    kind = ValueKind.Map;
                    key = ElementNamed(text, ref pos);
                    Expect(text, ref pos, ',');
                    inner = Parse(text, ref pos);
                    break;
                default:
                    throw Malformed(text, start);
            }
            Expect(text, ref pos, ')');
            return new TypeInfo(kind, text.Substring(start, pos - start), elem, key, inner);
        }

        private static ElementType ElementNamed(string text, ref int pos)
        {
            string name = Word(text, ref pos);
            ElementType t;
            if (!Names.TryGetValue(name, out t))
                throw new OnyxException(ErrorCode.NotImplemented, "element type '" + name + "' is not known to the C# binding");
            return t;
        }

        private static string Word(string text, ref int pos)
        {
            int start = pos;
            while (pos < text.Length && (char.IsLetterOrDigit(text[pos]) || text[pos] == '_')) pos++;
            if (pos == start) throw Malformed(text, start);
            return text.Substring(start, pos - start);
        }

        private static void Expect(string text, ref int pos, char c)
        {
            if (pos >= text.Length || text[pos] != c) throw Malformed(text, pos);
            pos++;
        }

        private static OnyxException Malformed(string text, int at)
        {
            return new OnyxException(ErrorCode.Fail, "cannot read type string '" + text + "' at offset " + at);
        }
    }
}
