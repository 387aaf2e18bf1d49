// SPDX-License-Identifier: BSD-3-Clause
// Per-call checks of grad ranks and shapes: the backwards that index by a grad's rank or by
// another saved list's length. Each comment names the unchecked read in torch.
#include <ATen/ATen.h>

#include <algorithm>
#include <initializer_list>
#include <string>
#include <vector>

#include "guards/call_check_ops.h"

namespace ca::detail::checks {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

// restore_reduced_dims writes target_shape[d] for each reduced d, in a shape of rank + n, for
// each grad and each saved result.
void reduced_dims(const CallView& c, std::initializer_list<const char*> results) {
  const c10::IValue& keepdim = c.arg("keepdim");
  if (keepdim.isBool() && keepdim.toBool()) return;
  const c10::IValue& dim = c.arg("dim");  // a list (amax, amin) or an optional int (aminmax)
  const std::vector<int64_t> dims =
      dim.isNone() ? std::vector<int64_t>{}
                   : (dim.isInt() ? std::vector<int64_t>{dim.toInt()} : c.ints("dim"));
  const auto n = static_cast<int64_t>(dims.size());
  std::vector<const at::Tensor*> reduced = {&c.grad(0), &c.grad(1)};
  for (const char* name : results) reduced.push_back(&c.tensor(name));
  for (const at::Tensor* t : reduced) {
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
}  // namespace

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
    if (step <= 0) c.fail("step", str(step) + ", expected an int > 0");
    if (size < 0 || size > shape[dim]) {
      c.fail("size", "windows of " + str(size) + " do not fit a dim of " + str(shape[dim]));
    }
    shape[dim] = (shape[dim] - size) / step + 1;
    shape.push_back(size);
  }
  if (g.sizes() != at::IntArrayRef(shape)) {
    c.fail_grad(0, "the unfold's output has shape " + c10::str(at::IntArrayRef(shape)));
  }
}

void amax_amin(const CallView& c) { reduced_dims(c, {"result"}); }
void aminmax(const CallView& c) { reduced_dims(c, {"min", "max"}); }

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

void conv_double_input(const CallView& c) { conv_double(c, "input"); }
void conv_double_self(const CallView& c) { conv_double(c, "self"); }

}  // namespace ca::detail::checks
