// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The c10d backends a process group can be built on. NCCL exists only in builds against a CUDA
// libtorch whose NCCL headers were found (nccl_backend.cpp); elsewhere a stub refuses it.

#include <c10/util/Exception.h>

#include <chrono>
#include <string>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "ca/distributed.h"

namespace ca::detail {

/// The text of a backend's failure for a CommunicationError: c10's without its C++ backtrace.
inline std::string failure_text(const std::exception& e) {
  const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
  return c10_error != nullptr ? c10_error->what_without_backtrace() : e.what();
}

/// Whether this build can make an NCCL backend.
bool nccl_built();

/// A Gloo backend for `o`'s rank, on `o.interface` or the address fit for `o.master_addr`.
c10::intrusive_ptr<c10d::Backend> make_gloo(const c10::intrusive_ptr<c10d::Store>& store,
                                            const ProcessGroupOptions& o);

/// An NCCL backend on CUDA device `o.local_rank`; Error where nccl_built() is false.
c10::intrusive_ptr<c10d::Backend> make_nccl(const c10::intrusive_ptr<c10d::Store>& store,
                                            const ProcessGroupOptions& o);

}  // namespace ca::detail
