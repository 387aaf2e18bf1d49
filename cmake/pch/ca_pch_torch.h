// SPDX-License-Identifier: BSD-3-Clause
// Precompiled for targets with a source that includes the C++ frontend (torch/torch.h: tests,
// examples): see cmake/pch.cmake.
#pragma once

// ATen's precompiled set first, in the order ca_pch_aten.h has it alone.
// clang-format off
#include "ca_pch_aten.h"

#include <torch/csrc/autograd/custom_function.h>
#include <torch/torch.h>
// clang-format on
