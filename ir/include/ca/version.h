#pragma once
/// @file
/// The torch version this build of ca-replay was compiled against.

#include <string>

namespace ca {

/// The torch version this build was compiled against, "MAJOR.MINOR.PATCH".
std::string runtime_torch_version();

}  // namespace ca
