// SPDX-License-Identifier: MIT
// Flame graphs from the stack tree (flame_graph.h).
#include "report/flame_graph.h"

#include <fmt/format.h>

#include <map>
#include <memory>
#include <string>
#include <unordered_map>

#include "analyze/symbolizer.h"

namespace tailor::report {

namespace {

constexpr std::uint64_t kShareOfTotal = 2000;  // nodes under total / kShareOfTotal are left out

struct Box {
  std::uint64_t value = 0;
  std::map<std::string, std::unique_ptr<Box>> children;
};

class Builder {
 public:
  Builder(const trace::Reader& reader, bool symbols) : table_(reader.stacks()), symbols_(symbols) {
    if (symbols) symbolizer_ = std::make_unique<analyze::Symbolizer>(reader.modules());
  }

  nlohmann::json tree(const std::vector<std::uint64_t>& self, std::uint64_t total) {
    // Each node's bytes with those of the stacks under it: a parent's id is
    // below its children's (the reader numbers them so), so one pass down.
    std::vector<std::uint64_t> sum(self);
    for (std::size_t id = sum.size() - 1; id > 0; --id) sum[table_.parent(static_cast<std::uint32_t>(id))] += sum[id];
    const std::uint64_t least = total / kShareOfTotal;
    std::vector<std::vector<std::uint32_t>> kids(sum.size());
    for (std::size_t id = 1; id < sum.size(); ++id)
      if (sum[id] > 0 && sum[id] >= least) kids[table_.parent(static_cast<std::uint32_t>(id))].push_back(static_cast<std::uint32_t>(id));
    Box root;
    root.value = total;
    add_children(0, root, sum, kids);
    return to_json("all", root);
  }

 private:
  void add_children(std::uint32_t node, Box& into, const std::vector<std::uint64_t>& sum,
                    const std::vector<std::vector<std::uint32_t>>& kids) {
    for (const std::uint32_t c : kids[node]) {
      std::unique_ptr<Box>& box = into.children[name(c)];
      if (!box) box = std::make_unique<Box>();
      box->value += sum[c];
      add_children(c, *box, sum, kids);
    }
  }

  const std::string& name(std::uint32_t id) {
    const std::uint64_t address = table_.address(id);
    auto [it, fresh] = names_.try_emplace(address);
    if (!fresh) return it->second;
    if (symbols_) {
      const analyze::Symbol s = symbolizer_->resolve_return_address(address);
      it->second = !s.function.empty() ? s.function : !s.module.empty() ? s.to_string() : fmt::format("{:#x}", address);
    } else {
      it->second = fmt::format("{:#x}", address);
    }
    return it->second;
  }

  static nlohmann::json to_json(const std::string& name, const Box& box) {
    nlohmann::json j = {{"name", name}, {"value", box.value}};
    if (!box.children.empty()) {
      nlohmann::json children = nlohmann::json::array();
      for (const auto& [child_name, child] : box.children) children.push_back(to_json(child_name, *child));
      j["children"] = std::move(children);
    }
    return j;
  }

  const trace::StackTable& table_;
  bool symbols_;
  std::unique_ptr<analyze::Symbolizer> symbolizer_;
  std::unordered_map<std::uint64_t, std::string> names_;
};

}  // namespace

nlohmann::json flame_graphs(const trace::Reader& reader, const analyze::StackProfile& profile, bool symbols) {
  Builder b(reader, symbols);
  return {{"allocated", b.tree(profile.allocated, profile.allocated_bytes)},
          {"peak", b.tree(profile.at_peak, profile.peak_bytes)},
          {"allocated_bytes", profile.allocated_bytes},
          {"peak_bytes", profile.peak_bytes}};
}

}  // namespace tailor::report
