// SPDX-License-Identifier: BSD-3-Clause
// Per-call checks of grad ranks and shapes: the backwards that index by a grad's rank or by
// another saved list's length. Each comment names the unchecked read in torch.
#include <ATen/ATen.h>

#include <algorithm>
#include <string>
#include <vector>

#include "guards/call_check_ops.h"

namespace ca::detail::checks {
namespace {

std::string str(int64_t v) { return std::to_string(v); }
std::string str(size_t v) { return std::to_string(v); }

// restore_reduced_dims writes target_shape[d] for each reduced d, in a shape of rank + n, for
// each grad and each saved result.
RunGuard reduced_dims(const ArgSlots& s, std::vector<Slot> results) {
  return [keepdim = s["keepdim"], dim = s.ints("dim"),
          results = std::move(results)](const CallView& c) {
    const c10::IValue& keep = c.arg(keepdim);
    if (keep.isBool() && keep.toBool()) return;
    const c10::IValue& d = c.arg(dim.slot);  // a list (amax, amin) or an optional int (aminmax)
    const std::vector<int64_t> dims =
        d.isNone() ? std::vector<int64_t>{}
                   : (d.isInt() ? std::vector<int64_t>{d.toInt()} : c.ints(dim).view().vec());
    const auto n = static_cast<int64_t>(dims.size());
    std::vector<const at::Tensor*> reduced = {&c.grad(0), &c.grad(1)};
    for (Slot r : results) reduced.push_back(&c.tensor(r));
    for (const at::Tensor* t : reduced) {
      if (!t->defined()) continue;
      const int64_t total = t->dim() + n;
      for (int64_t k : dims) {
        if (k < -total || k >= total) {
          c.fail(dim.slot,
                 "dim " + str(k) + " outside the rank " + str(total) + " the reduced tensor had");
        }
      }
    }
  };
}

// _convolution_double_backward reads the input's and grad_output's spatial sizes for each
// spatial dim of the weight, and the channel sizes of grads[2].
RunGuard conv_double(const ArgSlots& s, const char* input_name) {
  return [weight = s["weight"], input = s[input_name],
          grad_output = s["grad_output"]](const CallView& c) {
    const at::Tensor& w = c.tensor(weight);
    if (!w.defined()) return;
    const int64_t rank = std::max<int64_t>(w.dim(), 2);
    for (Slot t : {input, grad_output}) {
      const at::Tensor& x = c.tensor(t);
      if (x.defined() && x.dim() < rank) {
        c.fail(t, "rank " + str(x.dim()) + " for a weight of rank " + str(rank));
      }
    }
    if (c.grad(2).defined() && c.grad(2).dim() < 1) c.fail_grad(2, "a bias grad has one dim");
  };
}

// grads[0]'s rank against the length n of int list `list`: exactly n or at least n. The
// message is `before` n `after`.
enum RankRule : bool { kExactly, kAtLeast };
RunGuard grad_rank(const ArgSlots& s, const char* list, RankRule rule, const char* before,
                   const char* after) {
  return [ints = s.ints(list), rule, before, after](const CallView& c) {
    const at::Tensor& g = c.grad(0);
    if (!g.defined()) return;
    const size_t n = c.ints(ints).size();
    const auto rank = static_cast<size_t>(g.dim());
    if (rule == kExactly ? rank != n : rank < n) c.fail_grad(0, before + str(n) + after);
  };
}

}  // namespace

// repeat_backward: `grad.dim() - sizes.size()` is a size_t, then repeats[i + that].
RunGuard repeat(const ArgSlots& s) {
  return grad_rank(s, "repeats", kExactly, "the op reads one of ", " repeats per grad dim");
}

// as_strided_backward reads size[i] and stride[i] for each grad dim.
RunGuard as_strided(const ArgSlots& s) {
  return grad_rank(s, "size", kExactly, "the view it is the grad of has ", " dims");
}

// sum_to sums the grad's leading dims away, then reads sizes[i - leading]: leading >= 0.
RunGuard expand(const ArgSlots& s) {
  return grad_rank(s, "self_sym_sizes", kAtLeast, "an expand of a tensor of rank ",
                   " has at least that rank");
}

// unfold_backward's kernel walks the grad by the unfold's own geometry: the grad must have the
// unfold's output shape. (step > 0 is a load rule.)
RunGuard unfold(const ArgSlots& s) {
  return [sizes = s.ints("self_sym_sizes"), size_slot = s["size"], step_slot = s["step"],
          dimension = s["dimension"]](const CallView& c) {
    const at::Tensor& g = c.grad(0);
    if (!g.defined()) return;
    std::vector<int64_t> shape = c.ints(sizes).view().vec();
    const int64_t size = c.integer(size_slot), step = c.integer(step_slot);
    const auto rank = static_cast<int64_t>(shape.size());
    int64_t dim = c.integer(dimension);
    if (rank == 0) {
      shape = {size};
    } else {
      if (dim < -rank || dim >= rank) c.fail(dimension, "outside a tensor of rank " + str(rank));
      dim = dim < 0 ? dim + rank : dim;
      if (step <= 0) c.fail(step_slot, str(step) + ", expected an int > 0");
      if (size < 0 || size > shape[dim]) {
        c.fail(size_slot, "windows of " + str(size) + " do not fit a dim of " + str(shape[dim]));
      }
      shape[dim] = (shape[dim] - size) / step + 1;
      shape.push_back(size);
    }
    if (g.sizes() != at::IntArrayRef(shape)) {
      c.fail_grad(0, "the unfold's output has shape " + c10::str(at::IntArrayRef(shape)));
    }
  };
}

RunGuard amax_amin(const ArgSlots& s) { return reduced_dims(s, {s["result"]}); }
RunGuard aminmax(const ArgSlots& s) { return reduced_dims(s, {s["min"], s["max"]}); }

// layer_norm_double_backward and the rms-norm backward take `input.dim() - normalized.size()`
// as the first normalized axis.
RunGuard normalized_shape(const ArgSlots& s) {
  return [input = s["input"], normalized = s.ints("normalized_shape")](const CallView& c) {
    const at::Tensor& x = c.tensor(input);
    const auto n = static_cast<int64_t>(c.ints(normalized).size());
    if (x.defined() && x.dim() < n) {
      c.fail(normalized.slot, str(n) + " normalized dims for an input of rank " + str(x.dim()));
    }
  };
}

// glu_double_backward_grad_output halves sizes[dim] of self's sizes, wrapped once.
RunGuard glu_double(const ArgSlots& s) {
  return [self = s["self"], dim = s["dim"]](const CallView& c) {
    const at::Tensor& x = c.tensor(self);
    const int64_t d = c.integer(dim);
    if (x.defined() && (d < -x.dim() || d >= x.dim())) {
      c.fail(dim, "outside self of rank " + str(x.dim()));
    }
  };
}

// lu_unpack_backward sets the last two sizes of each grad's shape.
RunGuard lu_unpack(const ArgSlots& /*s*/) {
  return [](const CallView& c) {
    for (size_t k = 0; k < 2; ++k) {
      if (c.grad(k).defined() && c.grad(k).dim() < 2) {
        c.fail_grad(k, "expected a batch of matrices");
      }
    }
  };
}

RunGuard conv_double_input(const ArgSlots& s) { return conv_double(s, "input"); }
RunGuard conv_double_self(const ArgSlots& s) { return conv_double(s, "self"); }

}  // namespace ca::detail::checks
