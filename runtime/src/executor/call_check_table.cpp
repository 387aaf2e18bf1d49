// The per-call checks, one per op (or family) whose backward code reads by a grad's rank or by
// values inside a saved tensor without checking them first. Each comment names the unchecked
// read in torch that the check keeps in bounds; every condition holds for a graph captured
// from a real forward.
#include <ATen/ATen.h>

#include <algorithm>
#include <string>
#include <vector>

#include "executor/call_checks.h"

namespace ca::detail {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

// Index values used as raw offsets must lie in [0, limit). On an accelerator the check may not
// synchronize (a CUDA graph may be capturing): the device asserts instead.
void check_indices(const CallView& c, const char* name, int64_t limit, const std::string& what) {
  const at::Tensor& idx = c.tensor(name);
  // Meta tensors (load-time inference) hold no values, and their kernels read none.
  if (!idx.defined() || idx.numel() == 0 || idx.is_meta()) return;
  const std::string why = "holds an index outside [0, " + str(limit) + "), " + what;
  if (!idx.device().is_cpu()) {
    at::_assert_async(((idx >= 0) & (idx < limit)).all(), why);
    return;
  }
  const auto [lo, hi] = at::aminmax(idx);
  if (lo.item<int64_t>() < 0 || hi.item<int64_t>() >= limit) c.fail(name, why);
}

// repeat_backward: `grad.dim() - sizes.size()` is a size_t, then repeats[i + that].
void repeat(const CallView& c) {
  const at::Tensor& g = c.grad(0);
  const size_t repeats = c.ints("repeats").size();
  if (g.defined() && static_cast<size_t>(g.dim()) != repeats) {
    c.fail_grad(
        0, "the op reads one of " + str(static_cast<int64_t>(repeats)) + " repeats per grad dim");
  }
}

// as_strided_backward reads size[i] and stride[i] for each grad dim.
void as_strided(const CallView& c) {
  const at::Tensor& g = c.grad(0);
  const size_t size = c.ints("size").size();
  if (g.defined() && static_cast<size_t>(g.dim()) != size) {
    c.fail_grad(0, "the view it is the grad of has " + str(static_cast<int64_t>(size)) + " dims");
  }
}

// sum_to sums the grad's leading dims away, then reads sizes[i - leading]: leading >= 0.
void expand(const CallView& c) {
  const at::Tensor& g = c.grad(0);
  const size_t sizes = c.ints("self_sym_sizes").size();
  if (g.defined() && static_cast<size_t>(g.dim()) < sizes) {
    c.fail_grad(0, "an expand of a tensor of rank " + str(static_cast<int64_t>(sizes)) +
                       " has at least that rank");
  }
}

// unfold_backward's kernel walks the grad by the unfold's own geometry: the grad must have the
// unfold's output shape. (step > 0 is a load rule.)
void unfold(const CallView& c) {
  const at::Tensor& g = c.grad(0);
  if (!g.defined()) return;
  std::vector<int64_t> shape = c.ints("self_sym_sizes");
  const int64_t size = c.integer("size"), step = c.integer("step");
  const auto rank = static_cast<int64_t>(shape.size());
  int64_t dim = c.integer("dimension");
  if (rank == 0) {
    shape = {size};
  } else {
    if (dim < -rank || dim >= rank) c.fail("dimension", "outside a tensor of rank " + str(rank));
    dim = dim < 0 ? dim + rank : dim;
    if (size < 0 || size > shape[dim] || step <= 0) {
      c.fail("size", "windows of " + str(size) + " do not fit a dim of " + str(shape[dim]));
    }
    shape[dim] = (shape[dim] - size) / step + 1;
    shape.push_back(size);
  }
  if (g.sizes() != at::IntArrayRef(shape)) {
    c.fail_grad(0, "the unfold's output has shape " + c10::str(at::IntArrayRef(shape)));
  }
}

// restore_reduced_dims writes target_shape[d] for each reduced d, in a shape of rank + n.
void amax_amin(const CallView& c) {
  const c10::IValue& keepdim = c.arg("keepdim");
  if (keepdim.isBool() && keepdim.toBool()) return;
  const std::vector<int64_t> dims = c.ints("dim");
  const auto n = static_cast<int64_t>(dims.size());
  for (const at::Tensor* t : {&c.grad(0), &c.tensor("result")}) {
    if (!t->defined()) continue;
    const int64_t total = t->dim() + n;
    for (int64_t d : dims) {
      if (d < -total || d >= total) {
        c.fail("dim",
               "dim " + str(d) + " outside the rank " + str(total) + " the reduced tensor had");
      }
    }
  }
}

// layer_norm_double_backward and the rms-norm backward take `input.dim() - normalized.size()`
// as the first normalized axis.
void normalized_shape(const CallView& c) {
  const at::Tensor& input = c.tensor("input");
  const auto n = static_cast<int64_t>(c.ints("normalized_shape").size());
  if (input.defined() && input.dim() < n) {
    c.fail("normalized_shape",
           str(n) + " normalized dims for an input of rank " + str(input.dim()));
  }
}

// glu_double_backward_grad_output halves sizes[dim] of self's sizes, wrapped once.
void glu_double(const CallView& c) {
  const at::Tensor& self = c.tensor("self");
  const int64_t dim = c.integer("dim");
  if (self.defined() && (dim < -self.dim() || dim >= self.dim())) {
    c.fail("dim", "outside self of rank " + str(self.dim()));
  }
}

// lu_unpack_backward sets the last two sizes of each grad's shape.
void lu_unpack(const CallView& c) {
  for (size_t k = 0; k < 2; ++k) {
    if (c.grad(k).defined() && c.grad(k).dim() < 2) c.fail_grad(k, "expected a batch of matrices");
  }
}

// _convolution_double_backward reads the input's and grad_output's spatial sizes for each
// spatial dim of the weight, and the channel sizes of grads[2].
void conv_double(const CallView& c, const char* input_name) {
  const at::Tensor& weight = c.tensor("weight");
  if (!weight.defined()) return;
  const at::Tensor& input = c.tensor(input_name);
  const at::Tensor& grad_output = c.tensor("grad_output");
  const int64_t rank = std::max<int64_t>(weight.dim(), 2);
  if (input.defined() && input.dim() < rank) {
    c.fail(input_name, "rank " + str(input.dim()) + " for a weight of rank " + str(rank));
  }
  if (grad_output.defined() && grad_output.dim() < rank) {
    c.fail("grad_output", "rank " + str(grad_output.dim()) + " for a weight of rank " + str(rank));
  }
  if (c.grad(2).defined() && c.grad(2).dim() < 1) c.fail_grad(2, "a bias grad has one dim");
}
void conv_double_input(const CallView& c) { conv_double(c, "input"); }
void conv_double_self(const CallView& c) { conv_double(c, "self"); }

// The max-pool backward kernels add each grad into grad_input[plane + index] unchecked; the
// fractional ones assert it in torch's internal words.
template <int64_t K>
void pool_indices(const CallView& c) {
  const at::Tensor& self = c.tensor("self");
  if (!self.defined() || self.dim() < K) return;  // the op refuses such an input itself
  int64_t plane = 1;
  for (int64_t d = self.dim() - K; d < self.dim(); ++d) plane *= self.size(d);
  check_indices(c, "result1", plane, "the pooled input's planes have " + str(plane) + " elements");
}

// embedding_dense_backward scatters grad rows into grad_weight[index] unchecked.
void embedding(const CallView& c) {
  const int64_t rows = c.integer("weight_sym_argsize_0");
  check_indices(c, "indices", rows, "the weight has " + str(rows) + " rows");
}

std::vector<int64_t> targets_of(const at::Tensor& targets) {
  const at::Tensor t = targets.to(at::kCPU, at::kLong).contiguous();
  return std::vector<int64_t>(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + t.numel());
}

// _ctc_loss_backward "assumes the forward checked": lengths index the batch, input lengths
// bound the time steps read, target lengths and values are offsets into targets, log_alpha
// and the class dim.
void ctc_lengths(const CallView& c, int64_t batch, int64_t time) {
  const std::vector<int64_t> il = c.ints("input_lengths"), tl = c.ints("target_lengths");
  auto one_per_sample = [&](const char* name, const std::vector<int64_t>& v) {
    if (static_cast<int64_t>(v.size()) != batch) {
      c.fail(name, str(static_cast<int64_t>(v.size())) + " lengths for a batch of " + str(batch));
    }
  };
  one_per_sample("input_lengths", il);
  one_per_sample("target_lengths", tl);
  for (int64_t l : il) {
    if (l < 0 || l > time) c.fail("input_lengths", str(l) + " outside [0, " + str(time) + "]");
  }
  for (int64_t l : tl) {
    if (l < 0) c.fail("target_lengths", "a negative length " + str(l));
  }
}

void ctc_targets(const CallView& c, int64_t batch, int64_t classes) {
  const std::vector<int64_t> tl = c.ints("target_lengths");
  const at::Tensor& targets = c.tensor("targets");
  if (!targets.defined()) c.fail("targets", "undefined");
  const std::vector<int64_t> values =
      targets.is_meta() ? std::vector<int64_t>(static_cast<size_t>(targets.numel()))
                        : targets_of(targets);
  auto check_values = [&](size_t from, int64_t count) {
    for (int64_t k = 0; k < count; ++k) {
      const int64_t v = values[from + static_cast<size_t>(k)];
      if (v < 0 || v >= classes) c.fail("targets", "class " + str(v) + " of " + str(classes));
    }
  };
  if (targets.dim() == 1) {  // concatenated
    int64_t total = 0;
    for (int64_t l : tl) {
      if (l > targets.numel() - total) {  // lengths are >= 0: no overflow
        c.fail("target_lengths", "more targets than the " + str(targets.numel()) + " given");
      }
      total += l;
    }
    check_values(0, total);
  } else if (targets.dim() == 2 && targets.size(0) == batch) {  // padded, one row per sample
    for (int64_t b = 0; b < batch; ++b) {
      if (tl[b] > targets.size(1)) c.fail("target_lengths", str(tl[b]) + " past the padded row");
      check_values(static_cast<size_t>(b * targets.size(1)), tl[b]);
    }
  } else {
    c.fail("targets", "shape " + c10::str(targets.sizes()) + " for a batch of " + str(batch));
  }
}

void ctc_loss(const CallView& c) {
  const at::Tensor& lp = c.tensor("log_probs");
  if (!lp.defined() || lp.dim() != 3) c.fail("log_probs", "expected (time, batch, classes)");
  const int64_t time = lp.size(0), batch = lp.size(1), classes = lp.size(2);
  ctc_lengths(c, batch, time);
  const int64_t blank = c.integer("blank");
  if (blank < 0 || blank >= classes) c.fail("blank", "class " + str(blank) + " of " + str(classes));
  ctc_targets(c, batch, classes);
  int64_t longest = 0;
  for (int64_t l : c.ints("target_lengths")) longest = std::max(longest, l);
  const std::vector<int64_t> alpha{batch, time, 2 * longest + 1};
  if (c.tensor("result1").sizes() != at::IntArrayRef(alpha)) {
    c.fail("result1", "log_alpha of shape " + c10::str(c.tensor("result1").sizes()) +
                          ", the forward makes " + c10::str(at::IntArrayRef(alpha)));
  }
  const std::vector<int64_t> per_sample{batch};
  if (c.tensor("result0").sizes() != at::IntArrayRef(per_sample)) {
    c.fail("result0", "a loss of shape " + c10::str(c.tensor("result0").sizes()) +
                          " for a batch of " + str(batch));
  }
  if (c.grad(0).defined() && c.grad(0).sizes() != at::IntArrayRef(per_sample)) {
    c.fail_grad(0, "expected one per sample of " + str(batch));
  }
}

}  // namespace

const std::vector<CallCheckEntry>& call_check_table() {
  static const std::vector<CallCheckEntry> kTable = [] {
    std::vector<CallCheckEntry> t = {
        {"AmaxBackward0", amax_amin},
        {"AminBackward0", amax_amin},
        {"AsStridedBackward0", as_strided},
        {"AsStridedBackward1", as_strided},
        {"ConvolutionBackwardBackward0", conv_double_input},
        {"ConvolutionBackwardOverrideableBackward0", conv_double_input},
        {"CtcLossBackward0", ctc_loss},
        {"CtcLossBackward1", ctc_loss},
        {"EmbeddingBackward0", embedding},
        {"ExpandBackward0", expand},
        {"FractionalMaxPool2DBackward0", pool_indices<2>},
        {"FractionalMaxPool3DBackward0", pool_indices<3>},
        {"FusedRmsNormBackward0", normalized_shape},
        {"GluBackwardBackward0", glu_double},
        {"LuUnpackBackward0", lu_unpack},
        {"MaxPool2DWithIndicesBackward0", pool_indices<2>},
        {"MaxPool3DWithIndicesBackward0", pool_indices<3>},
        {"MpsConvolutionBackwardBackward0", conv_double_self},
        {"NativeLayerNormBackwardBackward0", normalized_shape},
        {"RepeatBackward0", repeat},
        {"SlowConv2DBackwardBackward0", conv_double_self},
        {"UnfoldBackward0", unfold},
    };
    std::sort(t.begin(), t.end(), [](const CallCheckEntry& a, const CallCheckEntry& b) {
      return std::strcmp(a.op, b.op) < 0;
    });
    return t;
  }();
  return kTable;
}

}  // namespace ca::detail
