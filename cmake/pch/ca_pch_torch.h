// SPDX-License-Identifier: BSD-3-Clause
// Precompiled for targets with a source that includes the C++ frontend (torch/torch.h: tests,
// examples): see cmake/pch.cmake.
#pragma once

#include "ca_pch_aten.h"

#include <torch/csrc/autograd/custom_function.h>
#include <torch/torch.h>
