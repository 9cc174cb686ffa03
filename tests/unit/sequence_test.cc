// Sequence and optional operators (providers/cpu/sequence), ai.onnx.ml ZipMap
// (providers/cpu/ml): each kernel with its errors, their shape rules, kernel
// lookup and constant folding around non-tensor values, and whole sessions.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/graph/shape_inference.h"
#include "core/session/session.h"
#include "onnx-ml.pb.h"
#include "tests/unit/kernel_test_util.h"

namespace onyx {
namespace {

using testing::MakeNode;
using testing::MakeTensor;
using testing::SetInt;
using testing::SetInts;
using testing::ToVector;

TypeInfo TypeOf(const Value& v) {
  if (v.IsTensor()) return TypeInfo::Tensor(v.tensor().type());
  TypeInfo t;
  if (v.IsSequence()) t.kind = TypeInfo::Kind::kSequence;
  if (v.kind() == Value::Kind::kOptional) t.kind = TypeInfo::Kind::kOptional;
  return t;
}

// Creates the CPU kernel for `node` and runs it on `inputs` (a Value without
// a value is an omitted input). `types` overrides the declared input types.
Status RunKernel(Node node, const std::vector<Value>& inputs, std::vector<Value>* outputs,
                 std::vector<TypeInfo> types = {}) {
  if (node.inputs.empty())
    for (size_t i = 0; i < inputs.size(); ++i) node.inputs.push_back(inputs[i].HasValue() ? "in" + std::to_string(i) : "");
  if (node.outputs.empty()) node.outputs.push_back("out0");
  if (node.name.empty()) node.name = "test_" + node.op_type;
  if (types.empty())
    for (const Value& v : inputs) types.push_back(TypeOf(v));
  const size_t num_outputs = node.outputs.size();
  testing::TestKernel kernel(std::move(node), std::move(types));
  testing::TestKernelContext ctx(inputs, num_outputs);
  ONYX_RETURN_IF_ERROR(kernel.Run(ctx));
  *outputs = std::move(ctx.outputs());
  return Status::OK();
}

Value Eval(const Node& n, const std::vector<Value>& in) {
  std::vector<Value> out;
  Status s = RunKernel(n, in, &out);
  EXPECT_TRUE(s.ok()) << s.message();
  return s.ok() ? out[0] : Value();
}

// The error message of a run that must fail with `code`.
std::string Fails(const Node& n, const std::vector<Value>& in, ErrorCode code = ErrorCode::kInvalidArgument) {
  std::vector<Value> out;
  Status s = RunKernel(n, in, &out);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), code) << s.message();
  return s.message();
}

template <typename T>
Value V(const Dims& dims, const std::vector<T>& values) {
  return Value(MakeTensor<T>(dims, values));
}
Value I64(int64_t v) { return V<int64_t>({}, {v}); }
Value Seq(std::vector<Value> items) { return Value::Sequence(std::move(items)); }

// Shape and float data of a sequence's items: "[2,2]:1,2,3,4 | [1,2]:5,6".
std::string Items(const Value& seq) {
  if (!seq.IsSequence()) return "<not a sequence>";
  std::string s;
  for (size_t i = 0; i < seq.items().size(); ++i) {
    const Tensor& t = seq.items()[i].tensor();
    s += (i ? " | " : "") + ShapeToString(t.dims()) + ":";
    for (int64_t k = 0; k < t.size(); ++k) s += (k ? "," : "") + std::to_string(static_cast<int>(t.data<float>()[k]));
  }
  return s;
}

Node Named(const std::string& op, int opset, const std::string& name) {
  Node n = MakeNode(op, opset);
  n.name = name;
  return n;
}

// ---- SequenceEmpty / SequenceConstruct / SequenceLength -------------------

TEST(SequenceKernels, EmptyConstructLength) {
  Value e = Eval(MakeNode("SequenceEmpty", 11), {});
  ASSERT_TRUE(e.IsSequence());
  EXPECT_TRUE(e.items().empty());

  Value a = V<float>({2}, {1, 2}), b = V<float>({3}, {3, 4, 5});
  Value s = Eval(MakeNode("SequenceConstruct", 11), {a, b});
  EXPECT_EQ(Items(s), "[2]:1,2 | [3]:3,4,5");
  // Items share the input tensors.
  EXPECT_EQ(s.items()[0].tensor_ptr(), a.tensor_ptr());
  EXPECT_EQ(s.items()[1].tensor_ptr(), b.tensor_ptr());

  Value n = Eval(MakeNode("SequenceLength", 11), {s});
  EXPECT_EQ(n.tensor().dims(), Dims{});
  EXPECT_EQ(n.tensor().type(), ElemType::kInt64);
  EXPECT_EQ(n.tensor().data<int64_t>()[0], 2);
  EXPECT_EQ(Eval(MakeNode("SequenceLength", 11), {e}).tensor().data<int64_t>()[0], 0);
}

TEST(SequenceKernels, EmptyRejectsBadDtype) {
  Node n = Named("SequenceEmpty", 11, "empty1");
  SetInt(n, "dtype", 999);
  std::string msg = Fails(n, {}, ErrorCode::kInvalidGraph);
  EXPECT_NE(msg.find("node 'empty1' (SequenceEmpty)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("dtype"), std::string::npos) << msg;
}

TEST(SequenceKernels, ConstructErrors) {
  Node n = Named("SequenceConstruct", 11, "mk");
  std::string msg = Fails(n, {V<float>({1}, {1}), V<int64_t>({1}, {1})});
  EXPECT_NE(msg.find("node 'mk' (SequenceConstruct): input 1 ('in1') is tensor(int64) but input 0 is tensor(float)"),
            std::string::npos)
      << msg;
  msg = Fails(n, {V<float>({1}, {1}), Seq({})});
  EXPECT_NE(msg.find("input 1 ('in1') must be a tensor, got a sequence"), std::string::npos) << msg;
}

TEST(SequenceKernels, LengthRejectsTensor) {
  std::string msg = Fails(Named("SequenceLength", 11, "len"), {V<float>({1}, {1})});
  EXPECT_NE(msg.find("node 'len' (SequenceLength): input 0 ('in0') must be a sequence, got tensor(float)"),
            std::string::npos)
      << msg;
}

// ---- SequenceInsert -------------------------------------------------------

TEST(SequenceKernels, InsertPositions) {
  Value a = V<float>({1}, {1}), b = V<float>({1}, {2}), c = V<float>({1}, {3}), x = V<float>({1}, {9});
  Value s = Seq({a, b, c});
  Node ins = MakeNode("SequenceInsert", 11);
  EXPECT_EQ(Items(Eval(ins, {s, x})), "[1]:1 | [1]:2 | [1]:3 | [1]:9");  // default: at the end
  EXPECT_EQ(Items(Eval(ins, {s, x, I64(0)})), "[1]:9 | [1]:1 | [1]:2 | [1]:3");
  EXPECT_EQ(Items(Eval(ins, {s, x, I64(1)})), "[1]:1 | [1]:9 | [1]:2 | [1]:3");
  EXPECT_EQ(Items(Eval(ins, {s, x, I64(3)})), "[1]:1 | [1]:2 | [1]:3 | [1]:9");   // n: at the end
  EXPECT_EQ(Items(Eval(ins, {s, x, I64(-1)})), "[1]:1 | [1]:2 | [1]:9 | [1]:3");  // before the last
  EXPECT_EQ(Items(Eval(ins, {s, x, I64(-3)})), "[1]:9 | [1]:1 | [1]:2 | [1]:3");
  EXPECT_EQ(Items(Eval(ins, {s, x, V<int32_t>({}, {2})})), "[1]:1 | [1]:2 | [1]:9 | [1]:3");
  EXPECT_EQ(Items(Eval(ins, {Seq({}), x})), "[1]:9");

  // No tensor is copied, and the input sequence is left as it was.
  Value out = Eval(ins, {s, x, I64(1)});
  EXPECT_EQ(out.items()[0].tensor_ptr(), a.tensor_ptr());
  EXPECT_EQ(out.items()[1].tensor_ptr(), x.tensor_ptr());
  EXPECT_EQ(out.items()[3].tensor_ptr(), c.tensor_ptr());
  EXPECT_EQ(Items(s), "[1]:1 | [1]:2 | [1]:3");
}

TEST(SequenceKernels, InsertErrors) {
  Value s = Seq({V<float>({1}, {1}), V<float>({1}, {2})});
  Value x = V<float>({1}, {9});
  Node ins = Named("SequenceInsert", 11, "put");
  std::string msg = Fails(ins, {s, x, I64(3)});
  EXPECT_NE(msg.find("node 'put' (SequenceInsert): position 3 is out of range [-2, 2] for a sequence of length 2"),
            std::string::npos)
      << msg;
  msg = Fails(ins, {s, x, I64(-3)});
  EXPECT_NE(msg.find("position -3 is out of range [-2, 2]"), std::string::npos) << msg;
  msg = Fails(ins, {s, V<int64_t>({1}, {1})});
  EXPECT_NE(msg.find("cannot insert tensor(int64) into a sequence of tensor(float)"), std::string::npos) << msg;
  msg = Fails(ins, {s, x, V<int64_t>({2}, {0, 1})});
  EXPECT_NE(msg.find("input 2 ('in2') (position) must be a scalar, got shape [2]"), std::string::npos) << msg;
  msg = Fails(ins, {s, x, V<float>({}, {0})});
  EXPECT_NE(msg.find("(position) must be int32 or int64, got float"), std::string::npos) << msg;
  msg = Fails(ins, {x, x});
  EXPECT_NE(msg.find("input 0 ('in0') must be a sequence, got tensor(float)"), std::string::npos) << msg;

  // An empty sequence's element type comes from the graph.
  TypeInfo seq_of_int;
  seq_of_int.kind = TypeInfo::Kind::kSequence;
  seq_of_int.inner = std::make_shared<TypeInfo>(TypeInfo::Tensor(ElemType::kInt64));
  std::vector<Value> out;
  Status st = RunKernel(ins, {Seq({}), x}, &out, {seq_of_int, TypeInfo::Tensor(ElemType::kFloat)});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("cannot insert tensor(float) into a sequence of tensor(int64)"), std::string::npos)
      << st.message();
}

// ---- SequenceErase / SequenceAt ---------------------------------------------

TEST(SequenceKernels, Erase) {
  Value a = V<float>({1}, {1}), b = V<float>({1}, {2}), c = V<float>({1}, {3});
  Value s = Seq({a, b, c});
  Node er = Named("SequenceErase", 11, "drop");
  EXPECT_EQ(Items(Eval(er, {s})), "[1]:1 | [1]:2");  // default: the last
  EXPECT_EQ(Items(Eval(er, {s, I64(0)})), "[1]:2 | [1]:3");
  EXPECT_EQ(Items(Eval(er, {s, I64(-2)})), "[1]:1 | [1]:3");
  Value out = Eval(er, {s, I64(1)});
  EXPECT_EQ(out.items()[1].tensor_ptr(), c.tensor_ptr());

  std::string msg = Fails(er, {s, I64(3)});
  EXPECT_NE(msg.find("node 'drop' (SequenceErase): position 3 is out of range [-3, 2] for a sequence of length 3"),
            std::string::npos)
      << msg;
  msg = Fails(er, {s, I64(-4)});
  EXPECT_NE(msg.find("position -4 is out of range [-3, 2]"), std::string::npos) << msg;
  msg = Fails(er, {Seq({})});
  EXPECT_NE(msg.find("position -1 is out of range: the sequence is empty"), std::string::npos) << msg;
}

TEST(SequenceKernels, At) {
  Value a = V<float>({2}, {1, 2}), b = V<float>({1}, {3});
  Value s = Seq({a, b});
  Node at = Named("SequenceAt", 11, "pick");
  Value y = Eval(at, {s, I64(-1)});
  ASSERT_TRUE(y.IsTensor());
  EXPECT_EQ(ToVector<float>(y.tensor()), std::vector<float>({3}));
  y = Eval(at, {s, V<int32_t>({}, {0})});
  EXPECT_EQ(ToVector<float>(y.tensor()), std::vector<float>({1, 2}));
  // A tensor output is the node's own memory, never the sequence's.
  EXPECT_NE(y.tensor_ptr(), a.tensor_ptr());
  EXPECT_NE(y.tensor().raw(), a.tensor().raw());

  std::string msg = Fails(at, {s, I64(2)});
  EXPECT_NE(msg.find("node 'pick' (SequenceAt): position 2 is out of range [-2, 1] for a sequence of length 2"),
            std::string::npos)
      << msg;
  msg = Fails(at, {s, I64(-3)});
  EXPECT_NE(msg.find("position -3 is out of range [-2, 1]"), std::string::npos) << msg;
  msg = Fails(at, {s});
  EXPECT_NE(msg.find("(position) is required but missing"), std::string::npos) << msg;
}

// ---- ConcatFromSequence ------------------------------------------------------

TEST(SequenceKernels, ConcatFromSequence) {
  Value a = V<float>({2, 2}, {1, 2, 3, 4}), b = V<float>({2, 1}, {5, 6});
  Node n = MakeNode("ConcatFromSequence", 11);
  SetInt(n, "axis", 1);
  Value y = Eval(n, {Seq({a, b})});
  EXPECT_EQ(y.tensor().dims(), (Dims{2, 3}));
  EXPECT_EQ(ToVector<float>(y.tensor()), std::vector<float>({1, 2, 5, 3, 4, 6}));
  SetInt(n, "axis", -1);
  EXPECT_EQ(ToVector<float>(Eval(n, {Seq({a, b})}).tensor()), std::vector<float>({1, 2, 5, 3, 4, 6}));

  Value c = V<float>({2, 2}, {7, 8, 9, 10});
  SetInt(n, "axis", 0);
  y = Eval(n, {Seq({a, c})});
  EXPECT_EQ(y.tensor().dims(), (Dims{4, 2}));
  EXPECT_EQ(ToVector<float>(y.tensor()), std::vector<float>({1, 2, 3, 4, 7, 8, 9, 10}));

  // new_axis=1 stacks; axis may then equal the elements' rank.
  SetInt(n, "new_axis", 1);
  y = Eval(n, {Seq({a, c})});
  EXPECT_EQ(y.tensor().dims(), (Dims{2, 2, 2}));
  EXPECT_EQ(ToVector<float>(y.tensor()), std::vector<float>({1, 2, 3, 4, 7, 8, 9, 10}));
  SetInt(n, "axis", 2);
  y = Eval(n, {Seq({a, c})});
  EXPECT_EQ(y.tensor().dims(), (Dims{2, 2, 2}));
  EXPECT_EQ(ToVector<float>(y.tensor()), std::vector<float>({1, 7, 2, 8, 3, 9, 4, 10}));
  SetInt(n, "axis", -1);
  EXPECT_EQ(ToVector<float>(Eval(n, {Seq({a, c})}).tensor()), std::vector<float>({1, 7, 2, 8, 3, 9, 4, 10}));
  SetInt(n, "axis", 1);
  y = Eval(n, {Seq({a, c})});
  EXPECT_EQ(y.tensor().dims(), (Dims{2, 2, 2}));
  EXPECT_EQ(ToVector<float>(y.tensor()), std::vector<float>({1, 2, 7, 8, 3, 4, 9, 10}));
  // Scalars stack into a vector.
  SetInt(n, "axis", 0);
  y = Eval(n, {Seq({V<float>({}, {1}), V<float>({}, {2})})});
  EXPECT_EQ(y.tensor().dims(), (Dims{2}));

  // Strings.
  Node s = MakeNode("ConcatFromSequence", 11);
  SetInt(s, "axis", 0);
  Tensor s1(ElemType::kString, {1}), s2(ElemType::kString, {2});
  s1.data<std::string>()[0] = "a";
  s2.data<std::string>()[0] = "bb";
  s2.data<std::string>()[1] = "ccc";
  y = Eval(s, {Seq({Value(std::move(s1)), Value(std::move(s2))})});
  EXPECT_EQ(ToVector<std::string>(y.tensor()), std::vector<std::string>({"a", "bb", "ccc"}));
}

TEST(SequenceKernels, ConcatFromSequenceErrors) {
  Node n = Named("ConcatFromSequence", 11, "cat");
  std::string msg = Fails(n, {Seq({V<float>({1}, {1})})}, ErrorCode::kInvalidGraph);
  EXPECT_NE(msg.find("node 'cat' (ConcatFromSequence): attribute 'axis' is required"), std::string::npos) << msg;
  SetInt(n, "axis", 2);
  msg = Fails(n, {Seq({V<float>({1, 1}, {1})})});
  EXPECT_NE(msg.find("attribute axis 2 is out of range [-2, 1] for elements of rank 2"), std::string::npos) << msg;
  SetInt(n, "new_axis", 1);
  EXPECT_TRUE(Eval(n, {Seq({V<float>({1, 1}, {1})})}).IsTensor());
  SetInt(n, "axis", 3);
  msg = Fails(n, {Seq({V<float>({1, 1}, {1})})});
  EXPECT_NE(msg.find("attribute axis 3 is out of range [-3, 2] for elements of rank 2 with new_axis=1"),
            std::string::npos)
      << msg;
  SetInt(n, "axis", 0);
  msg = Fails(n, {Seq({})});
  EXPECT_NE(msg.find("the input sequence is empty"), std::string::npos) << msg;
  msg = Fails(n, {Seq({V<float>({2}, {1, 2}), V<float>({3}, {1, 2, 3})})});
  EXPECT_NE(msg.find("sequence element 1 has shape [3] which does not match element 0 [2]"), std::string::npos)
      << msg;
  SetInt(n, "new_axis", 0);
  msg = Fails(n, {Seq({V<float>({}, {1})})});
  EXPECT_NE(msg.find("cannot concatenate scalars without new_axis=1"), std::string::npos) << msg;
  msg = Fails(n, {Seq({V<float>({1}, {1}), V<int64_t>({1}, {1})})});
  EXPECT_NE(msg.find("sequence element 1 is int64 but element 0 is float"), std::string::npos) << msg;
  SetInt(n, "new_axis", 2);
  msg = Fails(n, {Seq({V<float>({1}, {1})})}, ErrorCode::kInvalidGraph);
  EXPECT_NE(msg.find("'new_axis' must be 0 or 1"), std::string::npos) << msg;
}

// ---- SplitToSequence -------------------------------------------------------

TEST(SequenceKernels, SplitToSequence) {
  Value x = V<float>({3, 2}, {1, 2, 3, 4, 5, 6});
  Node n = MakeNode("SplitToSequence", 11);
  EXPECT_EQ(Items(Eval(n, {x})), "[1,2]:1,2 | [1,2]:3,4 | [1,2]:5,6");
  SetInt(n, "keepdims", 0);
  EXPECT_EQ(Items(Eval(n, {x})), "[2]:1,2 | [2]:3,4 | [2]:5,6");
  SetInt(n, "axis", -1);
  EXPECT_EQ(Items(Eval(n, {x})), "[3]:1,3,5 | [3]:2,4,6");
  // keepdims applies only without `split`.
  EXPECT_EQ(Items(Eval(n, {x, I64(1)})), "[3,1]:1,3,5 | [3,1]:2,4,6");

  Node s = MakeNode("SplitToSequence", 11);
  EXPECT_EQ(Items(Eval(s, {x, I64(2)})), "[2,2]:1,2,3,4 | [1,2]:5,6");  // the last chunk is shorter
  EXPECT_EQ(Items(Eval(s, {x, I64(5)})), "[3,2]:1,2,3,4,5,6");
  EXPECT_EQ(Items(Eval(s, {x, V<int64_t>({2}, {1, 2})})), "[1,2]:1,2 | [2,2]:3,4,5,6");
  EXPECT_EQ(Items(Eval(s, {x, V<int32_t>({1}, {3})})), "[3,2]:1,2,3,4,5,6");
  SetInt(s, "axis", 1);
  EXPECT_EQ(Items(Eval(s, {x, V<int64_t>({2}, {1, 1})})), "[3,1]:1,3,5 | [3,1]:2,4,6");
  // An empty axis gives an empty sequence.
  SetInt(s, "axis", 0);
  EXPECT_TRUE(Eval(s, {V<float>({0, 2}, {})}).items().empty());

  Tensor st(ElemType::kString, {3});
  for (int i = 0; i < 3; ++i) st.data<std::string>()[i] = std::string(static_cast<size_t>(i + 1), 'x');
  Value out = Eval(MakeNode("SplitToSequence", 11), {Value(std::move(st)), I64(2)});
  ASSERT_EQ(out.items().size(), 2u);
  EXPECT_EQ(ToVector<std::string>(out.items()[0].tensor()), std::vector<std::string>({"x", "xx"}));
  EXPECT_EQ(ToVector<std::string>(out.items()[1].tensor()), std::vector<std::string>({"xxx"}));
}

TEST(SequenceKernels, SplitToSequenceErrors) {
  Value x = V<float>({3, 2}, {1, 2, 3, 4, 5, 6});
  Node n = Named("SplitToSequence", 11, "cut");
  std::string msg = Fails(n, {x, V<int64_t>({2}, {1, 1})});
  EXPECT_NE(msg.find("node 'cut' (SplitToSequence): input 1 ('in1') (split) lengths [1,1] sum to 2 but the axis has "
                     "length 3"),
            std::string::npos)
      << msg;
  // A scalar split is a part length (zero would make no progress); a 1-D
  // split may hold empty parts (onnx's test_sequence_model8) but no negatives.
  msg = Fails(n, {x, I64(0)});
  EXPECT_NE(msg.find("(split) must hold a positive length, got 0"), std::string::npos) << msg;
  msg = Fails(n, {x, V<int64_t>({2}, {4, -1})});
  EXPECT_NE(msg.find("must hold non-negative lengths, got -1 at index 1"), std::string::npos) << msg;
  msg = Fails(n, {x, V<int64_t>({1, 1}, {3})});
  EXPECT_NE(msg.find("(split) must be a scalar or 1-D, got shape [1,1]"), std::string::npos) << msg;
  msg = Fails(n, {x, V<float>({}, {1})});
  EXPECT_NE(msg.find("(split) must be int32 or int64, got float"), std::string::npos) << msg;
  msg = Fails(n, {V<float>({}, {1})});
  EXPECT_NE(msg.find("input 0 must have rank >= 1"), std::string::npos) << msg;
  SetInt(n, "axis", 2);
  msg = Fails(n, {x});
  EXPECT_NE(msg.find("attribute axis 2 is out of range [-2, 1] for input shape [3,2]"), std::string::npos) << msg;
  msg = Fails(n, {Seq({})});
  EXPECT_NE(msg.find("input 0 ('in0') must be a tensor, got a sequence of length 0"), std::string::npos) << msg;
}

// ---- Optional, OptionalHasElement, OptionalGetElement ----------------------

TEST(OptionalKernels, Optional) {
  Value x = V<float>({2}, {1, 2});
  Value o = Eval(MakeNode("Optional", 15), {x});
  ASSERT_EQ(o.kind(), Value::Kind::kOptional);
  ASSERT_EQ(o.items().size(), 1u);
  EXPECT_EQ(o.items()[0].tensor_ptr(), x.tensor_ptr());
  Value os = Eval(MakeNode("Optional", 15), {Seq({x})});
  ASSERT_EQ(os.items().size(), 1u);
  EXPECT_TRUE(os.items()[0].IsSequence());

  Node empty = Named("Optional", 15, "none");
  std::string msg = Fails(empty, {}, ErrorCode::kInvalidGraph);
  EXPECT_NE(msg.find("node 'none' (Optional): attribute 'type' is required when the input is omitted"),
            std::string::npos)
      << msg;
  Attribute type_attr;
  type_attr.type = Attribute::Type::kTypeProto;
  type_attr.tp = std::make_shared<TypeInfo>(TypeInfo::Tensor(ElemType::kFloat));
  empty.attrs["type"] = type_attr;
  Value e = Eval(empty, {});
  ASSERT_EQ(e.kind(), Value::Kind::kOptional);
  EXPECT_TRUE(e.items().empty());

  msg = Fails(Named("Optional", 15, "o2"), {o});
  EXPECT_NE(msg.find("input 0 ('in0') must be a tensor or a sequence of tensors, got an optional"), std::string::npos)
      << msg;
}

bool HasElement(int opset, const std::vector<Value>& in) {
  Value y = Eval(MakeNode("OptionalHasElement", opset), in);
  EXPECT_EQ(y.tensor().type(), ElemType::kBool);
  EXPECT_EQ(y.tensor().dims(), Dims{});
  return y.tensor().data<bool>()[0];
}

TEST(OptionalKernels, HasElement) {
  Value x = V<float>({1}, {1});
  EXPECT_TRUE(HasElement(15, {Value::Optional(x)}));
  EXPECT_FALSE(HasElement(15, {Value::Optional(Value())}));
  EXPECT_TRUE(HasElement(18, {Value::Optional(Seq({}))}));
  // Opset 18: a plain tensor or sequence is present, an omitted input is not.
  EXPECT_TRUE(HasElement(18, {x}));
  EXPECT_TRUE(HasElement(18, {Seq({})}));
  EXPECT_FALSE(HasElement(18, {Value()}));
  EXPECT_FALSE(HasElement(18, {}));

  std::string msg = Fails(Named("OptionalHasElement", 15, "has"), {x});
  EXPECT_NE(msg.find("node 'has' (OptionalHasElement): input 0 ('in0') must be an optional before opset 18, got "
                     "tensor(float)"),
            std::string::npos)
      << msg;
  msg = Fails(Named("OptionalHasElement", 15, "has"), {});
  EXPECT_NE(msg.find("input 0 is required before opset 18"), std::string::npos) << msg;
}

TEST(OptionalKernels, GetElement) {
  Value x = V<float>({2}, {1, 2});
  Node get = Named("OptionalGetElement", 15, "get");
  Value y = Eval(get, {Value::Optional(x)});
  EXPECT_EQ(ToVector<float>(y.tensor()), std::vector<float>({1, 2}));
  EXPECT_NE(y.tensor().raw(), x.tensor().raw());  // a tensor output is the node's own
  Value s = Seq({x});
  Value ys = Eval(get, {Value::Optional(s)});
  ASSERT_TRUE(ys.IsSequence());
  EXPECT_EQ(ys.items()[0].tensor_ptr(), x.tensor_ptr());

  std::string msg = Fails(get, {Value::Optional(Value())});
  EXPECT_NE(msg.find("node 'get' (OptionalGetElement): input 0 ('in0') is an empty optional"), std::string::npos)
      << msg;
  msg = Fails(get, {x});
  EXPECT_NE(msg.find("must be an optional before opset 18, got tensor(float)"), std::string::npos) << msg;

  Node get18 = MakeNode("OptionalGetElement", 18);
  EXPECT_EQ(ToVector<float>(Eval(get18, {x}).tensor()), std::vector<float>({1, 2}));
  EXPECT_TRUE(Eval(get18, {s}).IsSequence());
}

// ---- Contexts that hold tensors only (constant folding) --------------------

TEST(SequenceKernels, TensorOnlyContextRefusesNonTensorOutputs) {
  Tensor x = MakeTensor<float>({1}, {1});
  std::vector<std::unique_ptr<Tensor>> out;
  Status s = testing::RunCpuKernel(MakeNode("SequenceConstruct", 11), {&x}, 1, &out);
  EXPECT_EQ(s.code(), ErrorCode::kNotImplemented) << s.message();
  s = testing::RunCpuKernel(MakeNode("Optional", 15), {&x}, 1, &out);
  EXPECT_EQ(s.code(), ErrorCode::kNotImplemented) << s.message();
  s = testing::RunCpuKernel(MakeNode("SplitToSequence", 11), {&x}, 1, &out);
  EXPECT_EQ(s.code(), ErrorCode::kNotImplemented) << s.message();
  // What has a tensor result still runs there, with the opset-18 reading of a plain tensor.
  s = testing::RunCpuKernel(MakeNode("OptionalHasElement", 18), {&x}, 1, &out);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(out[0]->data<bool>()[0]);
  s = testing::RunCpuKernel(MakeNode("OptionalHasElement", 18), {nullptr}, 1, &out);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_FALSE(out[0]->data<bool>()[0]);
  s = testing::RunCpuKernel(MakeNode("OptionalGetElement", 18), {&x}, 1, &out);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(ToVector<float>(*out[0]), std::vector<float>({1}));
}

// ---- ZipMap ----------------------------------------------------------------

TEST(MlKernels, ZipMapInt64Labels) {
  Node n = MakeNode("ZipMap", 1);
  n.domain = "ai.onnx.ml";
  SetInts(n, "classlabels_int64s", {10, 20, 30});
  Value x = V<float>({2, 3}, {0.1f, 0.2f, 0.7f, 0.5f, 0.25f, 0.25f});
  Value z = Eval(n, {x});
  ASSERT_TRUE(z.IsSequence());
  ASSERT_EQ(z.items().size(), 2u);
  for (size_t r = 0; r < 2; ++r) {
    const Value& m = z.items()[r];
    ASSERT_EQ(m.kind(), Value::Kind::kMap);
    EXPECT_EQ(ToVector<int64_t>(m.items()[0].tensor()), std::vector<int64_t>({10, 20, 30}));
    EXPECT_EQ(m.items()[1].tensor().dims(), Dims{3});
  }
  EXPECT_EQ(ToVector<float>(z.items()[0].items()[1].tensor()), std::vector<float>({0.1f, 0.2f, 0.7f}));
  EXPECT_EQ(ToVector<float>(z.items()[1].items()[1].tensor()), std::vector<float>({0.5f, 0.25f, 0.25f}));
  // One keys tensor serves every row; the values do not alias the input.
  EXPECT_EQ(z.items()[0].items()[0].tensor_ptr(), z.items()[1].items()[0].tensor_ptr());
  EXPECT_NE(z.items()[0].items()[1].tensor().raw(), x.tensor().raw());
}

TEST(MlKernels, ZipMapStringLabelsAndErrors) {
  Node n = Named("ZipMap", 1, "zm");
  n.domain = "ai.onnx.ml";
  Attribute labels;
  labels.type = Attribute::Type::kStrings;
  labels.strings = {"cat", "dog"};
  n.attrs["classlabels_strings"] = labels;
  Value z = Eval(n, {V<float>({2}, {0.4f, 0.6f})});  // [C] is one row
  ASSERT_EQ(z.items().size(), 1u);
  EXPECT_EQ(ToVector<std::string>(z.items()[0].items()[0].tensor()), std::vector<std::string>({"cat", "dog"}));
  EXPECT_EQ(ToVector<float>(z.items()[0].items()[1].tensor()), std::vector<float>({0.4f, 0.6f}));
  EXPECT_TRUE(Eval(n, {V<float>({0, 2}, {})}).items().empty());

  std::string msg = Fails(n, {V<float>({1, 3}, {1, 2, 3})});
  EXPECT_NE(msg.find("node 'zm' (ai.onnx.ml.ZipMap): input 0 has 3 columns (shape [1,3]) but there are 2 class "
                     "labels"),
            std::string::npos)
      << msg;
  msg = Fails(n, {V<double>({1, 2}, {1, 2})});
  EXPECT_NE(msg.find("input 0 must be float, got double"), std::string::npos) << msg;
  msg = Fails(n, {V<float>({1, 1, 2}, {1, 2})});
  EXPECT_NE(msg.find("must have shape [N, C] or [C], got [1,1,2]"), std::string::npos) << msg;
  SetInts(n, "classlabels_int64s", {1, 2});
  msg = Fails(n, {V<float>({2}, {1, 2})}, ErrorCode::kInvalidGraph);
  EXPECT_NE(msg.find("exactly one of the attributes classlabels_int64s and classlabels_strings"), std::string::npos)
      << msg;
}

// ---- Kernel lookup ---------------------------------------------------------

TEST(SequenceKernels, TypedKernelsRejectSequenceInputsAtLookup) {
  auto provider = CreateCpuProvider();
  Node add = MakeNode("Add", 14);
  add.inputs = {"a", "b"};
  add.outputs = {"c"};
  TypeInfo seq;
  seq.kind = TypeInfo::Kind::kSequence;
  seq.inner = std::make_shared<TypeInfo>(TypeInfo::Tensor(ElemType::kFloat));
  std::string why;
  EXPECT_EQ(provider->Kernels().Find(add, {seq, TypeInfo::Tensor(ElemType::kFloat)}, &why), nullptr);
  EXPECT_NE(why.find("no kernel accepts seq(tensor(float)) for input 0"), std::string::npos) << why;
  // The sequence kernels themselves take any element type.
  Node at = MakeNode("SequenceAt", 11);
  EXPECT_NE(provider->Kernels().Find(at, {seq, TypeInfo::Tensor(ElemType::kInt64)}, &why), nullptr) << why;
}

// ---- Shape rules -------------------------------------------------------------

class InferGraph {
 public:
  explicit InferGraph(int opset = 18) : opset_(opset) {}
  void Input(const std::string& name, TypeInfo t) {
    g.inputs.push_back({name, t, ""});
    g.value_types[name] = t;
  }
  void Tensor(const std::string& name, ElemType e, std::vector<Dim> dims) { Input(name, TypeInfo::Tensor(e, dims)); }
  void Ints(const std::string& name, const std::vector<int64_t>& v, bool scalar) {
    Dims d;
    if (!scalar) d.push_back(static_cast<int64_t>(v.size()));
    auto t = std::make_shared<onyx::Tensor>(ElemType::kInt64, d);
    for (size_t i = 0; i < v.size(); ++i) t->data<int64_t>()[i] = v[i];
    g.initializers[name] = t;
  }
  Node& N(const std::string& op, std::vector<std::string> in, std::vector<std::string> out) {
    Node n;
    n.name = op + "_" + std::to_string(g.nodes.size());
    n.op_type = op;
    n.since_version = opset_;
    n.inputs = std::move(in);
    n.outputs = std::move(out);
    g.nodes.push_back(std::move(n));
    return g.nodes.back();
  }
  Status Run() {
    ONYX_RETURN_IF_ERROR(g.Finalize());
    return InferTypesAndShapes(g);
  }
  // "seq(tensor(float))[2,?]", "tensor(int64)[]": the type, then the tensor's
  // or the sequence element's shape.
  std::string T(const std::string& name) const {
    auto it = g.value_types.find(name);
    if (it == g.value_types.end()) return "none";
    const TypeInfo& t = it->second;
    const TypeInfo* shaped = t.kind == TypeInfo::Kind::kTensor ? &t : t.inner.get();
    return t.ToString() + (shaped && shaped->kind == TypeInfo::Kind::kTensor ? ShapeString(*shaped) : "");
  }
  Graph g;

 private:
  int opset_;
};

TEST(SequenceShapes, ConstructInsertAtLengthConcat) {
  InferGraph t;
  t.Tensor("a", ElemType::kFloat, {Dim::Of(2), Dim::Of(3)});
  t.Tensor("b", ElemType::kFloat, {Dim::Of(2), Dim::Of(4)});
  t.Tensor("c", ElemType::kFloat, {Dim::Of(2), Dim::Of(3)});
  t.Ints("p", {0}, true);
  t.N("SequenceConstruct", {"a", "c"}, {"s1"});
  t.N("SequenceInsert", {"s1", "b", "p"}, {"s2"});
  t.N("SequenceAt", {"s1", "p"}, {"at1"});
  t.N("SequenceAt", {"s2", "p"}, {"at2"});
  t.N("SequenceErase", {"s2"}, {"er"});
  t.N("SequenceLength", {"s2"}, {"len"});
  SetInt(t.N("ConcatFromSequence", {"s2"}, {"cat1"}), "axis", 1);
  Node& stack = t.N("ConcatFromSequence", {"s1"}, {"stack"});
  SetInt(stack, "axis", -1);
  SetInt(stack, "new_axis", 1);
  Node& empty = t.N("SequenceEmpty", {}, {"e"});
  SetInt(empty, "dtype", static_cast<int64_t>(ElemType::kInt64));
  Status s = t.Run();
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(t.T("s1"), "seq(tensor(float))[2,3]");
  EXPECT_EQ(t.T("s2"), "seq(tensor(float))[2,?]");
  EXPECT_EQ(t.T("at1"), "tensor(float)[2,3]");
  EXPECT_EQ(t.T("at2"), "tensor(float)[2,?]");
  EXPECT_EQ(t.T("er"), "seq(tensor(float))[2,?]");
  EXPECT_EQ(t.T("len"), "tensor(int64)[]");
  EXPECT_EQ(t.T("cat1"), "tensor(float)[2,?]");
  EXPECT_EQ(t.T("stack"), "tensor(float)[2,3,?]");
  EXPECT_EQ(t.T("e"), "seq(tensor(int64))?");
}

TEST(SequenceShapes, SplitToSequence) {
  InferGraph t;
  t.Tensor("x", ElemType::kFloat, {Dim::Symbol("N"), Dim::Of(6)});
  t.Ints("two", {2}, true);
  t.Ints("four", {4}, true);
  t.Ints("even", {3, 3}, false);
  t.Ints("uneven", {2, 4}, false);
  SetInt(t.N("SplitToSequence", {"x"}, {"rows"}), "keepdims", 1);
  SetInt(t.N("SplitToSequence", {"x"}, {"rows0"}), "keepdims", 0);
  SetInt(t.N("SplitToSequence", {"x", "two"}, {"by2"}), "axis", 1);
  SetInt(t.N("SplitToSequence", {"x", "four"}, {"by4"}), "axis", 1);
  SetInt(t.N("SplitToSequence", {"x", "even"}, {"even_s"}), "axis", -1);
  SetInt(t.N("SplitToSequence", {"x", "uneven"}, {"uneven_s"}), "axis", 1);
  t.N("SplitToSequence", {"x", "two"}, {"sym"});
  Status s = t.Run();
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(t.T("rows"), "seq(tensor(float))[1,6]");
  EXPECT_EQ(t.T("rows0"), "seq(tensor(float))[6]");
  EXPECT_EQ(t.T("by2"), "seq(tensor(float))[N,2]");
  EXPECT_EQ(t.T("by4"), "seq(tensor(float))[N,?]");  // 6 = 4 + 2
  EXPECT_EQ(t.T("even_s"), "seq(tensor(float))[N,3]");
  EXPECT_EQ(t.T("uneven_s"), "seq(tensor(float))[N,?]");
  EXPECT_EQ(t.T("sym"), "seq(tensor(float))[?,6]");  // N may not divide by 2
}

TEST(SequenceShapes, OptionalsAndZipMap) {
  InferGraph t;
  t.Tensor("x", ElemType::kFloat, {Dim::Of(2), Dim::Of(3)});
  t.N("Optional", {"x"}, {"o"});
  t.N("OptionalHasElement", {"o"}, {"has"});
  t.N("OptionalGetElement", {"o"}, {"got"});
  t.N("OptionalGetElement", {"x"}, {"plain"});
  Node& zm = t.N("ZipMap", {"x"}, {"z"});
  zm.domain = "ai.onnx.ml";
  zm.since_version = 1;
  SetInts(zm, "classlabels_int64s", {0, 1, 2});
  Node& none = t.N("Optional", {}, {"none"});
  Attribute type_attr;
  type_attr.type = Attribute::Type::kTypeProto;
  type_attr.tp = std::make_shared<TypeInfo>(TypeInfo::Tensor(ElemType::kInt64, {Dim::Of(4)}));
  none.attrs["type"] = type_attr;
  Status s = t.Run();
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(t.T("none"), "optional(tensor(int64))[4]");
  EXPECT_EQ(t.T("o"), "optional(tensor(float))[2,3]");
  EXPECT_EQ(t.T("has"), "tensor(bool)[]");
  EXPECT_EQ(t.T("got"), "tensor(float)[2,3]");
  EXPECT_EQ(t.T("plain"), "tensor(float)[2,3]");
  EXPECT_EQ(t.T("z"), "seq(map(int64,tensor(float)))");
}

TEST(SequenceShapes, ProvableErrorsAreInvalidGraph) {
  {
    InferGraph t;
    t.Tensor("a", ElemType::kFloat, {Dim::Of(1)});
    t.Tensor("b", ElemType::kInt64, {Dim::Of(1)});
    t.N("SequenceConstruct", {"a", "b"}, {"s"});
    Status s = t.Run();
    EXPECT_EQ(s.code(), ErrorCode::kInvalidGraph);
    EXPECT_NE(s.message().find("input 1 is tensor(int64) but input 0 is tensor(float)"), std::string::npos)
        << s.message();
  }
  {
    InferGraph t;
    t.Tensor("a", ElemType::kFloat, {Dim::Of(1)});
    t.Tensor("b", ElemType::kInt64, {Dim::Of(1)});
    t.N("SequenceConstruct", {"a"}, {"s"});
    t.N("SequenceInsert", {"s", "b"}, {"s2"});
    Status s = t.Run();
    EXPECT_EQ(s.code(), ErrorCode::kInvalidGraph);
    EXPECT_NE(s.message().find("cannot insert tensor(int64) into a sequence of tensor(float)"), std::string::npos)
        << s.message();
  }
  {
    InferGraph t;
    t.Tensor("a", ElemType::kFloat, {Dim::Of(1), Dim::Of(2)});
    t.N("SequenceConstruct", {"a"}, {"s"});
    SetInt(t.N("ConcatFromSequence", {"s"}, {"y"}), "axis", 2);
    Status s = t.Run();
    EXPECT_EQ(s.code(), ErrorCode::kInvalidGraph);
    EXPECT_NE(s.message().find("attribute axis 2 is out of range for sequence elements of rank 2"), std::string::npos)
        << s.message();
  }
  {
    InferGraph t;
    t.Tensor("a", ElemType::kFloat, {Dim::Of(1)});
    Attribute type_attr;
    type_attr.type = Attribute::Type::kTypeProto;
    type_attr.tp = std::make_shared<TypeInfo>(TypeInfo::Tensor(ElemType::kInt64));
    t.N("Optional", {"a"}, {"o"}).attrs["type"] = type_attr;
    Status s = t.Run();
    EXPECT_EQ(s.code(), ErrorCode::kInvalidGraph);
    EXPECT_NE(s.message().find("input 0 is tensor(float) but attribute 'type' says tensor(int64)"), std::string::npos)
        << s.message();
  }
  {
    InferGraph t(15);
    t.Tensor("a", ElemType::kFloat, {Dim::Of(1)});
    t.N("OptionalGetElement", {"a"}, {"y"});
    Status s = t.Run();
    EXPECT_EQ(s.code(), ErrorCode::kInvalidGraph);
    EXPECT_NE(s.message().find("input 0 must be an optional before opset 18, got tensor(float)"), std::string::npos)
        << s.message();
  }
}

// ---- Whole sessions ----------------------------------------------------------

void SetTensorType(onnx::TypeProto* tp, int elem, const std::vector<int64_t>& dims) {
  auto* tt = tp->mutable_tensor_type();
  tt->set_elem_type(elem);
  auto* shape = tt->mutable_shape();
  for (int64_t d : dims) {
    if (d < 0) shape->add_dim()->set_dim_param("N");
    else shape->add_dim()->set_dim_value(d);
  }
}

onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op, std::vector<std::string> in,
                         std::vector<std::string> out, const std::string& name) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (auto& s : in) n->add_input(s);
  for (auto& s : out) n->add_output(s);
  return n;
}

void AddIntAttr(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void AddInt64Initializer(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& v, bool scalar) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  if (!scalar) t->add_dims(static_cast<int64_t>(v.size()));
  for (int64_t x : v) t->add_int64_data(x);
}

void AddFloatInitializer(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& dims,
                         const std::vector<float>& v) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  for (float x : v) t->add_float_data(x);
}

Status Load(const onnx::ModelProto& m, std::unique_ptr<Session>* s, int opt_level = 99) {
  std::string bytes = m.SerializeAsString();
  SessionOptions o;
  o.graph_optimization_level = opt_level;
  return Session::CreateFromBytes(o, bytes.data(), bytes.size(), s);
}

// X [N,3] -> SplitToSequence rows -> insert C at the front -> erase the last
// -> outputs: the sequence, its length, the rows stacked back, and element 1.
onnx::ModelProto SequenceModel() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(18);
  auto* g = m.mutable_graph();
  g->set_name("seq");
  auto* x = g->add_input();
  x->set_name("X");
  SetTensorType(x->mutable_type(), onnx::TensorProto::FLOAT, {-1, 3});
  AddFloatInitializer(g, "C", {1, 3}, {7, 8, 9});
  AddInt64Initializer(g, "zero", {0}, true);
  AddInt64Initializer(g, "one", {1}, true);
  AddNode(g, "SplitToSequence", {"X"}, {"rows"}, "split");
  AddNode(g, "SequenceInsert", {"rows", "C", "zero"}, {"with_c"}, "insert");
  AddNode(g, "SequenceErase", {"with_c"}, {"S"}, "erase");
  AddNode(g, "SequenceLength", {"S"}, {"L"}, "length");
  AddIntAttr(AddNode(g, "ConcatFromSequence", {"S"}, {"Y"}, "concat"), "axis", 0);
  AddNode(g, "SequenceAt", {"S", "one"}, {"E"}, "at");
  for (const char* name : {"S", "L", "Y", "E"}) g->add_output()->set_name(name);
  auto* s_type = g->mutable_output(0)->mutable_type()->mutable_sequence_type()->mutable_elem_type();
  SetTensorType(s_type, onnx::TensorProto::FLOAT, {1, 3});
  SetTensorType(g->mutable_output(1)->mutable_type(), onnx::TensorProto::INT64, {});
  SetTensorType(g->mutable_output(2)->mutable_type(), onnx::TensorProto::FLOAT, {-1, 3});
  SetTensorType(g->mutable_output(3)->mutable_type(), onnx::TensorProto::FLOAT, {1, 3});
  return m;
}

TEST(SequenceSession, SplitInsertEraseConcatAt) {
  for (int level : {0, 99}) {
    std::unique_ptr<Session> s;
    Status st = Load(SequenceModel(), &s, level);
    ASSERT_TRUE(st.ok()) << st.message();
    Value x = V<float>({3, 3}, {1, 2, 3, 4, 5, 6, 10, 11, 12});
    std::vector<Value> out;
    st = s->Run(nullptr, {"X"}, {&x}, {}, &out);
    ASSERT_TRUE(st.ok()) << st.message();
    ASSERT_EQ(out.size(), 4u);
    EXPECT_EQ(Items(out[0]), "[1,3]:7,8,9 | [1,3]:1,2,3 | [1,3]:4,5,6");
    EXPECT_EQ(out[1].tensor().data<int64_t>()[0], 3);
    EXPECT_EQ(out[2].tensor().dims(), (Dims{3, 3}));
    EXPECT_EQ(ToVector<float>(out[2].tensor()), std::vector<float>({7, 8, 9, 1, 2, 3, 4, 5, 6}));
    EXPECT_EQ(ToVector<float>(out[3].tensor()), std::vector<float>({1, 2, 3}));
    // The load-time types of the outputs.
    EXPECT_EQ(s->outputs()[0].type.ToString(), "seq(tensor(float))");
  }
}

TEST(SequenceSession, RunErrorNamesTheNode) {
  std::unique_ptr<Session> s;
  ASSERT_TRUE(Load(SequenceModel(), &s).ok());
  // One row: after the insert and erase only C remains, so position 1 is out of range.
  Value x = V<float>({1, 3}, {1, 2, 3});
  std::vector<Value> out;
  Status st = s->Run(nullptr, {"X"}, {&x}, {}, &out);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument) << st.message();
  EXPECT_NE(st.message().find("node 'at' (SequenceAt): position 1 is out of range [-1, 0] for a sequence of length 1"),
            std::string::npos)
      << st.message();
  // The session stays usable.
  Value ok = V<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(s->Run(nullptr, {"X"}, {&ok}, {}, &out).ok());
}

// A sequence fed in, constants folded around sequence ops, an optional out.
TEST(SequenceSession, SequenceFeedAndConstantSequences) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(18);
  auto* g = m.mutable_graph();
  g->set_name("seq_in");
  auto* in = g->add_input();
  in->set_name("S");
  SetTensorType(in->mutable_type()->mutable_sequence_type()->mutable_elem_type(), onnx::TensorProto::FLOAT, {2});
  AddFloatInitializer(g, "A", {2}, {1, 2});
  AddFloatInitializer(g, "B", {2}, {3, 4});
  AddInt64Initializer(g, "last", {-1}, true);
  // All inputs constant: folding must leave these to run time.
  AddNode(g, "SequenceConstruct", {"A", "B"}, {"AB"}, "construct");
  AddNode(g, "SequenceAt", {"AB", "last"}, {"b"}, "at_b");
  AddNode(g, "SequenceInsert", {"S", "b"}, {"S2"}, "insert");
  AddIntAttr(AddNode(g, "ConcatFromSequence", {"S2"}, {"Y"}, "stack"), "axis", 0);
  AddNode(g, "Optional", {"Y"}, {"O"}, "wrap");
  AddNode(g, "OptionalHasElement", {"O"}, {"H"}, "has");
  for (const char* name : {"Y", "O", "H"}) g->add_output()->set_name(name);
  std::unique_ptr<Session> s;
  Status st = Load(m, &s);
  ASSERT_TRUE(st.ok()) << st.message();
  Value feed = Seq({V<float>({2}, {5, 6})});
  std::vector<Value> out;
  st = s->Run(nullptr, {"S"}, {&feed}, {}, &out);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(ToVector<float>(out[0].tensor()), std::vector<float>({5, 6, 3, 4}));
  ASSERT_EQ(out[1].kind(), Value::Kind::kOptional);
  ASSERT_EQ(out[1].items().size(), 1u);
  EXPECT_EQ(ToVector<float>(out[1].items()[0].tensor()), std::vector<float>({5, 6, 3, 4}));
  EXPECT_TRUE(out[2].tensor().data<bool>()[0]);
  EXPECT_EQ(s->outputs()[1].type.ToString(), "optional(tensor(float))");

  // A tensor where the sequence belongs is refused before running.
  Value bad = V<float>({2}, {5, 6});
  st = s->Run(nullptr, {"S"}, {&bad}, {}, &out);
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument) << st.message();
}

// Intermediate tensors held by a sequence outlive their slots; repeated runs
// (which reuse planned memory) must not write over them.
TEST(SequenceSession, SequenceKeepsIntermediatesAcrossRepeatedRuns) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(18);
  auto* g = m.mutable_graph();
  g->set_name("held");
  auto* x = g->add_input();
  x->set_name("X");
  SetTensorType(x->mutable_type(), onnx::TensorProto::FLOAT, {2, 2});
  AddNode(g, "Relu", {"X"}, {"R"}, "relu");
  AddNode(g, "Neg", {"X"}, {"N"}, "neg");
  AddNode(g, "SequenceConstruct", {"R", "N"}, {"S"}, "construct");
  // Allocations after R and N are last read: they would land on freed memory.
  AddNode(g, "Abs", {"X"}, {"A"}, "abs");
  AddNode(g, "Add", {"A", "A"}, {"B"}, "add");
  AddNode(g, "Mul", {"B", "A"}, {"C"}, "mul");
  AddNode(g, "SequenceInsert", {"S", "C"}, {"S2"}, "insert");
  AddIntAttr(AddNode(g, "ConcatFromSequence", {"S2"}, {"Y"}, "concat"), "axis", 0);
  g->add_output()->set_name("Y");
  std::unique_ptr<Session> s;
  Status st = Load(m, &s);
  ASSERT_TRUE(st.ok()) << st.message();
  for (int run = 0; run < 4; ++run) {
    Value feed = V<float>({2, 2}, {1, -2, 3, -4});
    std::vector<Value> out;
    st = s->Run(nullptr, {"X"}, {&feed}, {}, &out);
    ASSERT_TRUE(st.ok()) << st.message();
    EXPECT_EQ(ToVector<float>(out[0].tensor()),
              std::vector<float>({1, 0, 3, 0, -1, 2, -3, 4, 2, 8, 18, 32}))
        << "run " << run;
  }
}

TEST(SequenceSession, ZipMapAfterSoftmax) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(17);
  op = m.add_opset_import();
  op->set_domain("ai.onnx.ml");
  op->set_version(1);
  auto* g = m.mutable_graph();
  g->set_name("zipmap");
  auto* x = g->add_input();
  x->set_name("X");
  SetTensorType(x->mutable_type(), onnx::TensorProto::FLOAT, {-1, 2});
  AddNode(g, "Softmax", {"X"}, {"P"}, "softmax");
  auto* zm = AddNode(g, "ZipMap", {"P"}, {"Z"}, "zipmap");
  zm->set_domain("ai.onnx.ml");
  auto* labels = zm->add_attribute();
  labels->set_name("classlabels_strings");
  labels->set_type(onnx::AttributeProto::STRINGS);
  labels->add_strings("no");
  labels->add_strings("yes");
  g->add_output()->set_name("Z");
  std::unique_ptr<Session> s;
  Status st = Load(m, &s);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(s->outputs()[0].type.ToString(), "seq(map(string,tensor(float)))");
  Value feed = V<float>({2, 2}, {0, 0, 1, 1});
  std::vector<Value> out;
  st = s->Run(nullptr, {"X"}, {&feed}, {}, &out);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(out[0].items().size(), 2u);
  for (const Value& row : out[0].items()) {
    EXPECT_EQ(ToVector<std::string>(row.items()[0].tensor()), std::vector<std::string>({"no", "yes"}));
    EXPECT_EQ(ToVector<float>(row.items()[1].tensor()), std::vector<float>({0.5f, 0.5f}));
  }
}

}  // namespace
}  // namespace onyx
