// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The sub-commands of `replay`; each returns the process exit status.

#include <string>

#include "ca/device_placement.h"
#include "cli_args.h"

namespace ca::cli {

int cmd_list_ops(const Options& o);
int cmd_verify(const Options& o);
int cmd_dump(const Options& o);
int cmd_dot(const Options& o);
int cmd_encode(const Options& o);
int cmd_replay(const Options& o);

/// "placement on cuda:0 (graph recorded on cpu): ..." then one line per CPU scalar.
std::string placement_report(const Graph& g, const DevicePlacement& p);

}  // namespace ca::cli
