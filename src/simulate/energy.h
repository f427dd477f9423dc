// SPDX-License-Identifier: MIT
// The energy model of a simulated DMM: the DMM simulator paper computes energy from the
// execution time, the memory usage and the memory accesses of a run (after
// its group's earlier model); this is ours, with every constant written
// down (docs/dmm.md, "Energy"). Three terms, in nanojoules:
//   computation  steps x kStepNj                   (an abstract step: a few
//                                                    instructions of an
//                                                    embedded core)
//   accesses     (reads + writes) x E_access(M)    (E_access grows with the
//                E_access(M) = kAccessNj x sqrt(M / 1 KiB), the memory M being
//                the DMM's memory usage: the wire-dominated energy of a
//                memory array of M bytes, as CACTI-style models scale)
//   static       kLeakNwPerKib x (M / 1 KiB) x steps x kStepNs x 1e-9
//                (leakage of M bytes held for the run's time)
// The constants are assumptions of the order of a 2010s low-power SoC; what
// the simulator compares is ratios between DMMs on one trace, which depend
// on the model's shape more than on its constants.
#pragma once

#include <cmath>
#include <cstdint>

namespace tailor::simulate {

struct EnergyModel {
  static constexpr double kStepNj = 0.05;        ///< energy of one abstract step
  static constexpr double kAccessNj = 0.01;      ///< one metadata word access in a 1 KiB memory
  static constexpr double kLeakNwPerKib = 1000;  ///< static power of 1 KiB held
  static constexpr double kStepNs = 1.0;         ///< time of one abstract step

  static double access_nj(std::uint64_t memory_bytes) noexcept {
    const double kib = static_cast<double>(memory_bytes) / 1024.0;
    return kAccessNj * std::sqrt(kib < 1 ? 1 : kib);
  }

  /// Energy of a run, in nanojoules.
  static double energy_nj(std::uint64_t steps, std::uint64_t accesses, std::uint64_t memory_bytes) noexcept {
    const double kib = static_cast<double>(memory_bytes) / 1024.0;
    return static_cast<double>(steps) * kStepNj + static_cast<double>(accesses) * access_nj(memory_bytes) +
           kLeakNwPerKib * kib * static_cast<double>(steps) * kStepNs * 1e-9;
  }
};

}  // namespace tailor::simulate
