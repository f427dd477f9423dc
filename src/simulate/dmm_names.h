// SPDX-License-Identifier: MIT
// The simulator runs the mechanisms of the dmm layer (src/dmm/: the Memory
// concept, the mechanisms, their composition) over its SimulatedMemory, so
// their names are the simulator's too: tailor::simulate::Kingsley is
// tailor::dmm::Kingsley.
#pragma once

#include "dmm/allocator.h"
#include "dmm/memory.h"

namespace tailor::simulate {
using namespace ::tailor::dmm;
}  // namespace tailor::simulate
