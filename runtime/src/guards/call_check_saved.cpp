// SPDX-License-Identifier: BSD-3-Clause
// Per-call checks over saved tensors' values and sizes: indices used as raw offsets, CTC
// lengths and targets, norm statistics. Each comment names the unchecked read in torch.
#include <ATen/ATen.h>
#include <c10/util/safe_numerics.h>

#include <algorithm>
#include <string>
#include <vector>

#include "guards/call_check_ops.h"
#include "guards/storage_bounds.h"

namespace ca::detail::checks {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

// Whether all n values lie in [0, last]. For such an x neither x nor last - x has the top bit
// set (as 64-bit words); a negative x has it, and so has last - x for any larger x. Or-ing both
// over all values is a subtraction and two ors a value, which the compiler vectorizes (on x86-64
// built for AVX2 too, the variant chosen when the library loads).
#if defined(__x86_64__) && defined(__GNUC__)
#define CA_X86_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define CA_X86_CLONES
#endif
CA_X86_CLONES bool all_below(const int64_t* p, int64_t n, uint64_t last) {
  uint64_t any = 0;
  for (int64_t i = 0; i < n; ++i) {
    const auto x = static_cast<uint64_t>(p[i]);
    any |= x | (last - x);
  }
  return (any >> 63) == 0;
}

// Whether every value of a contiguous CPU int64 tensor lies in [0, limit): one pass over the
// memory, no op dispatched and nothing allocated. It runs on every call of a max-pool backward,
// where the aminmax it replaces cost 1.4 % of a CNN replay's instructions.
bool all_in_range(const at::Tensor& idx, int64_t limit) {
  if (limit <= 0) return false;  // idx is not empty
  return all_below(idx.data_ptr<int64_t>(), idx.numel(), static_cast<uint64_t>(limit - 1));
}

// Index values used as raw offsets must lie in [0, limit), where `limit` is `what` `unit` (the
// message is spelled out only on failure). On an accelerator the check may not synchronize (a
// CUDA graph may be capturing): the device asserts instead.
void check_indices(const CallView& c, Slot name, int64_t limit, const char* what,
                   const char* unit) {
  const at::Tensor& idx = c.tensor(name);
  // Meta tensors (load-time inference) hold no values, and their kernels read none.
  if (!idx.defined() || idx.numel() == 0 || idx.is_meta()) return;
  auto why = [&] {
    return "holds an index outside [0, " + str(limit) + "), " + what + " " + str(limit) + " " +
           unit;
  };
  if (!idx.device().is_cpu()) {
    at::_assert_async(((idx >= 0) & (idx < limit)).all(), why());
    return;
  }
  if (idx.scalar_type() == at::kLong && idx.is_contiguous()) {
    if (!all_in_range(idx, limit)) c.fail(name, why());
    return;
  }
  const auto [lo, hi] = at::aminmax(idx);
  if (lo.item<int64_t>() < 0 || hi.item<int64_t>() >= limit) c.fail(name, why());
}

// A saved tensor of exactly `want`'s shape (undefined is refused too: the kernel reads it).
void expect_shape(const CallView& c, Slot name, const std::vector<int64_t>& want,
                  const std::string& what) {
  const at::Tensor& t = c.tensor(name);
  if (!t.defined() || t.sizes() != at::IntArrayRef(want)) {
    c.fail(name, (t.defined() ? "shape " + c10::str(t.sizes()) : std::string("undefined")) +
                     ", the forward makes " + what + " of shape " +
                     c10::str(at::IntArrayRef(want)));
  }
}
// The CTC loss backward's packed args (CtcLossBackward0 and 1 name them alike).
struct CtcSlots {
  Slot log_probs, targets, blank, result0, result1;
  IntsSlot input_lengths, target_lengths;
};

// _ctc_loss_backward "assumes the forward checked": lengths index the batch, input lengths
// bound the time steps read, target lengths and values are offsets into targets, log_alpha
// and the class dim.
void ctc_lengths(const CallView& c, const CtcSlots& s, at::IntArrayRef il, at::IntArrayRef tl,
                 int64_t batch, int64_t time) {
  auto one_per_sample = [&](Slot name, at::IntArrayRef v) {
    if (static_cast<int64_t>(v.size()) != batch) {
      c.fail(name, str(static_cast<int64_t>(v.size())) + " lengths for a batch of " + str(batch));
    }
  };
  one_per_sample(s.input_lengths.slot, il);
  one_per_sample(s.target_lengths.slot, tl);
  for (int64_t l : il) {
    if (l < 0 || l > time) c.fail(s.input_lengths.slot, str(l) + " outside [0, " + str(time) + "]");
  }
  for (int64_t l : tl) {
    if (l < 0) c.fail(s.target_lengths.slot, "a negative length " + str(l));
  }
}

void ctc_targets(const CallView& c, const CtcSlots& s, at::IntArrayRef tl, int64_t batch,
                 int64_t classes) {
  const at::Tensor& targets = c.tensor(s.targets);
  if (!targets.defined()) c.fail(s.targets, "undefined");
  // torch offsets 1-d targets by element count but steps by stride(0): only stride 1 reads
  // the elements checked here.
  if (targets.dim() == 1 && targets.numel() > 1 && targets.stride(0) != 1) {
    c.fail(s.targets, "concatenated targets with stride " + str(targets.stride(0)) +
                          "; torch's CTC backward reads them as contiguous");
  }
  // Only the targets torch reads: a padded row's tail may hold anything.
  auto check_values = [&](const at::Tensor& span) {
    if (span.numel() == 0 || span.is_meta()) return;  // a meta kernel reads no values
    const auto [lo, hi] = at::aminmax(span.to(at::kCPU));
    const int64_t bad = lo.item<int64_t>() < 0 ? lo.item<int64_t>() : hi.item<int64_t>();
    if (bad < 0 || bad >= classes) c.fail(s.targets, "class " + str(bad) + " of " + str(classes));
  };
  if (targets.dim() == 1) {  // concatenated
    int64_t total = 0;
    for (int64_t l : tl) {
      if (l > targets.numel() - total) {  // lengths are >= 0: no overflow
        c.fail(s.target_lengths.slot, "more targets than the " + str(targets.numel()) + " given");
      }
      total += l;
    }
    check_values(targets.narrow(0, 0, total));
  } else if (targets.dim() == 2 && targets.size(0) == batch) {  // padded, one row per sample
    for (int64_t b = 0; b < batch; ++b) {
      if (tl[b] > targets.size(1)) {
        c.fail(s.target_lengths.slot, str(tl[b]) + " past the padded row");
      }
      check_values(targets[b].narrow(0, 0, tl[b]));
    }
  } else {
    c.fail(s.targets, "shape " + c10::str(targets.sizes()) + " for a batch of " + str(batch));
  }
}

// The norm backwards read their saved statistics at one element per normalized row (torch
// checks those sizes with debug-only asserts) and the grad at the input's shape.
void grad_like_input(const CallView& c, const at::Tensor& input) {
  if (c.grad(0).defined() && c.grad(0).sizes() != input.sizes()) {
    c.fail_grad(0, "the grad of an input of shape " + c10::str(input.sizes()));
  }
}

// A statistic or weight the kernel reads as a dense array of `numel` (undefined is refused
// when `required`: torch dereferences it).
void expect_dense(const CallView& c, Slot name, int64_t numel, const std::string& what,
                  bool required = true) {
  const at::Tensor& t = c.tensor(name);
  if (!t.defined()) {
    if (required) c.fail(name, "undefined, the backward reads " + what);
    return;
  }
  if (t.numel() != numel)
    c.fail(name, str(t.numel()) + " elements, " + what + " has " + str(numel));
  if (!t.is_contiguous()) c.fail(name, "not contiguous; torch's kernel reads it as dense");
}

// The max-pool and adaptive max-pool backward kernels add each grad into grad_input[plane +
// index] unchecked; the fractional ones assert it in torch's internal words.
// The adaptive kernels also take the number of planes from the grad or the input alone: the
// grad and the indices must have one shape, with the input's leading (batch, channel) dims.
RunGuard pool_indices(const ArgSlots& s, int64_t k) {
  return [self_slot = s["self"], result1 = s["result1"], k](const CallView& c) {
    const at::Tensor& self = c.tensor(self_slot);
    const at::Tensor& indices = c.tensor(result1);
    if (!self.defined() || self.dim() < k) return;  // the op refuses such an input itself
    if (!indices.defined() || indices.dim() != self.dim() ||
        indices.sizes().slice(0, self.dim() - k) != self.sizes().slice(0, self.dim() - k)) {
      c.fail(result1, "indices of shape " + c10::str(indices.sizes()) + " for an input of shape " +
                          c10::str(self.sizes()));
    }
    if (c.grad(0).defined() && c.grad(0).sizes() != indices.sizes()) {
      c.fail_grad(0, "one grad per index, and the indices have shape " + c10::str(indices.sizes()));
    }
    const int64_t plane = element_count(self.sizes().slice(self.dim() - k));
    if (plane < 0) c.fail(self_slot, "an input plane of more than 2^63 elements");
    check_indices(c, result1, plane, "the pooled input's planes have", "elements");
  };
}

// native_batch_norm_backward reads the batch statistics when training, the running ones
// otherwise, each as one dense value per channel, and the weight likewise.
struct BatchNormSlots {
  Slot input, weight, result1, result2, running_mean, running_var;
};

BatchNormSlots batch_norm_slots(const ArgSlots& s, bool train) {
  // Only the statistics the mode reads: an op without running ones packs none.
  return {s["input"],
          s["weight"],
          train ? s["result1"] : Slot{},
          train ? s["result2"] : Slot{},
          train ? Slot{} : s["running_mean"],
          train ? Slot{} : s["running_var"]};
}

void batch_norm_reading(const CallView& c, const BatchNormSlots& s, bool train) {
  const at::Tensor& input = c.tensor(s.input);
  if (!input.defined() || input.dim() < 2) return;  // the op refuses such an input itself
  const int64_t channels = input.size(1);
  for (Slot stat : {train ? s.result1 : s.running_mean, train ? s.result2 : s.running_var}) {
    expect_dense(c, stat, channels, "one statistic per channel");
  }
  expect_dense(c, s.weight, channels, "one weight per channel", /*required=*/false);
  grad_like_input(c, input);
}

bool training_flag(const CallView& c, Slot training) {
  const c10::IValue& v = c.arg(training);
  return v.isBool() && v.toBool();
}

}  // namespace

RunGuard pool_indices_2d(const ArgSlots& s) { return pool_indices(s, 2); }
RunGuard pool_indices_3d(const ArgSlots& s) { return pool_indices(s, 3); }

// embedding_dense_backward scatters grad rows into grad_weight[index] unchecked.
RunGuard embedding(const ArgSlots& s) {
  return [rows_slot = s["weight_sym_argsize_0"], indices = s["indices"]](const CallView& c) {
    const int64_t rows = c.integer(rows_slot);
    check_indices(c, indices, rows, "the weight has", "rows");
  };
}

RunGuard ctc_loss(const ArgSlots& s) {
  CtcSlots slots{s["log_probs"],
                 s["targets"],
                 s["blank"],
                 s["result0"],
                 s["result1"],
                 s.ints("input_lengths"),
                 s.ints("target_lengths")};
  return [s = std::move(slots)](const CallView& c) {
    const at::Tensor& lp = c.tensor(s.log_probs);
    if (!lp.defined() || lp.dim() != 3) c.fail(s.log_probs, "expected (time, batch, classes)");
    const int64_t time = lp.size(0), batch = lp.size(1), classes = lp.size(2);
    const IntList il = c.ints(s.input_lengths), tl = c.ints(s.target_lengths);
    ctc_lengths(c, s, il.view(), tl.view(), batch, time);
    const int64_t blank = c.integer(s.blank);
    if (blank < 0 || blank >= classes) {
      c.fail(s.blank, "class " + str(blank) + " of " + str(classes));
    }
    ctc_targets(c, s, tl.view(), batch, classes);
    // Each length is at most the targets' element count (checked above): 2 * l + 1 fits.
    const int64_t longest = tl.size() == 0 ? 0 : *std::max_element(tl.begin(), tl.end());
    expect_shape(c, s.result1, {batch, time, 2 * longest + 1}, "log_alpha");
    const std::vector<int64_t> per_sample{batch};
    expect_shape(c, s.result0, per_sample, "a loss");
    if (c.grad(0).defined() && c.grad(0).sizes() != at::IntArrayRef(per_sample)) {
      c.fail_grad(0, "expected one per sample of " + str(batch));
    }
  };
}

RunGuard layer_norm(const ArgSlots& s) {
  return [input_slot = s["input"], normalized = s.ints("normalized_shape"), mean = s["result1"],
          rstd = s["result2"]](const CallView& c) {
    const at::Tensor& input = c.tensor(input_slot);
    const auto n = static_cast<int64_t>(c.ints(normalized).size());
    if (!input.defined()) return;
    if (input.dim() < n) {
      c.fail(normalized.slot, str(n) + " dims for an input of rank " + str(input.dim()));
    }
    const int64_t rows = element_count(input.sizes().slice(0, input.dim() - n));
    if (rows < 0) c.fail(input_slot, "more than 2^63 normalized rows");
    expect_dense(c, mean, rows, "one mean per normalized row");
    expect_dense(c, rstd, rows, "one rstd per normalized row");
    grad_like_input(c, input);
  };
}

RunGuard batch_norm(const ArgSlots& s) {
  // Either mode's statistics may be read, as the packed training flag says.
  return [train = batch_norm_slots(s, true), eval = batch_norm_slots(s, false),
          training = s["training"]](const CallView& c) {
    const bool is_training = training_flag(c, training);
    batch_norm_reading(c, is_training ? train : eval, is_training);
  };
}
RunGuard batch_norm_train(const ArgSlots& s) {
  return [slots = batch_norm_slots(s, true)](const CallView& c) {
    batch_norm_reading(c, slots, true);
  };
}
RunGuard batch_norm_eval(const ArgSlots& s) {
  return [slots = batch_norm_slots(s, false)](const CallView& c) {
    batch_norm_reading(c, slots, false);
  };
}
// _native_batch_norm_legit without running statistics: evaluation would read absent ones.
RunGuard batch_norm_no_stats(const ArgSlots& s) {
  return [slots = batch_norm_slots(s, true), training = s["training"]](const CallView& c) {
    if (!training_flag(c, training)) c.fail(training, "evaluation without running statistics");
    batch_norm_reading(c, slots, true);
  };
}

RunGuard group_norm(const ArgSlots& s) {
  return [input_slot = s["input"], n_slot = s["N"], c_slot = s["C"], hxw_slot = s["HxW"],
          group_slot = s["group"], mean = s["result1"], rstd = s["result2"],
          weight = s["weight"]](const CallView& c) {
    const at::Tensor& input = c.tensor(input_slot);
    const int64_t n = c.integer(n_slot), channels = c.integer(c_slot), hxw = c.integer(hxw_slot);
    const int64_t groups = c.integer(group_slot);
    if (!input.defined()) return;
    int64_t numel = 0;
    if (n < 0 || channels < 0 || hxw < 0 || c10::mul_overflows(n, channels, &numel) ||
        c10::mul_overflows(numel, hxw, &numel) || numel != input.numel()) {
      c.fail(n_slot, "N, C, HxW = " + str(n) + ", " + str(channels) + ", " + str(hxw) +
                         " for an input of " + str(input.numel()) + " elements");
    }
    if (groups <= 0 || channels % groups != 0 || groups > std::max<int64_t>(channels, 1)) {
      c.fail(group_slot, str(groups) + " groups for " + str(channels) + " channels");
    }
    // n * groups <= n * max(channels, 1), and n * channels fits (or channels is 0 and n fits).
    expect_dense(c, mean, n * groups, "one mean per sample and group");
    expect_dense(c, rstd, n * groups, "one rstd per sample and group");
    expect_dense(c, weight, channels, "one weight per channel", /*required=*/false);
    grad_like_input(c, input);
  };
}

}  // namespace ca::detail::checks
