// SPDX-License-Identifier: BSD-3-Clause
// The translation unit of a PCH-carrying object library (cmake/pch.cmake); it holds nothing.
