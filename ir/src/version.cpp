// SPDX-License-Identifier: BSD-3-Clause
#include "ca/version.h"

#include <torch/version.h>

namespace ca {

std::string runtime_torch_version() {
  return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
         std::to_string(TORCH_VERSION_PATCH);
}

}  // namespace ca
