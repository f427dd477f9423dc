// SPDX-License-Identifier: MIT
// The first address of simulated memory: the DMM tests write the addresses
// they expect as B + offset.
#pragma once

#include "simulate/simulated_memory.h"

namespace {
constexpr tailor::simulate::Address B = tailor::simulate::SimulatedMemory::kBase;
}  // namespace
