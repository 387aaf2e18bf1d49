#pragma once
// The sub-commands of `replay`; each returns the process exit status.

#include "cli_args.h"

namespace ca::cli {

int cmd_list_ops(const Options& o);
int cmd_verify(const Options& o);
int cmd_dump(const Options& o);
int cmd_replay(const Options& o);

}  // namespace ca::cli
