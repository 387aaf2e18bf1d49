#include "ca/graph.h"

namespace ca {

std::string format_arg(const Arg&) { return "?"; }  // TODO(serializer issue)
std::string dump_graph(const Graph&) { return ""; }  // TODO(serializer issue)

}  // namespace ca
