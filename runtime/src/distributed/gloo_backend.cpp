// SPDX-License-Identifier: BSD-3-Clause
// The only file that includes ProcessGroupGloo.hpp, and with it Debian's gloo headers: the
// wheel ships none. Only the types that header needs are touched; libtorch's own gloo does the
// work (Debian's libgloo is never linked: its symbols would clash).
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include "distributed/backend_factory.h"

namespace ca::detail {
namespace {

bool is_loopback(const std::string& host) {
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

}  // namespace

c10::intrusive_ptr<c10d::Backend> make_gloo(const c10::intrusive_ptr<c10d::Store>& store,
                                            const ProcessGroupOptions& o) {
  auto options = c10d::ProcessGroupGloo::Options::create(o.timeout);
  if (!o.interface.empty()) {
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(o.interface));
  } else if (is_loopback(o.master_addr)) {
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(o.master_addr));
  } else {
    options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
  }
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, o.rank, o.world_size, options);
}

}  // namespace ca::detail
