#include "ca/error.h"
#include "ca/graph.h"

namespace ca {

void validate_graph(const Graph&) {}  // TODO(serializer issue): full semantic pass

}  // namespace ca
