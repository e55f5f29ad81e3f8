#include "run/onednn/onednn_backend.h"

#include "run/int8_kernels.h"
#include "run/kind_table.h"
#include "run/node_checks.h"

#include <omp.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "ir/op_params.h"

namespace latte {

struct OnednnBackend::Impl {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
};

namespace {

using dnnl::memory;
using Dims = memory::dims;
using Tag = memory::format_tag;
using Type = memory::data_type;
constexpr auto kF32 = memory::data_type::f32;
constexpr float kBig = std::numeric_limits<float>::max();

std::string Name(const Node& node) { return std::string(OpName(node.kind)); }
std::int64_t Elements(const Tensor& t) { return t.num_elements().value_or(0); }
Status NoBuffer(TensorId id) { return InvalidInput("tensor " + std::to_string(id) + " has no buffer"); }
Status Invalid(const Node& node, const Status& status) { return Unsupported(Name(node) + ": " + status.message()); }

// "2.6.3": the oneDNN this process runs.
std::string LibraryVersion() {
  const dnnl_version_t* v = dnnl_version();
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}

// Row-major strides of `dims`.
Dims RowMajorStrides(const Dims& dims) {
  Dims strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

// A plain (numpy-like) layout of any rank.
memory::desc Plain(const Dims& dims, memory::data_type type = kF32) { return memory::desc(dims, type, RowMajorStrides(dims)); }

// The oneDNN element type of a tensor: float32, or bfloat16 in a graph run at bf16 (whose
// constants stay float32), or s8 in one lowered to int8; bool as u8.
Type TypeOf(const Tensor& t) {
  switch (t.dtype) {
    case DataType::kBFloat16: return Type::bf16;
    case DataType::kBool: return Type::u8;
    case DataType::kInt8: return Type::s8;  // an activation of a plan lowered to int8
    default: return kF32;
  }
}
Type TypeOf(const Graph& graph, TensorId id) { return TypeOf(graph.tensor(id)); }
// The type a node computes in: its first output's (bf16 at bf16, else f32).
Type RunType(const Graph& graph, const Node& node) { return TypeOf(graph, node.outputs[0]); }

// A tensor bound as a primitive's argument on every run, `offset` bytes into its buffer (a
// strided slice's first element).
struct Binding {
  int arg;
  TensorId id;
  std::size_t offset = 0;
};

// A gather whose indices arrive at run time: the step's primitive copies the slab of one index
// (a table row, or the rows of one index across the outer dims) and runs once per index, its
// memories pointed at the chosen slab of the table and at the index's place in the output. The
// indices are read on the host, which is the addressing a gather does; each is checked first.
struct IndexedSlabs {
  TensorId indices = kNoTensor;
  bool int64 = true;
  std::int64_t count = 0;      // indices
  std::int64_t axis_size = 0;  // an index must lie in [-axis_size, axis_size)
  std::size_t src_step = 0;    // bytes from one slab of the table to the next
  std::size_t dst_step = 0;    // bytes from one index's slab of the output to the next
  std::string name;            // the indices tensor's, for errors
};

// One primitive with its arguments: library-owned memories (packed weights) stay bound; the
// ones tied to tensors are rebound to the buffers on every run.
struct Step {
  dnnl::primitive primitive;
  std::unordered_map<int, memory> args;
  std::vector<Binding> inputs, outputs;
  bool fill = false;  // pad: fill the output with fill_value before the primitive writes its part
  float fill_value = 0;
  Type fill_type = kF32;
  std::optional<IndexedSlabs> indexed = std::nullopt;  // gather with run-time indices: input 0 is the table
};

// The indices of `slabs`, each made non-negative; an error naming the tensor when one lies
// outside [-axis_size, axis_size) (nothing is read or written then).
Expected<std::vector<std::int64_t>> CheckedIndices(const IndexedSlabs& slabs, const std::uint8_t* data) {
  std::vector<std::int64_t> out(static_cast<size_t>(slabs.count));
  for (size_t j = 0; j < out.size(); ++j) {
    std::int64_t v;
    if (slabs.int64) {
      std::memcpy(&v, data + j * sizeof(std::int64_t), sizeof v);
    } else {
      std::int32_t v32;
      std::memcpy(&v32, data + j * sizeof(std::int32_t), sizeof v32);
      v = v32;
    }
    if (v < -slabs.axis_size || v >= slabs.axis_size)
      return InvalidInput("gather indices '" + slabs.name + "': index " + std::to_string(v) + " at position " +
                          std::to_string(j) + " is out of range [" + std::to_string(-slabs.axis_size) + ", " +
                          std::to_string(slabs.axis_size) + ")");
    out[j] = v < 0 ? v + slabs.axis_size : v;
  }
  return out;
}

class DnnlNode final : public PreparedNode {
 public:
  DnnlNode(dnnl::stream stream, int threads) : stream_(std::move(stream)), threads_(threads) {}
  Status Run(TensorBuffers& buffers) override {
    // The thread count is per calling thread in OpenMP: set it for every run, so backends with
    // different counts in one process each get their own.
    omp_set_num_threads(threads_);
    try {
      for (Step& step : steps_) {
        for (const Binding& in : step.inputs) {
          const std::uint8_t* data = buffers.data(in.id);
          if (data == nullptr) return NoBuffer(in.id);
          step.args.at(in.arg).set_data_handle(const_cast<std::uint8_t*>(data) + in.offset);
        }
        for (const Binding& out : step.outputs) {
          std::uint8_t* data = buffers.mutable_data(out.id);
          if (data == nullptr) return NoBuffer(out.id);
          if (step.fill && step.fill_type == Type::s8) {  // fill_value already quantized
            std::memset(data, static_cast<std::int8_t>(step.fill_value), buffers.bytes(out.id));
          } else if (step.fill && step.fill_type == Type::bf16) {
            auto* values = reinterpret_cast<std::uint16_t*>(data);
            std::fill(values, values + buffers.bytes(out.id) / sizeof(std::uint16_t), FloatToBf16(step.fill_value));
          } else if (step.fill) {
            float* values = reinterpret_cast<float*>(data);
            std::fill(values, values + buffers.bytes(out.id) / sizeof(float), step.fill_value);
          }
          step.args.at(out.arg).set_data_handle(data + out.offset);
        }
        if (step.indexed) {
          LATTE_RETURN_IF_ERROR(RunIndexed(step, buffers));
        } else {
          step.primitive.execute(stream_, step.args);
        }
      }
      stream_.wait();
    } catch (const dnnl::error& e) {
      return Internal(std::string("oneDNN execute failed: ") + e.what());
    }
    return Status::Ok();
  }
  std::vector<Step> steps_;

  /// The oneDNN implementation of each step's primitive ("brgconv_1x1:avx512_core_vnni", ...).
  std::vector<std::string> Implementations() const {
    std::vector<std::string> names;
    for (const Step& step : steps_) {
      const char* name = nullptr;
      dnnl_primitive_desc_query(step.primitive.get_primitive_desc(), dnnl_query_impl_info_str, 0, &name);
      names.emplace_back(name != nullptr ? name : "");
    }
    return names;
  }

 private:
  // The step's primitive once per index (its memories bound to the table and the output above).
  Status RunIndexed(Step& step, TensorBuffers& buffers) {
    const IndexedSlabs& slabs = *step.indexed;
    const std::uint8_t* index_data = buffers.data(slabs.indices);
    if (index_data == nullptr) return NoBuffer(slabs.indices);
    LATTE_ASSIGN_OR_RETURN(const std::vector<std::int64_t> indices, CheckedIndices(slabs, index_data));
    memory& src = step.args.at(DNNL_ARG_FROM);
    memory& dst = step.args.at(DNNL_ARG_TO);
    auto* table = static_cast<std::uint8_t*>(src.get_data_handle());
    auto* out = static_cast<std::uint8_t*>(dst.get_data_handle());
    for (size_t j = 0; j < indices.size(); ++j) {
      src.set_data_handle(table + static_cast<size_t>(indices[j]) * slabs.src_step);
      dst.set_data_handle(out + j * slabs.dst_step);
      step.primitive.execute(stream_, step.args);
    }
    return Status::Ok();
  }

  dnnl::stream stream_;
  int threads_;
};

// Where Analyze builds; node == nullptr when it only checks (Supports still creates the
// primitive descriptors, so Supports and Prepare agree on what oneDNN accepts).
struct Ctx {
  const dnnl::engine& engine;
  dnnl::stream& stream;
  DnnlNode* node = nullptr;
};

// A fused activation as an eltwise (algorithm, alpha, beta); present = false for none.
struct Eltwise {
  bool present = false;
  dnnl::algorithm alg = dnnl::algorithm::eltwise_relu;
  float alpha = 0, beta = 0;
};

void* ConstData(const Graph& graph, TensorId id) { return const_cast<std::uint8_t*>(graph.tensor(id).data->data()); }

Expected<Eltwise> FusedActivation(const Node& node) {
  const std::string act = node.attrs.GetString("activation", "none");
  if (act == "none") return Eltwise{};
  if (act == "relu") return Eltwise{true, dnnl::algorithm::eltwise_relu, 0, 0};
  if (act == "relu6") return Eltwise{true, dnnl::algorithm::eltwise_clip, 0, 6};
  if (act == "relu_n1_to_1") return Eltwise{true, dnnl::algorithm::eltwise_clip, -1, 1};
  if (act == "tanh") return Eltwise{true, dnnl::algorithm::eltwise_tanh, 0, 0};
  return Unsupported("fused activation " + act + " not implemented");
}

dnnl::primitive_attr PostOps(const Eltwise& act) {
  dnnl::primitive_attr attr;
  if (act.present) {
    dnnl::post_ops ops;
    ops.append_eltwise(1.0f, act.alg, act.alpha, act.beta);
    attr.set_post_ops(ops);
  }
  return attr;
}

// --- int8 (--precision int8): a node the executor lowered to int8 (run/int8_plan: per-tensor
// asymmetric scale and zero point in Tensor::quant) runs on oneDNN's s8 primitives, the
// quantization given as oneDNN's attributes: out = round(output scales × (accumulator + bias),
// then the post-ops) + the destination's zero point, the source's zero point subtracted inside.
// Weights are quantized symmetric per output channel (run/int8_kernels, as xnnpack packs them),
// the bias kept float in the accumulator's units.

// The fused activation's bounds on the real line, for an int8 kernel's clamp: relu [0, ∞),
// relu6 [0, 6], relu_n1_to_1 [−1, 1], none (−∞, ∞); tanh has no int8 form here.
Expected<std::pair<float, float>> Int8Bounds(const Node& node, const Eltwise& act) {
  if (!act.present) return std::pair{-kBig, kBig};
  if (act.alg == dnnl::algorithm::eltwise_relu) return std::pair{0.0f, kBig};
  if (act.alg == dnnl::algorithm::eltwise_clip) return std::pair{act.alpha, act.beta};
  return Unsupported("int8 " + Name(node) + " with a fused " + node.attrs.GetString("activation", "") +
                     " not implemented in the onednn backend");
}

// A clamp to real `bounds` as a post-op on values in units of the output's scale plus `shift`
// (the output's zero point when it is already added, 0 when oneDNN adds it after): none for (−∞, ∞).
void AppendInt8Clamp(dnnl::post_ops& ops, std::pair<float, float> bounds, float y_scale, float shift) {
  if (bounds.first == -kBig && bounds.second == kBig) return;
  const float lo = bounds.first == -kBig ? -kBig : bounds.first / y_scale + shift;
  const float hi = bounds.second == kBig ? kBig : bounds.second / y_scale + shift;
  ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip, lo, hi);
}

// An average's rescaling from its input's parameters `qx` to its output's `qy`, as a post-op on the
// averaged int8 values (the mean of q − zx in the input's steps is the mean of q, less zx).
void AppendInt8Rescale(dnnl::post_ops& ops, const Q8& qx, const Q8& qy) {
  const float ratio = qx.scale / qy.scale;
  ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, ratio, static_cast<float>(qy.zero) - static_cast<float>(qx.zero) * ratio);
}

// oneDNN 2.6.3's AMX int8 kernels (a CPU with AMX tiles, Sapphire Rapids) write past their
// output: a 1×1 int8 conv of 96 → 32 channels on a 6×6 map (jit_1x1:avx512_core_amx_int8)
// corrupted the heap within five runs, and a oneDNN int8 calibration died of it. An int8
// primitive takes the next implementation oneDNN has that is not AMX (VNNI on such a CPU).
template <typename PrimitiveDesc>
Status AvoidAmxInt8(PrimitiveDesc& pd, const Node& node) {
  while (std::string(pd.impl_info_str()).find("amx") != std::string::npos)
    if (!pd.next_impl())
      return Unsupported("int8 " + Name(node) + " unsupported on onednn, because oneDNN " + LibraryVersion() +
                         " has only an AMX kernel for it, and its AMX int8 kernels write past their output");
  return Status::Ok();
}

// A conv's or fully-connected's weights quantized per output channel, and what goes with them.
struct Int8Quantization {
  std::vector<std::int8_t> weights;
  std::vector<float> bias;     // bias / (x_scale × w_scale[c]): the accumulator's units
  dnnl::primitive_attr attr;   // output scales x_scale × w_scale[c] / y_scale, zero points, the clamp
};

// `count` weights `w` of `channels` output channels (channel c at i % channels when
// `channel_is_last`, else the c-th block), the node's bias (input 2) when `has_bias`, and the
// attributes that turn the s32 accumulator into the output's int8 (output scales per channel:
// mask 1 << 1, the channel dim of a conv's (n, c, h, w) and a matmul's (m, n)). With `check_only`
// the attributes have the right shape and no weights are quantized.
Expected<Int8Quantization> QuantizeForOnednn(const Graph& graph, const Node& node, const Eltwise& act, const float* w, size_t count,
                                             size_t channels, bool channel_is_last, bool has_bias, bool check_only) {
  LATTE_ASSIGN_OR_RETURN(const auto bounds, Int8Bounds(node, act));
  const Q8 qx = Q8Of(graph.tensor(node.inputs[0])), qy = Q8Of(graph.tensor(node.outputs[0]));
  Int8Quantization q;
  std::vector<float> w_scale(channels, 1.0f);
  if (!check_only) w_scale = QuantizeWeights(w, count, channels, channel_is_last, q.weights);
  std::vector<float> out_scale(channels);
  for (size_t c = 0; c < channels; ++c) out_scale[c] = qx.scale * w_scale[c] / qy.scale;
  if (has_bias && !check_only) {
    const auto* bias = static_cast<const float*>(ConstData(graph, node.inputs[2]));
    q.bias.resize(channels);
    for (size_t c = 0; c < channels; ++c)
      q.bias[c] = static_cast<float>(static_cast<double>(bias[c]) / (static_cast<double>(qx.scale) * w_scale[c]));
  }
  q.attr.set_output_scales(1 << 1, out_scale);
  q.attr.set_zero_points(DNNL_ARG_SRC, 0, {qx.zero});
  q.attr.set_zero_points(DNNL_ARG_DST, 0, {qy.zero});
  dnnl::post_ops ops;
  AppendInt8Clamp(ops, bounds, qy.scale, 0.0f);
  q.attr.set_post_ops(ops);
  return q;
}

// Checks every input (except `skip_input`, reshape's int shape) and the output.
Status CheckTensors(const Graph& graph, const Node& node, int skip_input, DataType activations = DataType::kFloat32) {
  return CheckFloatTensors(graph, node, skip_input, "onednn", 6, activations);
}


// Reorders constant weights (described by `from` over the graph's data) once into a memory of
// layout `to` that the node owns (the primitive's preferred layout; a plain copy for a bias).
memory PackWeights(Ctx& ctx, const memory::desc& from, void* data, const memory::desc& to) {
  memory src(from, ctx.engine, data);
  memory dst(to, ctx.engine);
  dnnl::reorder(src, dst).execute(ctx.stream, src, dst);
  ctx.stream.wait();
  return dst;
}

// A memory to rebind on every run.
memory Unbound(Ctx& ctx, const memory::desc& md) { return memory(md, ctx.engine, DNNL_MEMORY_NONE); }

// Binds node input `id` as argument `arg` of `step`, laid out as `dims` with `strides` in type
// `type`: an activation is rebound to its buffer on every run; a constant of another type (a
// float32 constant read by a bf16 node) is converted once into memory the node owns.
void BindInput(Ctx& ctx, const Graph& graph, Step& step, int arg, TensorId id, const Dims& dims, const Dims& strides,
               Type type) {
  const memory::desc md(dims, type, strides);
  if (graph.tensor(id).is_constant() && TypeOf(graph, id) != type) {
    step.args[arg] = PackWeights(ctx, memory::desc(dims, TypeOf(graph, id), strides), ConstData(graph, id), md);
    return;
  }
  step.args[arg] = Unbound(ctx, md);
  step.inputs.emplace_back(arg, id);
}

// Conv, deconv, inner product and matmul record the same step: activations bound on every run,
// weights `w_data` (laid out as `w_file`) and the bias packed once into the layout the primitive chose.
void AddWeightedStep(Ctx& ctx, const Node& node, dnnl::primitive primitive, const memory::desc& src_md,
                     const memory::desc& dst_md, const memory::desc& w_file, const void* w_data, const memory::desc& w_packed,
                     const memory::desc* bias_md, const void* bias_data) {
  Step step{std::move(primitive), {}, {{DNNL_ARG_SRC, node.inputs[0]}}, {{DNNL_ARG_DST, node.outputs[0]}}};
  step.args[DNNL_ARG_SRC] = Unbound(ctx, src_md);
  step.args[DNNL_ARG_DST] = Unbound(ctx, dst_md);
  step.args[DNNL_ARG_WEIGHTS] = PackWeights(ctx, w_file, const_cast<void*>(w_data), w_packed);
  if (bias_md != nullptr) step.args[DNNL_ARG_BIAS] = PackWeights(ctx, *bias_md, const_cast<void*>(bias_data), *bias_md);
  ctx.node->steps_.push_back(std::move(step));
}

// Activation `act` applied in place on the output (for primitives given no post-op).
void AddPostEltwise(Ctx& ctx, const Graph& graph, const Node& node, const Eltwise& act) {
  if (!act.present) return;
  const memory::desc md = Plain({Elements(graph.tensor(node.outputs[0]))}, RunType(graph, node));
  dnnl::eltwise_forward::primitive_desc pd({dnnl::prop_kind::forward_inference, act.alg, md, act.alpha, act.beta}, ctx.engine);
  memory data = Unbound(ctx, md);
  ctx.node->steps_.push_back(Step{dnnl::eltwise_forward(pd), {{DNNL_ARG_SRC, data}, {DNNL_ARG_DST, data}}, {},
                                  {{DNNL_ARG_SRC, node.outputs[0]}}});
}

// A primitive of one input (node input 0, bound as `src_arg`) and one output (node output 0, as
// `dst_arg`), both rebound on every run, then `act` applied in place.
Status AddOneInputStep(Ctx& ctx, const Graph& graph, const Node& node, dnnl::primitive primitive, const memory::desc& src_md,
                       const memory::desc& dst_md, const Eltwise& act, int src_arg = DNNL_ARG_SRC,
                       int dst_arg = DNNL_ARG_DST) {
  Step step{std::move(primitive), {}, {{src_arg, node.inputs[0]}}, {{dst_arg, node.outputs[0]}}};
  step.args[src_arg] = Unbound(ctx, src_md);
  step.args[dst_arg] = Unbound(ctx, dst_md);
  ctx.node->steps_.push_back(std::move(step));
  AddPostEltwise(ctx, graph, node, act);
  return Status::Ok();
}

// A convolution or deconvolution (Primitive) over NHWC activations, weights packed from the file's
// layout (oneDNN's logical dims `w_dims` with the file's `w_strides`), the activation as a post-op:
// all the two share but the algorithm and the end padding. A node lowered to int8 runs on s8 with
// its weights quantized per output channel (Int8Quantization).
template <class Primitive>
Status AddConvolution(const Graph& graph, const Node& node, const Eltwise& act, Ctx& ctx, const ConvParams& p,
                      const Dims& w_dims, const Dims& w_strides, dnnl::algorithm alg, const Dims& pad_r) {
  // At bf16 the weights are packed as bfloat16 beside bfloat16 activations; the bias stays
  // float32 (oneDNN adds it to the float32 accumulator).
  const Type type = RunType(graph, node);
  const bool int8 = IsInt8Node(graph, node);
  std::optional<Int8Quantization> q;
  if (int8) {
    const Tensor& w = graph.tensor(node.inputs[1]);
    LATTE_ASSIGN_OR_RETURN(q, QuantizeForOnednn(graph, node, act, static_cast<const float*>(ConstData(graph, node.inputs[1])),
                                                static_cast<size_t>(Elements(w)), static_cast<size_t>(p.out_c),
                                                node.kind == OpKind::kDepthwiseConv2D, p.has_bias, ctx.node == nullptr));
  }
  const memory::desc src_md({p.batch, p.in_c, p.in_h, p.in_w}, type, Tag::nhwc);
  const memory::desc dst_md({p.batch, p.out_c, p.out_h, p.out_w}, type, Tag::nhwc);
  const memory::desc w_any(w_dims, int8 ? Type::s8 : type, Tag::any);
  const memory::desc bias_md({p.out_c}, kF32, Tag::a);
  const Dims strides{p.stride_h, p.stride_w}, dilates{p.dilation_h - 1, p.dilation_w - 1};
  const Dims pad_l{p.pads.top, p.pads.left};
  const auto prop = dnnl::prop_kind::forward_inference;
  // oneDNN 2.6 adds a float deconvolution's bias and applies its post-ops in a slow generic loop:
  // a 2×2 stride-2 one on 24 channels of 160×160 took 0.70 ms bare, 40 ms with its bias and 107
  // ms with a relu at bf16 (1.55, 8.5 and 80 ms at fp32). Such a deconvolution runs bare, then
  // a binary add of the bias carrying the activation (or the activation alone), both vectorized.
  const bool apart = alg == dnnl::algorithm::deconvolution_direct && !int8;
  const bool bias_inside = p.has_bias && !apart;
  using Desc = typename Primitive::desc;
  Desc desc = bias_inside ? Desc(prop, alg, src_md, w_any, bias_md, dst_md, strides, dilates, pad_l, pad_r)
                          : Desc(prop, alg, src_md, w_any, dst_md, strides, dilates, pad_l, pad_r);
  typename Primitive::primitive_desc pd(desc, int8 ? q->attr : apart ? dnnl::primitive_attr() : PostOps(act), ctx.engine);
  if (int8) LATTE_RETURN_IF_ERROR(AvoidAmxInt8(pd, node));
  // The bias added as rows of a whole number of 16-float vectors: the output (NHWC, channels
  // innermost) seen as rows of lcm(channels, 16) values, the bias tiled to one row. oneDNN's
  // binary broadcasting a {1, C, 1, 1} bias over an NHWC map of few channels ran at 9 ns per
  // value (0.56 ms on one channel of 256×256, where the deconvolution took 0.32).
  const std::int64_t elements = p.batch * p.out_h * p.out_w * p.out_c;
  std::int64_t row = p.out_c;
  while (row % 16 != 0 && elements % (row * 2) == 0) row *= 2;  // rows of a multiple of the channels still
  const memory::desc rows_md({elements / row, row}, type, Tag::ab), row_md({1, row}, kF32, Tag::ab);
  std::optional<dnnl::binary::primitive_desc> bias_pd;
  if (apart && p.has_bias)
    bias_pd.emplace(dnnl::binary::desc(dnnl::algorithm::binary_add, rows_md, row_md, rows_md), PostOps(act), ctx.engine);
  if (ctx.node == nullptr) return Status::Ok();
  const memory::desc w_file(w_dims, int8 ? Type::s8 : kF32, w_strides);
  const void* w_data = int8 ? static_cast<const void*>(q->weights.data()) : ConstData(graph, node.inputs[1]);
  const void* bias_data = !p.has_bias ? nullptr : int8 ? static_cast<const void*>(q->bias.data()) : ConstData(graph, node.inputs[2]);
  AddWeightedStep(ctx, node, Primitive(pd), src_md, dst_md, w_file, w_data, pd.weights_desc(), bias_inside ? &bias_md : nullptr,
                  bias_data);
  if (!apart) return Status::Ok();
  if (!bias_pd) {
    AddPostEltwise(ctx, graph, node, act);
    return Status::Ok();
  }
  memory data = Unbound(ctx, rows_md);  // the deconvolution's output, added to in place
  std::vector<float> tiled(static_cast<std::size_t>(row));
  const auto* b = static_cast<const float*>(bias_data);
  for (std::int64_t i = 0; i < row; ++i) tiled[static_cast<std::size_t>(i)] = b[i % p.out_c];
  memory bias = PackWeights(ctx, row_md, tiled.data(), row_md);
  ctx.node->steps_.push_back(Step{dnnl::binary(*bias_pd), {{DNNL_ARG_SRC_0, data}, {DNNL_ARG_SRC_1, bias}, {DNNL_ARG_DST, data}},
                                  {}, {{DNNL_ARG_SRC_0, node.outputs[0]}}});
  return Status::Ok();
}

Status Conv(const Graph& graph, const Node& node, const Eltwise& act, Ctx& ctx) {
  const bool depthwise = node.kind == OpKind::kDepthwiseConv2D;
  const std::string want = depthwise ? "1HWO" : "OHWI";
  const std::string layout = node.attrs.GetString("filter_layout", "");
  if (layout != want) return Unsupported(Name(node) + " filter_layout " + layout + ": onednn backend needs " + want);
  LATTE_ASSIGN_OR_RETURN(const ConvParams p, CheckedConvParams(graph, node));
  const std::int64_t g = p.groups, ig = p.in_c / g, og = p.out_c / g, kh = p.kernel_h, kw = p.kernel_w;
  // The graph's weights as oneDNN's logical dims ([g,] O, I, H, W) with the file layout's strides.
  Dims w_dims, w_strides;
  if (depthwise) {  // 1HWO: O = g × multiplier, I = 1 per group
    w_dims = {g, og, 1, kh, kw};
    w_strides = {og, 1, 1, kw * p.out_c, p.out_c};
  } else if (g == 1) {  // OHWI
    w_dims = {p.out_c, p.in_c, kh, kw};
    w_strides = {kh * kw * ig, 1, kw * ig, ig};
  } else {  // grouped OHWI: O = g × og
    w_dims = {g, og, ig, kh, kw};
    w_strides = {og * kh * kw * ig, kh * kw * ig, 1, kw * ig, ig};
  }
  return AddConvolution<dnnl::convolution_forward>(graph, node, act, ctx, p, w_dims, w_strides,
                                                   dnnl::algorithm::convolution_direct, Dims{p.pads.bottom, p.pads.right});
}

Status FullyConnected(const Graph& graph, const Node& node, const Eltwise& act, Ctx& ctx) {
  LATTE_ASSIGN_OR_RETURN(const FullyConnectedParams p, CheckedFullyConnectedParams(graph, node));
  const bool io = node.attrs.GetString("weights_layout", "OI") == "IO";
  const Type type = RunType(graph, node);
  const memory::desc src_md({p.rows, p.in_features}, type, Tag::nc);
  const memory::desc dst_md({p.rows, p.out_features}, type, Tag::nc);
  const memory::desc w_file({p.out_features, p.in_features}, kF32, io ? Tag::io : Tag::oi);
  const memory::desc w_any({p.out_features, p.in_features}, type, Tag::any);
  const memory::desc bias_md({p.out_features}, kF32, Tag::a);
  using Ip = dnnl::inner_product_forward;
  const auto prop = dnnl::prop_kind::forward_inference;
  Ip::desc desc = p.has_bias ? Ip::desc(prop, src_md, w_any, bias_md, dst_md) : Ip::desc(prop, src_md, w_any, dst_md);
  Ip::primitive_desc pd(desc, PostOps(act), ctx.engine);
  if (ctx.node == nullptr) return Status::Ok();
  AddWeightedStep(ctx, node, Ip(pd), src_md, dst_md, w_file, ConstData(graph, node.inputs[1]), pd.weights_desc(),
                  p.has_bias ? &bias_md : nullptr, p.has_bias ? ConstData(graph, node.inputs[2]) : nullptr);
  return Status::Ok();
}

// A pooling with the attributes `attr` (fp32: the activation; int8: its rescaling and clamp).
Status PoolWith(const Graph& graph, const Node& node, Ctx& ctx, const dnnl::primitive_attr& attr) {
  auto params = GetPoolParams(graph, node);
  if (!params.ok()) return Invalid(node, params.status());
  PoolParams p = *params;
  const bool global = node.kind == OpKind::kGlobalAvgPool || node.kind == OpKind::kGlobalMaxPool;
  const bool is_max = node.kind == OpKind::kMaxPool2D || node.kind == OpKind::kGlobalMaxPool;
  if (global) {
    p.kernel_h = p.in_h, p.kernel_w = p.in_w, p.stride_h = p.stride_w = 1, p.out_h = p.out_w = 1;
    p.pads = Padding2D{};
  }
  const Tensor& y = graph.tensor(node.outputs[0]);
  if (Elements(y) != p.batch * p.out_h * p.out_w * p.channels ||
      (!global && y.shape != Shape{p.batch, p.out_h, p.out_w, p.channels}))
    return Unsupported(Name(node) + " output shape " + ShapeToString(y.shape) + " disagrees with its parameters");
  if (auto d = node.attrs.GetInts("dilations"); d && std::any_of(d->begin(), d->end(), [](auto v) { return v != 1; }))
    return Unsupported(Name(node) + " with dilations");
  // ceil_mode: oneDNN rounds down, so widen the end padding until it yields the same size.
  p.pads.bottom = std::max(p.pads.bottom, (p.out_h - 1) * p.stride_h + p.kernel_h - p.in_h - p.pads.top);
  p.pads.right = std::max(p.pads.right, (p.out_w - 1) * p.stride_w + p.kernel_w - p.in_w - p.pads.left);
  const bool padded = p.pads.top || p.pads.left || p.pads.bottom || p.pads.right;
  if (!is_max && padded && node.attrs.GetInt("count_include_pad", 0) != 0)
    return Unsupported("avg_pool2d with count_include_pad=1 and padding not implemented");
  const memory::desc src_md({p.batch, p.channels, p.in_h, p.in_w}, RunType(graph, node), Tag::nhwc);
  const memory::desc dst_md({p.batch, p.channels, p.out_h, p.out_w}, RunType(graph, node), Tag::nhwc);
  using PoolFwd = dnnl::pooling_forward;
  PoolFwd::desc desc(dnnl::prop_kind::forward_inference,
                     is_max ? dnnl::algorithm::pooling_max : dnnl::algorithm::pooling_avg_exclude_padding, src_md, dst_md,
                     {p.stride_h, p.stride_w}, {p.kernel_h, p.kernel_w}, {p.pads.top, p.pads.left},
                     {p.pads.bottom, p.pads.right});
  PoolFwd::primitive_desc pd(desc, attr, ctx.engine);
  if (ctx.node == nullptr) return Status::Ok();
  Step step{PoolFwd(pd), {}, {{DNNL_ARG_SRC, node.inputs[0]}}, {{DNNL_ARG_DST, node.outputs[0]}}};
  step.args[DNNL_ARG_SRC] = Unbound(ctx, src_md);
  step.args[DNNL_ARG_DST] = Unbound(ctx, dst_md);
  ctx.node->steps_.push_back(std::move(step));
  return Status::Ok();
}

Status Pool(const Graph& graph, const Node& node, const Eltwise& act, Ctx& ctx) { return PoolWith(graph, node, ctx, PostOps(act)); }

// A binary primitive's step of node input 0 (as `md`, rebound on every run) and a scalar `scalar`
// the step owns, into the node's output (as `md`).
void AddScalarBinaryStep(Ctx& ctx, const Node& node, dnnl::binary primitive, const memory::desc& md, memory scalar) {
  Step step{std::move(primitive), {{DNNL_ARG_SRC_1, std::move(scalar)}}, {{DNNL_ARG_SRC_0, node.inputs[0]}}, {{DNNL_ARG_DST, node.outputs[0]}}};
  step.args[DNNL_ARG_SRC_0] = Unbound(ctx, md);
  step.args[DNNL_ARG_DST] = Unbound(ctx, md);
  ctx.node->steps_.push_back(std::move(step));
}

// A binary primitive's step: sources `a_id` and `b_id` (as `a_md`, `b_md`) and the node's output
// rebound on every run.
void AddBinaryStep(Ctx& ctx, const Node& node, dnnl::binary primitive, TensorId a_id, const memory::desc& a_md, TensorId b_id,
                   const memory::desc& b_md, const memory::desc& y_md) {
  Step step{std::move(primitive), {}, {{DNNL_ARG_SRC_0, a_id}, {DNNL_ARG_SRC_1, b_id}}, {{DNNL_ARG_DST, node.outputs[0]}}};
  step.args[DNNL_ARG_SRC_0] = Unbound(ctx, a_md);
  step.args[DNNL_ARG_SRC_1] = Unbound(ctx, b_md);
  step.args[DNNL_ARG_DST] = Unbound(ctx, y_md);
  ctx.node->steps_.push_back(std::move(step));
}

// Input `id` of a binary node as the output's rank (leading 1s), checked to broadcast to it as
// numpy does.
Expected<Dims> BroadcastDims(const Graph& graph, const Node& node, TensorId id) {
  const Shape& ys = graph.tensor(node.outputs[0]).shape;
  const Shape& s = graph.tensor(id).shape;
  if (s.size() > ys.size()) return Unsupported(Name(node) + " input of higher rank than its output");
  Dims d(ys.size() - s.size(), 1);
  d.insert(d.end(), s.begin(), s.end());
  for (size_t i = 0; i < d.size(); ++i)
    if (d[i] != ys[i] && d[i] != 1) return Unsupported(Name(node) + " shapes do not broadcast to " + ShapeToString(ys));
  return d;
}

Status Binary(const Graph& graph, const Node& node, const Eltwise& act, Ctx& ctx) {
  LATTE_RETURN_IF_ERROR(NeedInputs(node, 2));
  if (node.inputs.size() != 2) return Unsupported(Name(node) + " with " + std::to_string(node.inputs.size()) + " inputs");
  dnnl::algorithm alg;
  bool commutative = true;
  // Comparisons write bool: 0 or 1 in a byte, as oneDNN writes its 0/1 result to u8. The ordered
  // ones swap operands as their mirror (a < b is b > a).
  dnnl::algorithm mirror = dnnl::algorithm::undef;
  switch (node.kind) {
    case OpKind::kEqual: alg = dnnl::algorithm::binary_eq; break;
    case OpKind::kNotEqual: alg = dnnl::algorithm::binary_ne; break;
    case OpKind::kLess: alg = dnnl::algorithm::binary_lt, mirror = dnnl::algorithm::binary_gt; break;
    case OpKind::kLessEqual: alg = dnnl::algorithm::binary_le, mirror = dnnl::algorithm::binary_ge; break;
    case OpKind::kGreater: alg = dnnl::algorithm::binary_gt, mirror = dnnl::algorithm::binary_lt; break;
    case OpKind::kGreaterEqual: alg = dnnl::algorithm::binary_ge, mirror = dnnl::algorithm::binary_le; break;
    case OpKind::kAdd: alg = dnnl::algorithm::binary_add; break;
    case OpKind::kMul: alg = dnnl::algorithm::binary_mul; break;
    case OpKind::kMaximum: alg = dnnl::algorithm::binary_max; break;
    case OpKind::kMinimum: alg = dnnl::algorithm::binary_min; break;
    // bool bytes of 0 or 1: a and b is the smaller, a or b the larger.
    case OpKind::kLogicalAnd: alg = dnnl::algorithm::binary_min; break;
    case OpKind::kLogicalOr: alg = dnnl::algorithm::binary_max; break;
    case OpKind::kSub: alg = dnnl::algorithm::binary_sub, commutative = false; break;
    case OpKind::kDiv: alg = dnnl::algorithm::binary_div, commutative = false; break;
    default: return Internal("Binary called on " + Name(node));
  }
  const Shape& ys = graph.tensor(node.outputs[0]).shape;
  LATTE_ASSIGN_OR_RETURN(Dims a, BroadcastDims(graph, node, node.inputs[0]));
  LATTE_ASSIGN_OR_RETURN(Dims b, BroadcastDims(graph, node, node.inputs[1]));
  const Dims y(ys.begin(), ys.end());
  TensorId a_id = node.inputs[0], b_id = node.inputs[1];
  // a − b with a broadcast: −(b − a), the operands swapped and the difference negated by a linear
  // post-op (exact: rounding to nearest is symmetric, so b − a is exactly −(a − b)).
  bool negate = false;
  if (a != y) {  // oneDNN broadcasts its second source only
    const bool swaps = commutative || mirror != dnnl::algorithm::undef || node.kind == OpKind::kSub;
    if (!swaps || b != y) return Unsupported(Name(node) + " broadcasting its first input: onednn broadcasts the second only");
    std::swap(a, b), std::swap(a_id, b_id);
    if (mirror != dnnl::algorithm::undef) alg = mirror;
    negate = node.kind == OpKind::kSub;
  }
  if (y.empty()) return Unsupported(Name(node) + " of scalars");
  // Each operand in its own type: oneDNN's binary takes a float32 constant beside a bf16 activation.
  const memory::desc a_md = Plain(a, TypeOf(graph, a_id)), b_md = Plain(b, TypeOf(graph, b_id)),
                     y_md = Plain(y, TypeOf(graph, node.outputs[0]));
  dnnl::primitive_attr attr = PostOps(act);
  if (negate) {
    dnnl::post_ops ops;
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, -1.0f, 0.0f);
    if (act.present) ops.append_eltwise(1.0f, act.alg, act.alpha, act.beta);
    attr.set_post_ops(ops);
  }
  dnnl::binary::primitive_desc pd({alg, a_md, b_md, y_md}, attr, ctx.engine);
  if (ctx.node == nullptr) return Status::Ok();
  AddBinaryStep(ctx, node, dnnl::binary(pd), a_id, a_md, b_id, b_md, y_md);
  return Status::Ok();
}

// The unary ops that are one oneDNN eltwise algorithm each, without parameters.
struct SimpleEltwise {
  OpKind kind;
  dnnl::algorithm alg;
  float alpha = 0, beta = 0;
};
const SimpleEltwise kSimpleEltwise[] = {
    {OpKind::kSigmoid, dnnl::algorithm::eltwise_logistic},
    {OpKind::kTanh, dnnl::algorithm::eltwise_tanh},
    {OpKind::kAbs, dnnl::algorithm::eltwise_abs},
    {OpKind::kSquare, dnnl::algorithm::eltwise_square},
    {OpKind::kHardSwish, dnnl::algorithm::eltwise_hardswish},
    {OpKind::kRound, dnnl::algorithm::eltwise_round},  // halves to even, as ONNX and TFLite round
    {OpKind::kExp, dnnl::algorithm::eltwise_exp},
    {OpKind::kLog, dnnl::algorithm::eltwise_log},
    {OpKind::kSqrt, dnnl::algorithm::eltwise_sqrt},
    {OpKind::kNeg, dnnl::algorithm::eltwise_linear, -1, 0},       // -1·x + 0
    {OpKind::kReciprocal, dnnl::algorithm::eltwise_pow, 1, -1},   // 1·x^-1
    {OpKind::kRsqrt, dnnl::algorithm::eltwise_pow, 1, -0.5f},     // 1·x^-0.5
};

// The eltwise algorithm and parameters of a unary node's function.
Expected<Eltwise> UnaryEltwise(const Node& node) {
  Eltwise op{true, dnnl::algorithm::eltwise_relu, 0, 0};
  switch (node.kind) {
    case OpKind::kRelu: break;
    case OpKind::kRelu6: op.alg = dnnl::algorithm::eltwise_clip, op.beta = 6; break;
    case OpKind::kReluN1To1: op.alg = dnnl::algorithm::eltwise_clip, op.alpha = -1, op.beta = 1; break;
    case OpKind::kClip:
      op.alg = dnnl::algorithm::eltwise_clip;
      op.alpha = static_cast<float>(node.attrs.GetFloat("min", -kBig));
      op.beta = static_cast<float>(node.attrs.GetFloat("max", kBig));
      if (node.inputs.size() > 1) return Unsupported("clip with min/max as inputs");
      break;
    case OpKind::kLeakyRelu: op.alpha = static_cast<float>(node.attrs.GetFloat("alpha", 0.01)); break;
    case OpKind::kElu: op.alg = dnnl::algorithm::eltwise_elu, op.alpha = static_cast<float>(node.attrs.GetFloat("alpha", 1.0)); break;
    case OpKind::kGelu: {  // ONNX's attribute: exact (erf) unless "tanh"
      const Expected<bool> tanh = GeluTanhForm(node);
      if (!tanh.ok()) return Unsupported(tanh.status().message());  // no oneDNN algorithm for another form
      op.alg = *tanh ? dnnl::algorithm::eltwise_gelu_tanh : dnnl::algorithm::eltwise_gelu_erf;
      break;
    }
    default: {
      const auto* simple = std::find_if(std::begin(kSimpleEltwise), std::end(kSimpleEltwise),
                                        [&](const SimpleEltwise& s) { return s.kind == node.kind; });
      if (simple == std::end(kSimpleEltwise)) return Internal("Unary called on " + Name(node));
      op.alg = simple->alg, op.alpha = simple->alpha, op.beta = simple->beta;
    }
  }
  return op;
}

Status Unary(const Graph& graph, const Node& node, const Eltwise& act, Ctx& ctx) {
  if (Elements(graph.tensor(node.inputs[0])) != Elements(graph.tensor(node.outputs[0])))
    return Unsupported(Name(node) + " changes the number of elements");
  LATTE_ASSIGN_OR_RETURN(const Eltwise op, UnaryEltwise(node));
  if (node.inputs.size() != 1 && node.kind != OpKind::kClip) return Unsupported(Name(node) + " with more than one input");
  const memory::desc md = Plain({Elements(graph.tensor(node.outputs[0]))}, RunType(graph, node));
  // An eltwise post-op on oneDNN 2.6's eltwise primitive gave zeros in our tests: a second pass
  // in place instead.
  dnnl::eltwise_forward::primitive_desc pd({dnnl::prop_kind::forward_inference, op.alg, md, op.alpha, op.beta}, ctx.engine);
  if (ctx.node == nullptr) return Status::Ok();
  return AddOneInputStep(ctx, graph, node, dnnl::eltwise_forward(pd), md, md, act);
}

// pow with a constant scalar exponent, as models write x², x³ and √x: oneDNN's eltwise_pow
// (alpha · x^beta, alpha 1), the exponent a number in the primitive.
Status Pow(const Graph& graph, const Node& node, const Eltwise& act, Ctx& ctx) {
  LATTE_RETURN_IF_ERROR(NeedInputs(node, 2));
  const Tensor& exponent = graph.tensor(node.inputs[1]);
  Expected<std::vector<float>> e = exponent.is_constant() ? ConstantFloats(exponent) : Expected<std::vector<float>>(Unsupported(""));
  if (!e.ok() || e->size() != 1)
    return Unsupported(Name(node) + " exponent '" + exponent.name +
                       "' is not a constant scalar: oneDNN's pow takes the exponent as a number, not a tensor");
  if (Elements(graph.tensor(node.inputs[0])) != Elements(graph.tensor(node.outputs[0])))
    return Unsupported(Name(node) + " changes the number of elements");
  const memory::desc md = Plain({Elements(graph.tensor(node.outputs[0]))}, RunType(graph, node));
  dnnl::eltwise_forward::primitive_desc pd({dnnl::prop_kind::forward_inference, dnnl::algorithm::eltwise_pow, md, 1.0f, (*e)[0]},
                                           ctx.engine);
  if (ctx.node == nullptr) return Status::Ok();
  return AddOneInputStep(ctx, graph, node, dnnl::eltwise_forward(pd), md, md, act);
}

// not: x == 0, oneDNN's binary_eq against a zero byte the step owns (bool is a u8 0 or 1).
Status LogicalNot(const Graph& graph, const Node& node, const Eltwise& act, Ctx& ctx) {
  const Shape& ys = graph.tensor(node.outputs[0]).shape;
  if (ys.empty()) return Unsupported(Name(node) + " of a scalar");
  const Dims y(ys.begin(), ys.end());
  const memory::desc x_md = Plain(y, Type::u8), zero_md = Plain(Dims(y.size(), 1), Type::u8);
  dnnl::binary::primitive_desc pd({dnnl::algorithm::binary_eq, x_md, zero_md, x_md}, PostOps(act), ctx.engine);
  if (ctx.node == nullptr) return Status::Ok();
  memory zero(zero_md, ctx.engine);
  *static_cast<std::uint8_t*>(zero.get_data_handle()) = 0;
  Step step{dnnl::binary(pd), {}, {{DNNL_ARG_SRC_0, node.inputs[0]}}, {{DNNL_ARG_DST, node.outputs[0]}}};
  step.args[DNNL_ARG_SRC_0] = Unbound(ctx, x_md);
  step.args[DNNL_ARG_SRC_1] = zero;
  step.args[DNNL_ARG_DST] = Unbound(ctx, x_md);
  ctx.node->steps_.push_back(std::move(step));
  return Status::Ok();
}

// matmul (two activations, or an activation and a constant read at run time): oneDNN's matmul
// primitive at the output's rank. Batch dims broadcast as numpy does (leading 1s, then size 1
// against any); transpose_a / transpose_b swap the last two dims' strides, so nothing is copied.
// A 1-D a is a row [1, K] and a 1-D b a column [K, 1] whose 1 the output drops.
Status MatMul(const Graph& graph, const Node& node, const Eltwise& act, Ctx& ctx) {
  LATTE_RETURN_IF_ERROR(NeedInputs(node, 2));
  if (node.inputs.size() != 2) return Unsupported("matmul with " + std::to_string(node.inputs.size()) + " inputs");
  Dims a(graph.tensor(node.inputs[0]).shape), b(graph.tensor(node.inputs[1]).shape);
  if (a.empty() || b.empty()) return Unsupported("matmul of a scalar");
  const bool ta = node.attrs.GetInt("transpose_a", 0) != 0, tb = node.attrs.GetInt("transpose_b", 0) != 0;
  if ((ta && a.size() == 1) || (tb && b.size() == 1)) return Unsupported("matmul transposing a 1-D input");
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  const size_t rank = std::max(a.size(), b.size());
  a.insert(a.begin(), rank - a.size(), 1);
  b.insert(b.begin(), rank - b.size(), 1);
  Dims a_strides = RowMajorStrides(a), b_strides = RowMajorStrides(b);
  if (ta) std::swap(a[rank - 1], a[rank - 2]), std::swap(a_strides[rank - 1], a_strides[rank - 2]);
  if (tb) std::swap(b[rank - 1], b[rank - 2]), std::swap(b_strides[rank - 1], b_strides[rank - 2]);
  if (a[rank - 1] != b[rank - 2])
    return Unsupported("matmul inner dims differ: a has " + std::to_string(a[rank - 1]) + " columns, b " +
                       std::to_string(b[rank - 2]) + " rows");
  Dims y(rank);
  for (size_t i = 0; i + 2 < rank; ++i) {
    if (a[i] != b[i] && a[i] != 1 && b[i] != 1)
      return Unsupported("matmul batch dims " + ShapeToString(graph.tensor(node.inputs[0]).shape) + " and " +
                         ShapeToString(graph.tensor(node.inputs[1]).shape) + " do not broadcast");
    y[i] = std::max(a[i], b[i]);
  }
  y[rank - 2] = a[rank - 2], y[rank - 1] = b[rank - 1];
  std::int64_t elements = 1;
  for (auto d : y) elements *= d;
  if (elements != Elements(graph.tensor(node.outputs[0]))) return Unsupported("matmul output size disagrees with its inputs");
  const Type type = RunType(graph, node);  // both operands in it: a constant one converted once
  const memory::desc a_md(a, type, a_strides), b_md(b, type, b_strides), y_md = Plain(y, type);
  dnnl::matmul::primitive_desc pd({a_md, b_md, y_md}, PostOps(act), ctx.engine);
  if (ctx.node == nullptr) return Status::Ok();
  Step step{dnnl::matmul(pd), {}, {}, {{DNNL_ARG_DST, node.outputs[0]}}};
  BindInput(ctx, graph, step, DNNL_ARG_SRC, node.inputs[0], a, a_strides, type);
  BindInput(ctx, graph, step, DNNL_ARG_WEIGHTS, node.inputs[1], b, b_strides, type);
  step.args[DNNL_ARG_DST] = Unbound(ctx, y_md);
  ctx.node->steps_.push_back(std::move(step));
  return Status::Ok();
}

// Softmax over the last axis only (the NHWC channel axis; attention's scores of any rank).
Status Softmax(const Graph& graph, const Node& node, const Eltwise& act, Ctx& ctx) {
  const Tensor& x = graph.tensor(node.inputs[0]);
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  std::int64_t axis = node.attrs.GetInt("axis", -1);
  if (axis < 0) axis += rank;
  if (axis != rank - 1) return Unsupported("softmax over an axis other than the last");
  if (node.attrs.GetFloat("beta", 1.0) != 1.0) return Unsupported("softmax with beta ≠ 1");
  if (x.shape != graph.tensor(node.outputs[0]).shape) return Unsupported("softmax changes the shape");
  const std::int64_t c = x.shape.back();
  const memory::desc md = Plain({Elements(x) / c, c}, RunType(graph, node));
  dnnl::softmax_forward::primitive_desc pd({dnnl::prop_kind::forward_inference, md, 1}, ctx.engine);
  if (ctx.node == nullptr) return Status::Ok();
  return AddOneInputStep(ctx, graph, node, dnnl::softmax_forward(pd), md, md, act);
}

// The kinds that only copy their input's elements in order (Copy's kinds).
bool CopiesElements(OpKind kind) {
  return kind == OpKind::kReshape || kind == OpKind::kFlatten || kind == OpKind::kSqueeze || kind == OpKind::kUnsqueeze ||
         kind == OpKind::kIdentity;
}
bool IsInteger(DataType dtype) { return dtype == DataType::kInt32 || dtype == DataType::kInt64; }

// An integer tensor through a copy (a mask's int64 ids unsqueezed): input and output of one
// integer type, known and non-empty (reshape's shape input is its own).
Status CheckIntegerCopy(const Graph& graph, const Node& node) {
  if (node.outputs.size() != 1) return Unsupported(Name(node) + " with " + std::to_string(node.outputs.size()) + " outputs");
  const Tensor& x = graph.tensor(node.inputs[0]);
  const Tensor& y = graph.tensor(node.outputs[0]);
  if (y.dtype != x.dtype)
    return Unsupported(Name(node) + " from " + std::string(DataTypeName(x.dtype)) + " to " + std::string(DataTypeName(y.dtype)));
  for (const Tensor* t : {&x, &y})
    if (!t->fully_known() || Elements(*t) == 0) return Unsupported(Name(node) + " tensor '" + t->name + "' is unknown or empty");
  return Status::Ok();
}

// Reshape and friends on contiguous data: a reorder (copy) of every element. Integers are copied
// too, as s32: int64 as twice as many s32 (a reorder between two identical descriptors moves the
// bytes untouched; oneDNN 2.6 has no 64-bit type to name them by).
Status Copy(const Graph& graph, const Node& node, const Eltwise& act, Ctx& ctx) {
  std::int64_t n = Elements(graph.tensor(node.outputs[0]));
  if (Elements(graph.tensor(node.inputs[0])) != n) return Unsupported(Name(node) + " changes the number of elements");
  Type type = RunType(graph, node);
  if (const DataType dtype = graph.tensor(node.inputs[0]).dtype; IsInteger(dtype)) {
    if (act.present) return Unsupported(Name(node) + " of integers with a fused activation");
    type = Type::s32;
    if (dtype == DataType::kInt64) n *= 2;
  }
  const memory::desc md = Plain({n}, type);
  dnnl::reorder::primitive_desc pd(ctx.engine, md, ctx.engine, md);
  if (ctx.node == nullptr) return Status::Ok();
  return AddOneInputStep(ctx, graph, node, dnnl::reorder(pd), md, md, act, DNNL_ARG_FROM, DNNL_ARG_TO);
}

Status Concat(const Graph& graph, const Node& node, const Eltwise& act, Ctx& ctx) {
  const Shape& ys = graph.tensor(node.outputs[0]).shape;
  const auto rank = static_cast<std::int64_t>(ys.size());
  std::int64_t axis = node.attrs.GetInt("axis", 0);
  if (axis < -rank || axis >= rank) return Unsupported("concat axis " + std::to_string(axis) + " out of range");
  if (axis < 0) axis += rank;
  std::vector<memory::desc> srcs;
  std::int64_t total = 0;
  for (TensorId id : node.inputs) {
    if (id == kNoTensor) return Unsupported("concat with an absent input");
    const Shape& s = graph.tensor(id).shape;
    if (s.size() != ys.size()) return Unsupported("concat of inputs with different ranks");
    for (std::int64_t a = 0; a < rank; ++a)
      if (a != axis && s[static_cast<size_t>(a)] != ys[static_cast<size_t>(a)])
        return Unsupported("concat input " + ShapeToString(s) + " does not fit output " + ShapeToString(ys));
    total += s[static_cast<size_t>(axis)];
    srcs.push_back(Plain(Dims(s.begin(), s.end()), RunType(graph, node)));
  }
  if (total != ys[static_cast<size_t>(axis)]) return Unsupported("concat output size disagrees with its inputs");
  const memory::desc y_md = Plain(Dims(ys.begin(), ys.end()), RunType(graph, node));
  dnnl::concat::primitive_desc pd(y_md, static_cast<int>(axis), srcs, ctx.engine);
  if (ctx.node == nullptr) return Status::Ok();
  Step step{dnnl::concat(pd), {}, {}, {{DNNL_ARG_DST, node.outputs[0]}}};
  for (size_t i = 0; i < srcs.size(); ++i) {
    const Shape& s = graph.tensor(node.inputs[i]).shape;
    const Dims dims(s.begin(), s.end());
    BindInput(ctx, graph, step, DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i), node.inputs[i], dims, RowMajorStrides(dims),
              RunType(graph, node));
  }
  step.args[DNNL_ARG_DST] = Unbound(ctx, y_md);
  ctx.node->steps_.push_back(std::move(step));
  AddPostEltwise(ctx, graph, node, act);
  return Status::Ok();
}

// Constant pad: the output filled with the value, then the input reordered into its window.
Status Pad(const Graph& graph, const Node& node, const Eltwise& act, Ctx& ctx) {
  const Shape& xs = graph.tensor(node.inputs[0]).shape;
  const Shape& ys = graph.tensor(node.outputs[0]).shape;
  const size_t rank = xs.size();
  LATTE_ASSIGN_OR_RETURN(const std::vector<std::int64_t> pads, CheckedConstantPads(graph, node));
  const memory::desc x_md = Plain(Dims(xs.begin(), xs.end()), RunType(graph, node));
  const memory::desc window = Plain(Dims(ys.begin(), ys.end()), RunType(graph, node)).submemory_desc(Dims(xs.begin(), xs.end()),
                                                                            Dims(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(rank)));
  dnnl::reorder::primitive_desc pd(ctx.engine, x_md, ctx.engine, window);
  if (ctx.node == nullptr) return Status::Ok();
  Step step{dnnl::reorder(pd), {}, {{DNNL_ARG_FROM, node.inputs[0]}}, {{DNNL_ARG_TO, node.outputs[0]}}};
  step.args[DNNL_ARG_FROM] = Unbound(ctx, x_md);
  step.args[DNNL_ARG_TO] = Unbound(ctx, window);
  step.fill = true;
  step.fill_value = static_cast<float>(node.attrs.GetFloat("value", 0.0));
  step.fill_type = RunType(graph, node);
  if (step.fill_type == Type::s8) step.fill_value = QuantizeValue(step.fill_value, Q8Of(graph.tensor(node.outputs[0])));
  ctx.node->steps_.push_back(std::move(step));
  AddPostEltwise(ctx, graph, node, act);
  return Status::Ok();
}

// Bilinear resize: oneDNN's linear resampling maps pixel centres (half_pixel) only.
Status Resize(const Graph& graph, const Node& node, const Eltwise& act, Ctx& ctx) {
  const Tensor& x = graph.tensor(node.inputs[0]);
  const Tensor& y = graph.tensor(node.outputs[0]);
  const std::string mode = node.attrs.GetString("mode", "bilinear");
  if (mode != "bilinear" && mode != "nearest") return Unsupported("resize mode '" + mode + "' not implemented");
  if (x.shape.size() != 4 || y.shape.size() != 4) return Unsupported("resize of rank " + std::to_string(x.shape.size()));
  if (x.shape[0] != y.shape[0] || x.shape[3] != y.shape[3]) return Unsupported("resize changes batch or channels");
  const std::string coords = node.attrs.GetString("coordinate_transformation", "asymmetric");
  const bool nearest = mode == "nearest";
  if (nearest) {
    // oneDNN's nearest reads input floor((o + ½) / f) for output o and factor f: for whole factors,
    // floor(o / f). Accepted when the file's rule reads the same pixel (see the xnnpack backend).
    const std::int64_t fh = y.shape[1] / x.shape[1], fw = y.shape[2] / x.shape[2];
    if (fh * x.shape[1] != y.shape[1] || fw * x.shape[2] != y.shape[2])
      return Unsupported("nearest resize " + ShapeToString(x.shape) + " → " + ShapeToString(y.shape) +
                         ": onednn backend runs whole upscaling factors only");
    const std::string rounding =
        node.attrs.GetString("nearest_mode", graph.source_format == "tflite" ? "floor" : "round_prefer_floor");
    const std::int64_t f = std::max(fh, fw);
    bool exact = f == 1;
    if (coords == "asymmetric") exact = exact || rounding == "floor" || (rounding == "round_prefer_floor" && f <= 2);
    if (coords == "half_pixel" || coords == "pytorch_half_pixel")
      exact = exact || rounding == "round_prefer_floor" || rounding == "round_prefer_ceil" ||
              (graph.source_format == "tflite" && rounding == "floor");
    if (!exact)
      return Unsupported("nearest resize by " + std::to_string(fh) + "x" + std::to_string(fw) + " with " + coords + " / " +
                         rounding + " rounding does not read input floor(out / factor)");
  } else if (coords != "half_pixel") {
    return Unsupported("resize coordinate_transformation '" + coords + "': onednn resamples with half_pixel only");
  }
  if (auto scales = node.attrs.GetFloats("scales"); scales && scales->size() == 2) {
    for (size_t i = 0; i < 2; ++i)
      if (std::abs(static_cast<double>(x.shape[i + 1]) * (*scales)[i] - static_cast<double>(y.shape[i + 1])) > 1e-6)
        return Unsupported("resize scales that are not output/input sizes");
  }
  if (node.inputs.size() != 1) return Unsupported("resize with sizes or scales as inputs");
  const memory::desc x_md({x.shape[0], x.shape[3], x.shape[1], x.shape[2]}, RunType(graph, node), Tag::nhwc);
  const memory::desc y_md({y.shape[0], y.shape[3], y.shape[1], y.shape[2]}, RunType(graph, node), Tag::nhwc);
  dnnl::resampling_forward::primitive_desc pd(
      {dnnl::prop_kind::forward_inference, nearest ? dnnl::algorithm::resampling_nearest : dnnl::algorithm::resampling_linear,
       x_md, y_md},
      ctx.engine);
  if (ctx.node == nullptr) return Status::Ok();
  return AddOneInputStep(ctx, graph, node, dnnl::resampling_forward(pd), x_md, y_md, act);
}

// Mean over any set of axes: oneDNN's reduction into the input's shape with 1s on those axes
// (keepdims changes only the shape, not the data), with the attributes `attr` (fp32 and bf16: the
// activation; int8: its rescaling and clamp).
Status MeanWith(const Graph& graph, const Node& node, Ctx& ctx, const dnnl::primitive_attr& attr) {
  const Shape& xs = graph.tensor(node.inputs[0]).shape;
  const auto rank = static_cast<std::int64_t>(xs.size());
  std::vector<std::int64_t> axes = node.attrs.GetInts("axes").value_or(std::vector<std::int64_t>{});
  if (node.inputs.size() != 1) return Unsupported("mean with axes as an input");
  if (axes.empty())
    for (std::int64_t a = 0; a < rank; ++a) axes.push_back(a);
  Dims reduced(xs.begin(), xs.end());
  for (std::int64_t a : axes) {
    if (a < -rank || a >= rank) return Unsupported("mean axis " + std::to_string(a) + " out of range");
    reduced[static_cast<size_t>(a < 0 ? a + rank : a)] = 1;
  }
  std::int64_t n = 1;
  for (auto d : reduced) n *= d;
  if (Elements(graph.tensor(node.outputs[0])) != n) return Unsupported("mean output size disagrees with its axes");
  if (rank == 4 && reduced == Dims{xs[0], 1, 1, xs[3]}) {
    // A spatial mean of an NHWC map is a global average pool: oneDNN 2.6's reduction took 10.8 ms
    // for selfie_segmentation_landscape's ten means (16 to 128 channels), its pooling 0.05 ms.
    const memory::desc src_md({xs[0], xs[3], xs[1], xs[2]}, RunType(graph, node), Tag::nhwc);
    const memory::desc dst_md({xs[0], xs[3], 1, 1}, RunType(graph, node), Tag::nhwc);
    dnnl::pooling_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::pooling_avg_exclude_padding, src_md,
                                     dst_md, {1, 1}, {xs[1], xs[2]}, {0, 0}, {0, 0});
    dnnl::pooling_forward::primitive_desc pd(desc, attr, ctx.engine);
    if (ctx.node == nullptr) return Status::Ok();
    return AddOneInputStep(ctx, graph, node, dnnl::pooling_forward(pd), src_md, dst_md, Eltwise{});
  }
  const memory::desc x_md = Plain(Dims(xs.begin(), xs.end()), RunType(graph, node)), y_md = Plain(reduced, RunType(graph, node));
  dnnl::reduction::primitive_desc pd({dnnl::algorithm::reduction_mean, x_md, y_md, 0.0f, 0.0f}, attr, ctx.engine);
  if (ctx.node == nullptr) return Status::Ok();
  Step step{dnnl::reduction(pd), {}, {{DNNL_ARG_SRC, node.inputs[0]}}, {{DNNL_ARG_DST, node.outputs[0]}}};
  step.args[DNNL_ARG_SRC] = Unbound(ctx, x_md);
  step.args[DNNL_ARG_DST] = Unbound(ctx, y_md);
  ctx.node->steps_.push_back(std::move(step));
  return Status::Ok();
}

Status Mean(const Graph& graph, const Node& node, const Eltwise& act, Ctx& ctx) { return MeanWith(graph, node, ctx, PostOps(act)); }

// transpose_conv2d (TFLite OHWI weights, groups 1): oneDNN's deconvolution; the output size
// past what the padding gives (TFLite's output_shape, ONNX output_padding) comes off the end padding.
Status TransposeConv(const Graph& graph, const Node& node, const Eltwise& act, Ctx& ctx) {
  const std::string layout = node.attrs.GetString("filter_layout", "");
  if (layout != "OHWI") return Unsupported("transpose_conv2d filter_layout " + layout + ": onednn backend needs OHWI");
  LATTE_ASSIGN_OR_RETURN(const ConvParams p, CheckedConvParams(graph, node));
  if (p.groups != 1) return Unsupported("transpose_conv2d with groups > 1 not implemented");
  const std::int64_t kh = p.kernel_h, kw = p.kernel_w, ic = p.in_c;
  const std::int64_t full_h = (p.in_h - 1) * p.stride_h + (kh - 1) * p.dilation_h + 1;
  const std::int64_t full_w = (p.in_w - 1) * p.stride_w + (kw - 1) * p.dilation_w + 1;
  const std::int64_t pad_b = full_h - p.pads.top - p.out_h, pad_r = full_w - p.pads.left - p.out_w;
  if (pad_b < 0 || pad_r < 0) return Unsupported("transpose_conv2d output larger than its full scatter");
  const Dims w_dims{p.out_c, ic, kh, kw};
  return AddConvolution<dnnl::deconvolution_forward>(graph, node, act, ctx, p, w_dims, Dims{kh * kw * ic, 1, kw * ic, ic},
                                                     dnnl::algorithm::deconvolution_direct, Dims{pad_b, pad_r});
}

// Transpose as a reorder: the destination described in the source's dimension order with the
// strides the permuted (row-major) output gives each source axis.
Status Transpose(const Graph& graph, const Node& node, const Eltwise& act, Ctx& ctx) {
  const Shape& xs = graph.tensor(node.inputs[0]).shape;
  const Shape& ys = graph.tensor(node.outputs[0]).shape;
  const auto rank = static_cast<std::int64_t>(xs.size());
  std::vector<std::int64_t> perm = node.attrs.GetInts("perm").value_or(std::vector<std::int64_t>{});
  if (perm.empty())
    for (std::int64_t a = rank - 1; a >= 0; --a) perm.push_back(a);
  if (static_cast<std::int64_t>(perm.size()) != rank || ys.size() != xs.size())
    return Unsupported("transpose perm does not match the rank");
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (auto& a : perm) {
    if (a < 0) a += rank;
    if (a < 0 || a >= rank || seen[static_cast<size_t>(a)]) return Unsupported("transpose perm is not a permutation");
    seen[static_cast<size_t>(a)] = true;
  }
  for (size_t k = 0; k < perm.size(); ++k)
    if (ys[k] != xs[static_cast<size_t>(perm[k])]) return Unsupported("transpose output shape disagrees with its perm");
  if (rank == 0) return Unsupported("transpose of a scalar");
  Dims out_strides(static_cast<size_t>(rank), 1);
  for (size_t k = static_cast<size_t>(rank); k-- > 1;) out_strides[k - 1] = out_strides[k] * ys[k];
  Dims strides(static_cast<size_t>(rank));
  for (size_t k = 0; k < perm.size(); ++k) strides[static_cast<size_t>(perm[k])] = out_strides[k];
  const Dims dims(xs.begin(), xs.end());
  const memory::desc x_md = Plain(dims, RunType(graph, node)), y_md(dims, RunType(graph, node), strides);
  dnnl::reorder::primitive_desc pd(ctx.engine, x_md, ctx.engine, y_md);
  if (ctx.node == nullptr) return Status::Ok();
  return AddOneInputStep(ctx, graph, node, dnnl::reorder(pd), x_md, y_md, act, DNNL_ARG_FROM, DNNL_ARG_TO);
}

// depth_to_space and space_to_depth (NHWC) as one reorder: the input seen as six dims, the block's
// two offsets split out of its channels (depth_to_space: DCR [i, j, c], CRD [c, i, j]) or out of
// its rows and columns (space_to_depth), written where the output's row-major layout puts them.
Status DepthSpace(const Graph& graph, const Node& node, const Eltwise& act, Ctx& ctx) {
  const Shape& xs = graph.tensor(node.inputs[0]).shape;
  const Shape& ys = graph.tensor(node.outputs[0]).shape;
  const bool to_space = node.kind == OpKind::kDepthToSpace;
  const std::string mode = node.attrs.GetString("mode", "DCR");
  if (mode != "DCR" && (mode != "CRD" || !to_space)) return Unsupported(Name(node) + " mode " + mode + " (DCR, or CRD for depth_to_space)");
  const std::int64_t b = node.attrs.GetInt("block_size", 0);
  if (xs.size() != 4 || ys.size() != 4 || b < 1) return Unsupported(Name(node) + " of rank " + std::to_string(xs.size()));
  // The small side (depth_to_space's output, space_to_depth's input): n, h, w rows of c channels.
  const Shape& big = to_space ? ys : xs;
  const std::int64_t n = big[0], h = big[1] / b, w = big[2] / b, c = big[3];
  const Shape small{n, h, w, c * b * b};
  if ((to_space ? xs : ys) != small || h * b != big[1] || w * b != big[2])
    return Unsupported(Name(node) + " shapes " + ShapeToString(xs) + " → " + ShapeToString(ys) + " do not match block_size " +
                       std::to_string(b) + " in NHWC");
  // Strides of the big side [n, h, i, w, j, c] and of the small side [n, h, w, i, j, c] (DCR) or
  // [n, h, w, c, i, j] (CRD), each by the six logical dims (n, h, w, i, j, c).
  const Dims big_strides{h * b * w * b * c, b * w * b * c, b * c, w * b * c, c, 1};
  const Dims small_strides = mode == "DCR" ? Dims{h * w * b * b * c, w * b * b * c, b * b * c, b * c, c, 1}
                                           : Dims{h * w * b * b * c, w * b * b * c, b * b * c, b, 1, b * b};
  const Dims dims{n, h, w, b, b, c};
  const Type type = RunType(graph, node);
  const memory::desc x_md(dims, type, to_space ? small_strides : big_strides);
  const memory::desc y_md(dims, type, to_space ? big_strides : small_strides);
  dnnl::reorder::primitive_desc pd(ctx.engine, x_md, ctx.engine, y_md);
  if (ctx.node == nullptr) return Status::Ok();
  return AddOneInputStep(ctx, graph, node, dnnl::reorder(pd), x_md, y_md, act, DNNL_ARG_FROM, DNNL_ARG_TO);
}

// hard_sigmoid = clamp(alpha x + beta, 0, 1): oneDNN 2.6 has no hard_sigmoid algorithm, so a
// linear eltwise, then a clip in place.
Status HardSigmoid(const Graph& graph, const Node& node, const Eltwise& act, Ctx& ctx) {
  if (node.inputs.size() != 1) return Unsupported("hard_sigmoid with several inputs");
  const std::int64_t n = Elements(graph.tensor(node.outputs[0]));
  if (Elements(graph.tensor(node.inputs[0])) != n) return Unsupported("hard_sigmoid changes the number of elements");
  const memory::desc md = Plain({n}, RunType(graph, node));
  const auto alpha = static_cast<float>(node.attrs.GetFloat("alpha", 0.2)), beta = static_cast<float>(node.attrs.GetFloat("beta", 0.5));
  dnnl::eltwise_forward::primitive_desc pd(
      {dnnl::prop_kind::forward_inference, dnnl::algorithm::eltwise_linear, md, alpha, beta}, ctx.engine);
  if (ctx.node == nullptr) return Status::Ok();
  Step step{dnnl::eltwise_forward(pd), {}, {{DNNL_ARG_SRC, node.inputs[0]}}, {{DNNL_ARG_DST, node.outputs[0]}}};
  step.args[DNNL_ARG_SRC] = Unbound(ctx, md);
  step.args[DNNL_ARG_DST] = Unbound(ctx, md);
  ctx.node->steps_.push_back(std::move(step));
  AddPostEltwise(ctx, graph, node, Eltwise{true, dnnl::algorithm::eltwise_clip, 0.0f, 1.0f});
  AddPostEltwise(ctx, graph, node, act);
  return Status::Ok();
}

// batch_norm (inference, channels last, any rank ≥ 2): oneDNN's batch normalization with the
// file's mean and variance (global stats) and its scale and shift, copied once into the node.
Status BatchNorm(const Graph& graph, const Node& node, const Eltwise& act, Ctx& ctx) {
  LATTE_RETURN_IF_ERROR(NeedInputs(node, 5));
  for (size_t i = 1; i < 5; ++i) LATTE_RETURN_IF_ERROR(NeedConstant(graph, node, i, "batch_norm parameters"));
  const Shape& xs = graph.tensor(node.inputs[0]).shape;
  if (xs.size() < 2) return Unsupported("batch_norm of rank " + std::to_string(xs.size()));
  if (xs != graph.tensor(node.outputs[0]).shape) return Unsupported("batch_norm output shape differs from its input");
  const std::int64_t c = xs.back();
  for (size_t i = 1; i < 5; ++i)
    if (Elements(graph.tensor(node.inputs[i])) != c)
      return Unsupported("batch_norm parameter " + std::to_string(i) + " is not one value per channel (last dim)");
  // oneDNN's logical order is N, C, spatial...; the data is channels-last.
  Dims st(xs.size(), 1);  // row-major strides of the data
  for (size_t i = xs.size(); i-- > 1;) st[i - 1] = st[i] * xs[i];
  Dims dims{xs[0], c}, strides{st[0], 1};
  for (size_t i = 1; i + 1 < xs.size(); ++i) dims.push_back(xs[i]), strides.push_back(st[i]);
  const memory::desc md(dims, RunType(graph, node), strides), channel_md({c}, kF32, Tag::a);  // params stay f32
  const auto flags = dnnl::normalization_flags::use_global_stats | dnnl::normalization_flags::use_scale |
                     dnnl::normalization_flags::use_shift;
  dnnl::batch_normalization_forward::primitive_desc pd(
      {dnnl::prop_kind::forward_inference, md, static_cast<float>(node.attrs.GetFloat("epsilon", 1e-5)), flags}, ctx.engine);
  if (ctx.node == nullptr) return Status::Ok();
  Step step{dnnl::batch_normalization_forward(pd), {}, {{DNNL_ARG_SRC, node.inputs[0]}}, {{DNNL_ARG_DST, node.outputs[0]}}};
  step.args[DNNL_ARG_SRC] = Unbound(ctx, md);
  step.args[DNNL_ARG_DST] = Unbound(ctx, md);
  const int args[4] = {DNNL_ARG_SCALE, DNNL_ARG_SHIFT, DNNL_ARG_MEAN, DNNL_ARG_VARIANCE};
  for (size_t i = 0; i < 4; ++i)
    step.args[args[i]] = PackWeights(ctx, channel_md, ConstData(graph, node.inputs[i + 1]), channel_md);
  ctx.node->steps_.push_back(std::move(step));
  AddPostEltwise(ctx, graph, node, act);
  return Status::Ok();
}

// layer_norm over the dims from its axis on (each row contiguous): oneDNN's layer normalization
// over the last dim of [rows, cols], with the constant scale and shift (one value per normalized
// element) copied once into the node.
Status LayerNorm(const Graph& graph, const Node& node, const Eltwise& act, Ctx& ctx) {
  const Tensor& x = graph.tensor(node.inputs[0]);
  if (x.shape != graph.tensor(node.outputs[0]).shape) return Unsupported("layer_norm output shape differs from its input");
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  std::int64_t axis = node.attrs.GetInt("axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return Unsupported("layer_norm axis out of range");
  std::int64_t cols = 1;
  for (std::int64_t d = axis; d < rank; ++d) cols *= x.shape[static_cast<size_t>(d)];
  auto flags = dnnl::normalization_flags::none;
  const int args[2] = {DNNL_ARG_SCALE, DNNL_ARG_SHIFT};
  for (size_t i = 1; i < 3; ++i) {
    if (node.input(i) == kNoTensor) continue;
    LATTE_RETURN_IF_ERROR(NeedConstant(graph, node, i, "layer_norm scale and bias"));
    if (Elements(graph.tensor(node.inputs[i])) != cols)
      return Unsupported("layer_norm " + std::string(i == 1 ? "scale" : "bias") +
                         " broadcast within the normalized dims (onednn takes one value per element)");
    flags |= i == 1 ? dnnl::normalization_flags::use_scale : dnnl::normalization_flags::use_shift;
  }
  const memory::desc md = Plain({Elements(x) / cols, cols}, RunType(graph, node)), row_md = Plain({cols});  // params f32
  dnnl::layer_normalization_forward::primitive_desc pd(
      {dnnl::prop_kind::forward_inference, md, static_cast<float>(node.attrs.GetFloat("epsilon", 1e-5)), flags},
      ctx.engine);
  if (ctx.node == nullptr) return Status::Ok();
  Step step{dnnl::layer_normalization_forward(pd), {}, {{DNNL_ARG_SRC, node.inputs[0]}}, {{DNNL_ARG_DST, node.outputs[0]}}};
  step.args[DNNL_ARG_SRC] = Unbound(ctx, md);
  step.args[DNNL_ARG_DST] = Unbound(ctx, md);
  for (size_t i = 1; i < 3; ++i)
    if (node.input(i) != kNoTensor)
      step.args[args[i - 1]] = PackWeights(ctx, row_md, ConstData(graph, node.inputs[i]), row_md);
  ctx.node->steps_.push_back(std::move(step));
  AddPostEltwise(ctx, graph, node, act);
  return Status::Ok();
}

// cast between float32 and bfloat16 (the executor's conversions at a bf16 graph's edges, or a
// cast in the file): a reorder converting each element, rounding to nearest even.
Status Cast(const Graph& graph, const Node& node, const Eltwise& act, Ctx& ctx) {
  const Tensor& x = graph.tensor(node.inputs[0]);
  const Tensor& y = graph.tensor(node.outputs.at(0));
  auto is_float = [](const Tensor& t) { return t.dtype == DataType::kFloat32 || t.dtype == DataType::kBFloat16; };
  const std::string what = "cast from " + std::string(DataTypeName(x.dtype)) + " to " + std::string(DataTypeName(y.dtype));
  if (x.dtype == DataType::kInt64 || y.dtype == DataType::kInt64)
    return Unsupported(what + " unsupported, because oneDNN " + LibraryVersion() + " has no 64-bit integer type");
  if (!is_float(x) || !is_float(y)) return Unsupported(what + ": onednn casts between float32 and bfloat16 only");
  if (!x.fully_known() || Elements(x) == 0 || Elements(x) != Elements(y))
    return Unsupported("cast of an unknown or empty shape, or changing the number of elements");
  const memory::desc x_md = Plain({Elements(x)}, TypeOf(x)), y_md = Plain({Elements(y)}, TypeOf(y));
  dnnl::reorder::primitive_desc pd(ctx.engine, x_md, ctx.engine, y_md);
  if (ctx.node == nullptr) return Status::Ok();
  return AddOneInputStep(ctx, graph, node, dnnl::reorder(pd), x_md, y_md, act, DNNL_ARG_FROM, DNNL_ARG_TO);
}

// The bytes of one element of `type`.
std::size_t ElementBytes(Type type) { return memory::data_type_size(type); }

// slice: a reorder from the window of the input the slice reads into the plain output. Steps of
// 1 make the window a sub-memory of the input's descriptor; positive steps the input's strides
// times the steps, the input bound at the window's first element.
Status Slice(const Graph& graph, const Node& node, const Eltwise& act, Ctx& ctx) {
  const Shape& xs = graph.tensor(node.inputs[0]).shape;
  const Shape& ys = graph.tensor(node.outputs[0]).shape;
  if (node.inputs.size() != 1) return Unsupported("slice with starts, ends, axes or steps as inputs");
  auto resolved = ResolveSlice(node, xs);
  if (!resolved.ok()) return Invalid(node, resolved.status());
  const Dims x_dims(xs.begin(), xs.end());
  const Dims x_strides = RowMajorStrides(x_dims);
  Dims dims(xs.size()), starts(xs.size()), strides(xs.size());
  bool unit_steps = true;
  std::int64_t first = 0;  // the window's first element, in elements from the input's start
  for (size_t d = 0; d < xs.size(); ++d) {
    const SliceAxis& a = (*resolved)[d];
    if (a.step < 0)
      return Unsupported("slice with a negative step (" + std::to_string(a.step) +
                         " on axis " + std::to_string(d) + "): a oneDNN reorder reads with non-negative strides only");
    dims[d] = a.count, starts[d] = a.start, strides[d] = x_strides[d] * a.step;
    unit_steps = unit_steps && a.step == 1;
    first += a.start * x_strides[d];
  }
  if (Shape(dims.begin(), dims.end()) != ys)
    return Unsupported("slice output shape " + ShapeToString(ys) + " disagrees with its starts, ends and steps");
  const Type type = RunType(graph, node);
  memory::desc window;
  try {
    window = unit_steps ? Plain(x_dims, type).submemory_desc(dims, starts) : memory::desc(dims, type, strides);
  } catch (const dnnl::error&) {
    auto list = [](const Dims& v) {
      std::string out;
      for (auto d : v) out += (out.empty() ? "" : ",") + std::to_string(d);
      return out;
    };
    return Unsupported("slice with steps: oneDNN " + LibraryVersion() + " refuses its strided window as a memory descriptor (dims " +
                       list(dims) + ", strides " + list(strides) + ")");
  }
  const memory::desc y_md = Plain(dims, type);
  dnnl::reorder::primitive_desc pd(ctx.engine, window, ctx.engine, y_md);
  if (ctx.node == nullptr) return Status::Ok();
  const std::size_t offset = unit_steps ? 0 : static_cast<std::size_t>(first) * ElementBytes(TypeOf(graph, node.inputs[0]));
  Step step{dnnl::reorder(pd), {}, {{DNNL_ARG_FROM, node.inputs[0], offset}}, {{DNNL_ARG_TO, node.outputs[0]}}};
  step.args[DNNL_ARG_FROM] = Unbound(ctx, window);
  step.args[DNNL_ARG_TO] = Unbound(ctx, y_md);
  ctx.node->steps_.push_back(std::move(step));
  AddPostEltwise(ctx, graph, node, act);
  return Status::Ok();
}

// gather along one axis. The data seen as [outer, axis, inner] and the output as
// [outer, indices, inner]: each index copies one slab [outer, 1, inner]. Constant indices are
// slices, one reorder per run of consecutive indices, made here; indices known only at run time
// make one reorder of one slab, run once per index (IndexedSlabs).
Status Gather(const Graph& graph, const Node& node, const Eltwise& act, Ctx& ctx) {
  LATTE_RETURN_IF_ERROR(NeedInputs(node, 2));
  if (node.inputs.size() != 2) return Unsupported("gather with " + std::to_string(node.inputs.size()) + " inputs");
  const Tensor& x = graph.tensor(node.inputs[0]);
  const Tensor& idx = graph.tensor(node.inputs[1]);
  const Tensor& y = graph.tensor(node.outputs[0]);
  if (idx.dtype != DataType::kInt64 && idx.dtype != DataType::kInt32)
    return Unsupported("gather indices '" + idx.name + "' are " + std::string(DataTypeName(idx.dtype)) + ", not int32 or int64");
  if (!idx.fully_known()) return Unsupported("gather indices '" + idx.name + "' have unknown shape");
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  std::int64_t axis = node.attrs.GetInt("axis", 0);
  if (axis < -rank || axis >= rank) return Unsupported("gather axis " + std::to_string(axis) + " out of range");
  if (axis < 0) axis += rank;
  std::int64_t outer = 1, inner = 1;
  for (std::int64_t d = 0; d < rank; ++d)
    if (d < axis) outer *= x.shape[static_cast<size_t>(d)];
    else if (d > axis) inner *= x.shape[static_cast<size_t>(d)];
  const std::int64_t size = x.shape[static_cast<size_t>(axis)], count = Elements(idx);
  if (outer * count * inner != Elements(y)) return Unsupported("gather output size disagrees with its data and indices");
  if (act.present) return Unsupported("gather with a fused activation");
  const Type x_type = TypeOf(x), y_type = TypeOf(y);  // a float32 table read into bf16 at bf16
  const memory::desc table = Plain({outer, size, inner}, x_type), out = Plain({outer, count, inner}, y_type);
  if (idx.is_constant()) {
    // Runs of consecutive indices, each one reorder: [outer, run, inner] from the table's rows
    // `from` on into the output's rows `to` on.
    const std::uint8_t* bytes = idx.data->data();
    IndexedSlabs check{node.inputs[1], idx.dtype == DataType::kInt64, count, size, 0, 0, idx.name};
    auto indices = CheckedIndices(check, bytes);
    if (!indices.ok()) return indices.status();
    for (std::int64_t to = 0; to < count;) {
      const std::int64_t from = (*indices)[static_cast<size_t>(to)];
      std::int64_t run = 1;
      while (to + run < count && (*indices)[static_cast<size_t>(to + run)] == from + run) ++run;
      const memory::desc src = table.submemory_desc({outer, run, inner}, {0, from, 0});
      const memory::desc dst = out.submemory_desc({outer, run, inner}, {0, to, 0});
      dnnl::reorder::primitive_desc pd(ctx.engine, src, ctx.engine, dst);
      if (ctx.node != nullptr) {
        Step step{dnnl::reorder(pd), {}, {{DNNL_ARG_FROM, node.inputs[0]}}, {{DNNL_ARG_TO, node.outputs[0]}}};
        step.args[DNNL_ARG_FROM] = Unbound(ctx, src);
        step.args[DNNL_ARG_TO] = Unbound(ctx, dst);
        ctx.node->steps_.push_back(std::move(step));
      }
      to += run;
    }
    return Status::Ok();
  }
  // One slab [outer, inner]: rows `size · inner` apart in the table, `count · inner` in the output.
  const memory::desc src(Dims{outer, inner}, x_type, Dims{size * inner, 1});
  const memory::desc dst(Dims{outer, inner}, y_type, Dims{count * inner, 1});
  dnnl::reorder::primitive_desc pd(ctx.engine, src, ctx.engine, dst);
  if (ctx.node == nullptr) return Status::Ok();
  Step step{dnnl::reorder(pd), {}, {{DNNL_ARG_FROM, node.inputs[0]}}, {{DNNL_ARG_TO, node.outputs[0]}}};
  step.args[DNNL_ARG_FROM] = Unbound(ctx, src);
  step.args[DNNL_ARG_TO] = Unbound(ctx, dst);
  step.indexed = IndexedSlabs{node.inputs[1],
                              idx.dtype == DataType::kInt64,
                              count,
                              size,
                              static_cast<std::size_t>(inner) * ElementBytes(x_type),
                              static_cast<std::size_t>(inner) * ElementBytes(y_type),
                              idx.name};
  ctx.node->steps_.push_back(std::move(step));
  return Status::Ok();
}

// What analyzes and creates each kind this backend runs: the one list of them.
using Handler = Status (*)(const Graph&, const Node&, const Eltwise&, Ctx&);
const KindTable<Handler>& Handlers() {
  using K = OpKind;
  static const KindTable<Handler> handlers = [] {
    KindTable<Handler> h;
    h.Add({K::kConv2D, K::kDepthwiseConv2D}, Conv);
    h.Add({K::kFullyConnected}, FullyConnected);
    h.Add({K::kMatMul}, MatMul);
    h.Add({K::kMaxPool2D, K::kAvgPool2D, K::kGlobalAvgPool, K::kGlobalMaxPool}, Pool);
    h.Add({K::kAdd, K::kSub, K::kMul, K::kDiv, K::kMaximum, K::kMinimum}, Binary);
    h.Add({K::kEqual, K::kNotEqual, K::kLess, K::kLessEqual, K::kGreater, K::kGreaterEqual}, Binary);
    h.Add({K::kLogicalAnd, K::kLogicalOr}, Binary);
    h.Add({K::kLogicalNot}, LogicalNot);
    h.Add({K::kPow}, Pow);
    h.Add({K::kRelu, K::kRelu6, K::kReluN1To1, K::kClip, K::kLeakyRelu, K::kElu, K::kGelu}, Unary);
    for (const SimpleEltwise& op : kSimpleEltwise) h.Add(op.kind, Unary);
    h.Add({K::kSoftmax}, Softmax);
    h.Add({K::kConcat}, Concat);
    h.Add({K::kPad}, Pad);
    h.Add({K::kResize}, Resize);
    h.Add({K::kMean}, Mean);
    h.Add({K::kTransposeConv2D}, TransposeConv);
    h.Add({K::kTranspose}, Transpose);
    h.Add({K::kHardSigmoid}, HardSigmoid);
    h.Add({K::kBatchNorm}, BatchNorm);
    h.Add({K::kLayerNorm}, LayerNorm);
    h.Add({K::kReshape, K::kFlatten, K::kSqueeze, K::kUnsqueeze, K::kIdentity}, Copy);
    h.Add({K::kCast}, Cast);
    h.Add({K::kSlice}, Slice);
    h.Add({K::kGather}, Gather);
    h.Add({K::kDepthToSpace, K::kSpaceToDepth}, DepthSpace);
    return h;
  }();
  return handlers;
}

// int8 fully_connected: oneDNN's matmul (its inner product takes no zero points), the weights as
// the [in, out] matrix with the file's strides, quantized per output channel.
Status Int8FullyConnected(const Graph& graph, const Node& node, const Eltwise& act, Ctx& ctx) {
  LATTE_ASSIGN_OR_RETURN(const FullyConnectedParams p, CheckedFullyConnectedParams(graph, node));
  const bool io = node.attrs.GetString("weights_layout", "OI") == "IO";
  const std::int64_t in = p.in_features, out = p.out_features;
  LATTE_ASSIGN_OR_RETURN(const Int8Quantization q,
                         QuantizeForOnednn(graph, node, act, static_cast<const float*>(ConstData(graph, node.inputs[1])),
                                           static_cast<size_t>(in * out), static_cast<size_t>(out), /*channel_is_last=*/io,
                                           p.has_bias, ctx.node == nullptr));
  const memory::desc src_md({p.rows, in}, Type::s8, Tag::ab);
  const memory::desc dst_md({p.rows, out}, Type::s8, Tag::ab);
  const memory::desc w_any({in, out}, Type::s8, Tag::any);
  const memory::desc bias_md({1, out}, kF32, Tag::ab);
  const dnnl::matmul::desc desc = p.has_bias ? dnnl::matmul::desc(src_md, w_any, bias_md, dst_md) : dnnl::matmul::desc(src_md, w_any, dst_md);
  dnnl::matmul::primitive_desc pd(desc, q.attr, ctx.engine);
  LATTE_RETURN_IF_ERROR(AvoidAmxInt8(pd, node));
  if (ctx.node == nullptr) return Status::Ok();
  const memory::desc w_file({in, out}, Type::s8, io ? Dims{out, 1} : Dims{1, in});
  AddWeightedStep(ctx, node, dnnl::matmul(pd), src_md, dst_md, w_file, q.weights.data(), pd.weights_desc(),
                  p.has_bias ? &bias_md : nullptr, q.bias.data());
  return Status::Ok();
}

// int8 pooling: max keeps its input's parameters; an average is rescaled from the input's to the
// output's by a linear post-op on the averaged int8 values. Then the fused activation's clamp.
Status Int8Pool(const Graph& graph, const Node& node, const Eltwise& act, Ctx& ctx) {
  LATTE_ASSIGN_OR_RETURN(const auto bounds, Int8Bounds(node, act));
  const Q8 qx = Q8Of(graph.tensor(node.inputs[0])), qy = Q8Of(graph.tensor(node.outputs[0]));
  dnnl::post_ops ops;
  if (node.kind == OpKind::kMaxPool2D || node.kind == OpKind::kGlobalMaxPool) {
    LATTE_RETURN_IF_ERROR(NeedSameInt8Params(graph, node));
  } else {
    AppendInt8Rescale(ops, qx, qy);
  }
  AppendInt8Clamp(ops, bounds, qy.scale, qy.zero);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  return PoolWith(graph, node, ctx, attr);
}

// int8 mean: the reduction averages the int8 values in f32, rescaled to the output's parameters and
// clamped by post-ops, as an average pool (a spatial mean in int8 models stayed fp32 with a
// dequantize and a quantize around it).
Status Int8Mean(const Graph& graph, const Node& node, const Eltwise& act, Ctx& ctx) {
  LATTE_ASSIGN_OR_RETURN(const auto bounds, Int8Bounds(node, act));
  const Q8 qx = Q8Of(graph.tensor(node.inputs[0])), qy = Q8Of(graph.tensor(node.outputs[0]));
  dnnl::post_ops ops;
  AppendInt8Rescale(ops, qx, qy);
  AppendInt8Clamp(ops, bounds, qy.scale, qy.zero);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  return MeanWith(graph, node, ctx, attr);
}

// int8 add and sub: oneDNN's binary scales each source to the output's scale; one linear post-op
// adds what the zero points contribute and the output's (oneDNN 2.6.3 applied a second linear
// post-op with the first one's constant in our probes: never two), then the clamp. A float32
// constant operand is read as real values (scale 1, zero point 0). A product is Int8Mul's.
// An int8 binary node's two operands as the output's rank (BroadcastDims), and the output's dims.
struct BinaryOperands {
  Dims y, a, b;
  TensorId a_id, b_id;
};
Expected<BinaryOperands> Int8BinaryOperands(const Graph& graph, const Node& node) {
  LATTE_RETURN_IF_ERROR(NeedInputs(node, 2));
  if (node.inputs.size() != 2) return Unsupported(Name(node) + " with " + std::to_string(node.inputs.size()) + " inputs");
  const Shape& ys = graph.tensor(node.outputs[0]).shape;
  BinaryOperands o{Dims(ys.begin(), ys.end()), {}, {}, node.inputs[0], node.inputs[1]};
  LATTE_ASSIGN_OR_RETURN(o.a, BroadcastDims(graph, node, o.a_id));
  LATTE_ASSIGN_OR_RETURN(o.b, BroadcastDims(graph, node, o.b_id));
  return o;
}

Status Int8Binary(const Graph& graph, const Node& node, const Eltwise& act, Ctx& ctx) {
  LATTE_ASSIGN_OR_RETURN(BinaryOperands o, Int8BinaryOperands(graph, node));
  LATTE_ASSIGN_OR_RETURN(const auto bounds, Int8Bounds(node, act));
  const Dims& y = o.y;
  Dims a = std::move(o.a), b = std::move(o.b);
  TensorId a_id = o.a_id, b_id = o.b_id;
  if (a != y) {  // oneDNN broadcasts its second source only
    if (node.kind != OpKind::kAdd || b != y)
      return Unsupported("int8 " + Name(node) + " broadcasting its first input not implemented in the onednn backend");
    std::swap(a, b), std::swap(a_id, b_id);
  }
  const auto params = [&](TensorId id) {
    const Tensor& t = graph.tensor(id);
    return IsInt8Activation(t) ? Q8Of(t) : Q8{1.0f, 0};
  };
  const Q8 qa = params(a_id), qb = params(b_id), qy = Q8Of(graph.tensor(node.outputs[0]));
  const float sign = node.kind == OpKind::kSub ? -1.0f : 1.0f;
  const float offset = static_cast<float>(qy.zero) - qa.scale * static_cast<float>(qa.zero) / qy.scale -
                       sign * qb.scale * static_cast<float>(qb.zero) / qy.scale;
  dnnl::primitive_attr attr;
  attr.set_scales(DNNL_ARG_SRC_0, 0, {qa.scale / qy.scale});
  attr.set_scales(DNNL_ARG_SRC_1, 0, {qb.scale / qy.scale});
  dnnl::post_ops ops;
  ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, 1.0f, offset);
  AppendInt8Clamp(ops, bounds, qy.scale, qy.zero);
  attr.set_post_ops(ops);
  const memory::desc a_md = Plain(a, TypeOf(graph, a_id)), b_md = Plain(b, TypeOf(graph, b_id)), y_md = Plain(y, Type::s8);
  dnnl::binary::primitive_desc pd({node.kind == OpKind::kSub ? dnnl::algorithm::binary_sub : dnnl::algorithm::binary_add, a_md, b_md, y_md},
                                  attr, ctx.engine);
  if (ctx.node == nullptr) return Status::Ok();
  AddBinaryStep(ctx, node, dnnl::binary(pd), a_id, a_md, b_id, b_md, y_md);
  return Status::Ok();
}

// int8 mul: y = sa·sb/sy · (qa − za)(qb − zb) + zy. oneDNN 2.6's binary takes no zero points, so
// the second operand is first made T = sa·sb/sy · (qb − zb) in f32 (a reorder with its zero point
// and that scale, each run; once for a float32 constant, read as real values), then one binary
// subtracts za from the first operand, multiplies by T in a post-op and adds zy in another. The
// post-op's T may be a whole map, one value per channel (a squeeze-and-excite's weights) or one
// value: oneDNN's post-ops broadcast over all but the channels, so a rank-4 map is described to it as
// NCHW over its NHWC memory.
Status Int8Mul(const Graph& graph, const Node& node, const Eltwise& act, Ctx& ctx) {
  LATTE_ASSIGN_OR_RETURN(BinaryOperands o, Int8BinaryOperands(graph, node));
  LATTE_ASSIGN_OR_RETURN(const auto bounds, Int8Bounds(node, act));
  const Dims& y = o.y;
  const Shape& ys = graph.tensor(node.outputs[0]).shape;
  Dims a = std::move(o.a), b = std::move(o.b);
  TensorId a_id = o.a_id, b_id = o.b_id;
  if (a != y) std::swap(a, b), std::swap(a_id, b_id);  // a product commutes: the whole map first
  const Tensor& at = graph.tensor(a_id);
  const Tensor& bt = graph.tensor(b_id);
  if (a != y || !IsInt8Activation(at))
    return Unsupported("int8 " + Name(node) + " needs one int8 operand of the output's shape, not implemented otherwise in the onednn backend");
  const bool scalar = Elements(bt) == 1;
  const bool per_channel = y.size() == 4 && b == Dims{1, 1, 1, y[3]};
  if (b != y && !scalar && !per_channel)
    return Unsupported("int8 " + Name(node) + " broadcasting " + ShapeToString(bt.shape) + " over " + ShapeToString(ys) +
                       " not implemented in the onednn backend (a whole map, one value per channel or one value only)");
  const bool b_int8 = IsInt8Activation(bt);
  if (!b_int8 && !(bt.is_constant() && bt.dtype == DataType::kFloat32))
    return Unsupported("int8 " + Name(node) + " of a float32 activation");
  const Q8 qa = Q8Of(at), qb = b_int8 ? Q8Of(bt) : Q8{1.0f, 0}, qy = Q8Of(graph.tensor(node.outputs[0]));
  const float k = qa.scale * qb.scale / qy.scale;
  // Rank 4 as NCHW over NHWC memory (channels are oneDNN's dim 1, which its post-ops broadcast along).
  const auto logical = [&](const Dims& d, Type type) {
    if (d.size() != 4) return Plain(d, type);
    return memory::desc({d[0], d[3], d[1], d[2]}, type, Tag::nhwc);
  };
  const memory::desc map_md = logical(y, Type::s8);  // the first operand's and the output's
  const memory::desc t_md = scalar ? Plain(Dims(y.size(), 1), kF32) : logical(b, kF32);
  const memory::desc b_md = scalar ? Plain(Dims(y.size(), 1), Type::s8) : logical(b, Type::s8);
  const memory::desc zero_md = Plain(Dims(y.size(), 1), kF32);
  dnnl::post_ops ops;
  ops.append_binary(dnnl::algorithm::binary_mul, t_md);
  ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, 1.0f, static_cast<float>(qy.zero));
  AppendInt8Clamp(ops, bounds, qy.scale, qy.zero);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  dnnl::binary::primitive_desc pd({dnnl::algorithm::binary_sub, map_md, zero_md, map_md}, attr, ctx.engine);
  std::optional<dnnl::reorder::primitive_desc> t_pd;
  if (b_int8) {
    dnnl::primitive_attr t_attr;
    t_attr.set_output_scales(0, {k});
    t_attr.set_zero_points(DNNL_ARG_SRC, 0, {qb.zero});
    t_pd.emplace(ctx.engine, b_md, ctx.engine, t_md, t_attr);
  }
  if (ctx.node == nullptr) return Status::Ok();
  memory t(t_md, ctx.engine);
  if (b_int8) {
    Step to_t{dnnl::reorder(*t_pd), {{DNNL_ARG_TO, t}}, {{DNNL_ARG_FROM, b_id}}, {}};
    to_t.args[DNNL_ARG_FROM] = Unbound(ctx, b_md);
    ctx.node->steps_.push_back(std::move(to_t));
  } else {
    LATTE_ASSIGN_OR_RETURN(std::vector<float> c, ConstantFloats(bt));
    for (float& v : c) v *= k;
    std::memcpy(t.get_data_handle(), c.data(), c.size() * sizeof(float));  // `logical` keeps the memory's order
  }
  float za = static_cast<float>(qa.zero);
  Step step{dnnl::binary(pd), {{DNNL_ARG_SRC_1, PackWeights(ctx, zero_md, &za, zero_md)}, {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, t}},
            {{DNNL_ARG_SRC_0, a_id}}, {{DNNL_ARG_DST, node.outputs[0]}}};
  step.args[DNNL_ARG_SRC_0] = Unbound(ctx, map_md);
  step.args[DNNL_ARG_DST] = Unbound(ctx, map_md);
  ctx.node->steps_.push_back(std::move(step));
  return Status::Ok();
}

// quantize (float32 → int8) and dequantize (int8 → float32): a reorder with the scale and zero point.
Status Int8Convert(const Graph& graph, const Node& node, const Eltwise& act, Ctx& ctx) {
  if (act.present) return Unsupported(Name(node) + " with a fused activation");
  const bool quantize = node.kind == OpKind::kQuantize;
  const Tensor& x = graph.tensor(node.inputs[0]);
  const Tensor& y = graph.tensor(node.outputs[0]);
  if (quantize ? (x.dtype != DataType::kFloat32 || !IsInt8Activation(y)) : (!IsInt8Activation(x) || y.dtype != DataType::kFloat32))
    return Unsupported(Name(node) + (quantize ? " from float32 to int8" : " from int8 to float32") + " only");
  if (Elements(x) != Elements(y)) return Unsupported(Name(node) + " changes the number of elements");
  const Q8 q = Q8Of(quantize ? y : x);
  dnnl::primitive_attr attr;
  attr.set_output_scales(0, {quantize ? 1.0f / q.scale : q.scale});
  attr.set_zero_points(quantize ? DNNL_ARG_DST : DNNL_ARG_SRC, 0, {q.zero});
  const memory::desc x_md = Plain({Elements(x)}, TypeOf(x)), y_md = Plain({Elements(y)}, TypeOf(y));
  dnnl::reorder::primitive_desc pd(ctx.engine, x_md, ctx.engine, y_md, attr);
  if (ctx.node == nullptr) return Status::Ok();
  return AddOneInputStep(ctx, graph, node, dnnl::reorder(pd), x_md, y_md, Eltwise{}, DNNL_ARG_FROM, DNNL_ARG_TO);
}

// relu, relu6, relu_n1_to_1 and clip on int8 under one scale and zero point: the int8 values
// clipped at the bounds quantized. oneDNN 2.6's eltwise refuses s8 for a clip, so it is a binary
// maximum with the lower bound (one s8 value broadcast), whose post-op clips at the upper bound.
Status Int8Clamp(const Graph& graph, const Node& node, const Eltwise& act, Ctx& ctx) {
  if (act.present) return Unsupported("int8 " + Name(node) + " with a fused activation");
  if (node.inputs.size() != 1) return Unsupported(Name(node) + " with more than one input");
  LATTE_RETURN_IF_ERROR(NeedSameInt8Params(graph, node));
  if (Elements(graph.tensor(node.inputs[0])) != Elements(graph.tensor(node.outputs[0])))
    return Unsupported(Name(node) + " changes the number of elements");
  const auto [min, max] = ClampBounds(node);
  const Q8 q = Q8Of(graph.tensor(node.outputs[0]));
  const float lo = QuantizeValue(min, q), hi = QuantizeValue(max, q);
  const memory::desc md = Plain({Elements(graph.tensor(node.outputs[0]))}, Type::s8), lo_md = Plain({1}, Type::s8);
  dnnl::post_ops ops;
  ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip, lo, hi);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  dnnl::binary::primitive_desc pd({dnnl::algorithm::binary_max, md, lo_md, md}, attr, ctx.engine);
  if (ctx.node == nullptr) return Status::Ok();
  std::int8_t lo_value = static_cast<std::int8_t>(lo);
  AddScalarBinaryStep(ctx, node, dnnl::binary(pd), md, PackWeights(ctx, lo_md, &lo_value, lo_md));
  return Status::Ok();
}

// sigmoid, tanh, hard_swish, hard_sigmoid, elu, leaky_relu and gelu on int8: the function of the
// real values inside one binary add. The binary's source scale turns the int8 values into real
// units (times hard_sigmoid's slope), the added f32 scalar takes off the zero point (and adds
// hard_sigmoid's offset), the function is an eltwise post-op and a linear post-op puts the result
// in the output's scale and zero point, saturated to s8. (oneDNN 2.6's eltwise primitive takes no
// s8 for these, and its binary applied a second linear post-op wrongly in our probes: one only.)
Status Int8Activation(const Graph& graph, const Node& node, const Eltwise& act, Ctx& ctx) {
  if (act.present) return Unsupported("int8 " + Name(node) + " with a fused activation");
  if (node.inputs.size() != 1) return Unsupported(Name(node) + " with more than one input");
  const std::int64_t n = Elements(graph.tensor(node.outputs[0]));
  if (Elements(graph.tensor(node.inputs[0])) != n) return Unsupported(Name(node) + " changes the number of elements");
  float slope = 1.0f, offset = 0.0f;
  Eltwise f{true, dnnl::algorithm::eltwise_clip, 0.0f, 1.0f};
  if (node.kind == OpKind::kHardSigmoid) {
    slope = static_cast<float>(node.attrs.GetFloat("alpha", 0.2)), offset = static_cast<float>(node.attrs.GetFloat("beta", 0.5));
  } else {
    LATTE_ASSIGN_OR_RETURN(f, UnaryEltwise(node));
  }
  const Q8 qx = Q8Of(graph.tensor(node.inputs[0])), qy = Q8Of(graph.tensor(node.outputs[0]));
  dnnl::primitive_attr attr;
  attr.set_scales(DNNL_ARG_SRC_0, 0, {slope * qx.scale});
  dnnl::post_ops ops;
  ops.append_eltwise(1.0f, f.alg, f.alpha, f.beta);
  ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, 1.0f / qy.scale, static_cast<float>(qy.zero));
  attr.set_post_ops(ops);
  const memory::desc md = Plain({n}, Type::s8), shift_md = Plain({1}, kF32);
  dnnl::binary::primitive_desc pd({dnnl::algorithm::binary_add, md, shift_md, md}, attr, ctx.engine);
  if (ctx.node == nullptr) return Status::Ok();
  float shift = offset - slope * qx.scale * static_cast<float>(qx.zero);
  AddScalarBinaryStep(ctx, node, dnnl::binary(pd), md, PackWeights(ctx, shift_md, &shift, shift_md));
  return Status::Ok();
}

// Data movement on int8 (reshape and friends, concat, constant pad, resize, transpose,
// depth/space): the fp32 handler on s8 elements, every int8 tensor under one scale and zero point.
Status Int8Move(const Graph& graph, const Node& node, const Eltwise& act, Ctx& ctx) {
  if (act.present) return Unsupported("int8 " + Name(node) + " with a fused activation");
  for (TensorId in : node.inputs)
    if (in != kNoTensor && graph.tensor(in).is_constant() && !(node.kind == OpKind::kReshape && in == node.input(1)))
      return Unsupported("int8 " + Name(node) + " of a constant input is not implemented");
  LATTE_RETURN_IF_ERROR(NeedSameInt8Params(graph, node));
  return (*Handlers().Find(node.kind))(graph, node, act, ctx);
}

// The kinds this backend runs in int8, and what analyzes and creates each.
const KindTable<Handler>& Int8Handlers() {
  using K = OpKind;
  static const KindTable<Handler> handlers = [] {
    KindTable<Handler> h;
    h.Add({K::kConv2D, K::kDepthwiseConv2D}, Conv);  // AddConvolution quantizes an int8 node's weights
    h.Add({K::kTransposeConv2D}, TransposeConv);
    h.Add({K::kFullyConnected}, Int8FullyConnected);
    h.Add({K::kMaxPool2D, K::kAvgPool2D, K::kGlobalAvgPool, K::kGlobalMaxPool}, Int8Pool);
    h.Add({K::kMean}, Int8Mean);
    h.Add({K::kAdd, K::kSub}, Int8Binary);
    h.Add({K::kMul}, Int8Mul);
    h.Add({K::kQuantize, K::kDequantize}, Int8Convert);
    h.Add({K::kRelu, K::kRelu6, K::kReluN1To1, K::kClip}, Int8Clamp);
    h.Add({K::kSigmoid, K::kTanh, K::kHardSwish, K::kHardSigmoid, K::kElu, K::kLeakyRelu, K::kGelu}, Int8Activation);
    h.Add({K::kReshape, K::kFlatten, K::kSqueeze, K::kUnsqueeze, K::kIdentity, K::kConcat, K::kPad, K::kResize, K::kTranspose,
           K::kDepthToSpace, K::kSpaceToDepth},
          Int8Move);
    return h;
  }();
  return handlers;
}

// Node `node` of a plan lowered to int8, which reads or writes an int8 activation.
Status AnalyzeInt8Node(const Graph& graph, const Node& node, Ctx& ctx) {
  const Handler* handler = Int8Handlers().Find(node.kind);
  if (handler == nullptr)
    return Unsupported("int8 " + Name(node) + " unsupported on onednn, because Latte's oneDNN backend runs int8 convolutions, "
                       "fully-connected layers, adds, pooling, means, clamps, activations and data movement only");
  LATTE_RETURN_IF_ERROR(CheckInt8Tensors(graph, node, 6));
  LATTE_ASSIGN_OR_RETURN(const Eltwise act, FusedActivation(node));
  return (*handler)(graph, node, act, ctx);
}

// The kinds oneDNN has no primitive for, and what it lacks (nullptr: another kind).
const char* NoOnednnPrimitive(OpKind kind) {
  switch (kind) {
    case OpKind::kWhere:
      return "has no select primitive (and x·c + y·(1−c) is NaN where the side not taken is infinite, as attention masks are)";
    case OpKind::kArgMax: case OpKind::kArgMin:
      return "has no arg-max primitive (its reduction gives the extreme value, not where it is)";
    case OpKind::kErf: return "has no erf (its eltwise has erf only inside gelu_erf)";
    case OpKind::kFloor: case OpKind::kCeil: return "rounds only to the nearest integer (eltwise_round)";
    default: return nullptr;
  }
}

// Checks `node` and, with ctx.node, creates its primitives. Every refusal is kUnsupported. At int8,
// a node the plan kept fp32 is checked and run as at fp32.
Status AnalyzeNode(const Graph& graph, NodeId id, Precision precision, Ctx& ctx) {
  LATTE_ASSIGN_OR_RETURN(const Node* checked, NhwcNode(graph, id, "onednn backend"));
  const Node& node = *checked;
  if (precision == Precision::kInt8 && IsInt8Node(graph, node)) return AnalyzeInt8Node(graph, node, ctx);
  const Handler* handler = Handlers().Find(node.kind);
  if (const char* why = NoOnednnPrimitive(node.kind))
    return Unsupported(std::string(OpName(node.kind)) + " unsupported on onednn, because oneDNN " + LibraryVersion() + " " + why);
  if (handler == nullptr) return Unsupported(Name(node) + " not implemented in the onednn backend");
  // At bf16 the activations are bfloat16 and constants float32: only the kinds that convert a
  // constant operand (binary ops, matmul, concat, gather's table) may read one where an activation goes.
  const DataType activations = precision == Precision::kBf16 ? DataType::kBFloat16 : DataType::kFloat32;
  const bool converts_constants = node.kind == OpKind::kMatMul || node.kind == OpKind::kConcat || node.kind == OpKind::kGather ||
                                  KernelFamilyOf(node.kind) == KernelFamily::kBinary || IsComparisonOrLogic(node.kind);
  if (precision == Precision::kBf16 && !converts_constants && graph.tensor(node.inputs[0]).is_constant())
    return Unsupported(Name(node) + " of a constant unsupported at bf16, because its input would need converting on every run");
  if (node.kind == OpKind::kCast) {
    if (node.outputs.size() != 1) return Unsupported("cast with " + std::to_string(node.outputs.size()) + " outputs");
  } else if (IsComparisonOrLogic(node.kind)) {
    // A bool output; a comparison's operands float32, checked as every node's, logic's bool.
    auto known_bool = [&](TensorId id, const char* what) {
      const Tensor& t = graph.tensor(id);
      return t.dtype == DataType::kBool && t.fully_known() && t.shape.size() <= 6
                 ? Status::Ok()
                 : Unsupported(Name(node) + " " + what + " '" + t.name + "' is not a known bool tensor of rank ≤ 6");
    };
    LATTE_RETURN_IF_ERROR(known_bool(node.outputs.at(0), "output"));
    if (IsLogic(node.kind)) {
      for (TensorId in : node.inputs) LATTE_RETURN_IF_ERROR(known_bool(in, "input"));
    } else {
      Node operands = node;
      operands.outputs = {node.inputs.at(0)};
      LATTE_RETURN_IF_ERROR(CheckTensors(graph, operands, -1, activations));
    }
  } else if (CopiesElements(node.kind) && IsInteger(graph.tensor(node.inputs[0]).dtype)) {
    LATTE_RETURN_IF_ERROR(CheckIntegerCopy(graph, node));
  } else {
    // reshape's shape and gather's indices are integers, checked by their handlers.
    const bool integer_second = node.kind == OpKind::kReshape || node.kind == OpKind::kGather;
    LATTE_RETURN_IF_ERROR(CheckTensors(graph, node, integer_second ? 1 : -1, activations));
  }
  LATTE_ASSIGN_OR_RETURN(const Eltwise act, FusedActivation(node));
  return (*handler)(graph, node, act, ctx);
}

// Whether node `id` of a graph lowered to bf16 would be accepted at fp32: the node's tensors
// read as float32 in a copy (constant data shared), checked without creating anything.
bool RunsAtFp32(const Graph& graph, NodeId id, const Ctx& ctx) {
  Graph fp32 = graph;
  const Node& node = graph.node(id);
  for (const std::vector<TensorId>* ids : {&node.inputs, &node.outputs})
    for (TensorId t : *ids)
      if (t != kNoTensor && fp32.tensor(t).dtype == DataType::kBFloat16) fp32.mutable_tensor(t).dtype = DataType::kFloat32;
  Ctx check{ctx.engine, ctx.stream, nullptr};
  try {
    return AnalyzeNode(fp32, id, Precision::kFp32, check).ok();
  } catch (const dnnl::error&) {
    return false;
  }
}

// oneDNN reports what it cannot do by throwing: "unimplemented" / invalid arguments are a
// "no" for a valid node; anything else is an internal error.
Status Analyze(const Graph& graph, NodeId id, Precision precision, Ctx& ctx) {
  try {
    return AnalyzeNode(graph, id, precision, ctx);
  } catch (const dnnl::error& e) {
    const std::string message = std::string("oneDNN: ") + e.what();
    if (e.status != dnnl_unimplemented && e.status != dnnl_invalid_arguments) return Internal(message);
    // At bf16, a node oneDNN would run at fp32 lacks a bf16 kernel: say so, rather than oneDNN's
    // generic "could not create a descriptor".
    if (precision == Precision::kBf16 && RunsAtFp32(graph, id, ctx))  // the node was checked: id is valid
      return Unsupported(Name(graph.node(id)) + " unsupported at bf16, because oneDNN " + LibraryVersion() +
                         " has no bf16 kernel for it on this CPU (" + message + ")");
    return Unsupported(message);
  }
}

}  // namespace

OnednnBackend::OnednnBackend(const RunOptions& options) : options_(options) {}
OnednnBackend::~OnednnBackend() = default;

Expected<std::unique_ptr<Backend>> OnednnBackend::Create(const RunOptions& options) {
  if (options.num_threads < 1) return InvalidInput("onednn needs at least 1 thread");
  if (options.precision == Precision::kBf16) {
    // oneDNN would emulate bf16 with avx512_core (slower than fp32) or refuse below it: neither is
    // what --precision bf16 asks to measure.
    if (Support bf16 = OnednnBf16Support(); !bf16.ok()) return Unsupported("onednn: bf16 unsupported, because " + bf16.why());
  }
  // OpenMP's wait policy is left at libgomp's default (spin a while, then sleep). Measured on
  // face_detection, 2 threads: passive 9.66 ms, default 0.88 ms, active 0.87 ms (p50) — waking
  // sleeping workers for each of ~90 primitives costs more than the kernels (BENCHMARKS.md).
  omp_set_num_threads(options.num_threads);
  std::unique_ptr<OnednnBackend> backend(new OnednnBackend(options));
  try {
    backend->impl_ = std::make_unique<Impl>();
  } catch (const dnnl::error& e) {
    return Internal(std::string("oneDNN CPU engine: ") + e.what());
  }
  return std::unique_ptr<Backend>(std::move(backend));
}

std::string OnednnBackend::Version() const {
  const int n = options_.num_threads;
  return "oneDNN " + LibraryVersion() + " (OpenMP, " + std::to_string(n) + (n == 1 ? " thread)" : " threads)");
}

Support OnednnBf16Support() {
  // oneDNN's own dispatch decides which kernels run, so its effective ISA (cpuid, capped by
  // ONEDNN_MAX_CPU_ISA) is what says whether bf16 primitives have AVX-512 BF16 instructions.
  const auto isa = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
  const auto bf16 = static_cast<unsigned>(dnnl_cpu_isa_avx512_core_bf16);
  if ((isa & bf16) == bf16) return Support::Yes();
  return Support::No("oneDNN " + LibraryVersion() + "'s effective ISA on this CPU lacks avx512_core_bf16 (AVX-512 BF16)");
}

Support OnednnBackend::RunsPrecision(Precision) const { return Support::Yes(); }

Support OnednnBackend::Supports(const Graph& graph, NodeId node) const {
  Ctx ctx{impl_->engine, impl_->stream, nullptr};
  Status status = Analyze(graph, node, options_.precision, ctx);
  return status.ok() ? Support::Yes() : Support::No(status.message());
}

Expected<std::unique_ptr<PreparedNode>> OnednnBackend::Prepare(const Graph& graph, NodeId node) {
  omp_set_num_threads(options_.num_threads);
  auto prepared = std::make_unique<DnnlNode>(impl_->stream, options_.num_threads);
  Ctx ctx{impl_->engine, impl_->stream, prepared.get()};
  LATTE_RETURN_IF_ERROR(Analyze(graph, node, options_.precision, ctx));
  return std::unique_ptr<PreparedNode>(std::move(prepared));
}

std::vector<std::string> OnednnImplementations(const PreparedNode& node) {
  const auto* dnnl_node = dynamic_cast<const DnnlNode*>(&node);
  return dnnl_node != nullptr ? dnnl_node->Implementations() : std::vector<std::string>{};
}

void RegisterOnednnBackend(BackendRegistry& registry) {
  registry.RegisterBuiltin({"onednn", "oneDNN primitives (fp32; bf16 with AVX-512 BF16; int8; NHWC), OpenMP threads",
                            [](const RunOptions& options) { return OnednnBackend::Create(options); },
                            /*takes_nhwc=*/true, /*clamps_run_apart=*/{}, /*nchwc_block=*/0,
                            /*channels_in_vectors=*/true});  // its NHWC convs block channels by the vector
}

}  // namespace latte
