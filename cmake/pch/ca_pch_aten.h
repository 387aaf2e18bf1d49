// SPDX-License-Identifier: BSD-3-Clause
// Precompiled for targets whose sources include ATen and autograd internals but not the C++
// frontend (the libraries, most tools): see cmake/pch.cmake.
#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/autograd/functions/accumulate_grad.h>
#include <torch/csrc/autograd/functions/basic_ops.h>
#include <torch/csrc/dynamo/compiled_autograd.h>
