// SPDX-License-Identifier: MIT
// The search: grammar files and their errors, a known chromosome mapping to a
// known DMM (with wrapping), phenotype repair, weights, determinism for a
// seed (whatever the thread count), validity of every DMM found, and the
// search beating random sampling with the same number of evaluations.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "search/evolution.h"
#include "simulate/replay_sample.h"
#include "search/phenotype.h"
#include "dmm/segregated_lists.h"
#include "simulate/dmm.h"
#include "simulate/random_trace.h"
#include "simulate/simulator.h"

namespace {

namespace sim = tailor::simulate;
namespace srch = tailor::search;

const char* kTiny = R"(# a tiny design space
<dmm> ::= <a> | <a> <dmm>
<a>   ::= "alloc max=" <b> " mechanism=" <m> ";"
<b>   ::= 64 | <TRACE_SIZE>
<m>   ::= "segregated_fit" | "binary_buddy"
)";

std::string error_of(const std::string& text) {
  try {
    srch::Grammar::parse(text, "g.bnf");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Grammar, ParsesRulesAndNamesLinesInErrors) {
  const srch::Grammar g = srch::Grammar::parse(kTiny);
  ASSERT_EQ(g.rules().size(), 5u);  // four rules and the built-in TRACE_SIZE
  EXPECT_EQ(g.rules()[0].name, "dmm");
  EXPECT_EQ(g.rules()[0].alternatives.size(), 2u);
  EXPECT_EQ(g.rules()[2].alternatives[0][0].text, "64");  // a bare word is a terminal
  EXPECT_EQ(error_of("<a> ::= <b>\n"), "g.bnf:1: <b> is used but never defined");
  EXPECT_EQ(error_of("<a> ::= x\n<a> ::= y\n"), "g.bnf:2: <a> is defined twice (first on line 1)");
  EXPECT_EQ(error_of("| x\n"), "g.bnf:1: '|' continues no rule");
  EXPECT_EQ(error_of("<a> ::= \"x\n"), "g.bnf:1: a terminal's closing quote is missing");
  EXPECT_EQ(error_of("a ::= x\n"), "g.bnf:1: expected a rule '<name> ::= ...' or a continuation '| ...'");
  EXPECT_EQ(error_of("<a> ::= x | | y\n"), "g.bnf:1: <a> has an empty alternative");
  EXPECT_EQ(error_of("# nothing\n"), "g.bnf:1: no rule");
  EXPECT_NO_THROW(srch::Grammar::load(std::string(TAILOR_SHARE_DIR) + "/search/dmm.bnf"));
}

TEST(Mapper, AKnownChromosomeMapsToAKnownDmm) {
  const srch::Grammar g = srch::Grammar::parse(kTiny);
  const std::vector<std::uint64_t> sizes = {16, 24, 1000};
  // <dmm>: codon 1 -> <a> <dmm>; <b>: 0 -> 64; <m>: 3 -> binary_buddy (3 mod 2);
  // <dmm>: 0 -> <a>; <b>: 1 -> TRACE_SIZE, two codons (0, 2) -> sizes[2]; <m>: 4 -> segregated_fit.
  const auto m = srch::map_genome(g, {1, 0, 3, 0, 1, 0, 2, 4}, sizes);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->phenotype, "alloc max=64 mechanism=binary_buddy;alloc max=1000 mechanism=segregated_fit;");
  EXPECT_EQ(m->codons_used, 8u);
  const sim::DmmSpec spec = srch::phenotype_to_spec(m->phenotype);
  ASSERT_EQ(spec.allocators.size(), 2u);
  EXPECT_EQ(spec.allocators[0].mechanism, sim::Mechanism::kBinaryBuddy);
  EXPECT_EQ(spec.allocators[0].max, std::optional<std::uint64_t>(64));
  EXPECT_EQ(spec.allocators[1].mechanism, sim::Mechanism::kSegregatedFit);
  EXPECT_EQ(spec.allocators[1].min, 64u);
  EXPECT_FALSE(spec.allocators[1].max.has_value());  // the last takes every larger size

  // Wrapping: {0, 0, 1} reads 0 (<dmm> -> <a>), 0 (64), 1 (binary_buddy).
  EXPECT_EQ(srch::map_genome(g, {0, 0, 1}, sizes)->phenotype, "alloc max=64 mechanism=binary_buddy;");
  EXPECT_EQ(srch::map_genome(g, {0, 0}, sizes)->phenotype, "alloc max=64 mechanism=segregated_fit;");
  EXPECT_EQ(srch::map_genome(g, {0, 0}, sizes)->codons_used, 3u);  // one wrap
  // Always choosing <a> <dmm> never ends: invalid after the wraps.
  EXPECT_FALSE(srch::map_genome(g, {1}, sizes, 3).has_value());
  EXPECT_FALSE(srch::map_genome(g, {}, sizes).has_value());
}

TEST(Phenotype, RangesAreRepairedIntoATiling) {
  const sim::DmmSpec s = srch::phenotype_to_spec(
      "alloc max=4096 mechanism=segregated_fit;alloc max=64 mechanism=binary_buddy;"
      "alloc max=64 mechanism=strict_segregated_fit;alloc max=512 mechanism=exact_segregated_fit;");
  ASSERT_EQ(s.allocators.size(), 3u);  // sorted by max, the repeated 64 dropped
  EXPECT_EQ(s.allocators[0].mechanism, sim::Mechanism::kBinaryBuddy);
  EXPECT_EQ(s.allocators[1].min, 64u);
  EXPECT_EQ(s.allocators[1].max, std::optional<std::uint64_t>(512));
  EXPECT_EQ(s.allocators[2].min, 512u);
  EXPECT_FALSE(s.allocators[2].max.has_value());
  std::string many;
  for (int i = 1; i <= 12; ++i) many += "alloc max=" + std::to_string(i * 64) + " mechanism=segregated_fit;";
  EXPECT_EQ(srch::phenotype_to_spec(many).allocators.size(), srch::kMaxAllocators);
  EXPECT_THROW(srch::phenotype_to_spec("alloc max=64 mechanism=strict_segregated_fit split=true;"), sim::SpecError);
  EXPECT_THROW(srch::phenotype_to_spec("alloc mechanism=segregated_fit;"), sim::SpecError);
  EXPECT_THROW(srch::phenotype_to_spec(""), sim::SpecError);
}

TEST(Weights, ParsedAndChecked) {
  const srch::Weights w = srch::parse_weights("time=2,energy=0");
  EXPECT_EQ(w.time, 2);
  EXPECT_EQ(w.memory, 1);
  EXPECT_EQ(w.energy, 0);
  EXPECT_THROW(srch::parse_weights("speed=1"), std::invalid_argument);
  EXPECT_THROW(srch::parse_weights("time=x"), std::invalid_argument);
  EXPECT_THROW(srch::parse_weights("time=-1"), std::invalid_argument);
  EXPECT_THROW(srch::parse_weights("time=0,memory=0,energy=0"), std::invalid_argument);
}

struct Fixture {
  sim::ReplayTrace trace = sim::build_replay(tailor::test::random_events(21, 4000));
  srch::Grammar grammar = srch::Grammar::load(std::string(TAILOR_SHARE_DIR) + "/search/dmm.bnf");
  std::vector<std::uint64_t> sizes = sim::sizes_of(trace);
};

srch::SearchOptions small(std::uint64_t seed) {
  srch::SearchOptions o;
  o.seed = seed;
  o.population = 20;
  o.generations = 12;
  return o;
}

// Checkpoints and the ranks' exchange hold evaluations exactly, under the
// key names of tailor's JSON outputs (bytes end in "_bytes"); a missing one
// is an error naming it.
TEST(Checkpoint, EvaluationsRoundTripExactlyUnderTheOutputsKeys) {
  srch::Evaluation e;
  e.valid = true;
  e.time = 0.1, e.memory = 1.0 / 3, e.energy = 2.5, e.fitness = 0.7;
  e.metrics.dmm = "kng";
  e.metrics.memory_usage = 123456789;
  e.metrics.held_usage = 987;
  e.metrics.internal_fragmentation = 55;
  nlohmann::json j = srch::evaluation_to_json(e);
  EXPECT_EQ(j["metrics"]["memory_usage_bytes"], 123456789u);
  EXPECT_FALSE(j["metrics"].contains("memory_usage"));
  srch::Evaluation back = srch::evaluation_from_json(j);
  EXPECT_EQ(back.memory, e.memory);
  EXPECT_EQ(back.metrics.memory_usage, 123456789u);
  EXPECT_EQ(back.metrics.internal_fragmentation, 55u);
  j["metrics"].erase("memory_usage_bytes");
  EXPECT_THROW(srch::evaluation_from_json(j), std::invalid_argument);
}

TEST(Search, SameSeedSameResultWhateverTheThreads) {
  Fixture f;
  srch::Evaluator one(f.trace, {}, 1), two(f.trace, {}, 2);
  const srch::SearchResult a = srch::evolve(f.grammar, f.sizes, one, small(5));
  const srch::SearchResult b = srch::evolve(f.grammar, f.sizes, two, small(5));
  ASSERT_TRUE(a.best.eval.valid);
  EXPECT_EQ(a.best.phenotype, b.best.phenotype);
  EXPECT_EQ(a.best.eval.fitness, b.best.eval.fitness);
  EXPECT_EQ(a.simulations, b.simulations);
  srch::Evaluator three(f.trace, {}, 2);
  const srch::SearchResult c = srch::evolve(f.grammar, f.sizes, three, small(6));
  EXPECT_TRUE(c.best.phenotype != a.best.phenotype || c.simulations != a.simulations);  // another seed, another search
}

TEST(Search, EveryDmmFoundIsValidForTheTrace) {
  Fixture f;
  for (bool pareto : {false, true}) {
    srch::Evaluator ev(f.trace, {}, 2);
    srch::SearchOptions o = small(9);
    o.pareto = pareto;
    const srch::SearchResult r = srch::evolve(f.grammar, f.sizes, ev, o);
    std::vector<srch::Individual> found = r.front;
    found.push_back(r.best);
    if (pareto) {
      EXPECT_FALSE(r.front.empty());
    }
    for (const auto& ind : found) {
      ASSERT_TRUE(ind.spec.has_value());
      SCOPED_TRACE(ind.phenotype);
      sim::SimulateOptions check;
      check.check = true;  // every size covered, no overlap, inside system memory, aligned
      const sim::Metrics m = sim::simulate(f.trace, *ind.spec, check);
      EXPECT_EQ(m.steps, ind.eval.metrics.steps);
    }
  }
}

// Ranked on a sample, the search's best is measured on the whole trace
// (the validator), and a candidate the sample flatters cannot become it.
TEST(Search, OnASampleTheBestIsMeasuredOnTheWholeTrace) {
  const sim::ReplayTrace whole = sim::build_replay(tailor::test::random_events(22, 12000));
  const sim::ReplayTrace sample = sim::sample_objects(whole, 4);
  const srch::Grammar grammar = srch::Grammar::load(std::string(TAILOR_SHARE_DIR) + "/search/dmm.bnf");
  const std::vector<std::uint64_t> sizes = sim::sizes_of(whole);
  for (unsigned threads : {1u, 2u}) {
    srch::Evaluator ranked(sample, {}, threads), measured(whole, {}, threads);
    srch::SearchOptions o = small(3);
    o.validator = &measured;
    const srch::SearchResult r = srch::evolve(grammar, sizes, ranked, o);
    ASSERT_TRUE(r.best.eval.valid);
    EXPECT_GT(r.validations, 0u);
    // The best's evaluation is the whole trace's, equal to a fresh simulation of it.
    const sim::Metrics m = sim::simulate(whole, *r.best.spec);
    EXPECT_EQ(r.best.eval.metrics.steps, m.steps);
    EXPECT_EQ(r.best.eval.metrics.memory_usage, m.memory_usage);
    EXPECT_DOUBLE_EQ(r.best.eval.fitness, measured.normalize(m).fitness);
    static std::string first;
    if (threads == 1) first = r.best.phenotype;
    else EXPECT_EQ(r.best.phenotype, first);  // deterministic whatever the threads
    // The finalists: the best first, distinct, by the validator's measure, in order.
    ASSERT_FALSE(r.finalists.empty());
    EXPECT_LE(r.finalists.size(), o.finalists);
    EXPECT_EQ(r.finalists.front().phenotype, r.best.phenotype);
    for (std::size_t i = 1; i < r.finalists.size(); ++i) {
      EXPECT_LE(r.finalists[i - 1].eval.fitness, r.finalists[i].eval.fitness);
      EXPECT_NE(r.finalists[i - 1].phenotype, r.finalists[i].phenotype);
      EXPECT_TRUE(r.finalists[i].measured);
    }
  }
}

TEST(Search, FinalistsKeepTheBestFewDistinctOnes) {
  auto ind = [](const char* phenotype, double fitness) {
    srch::Individual i;
    i.phenotype = phenotype;
    i.eval.valid = true;
    i.eval.fitness = fitness;
    return i;
  };
  std::vector<srch::Individual> f;
  for (const auto& i : {ind("a", 0.9), ind("b", 0.5), ind("a", 0.9), ind("c", 0.7), ind("d", 0.95), ind("e", 0.5),
                        ind("f", 0.4)})
    srch::keep_finalist(f, i, 3);
  srch::Individual invalid = ind("g", 0.1);
  invalid.eval.valid = false;
  srch::keep_finalist(f, invalid, 3);
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].phenotype, "f");
  EXPECT_EQ(f[1].phenotype, "b");  // ahead of e, as fit and seen first
  EXPECT_EQ(f[2].phenotype, "e");
}

TEST(Search, BeatsRandomSamplingWithTheSameEvaluations) {
  Fixture f;
  for (std::uint64_t seed : {1, 4}) {
    SCOPED_TRACE(seed);
    srch::SearchOptions o = small(seed);
    o.population = 40;
    o.generations = 30;
    srch::Evaluator a(f.trace, {}, 2), b(f.trace, {}, 2);
    const srch::SearchResult ge = srch::evolve(f.grammar, f.sizes, a, o);
    const srch::SearchResult random = srch::random_sampling(f.grammar, f.sizes, b, o);
    EXPECT_EQ(ge.evaluations, random.evaluations);
    EXPECT_LT(ge.best.eval.fitness, random.best.eval.fitness);
  }
}

}  // namespace
