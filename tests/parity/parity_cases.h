#pragma once
// The parity case table, grouped by area.

#include <vector>

#include "parity/parity_harness.h"

namespace ca::testing {

std::vector<ParityCase> basic_cases();  // elementwise, linear algebra, reductions, views
std::vector<ParityCase> nn_cases();     // conv, norms, losses, pooling, dropout, embedding
std::vector<ParityCase> graph_cases();  // accumulation, unused branches, roots, custom fn
std::vector<ParityCase> model_cases();  // LSTM, GRU, attention, transformer encoder

}  // namespace ca::testing
