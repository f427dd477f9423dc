// SPDX-License-Identifier: MIT
// Searches over several traces (hand-made traces whose per-trace measures are
// computed independently by simulation), the island model (one island is
// evolve(); the result depends on the seed and the number of islands, not on
// how many processes run them) and checkpoints (a resumed search is the
// uninterrupted one; bad files are errors naming the file and the field).
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <condition_variable>
#include <deque>
#include <latch>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "search/islands.h"
#include "search/phenotype.h"
#include "search/shared_evaluation.h"
#include "simulate/replay_sample.h"
#include "simulate/random_trace.h"
#include "simulate/simulator.h"
#include "simulate/trace_sizes.h"

namespace {

namespace sim = tailor::simulate;
namespace srch = tailor::search;
using tailor::trace::Event;
using tailor::trace::Op;

// `objects` allocations cycling through `sizes`, at most `window` alive (the
// oldest freed first), all freed at the end; addresses never reused.
sim::ReplayTrace churn(const std::vector<std::uint64_t>& sizes, std::size_t objects, std::size_t window) {
  std::vector<Event> v;
  std::vector<std::uint64_t> live;
  std::size_t oldest = 0;
  auto push = [&](Event e) {
    e.time_ns = v.size() + 1;
    v.push_back(e);
  };
  for (std::size_t i = 0; i < objects; ++i) {
    Event e;
    e.op = Op::Malloc, e.size = sizes[i % sizes.size()], e.address = 0x100000 + 0x10000 * i;
    push(e);
    live.push_back(e.address);
    if (live.size() - oldest > window) {
      Event f;
      f.op = Op::Free, f.address = live[oldest++];
      push(f);
    }
  }
  for (; oldest < live.size(); ++oldest) {
    Event f;
    f.op = Op::Free, f.address = live[oldest];
    push(f);
  }
  return sim::build_replay(v);
}

// One allocator for every size, its mechanism chosen by one codon.
const char* kMechanisms = R"(<dmm> ::= "alloc max=64 mechanism=" <m> ";"
<m> ::= segregated_fit | binary_buddy | exact_segregated_fit | strict_segregated_fit | fibonacci_buddy
)";
const std::vector<std::string> kNames = {"segregated_fit", "binary_buddy", "exact_segregated_fit",
                                         "strict_segregated_fit", "fibonacci_buddy"};

struct TwoTraces {
  sim::ReplayTrace small = churn({24, 24, 48, 24, 40}, 3000, 400);
  sim::ReplayTrace large = churn({1000, 3000, 700, 5000, 1500}, 1500, 60);
  std::vector<std::uint64_t> sizes = [this] {
    std::vector<std::uint64_t> s = sim::sizes_of(small), l = sim::sizes_of(large);
    s.insert(s.end(), l.begin(), l.end());
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
    return s;
  }();
  srch::Evaluator a{small, {}, 2, &sizes}, b{large, {}, 2, &sizes};
};

sim::DmmSpec spec_of(const std::string& mechanism) {
  return srch::phenotype_to_spec("alloc max=64 mechanism=" + mechanism + ";");
}

// A DMM's evaluation on one trace, computed without the evaluator's caches.
srch::Evaluation direct(const srch::Evaluator& ev, const sim::ReplayTrace& t, const std::string& mechanism,
                        const std::vector<std::uint64_t>& sizes) {
  sim::DmmSpec s = spec_of(mechanism);
  s.exact_sizes = sizes;
  return ev.normalize(sim::simulate(t, s));
}

TEST(MultiTrace, AggregateIsTheMeanOrTheWorstOfTheTracesMeasures) {
  TwoTraces f;
  // Kingsley is 1 on every trace, so 1 in the aggregate, either way.
  for (auto how : {srch::Aggregate::kMean, srch::Aggregate::kWorst}) {
    const srch::Evaluation k = srch::aggregate({f.a.normalize(f.a.kingsley()), f.b.normalize(f.b.kingsley())}, how);
    EXPECT_TRUE(k.valid);
    EXPECT_EQ(k.fitness, 1.0);
    EXPECT_EQ(k.memory, 1.0);
  }
  srch::MultiEvaluator mean({&f.a, &f.b}, srch::Aggregate::kMean), worst({&f.a, &f.b}, srch::Aggregate::kWorst);
  for (const std::string& m : kNames) {
    SCOPED_TRACE(m);
    const srch::Evaluation x = direct(f.a, f.small, m, f.sizes), y = direct(f.b, f.large, m, f.sizes);
    ASSERT_TRUE(x.valid && y.valid);
    const sim::DmmSpec s = spec_of(m);
    const srch::Evaluation em = mean.evaluate({&s}).at(0), ew = worst.evaluate({&s}).at(0);
    // Past 3x Kingsley's steps or memory on a trace: abandoned there (evaluator.h).
    if (x.time > 3 || y.time > 3 || x.memory > 3 || y.memory > 3) {
      EXPECT_FALSE(em.valid || ew.valid);
      continue;
    }
    ASSERT_TRUE(em.valid && ew.valid);
    EXPECT_DOUBLE_EQ(em.fitness, (x.fitness + y.fitness) / 2);
    EXPECT_DOUBLE_EQ(em.time, (x.time + y.time) / 2);
    EXPECT_DOUBLE_EQ(em.memory, (x.memory + y.memory) / 2);
    EXPECT_DOUBLE_EQ(em.energy, (x.energy + y.energy) / 2);
    EXPECT_DOUBLE_EQ(ew.fitness, std::max(x.fitness, y.fitness));
    EXPECT_DOUBLE_EQ(ew.memory, std::max(x.memory, y.memory));
    ASSERT_EQ(em.per_trace.size(), 2u);
    EXPECT_EQ(em.per_trace[0].metrics.steps, x.metrics.steps);
    EXPECT_EQ(em.per_trace[1].metrics.memory_usage, y.metrics.memory_usage);
  }
  // Invalid on one trace: invalid over the set.
  srch::Evaluation bad;
  EXPECT_FALSE(srch::aggregate({f.a.normalize(f.a.kingsley()), bad}, srch::Aggregate::kMean).valid);
  EXPECT_EQ(srch::parse_aggregate("worst"), srch::Aggregate::kWorst);
  EXPECT_THROW(srch::parse_aggregate("median"), std::invalid_argument);
}

// An allocator is abandoned once it passes what a DMM can take and still
// beat Kingsley: (sum of weights / weight) x Kingsley's steps or memory
// (each at most 20x); the others are measured in full.
TEST(Evaluator, AbandonsAnAllocatorThatCannotBeatKingsley) {
  TwoTraces f;
  struct Case {
    srch::Weights w;
    double steps, memory;  // the bounds, in Kingsley's
  };
  const Case cases[] = {{{}, 3, 3}, {{0, 1, 0}, 20, 1}, {{1, 0, 0}, 1, 20}};
  int on_memory = 0;  // abandoned for its memory alone
  for (const Case& c : cases)
    for (const sim::ReplayTrace* t : {&f.small, &f.large}) {
      srch::Evaluator ev(*t, c.w, 1, &f.sizes);
      for (const std::string& m : kNames) {
        SCOPED_TRACE(m);
        const srch::Evaluation x = direct(ev, *t, m, f.sizes);
        ASSERT_TRUE(x.valid);
        const sim::DmmSpec s = spec_of(m);
        const srch::Evaluation e = ev.evaluate({&s}).at(0);
        const bool kept = x.time <= c.steps && x.memory <= c.memory;
        EXPECT_EQ(e.valid, kept) << "time " << x.time << " memory " << x.memory;
        if (kept && e.valid) {
          EXPECT_DOUBLE_EQ(e.fitness, x.fitness);
        }
        on_memory += x.time <= c.steps && x.memory > c.memory;
      }
    }
  EXPECT_GT(on_memory, 0);  // the memory bound was exercised
  // For a Pareto front, memory up to 20x Kingsley's is kept.
  int kept_for_front = 0;
  for (const sim::ReplayTrace* t : {&f.small, &f.large}) {
    srch::Evaluator ev(*t, {}, 1, &f.sizes);
    ev.bound_memory_for_front();
    for (const std::string& m : kNames) {
      const srch::Evaluation x = direct(ev, *t, m, f.sizes);
      const sim::DmmSpec s = spec_of(m);
      EXPECT_EQ(ev.evaluate({&s}).at(0).valid, x.time <= 3 && x.memory <= 20) << m;
      kept_for_front += x.time <= 3 && x.memory > 3 && x.memory <= 20;
    }
  }
  EXPECT_GT(kept_for_front, 0);
}

TEST(MultiTrace, TheSearchFindsTheDmmWithTheBestAggregate) {
  TwoTraces f;
  const srch::Grammar g = srch::Grammar::parse(kMechanisms);
  for (auto how : {srch::Aggregate::kMean, srch::Aggregate::kWorst}) {
    // The answer, from each mechanism's measures on each trace.
    std::string expected;
    double best = 1e300;
    for (const std::string& m : kNames) {
      const srch::Evaluation ex = direct(f.a, f.small, m, f.sizes), ey = direct(f.b, f.large, m, f.sizes);
      if (ex.time > 3 || ey.time > 3 || ex.memory > 3 || ey.memory > 3) continue;  // abandoned (evaluator.h)
      const double x = ex.fitness, y = ey.fitness;
      const double v = how == srch::Aggregate::kMean ? (x + y) / 2 : std::max(x, y);
      if (v < best) best = v, expected = m;
    }
    srch::MultiEvaluator multi({&f.a, &f.b}, how);
    srch::SearchOptions o;
    o.population = 30;
    o.generations = 3;
    const srch::SearchResult r = srch::evolve(g, f.sizes, multi, o);
    EXPECT_EQ(r.best.phenotype, "alloc max=64 mechanism=" + expected + ";") << srch::to_string(how);
    EXPECT_DOUBLE_EQ(r.best.eval.fitness, best);
  }
}

struct IslandFixture {
  sim::ReplayTrace trace = sim::build_replay(tailor::test::random_events(31, 6000));
  sim::ReplayTrace sample = sim::sample_objects(trace, 3);
  srch::Grammar grammar = srch::Grammar::load(std::string(TAILOR_SHARE_DIR) + "/search/dmm.bnf");
  std::vector<std::uint64_t> sizes = sim::sizes_of(trace);
};

srch::SearchOptions small(bool pareto = false) {
  srch::SearchOptions o;
  o.seed = 7;
  o.population = 24;
  o.generations = 7;
  o.pareto = pareto;
  return o;
}

void expect_same(const srch::SearchResult& a, const srch::SearchResult& b) {
  ASSERT_TRUE(a.best.eval.valid);
  EXPECT_EQ(a.best.phenotype, b.best.phenotype);
  EXPECT_EQ(a.best.eval.fitness, b.best.eval.fitness);
  EXPECT_EQ(a.evaluations, b.evaluations);
  EXPECT_EQ(a.validations, b.validations);
  ASSERT_EQ(a.front.size(), b.front.size());
  for (std::size_t i = 0; i < a.front.size(); ++i) {
    EXPECT_EQ(a.front[i].phenotype, b.front[i].phenotype);
    EXPECT_EQ(a.front[i].eval.fitness, b.front[i].eval.fitness);
  }
}

TEST(Islands, OneIslandIsEvolve) {
  IslandFixture f;
  for (bool pareto : {false, true}) {
    srch::Evaluator e1(f.trace, {}, 2), e2(f.trace, {}, 2);
    const srch::SearchResult a = srch::evolve(f.grammar, f.sizes, e1, small(pareto));
    const srch::SearchResult b = srch::run_islands(f.grammar, f.sizes, e2, small(pareto), {});
    expect_same(a, b);
    EXPECT_EQ(a.simulations, b.simulations);
  }
}

// N processes in threads of this one, each with its own evaluator, meeting
// at barriers: the Ring an MPI job provides.
class ThreadRing : public srch::Ring {
 public:
  struct Shared {
    explicit Shared(unsigned n) : slots(n), sync(n), mailboxes(n) {}
    std::vector<std::string> slots;
    std::barrier<> sync;
    std::mutex mu;
    std::condition_variable arrived;
    std::vector<std::deque<std::string>> mailboxes;  // posted to rank r, oldest first
    std::map<unsigned, std::unique_ptr<Shared>> groups;  // split(): by first rank
    std::atomic<std::uint64_t> tickets{0};
  };
  ThreadRing(Shared& s, unsigned rank) : s_(s), rank_(rank) {}
  unsigned rank() const override { return rank_; }
  unsigned size() const override { return static_cast<unsigned>(s_.slots.size()); }
  void post(const std::string& m) override {
    std::lock_guard lock(s_.mu);
    s_.mailboxes[(rank_ + 1) % size()].push_back(m);
    s_.arrived.notify_all();
  }
  std::string take() override {
    std::unique_lock lock(s_.mu);
    s_.arrived.wait(lock, [&] { return !s_.mailboxes[rank_].empty(); });
    std::string m = std::move(s_.mailboxes[rank_].front());
    s_.mailboxes[rank_].pop_front();
    return m;
  }
  std::vector<std::string> gather(const std::string& m) override {
    s_.slots[rank_] = m;
    s_.sync.arrive_and_wait();
    std::vector<std::string> all;
    if (rank_ == 0) all = s_.slots;
    s_.sync.arrive_and_wait();
    return all;
  }
  std::vector<std::string> allgather(const std::string& m) override {
    s_.slots[rank_] = m;
    s_.sync.arrive_and_wait();
    std::vector<std::string> all = s_.slots;
    s_.sync.arrive_and_wait();
    return all;
  }
  std::uint64_t ticket(std::uint64_t count) override { return s_.tickets.fetch_add(count); }
  std::unique_ptr<srch::Ring> split(unsigned group_size) override {
    const unsigned first = rank_ / group_size * group_size;
    Shared* group;
    {
      std::lock_guard lock(s_.mu);
      auto& g = s_.groups[first];
      if (!g) g = std::make_unique<Shared>(std::min(group_size, size() - first));
      group = g.get();
    }
    return std::make_unique<ThreadRing>(*group, rank_ - first);
  }

 private:
  Shared& s_;
  unsigned rank_;
};

// A search on `processes` processes in threads of this one, each with its
// own evaluators (ranking on the sample, validating on the whole trace):
// every process's result.
std::vector<srch::SearchResult> in_processes(const IslandFixture& f, unsigned processes, bool pareto,
                                             const srch::IslandOptions& io) {
  ThreadRing::Shared shared(processes);
  std::vector<srch::SearchResult> results(processes);
  std::vector<std::thread> threads;
  for (unsigned p = 0; p < processes; ++p)
    threads.emplace_back([&, p] {
      srch::Evaluator ranked(f.sample, {}, 1), whole(f.trace, {}, 1);
      srch::SearchOptions o = small(pareto);
      o.validator = &whole;
      ThreadRing ring(shared, p);
      results[p] = srch::run_islands(f.grammar, f.sizes, ranked, o, io, &ring);
    });
  for (auto& t : threads) t.join();
  return results;
}

TEST(Islands, SameSeedAndIslandsSameResultWhateverTheProcesses) {
  IslandFixture f;
  for (bool pareto : {false, true}) {
    SCOPED_TRACE(pareto);
    srch::IslandOptions io;
    io.islands = 3;
    io.migrate_every = 2;
    auto in_one = [&] {
      srch::Evaluator ranked(f.sample, {}, 2), whole(f.trace, {}, 2);
      srch::SearchOptions o = small(pareto);
      o.validator = &whole;
      return srch::run_islands(f.grammar, f.sizes, ranked, o, io);
    };
    const srch::SearchResult a = in_one(), b = in_one();
    expect_same(a, b);
    // Three processes, one island each, sharing their evaluations all
    // three, or in groups of two (ranks 0-1, and 2 alone).
    for (unsigned share_among : {16u, 2u}) {
      SCOPED_TRACE(share_among);
      srch::IslandOptions with = io;
      with.share_among = share_among;
      expect_same(a, in_processes(f, 3, pareto, with)[0]);
    }
    // Islands are not one population: another number of islands, another search.
    srch::Evaluator ranked(f.sample, {}, 2), whole(f.trace, {}, 2);
    srch::SearchOptions o = small(pareto);
    o.validator = &whole;
    const srch::SearchResult one = srch::run_islands(f.grammar, f.sizes, ranked, o, {});
    EXPECT_TRUE(one.best.phenotype != a.best.phenotype || one.validations != a.validations ||
                one.front.size() != a.front.size());
  }
}

// A fitness that records what it is asked: the measure is a function of the
// spec's text alone, as a real one's is of the DMM. With a meeting, a
// process's first measure waits until every process has started one (so
// that every process takes a share of the shared queue, however the
// threads are scheduled).
struct Meeting {
  explicit Meeting(std::ptrdiff_t processes) : all(processes) {}
  std::latch all;
  std::atomic<bool> started[8] = {};
};
class Recording : public srch::Fitness {
 public:
  Meeting* meeting = nullptr;
  unsigned process = 0;
  std::vector<srch::Evaluation> evaluate(const std::vector<const sim::DmmSpec*>& specs) override {
    if (meeting && !meeting->started[process].exchange(true)) meeting->all.arrive_and_wait();
    std::vector<srch::Evaluation> out(specs.size());
    for (std::size_t i = 0; i < specs.size(); ++i) {
      if (!specs[i]) continue;
      asked.push_back(sim::to_json(*specs[i]).dump());
      out[i] = measure(*specs[i]);
    }
    return out;
  }
  std::uint64_t simulations() const noexcept override { return asked.size(); }
  static srch::Evaluation measure(const sim::DmmSpec& s) {
    srch::Evaluation e;
    e.valid = true;
    e.fitness = static_cast<double>(sim::to_json(s).dump().size()) / 7.0;
    e.metrics.steps = s.allocators.size();
    return e;
  }
  std::vector<std::string> asked;
};

// Two processes of two islands each. Islands ask different numbers of times
// (the rounds go on until every island of every process is through), the
// same DMM from several islands is measured once in all, by one process,
// both processes take a share, and every island gets the measures.
TEST(SharedEvaluation, EachDmmIsMeasuredOnceAndEveryIslandLearnsIt) {
  std::vector<sim::DmmSpec> specs;
  for (const std::string& m : kNames) specs.push_back(spec_of(m));
  ThreadRing::Shared shared(2);
  std::vector<Recording> ranked(2), validator(2);
  Meeting meeting(2);
  for (unsigned p = 0; p < 2; ++p) {
    ranked[p].meeting = &meeting;
    ranked[p].process = p;
  }
  std::vector<std::vector<std::vector<srch::Evaluation>>> got(4);  // per island, per ask
  std::vector<std::uint64_t> rounds(2);
  std::vector<std::thread> processes;
  for (unsigned p = 0; p < 2; ++p)
    processes.emplace_back([&, p] {
      ThreadRing ring(shared, p);
      srch::SharedEvaluation ev(ring, ranked[p], &validator[p], 2);
      ev.run([&](std::size_t k) {
        const std::size_t island = 2 * p + k;
        // Every island asks for every DMM and an invalid phenotype; island 3 twice, island 0 also validates.
        std::vector<const sim::DmmSpec*> all{nullptr};
        for (const auto& s : specs) all.push_back(&s);
        got[island].push_back(ev.ranked(k).evaluate(all));
        if (island == 3) got[island].push_back(ev.ranked(k).evaluate({&specs[1], &specs[0]}));
        if (island == 0) got[island].push_back(ev.validator(k)->evaluate({&specs[2]}));
      });
      rounds[p] = ev.costs().rounds;
    });
  for (auto& t : processes) t.join();
  for (std::size_t island = 0; island < 4; ++island) {
    SCOPED_TRACE(island);
    ASSERT_EQ(got[island].size(), island == 0 || island == 3 ? 2u : 1u);
    const auto& first = got[island][0];
    ASSERT_EQ(first.size(), specs.size() + 1);
    EXPECT_FALSE(first[0].valid);
    for (std::size_t i = 0; i < specs.size(); ++i) {
      EXPECT_TRUE(first[i + 1].valid);
      EXPECT_EQ(first[i + 1].fitness, Recording::measure(specs[i]).fitness);
      EXPECT_EQ(first[i + 1].metrics.steps, Recording::measure(specs[i]).metrics.steps);
    }
  }
  EXPECT_EQ(got[3][1][0].fitness, Recording::measure(specs[1]).fitness);
  EXPECT_EQ(got[0][1][0].fitness, Recording::measure(specs[2]).fitness);
  // Once each, shared out.
  std::multiset<std::string> measured;
  for (const auto& r : ranked) measured.insert(r.asked.begin(), r.asked.end());
  EXPECT_EQ(measured.size(), specs.size());
  EXPECT_EQ(std::set<std::string>(measured.begin(), measured.end()).size(), specs.size());
  EXPECT_GT(ranked[0].asked.size(), 0u);
  EXPECT_GT(ranked[1].asked.size(), 0u);
  EXPECT_EQ(validator[0].asked.size() + validator[1].asked.size(), 1u);
  EXPECT_EQ(rounds[0], rounds[1]);
  EXPECT_GE(rounds[0], 3u);  // the first asks, the second ones, the end
}

// An island's ranked request and its validator's in one call
// (Fitness::evaluate_with, as the evolution measures its candidates for the
// best with the next generation) are served in one round: both answered,
// each DMM measured once, by the fitness of its kind.
TEST(SharedEvaluation, RankedAndValidatorRequestsShareARound) {
  std::vector<sim::DmmSpec> specs;
  for (const std::string& m : kNames) specs.push_back(spec_of(m));
  ThreadRing::Shared shared(2);
  std::vector<Recording> ranked(2), validator(2);
  std::vector<std::pair<std::vector<srch::Evaluation>, std::vector<srch::Evaluation>>> got(2);
  std::vector<std::uint64_t> rounds(2);
  std::vector<std::thread> processes;
  for (unsigned p = 0; p < 2; ++p)
    processes.emplace_back([&, p] {
      ThreadRing ring(shared, p);
      srch::SharedEvaluation ev(ring, ranked[p], &validator[p], 1);
      ev.run([&](std::size_t k) {
        std::vector<const sim::DmmSpec*> all;
        for (const auto& s : specs) all.push_back(&s);
        got[p] = ev.ranked(k).evaluate_with(all, *ev.validator(k), {&specs[p], nullptr});
      });
      rounds[p] = ev.costs().rounds;
    });
  for (auto& t : processes) t.join();
  for (unsigned p = 0; p < 2; ++p) {
    SCOPED_TRACE(p);
    ASSERT_EQ(got[p].first.size(), specs.size());
    for (std::size_t i = 0; i < specs.size(); ++i) EXPECT_EQ(got[p].first[i].fitness, Recording::measure(specs[i]).fitness);
    ASSERT_EQ(got[p].second.size(), 2u);
    EXPECT_EQ(got[p].second[0].fitness, Recording::measure(specs[p]).fitness);
    EXPECT_FALSE(got[p].second[1].valid);
  }
  std::multiset<std::string> measured, validated;
  for (const auto& r : ranked) measured.insert(r.asked.begin(), r.asked.end());
  for (const auto& r : validator) validated.insert(r.asked.begin(), r.asked.end());
  EXPECT_EQ(measured.size(), specs.size());
  EXPECT_EQ(validated.size(), 2u);
  EXPECT_EQ(std::set<std::string>(validated.begin(), validated.end()).size(), 2u);
  EXPECT_EQ(rounds[0], 2u);  // the asks, the end
  EXPECT_EQ(rounds[1], 2u);
}

// A fitness made of others (one per trace, and a trace's own made of two,
// as a validation sample and a prefix are) is measured leaf by leaf, each
// once, possibly on different processes, and combined as the fitness itself
// combines them.
TEST(SharedEvaluation, AFitnessOverSeveralTracesIsSharedOutByTrace) {
  std::vector<sim::DmmSpec> specs;
  for (const std::string& m : kNames) specs.push_back(spec_of(m));
  ThreadRing::Shared shared(2);
  std::vector<Recording> a(2), b(2), c(2);
  Meeting meeting(2);
  for (auto* leaf : {&a, &b, &c})
    for (unsigned p = 0; p < 2; ++p) {
      (*leaf)[p].meeting = &meeting;
      (*leaf)[p].process = p;
    }
  std::vector<std::vector<srch::Evaluation>> got(2);
  std::vector<std::thread> processes;
  for (unsigned p = 0; p < 2; ++p)
    processes.emplace_back([&, p] {
      srch::MultiEvaluator inner({&b[p], &c[p]}, srch::Aggregate::kWorst);
      srch::MultiEvaluator mean({&a[p], &inner}, srch::Aggregate::kMean);
      ThreadRing ring(shared, p);
      srch::SharedEvaluation ev(ring, mean, nullptr, 1);
      ev.run([&](std::size_t k) {
        std::vector<const sim::DmmSpec*> all;
        for (const auto& s : specs) all.push_back(&s);
        got[p] = ev.ranked(k).evaluate(all);
      });
    });
  for (auto& t : processes) t.join();
  Recording ra, rb, rc;
  srch::MultiEvaluator inner({&rb, &rc}, srch::Aggregate::kWorst);
  srch::MultiEvaluator direct({&ra, &inner}, srch::Aggregate::kMean);
  std::vector<const sim::DmmSpec*> all;
  for (const auto& s : specs) all.push_back(&s);
  const std::vector<srch::Evaluation> expected = direct.evaluate(all);
  for (unsigned p = 0; p < 2; ++p)
    for (std::size_t i = 0; i < specs.size(); ++i) {
      EXPECT_EQ(got[p][i].fitness, expected[i].fitness);
      ASSERT_EQ(got[p][i].per_trace.size(), 2u);
      EXPECT_EQ(got[p][i].per_trace[1].per_trace.size(), 2u);
    }
  for (const auto* leaf : {&a, &b, &c}) EXPECT_EQ((*leaf)[0].asked.size() + (*leaf)[1].asked.size(), specs.size());
  EXPECT_GT(a[0].asked.size() + b[0].asked.size() + c[0].asked.size(), 0u);
  EXPECT_GT(a[1].asked.size() + b[1].asked.size() + c[1].asked.size(), 0u);
}

// Traces divided among the processes: a trace's component is measured only
// by its holder (a placeholder that must not be asked stands in elsewhere),
// and every process still gets the combined measure.
class MustNotBeAsked : public srch::Fitness {
 public:
  std::vector<srch::Evaluation> evaluate(const std::vector<const sim::DmmSpec*>&) override {
    throw std::logic_error("a placeholder was asked");
  }
  std::uint64_t simulations() const noexcept override { return 0; }
};

TEST(SharedEvaluation, ADividedTraceIsMeasuredByItsHolderOnly) {
  std::vector<sim::DmmSpec> specs;
  for (const std::string& m : kNames) specs.push_back(spec_of(m));
  ThreadRing::Shared shared(2);
  std::vector<Recording> held(2);  // process p holds trace p
  MustNotBeAsked elsewhere[2];
  std::vector<std::vector<srch::Evaluation>> got(2);
  std::vector<std::thread> processes;
  for (unsigned p = 0; p < 2; ++p)
    processes.emplace_back([&, p] {
      std::vector<srch::Fitness*> traces = {p == 0 ? static_cast<srch::Fitness*>(&held[0]) : &elsewhere[0],
                                            p == 1 ? static_cast<srch::Fitness*>(&held[1]) : &elsewhere[1]};
      srch::MultiEvaluator mean(traces, srch::Aggregate::kMean);
      ThreadRing ring(shared, p);
      srch::SharedEvaluation ev(ring, mean, nullptr, 1, srch::SharedEvaluation::Sharing{1, true, {0, 1}});
      ev.run([&](std::size_t k) {
        std::vector<const sim::DmmSpec*> all;
        for (const auto& s : specs) all.push_back(&s);
        got[p] = ev.ranked(k).evaluate(all);
      });
    });
  for (auto& t : processes) t.join();
  Recording ra, rb;
  srch::MultiEvaluator direct({&ra, &rb}, srch::Aggregate::kMean);
  std::vector<const sim::DmmSpec*> all;
  for (const auto& s : specs) all.push_back(&s);
  const std::vector<srch::Evaluation> expected = direct.evaluate(all);
  for (unsigned p = 0; p < 2; ++p) {
    EXPECT_EQ(held[p].asked.size(), specs.size());
    for (std::size_t i = 0; i < specs.size(); ++i) {
      EXPECT_EQ(got[p][i].fitness, expected[i].fitness);
      ASSERT_EQ(got[p][i].per_trace.size(), 2u);
    }
  }
}

// A phase that throws on one process: that process's run() rethrows it once
// the other process's islands are through; the other's completes.
TEST(SharedEvaluation, AnIslandsErrorIsRethrownAfterTheOthersAreServed) {
  const sim::DmmSpec spec = spec_of(kNames[0]);
  ThreadRing::Shared shared(2);
  std::vector<Recording> ranked(2);
  std::vector<std::string> errors(2);
  std::vector<std::size_t> answered(2, 0);
  std::vector<std::thread> processes;
  for (unsigned p = 0; p < 2; ++p)
    processes.emplace_back([&, p] {
      ThreadRing ring(shared, p);
      srch::SharedEvaluation ev(ring, ranked[p], nullptr, 1);
      EXPECT_EQ(ev.validator(0), nullptr);
      try {
        ev.run([&](std::size_t k) {
          if (p == 1) throw std::runtime_error("island broke");
          answered[p] += ev.ranked(k).evaluate({&spec}).size();
          answered[p] += ev.ranked(k).evaluate({&spec, nullptr}).size();
        });
      } catch (const std::runtime_error& e) {
        errors[p] = e.what();
      }
    });
  for (auto& t : processes) t.join();
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(answered[0], 3u);
  EXPECT_EQ(errors[1], "island broke");
}

// Fewer islands than processes: every process runs every island and the
// evaluations are shared out, so one island on two or three processes is
// the one-process search, and two islands on three processes are two
// islands in one, with the allocator runs of one process in each group of
// processes that share.
TEST(Islands, FewerIslandsThanProcessesGiveTheOneProcessResult) {
  IslandFixture f;
  for (bool pareto : {false, true}) {
    SCOPED_TRACE(pareto);
    for (unsigned n : {1u, 2u}) {
      SCOPED_TRACE(n);
      srch::IslandOptions io;
      io.islands = n;
      io.migrate_every = 2;
      srch::Evaluator ranked(f.sample, {}, 2), whole(f.trace, {}, 2);
      srch::SearchOptions o = small(pareto);
      o.validator = &whole;
      const srch::SearchResult alone = srch::run_islands(f.grammar, f.sizes, ranked, o, io);
      for (unsigned processes : {2u, 3u}) {
        if (n >= processes) continue;
        SCOPED_TRACE(processes);
        srch::IslandOptions groups = io;
        groups.share_among = 2;  // on 3 processes: a group of 2 and a group of 1
        const std::vector<srch::SearchResult> results = in_processes(f, processes, pareto, groups);
        for (unsigned p = 0; p < processes; ++p) {
          const srch::SearchResult& r = results[p];
          expect_same(alone, r);
          EXPECT_EQ(r.evaluations, alone.evaluations);
          // The processes of a group of two exchanged measures; a group of
          // one measured alone. (How the work was split is not asserted:
          // units go to whichever process asks first, and on a loaded
          // machine one of the two may take them all.)
          if (p < 2) EXPECT_GT(r.sharing.rounds, 0u);
          else EXPECT_EQ(r.sharing.rounds, 0u);
          // Each group made every run once: no allocator was run twice in a group.
          EXPECT_EQ(r.simulations, alone.simulations * (processes == 3 ? 2 : 1));
        }
        EXPECT_GT(results[0].sharing.measured + results[1].sharing.measured, 0u);
      }
    }
  }
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Checkpoint, ResumeEqualsTheUninterruptedSearch) {
  IslandFixture f;
  const std::string path = ::testing::TempDir() + "search-checkpoint.json";
  for (bool pareto : {false, true}) {
    SCOPED_TRACE(pareto);
    srch::IslandOptions io;
    io.islands = 2;
    io.migrate_every = 2;
    io.settings = {{"seed", 7}, {"islands", 2}};
    auto run = [&](unsigned generations, const srch::IslandOptions& with) {
      srch::Evaluator ranked(f.sample, {}, 2), whole(f.trace, {}, 2);
      srch::SearchOptions o = small(pareto);
      o.generations = generations;
      o.validator = &whole;
      return srch::run_islands(f.grammar, f.sizes, ranked, o, with);
    };
    const srch::SearchResult uninterrupted = run(7, io);
    std::filesystem::remove(path);
    srch::IslandOptions first = io;
    first.checkpoint = path;
    first.checkpoint_every = 3;
    run(4, first);  // stops after generation 4; the checkpoint is generation 3's
    const nlohmann::json saved = srch::read_checkpoint(path, slurp(path), io.settings, 7);
    EXPECT_EQ(saved["generation"], 3);
    for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(path).parent_path()))
      EXPECT_FALSE(e.path().filename().string().starts_with(std::filesystem::path(path).filename().string() + ".tmp"))
          << e.path();  // no temporary left behind
    srch::IslandOptions resume = io;
    resume.resume = &saved;
    resume.resume_path = path;
    expect_same(uninterrupted, run(7, resume));
  }
}

// A checkpoint taken between two migrations holds the migrants in flight;
// processes that resume from it send them again, and the search goes on as
// the uninterrupted one (which ran in one process).
TEST(Checkpoint, ResumedByProcessesEqualsTheUninterruptedSearch) {
  IslandFixture f;
  const std::string path = ::testing::TempDir() + "search-checkpoint-ring.json";
  srch::IslandOptions io;
  io.islands = 2;
  io.migrate_every = 2;
  io.settings = {{"seed", 7}, {"islands", 2}};
  auto run = [&](unsigned generations, const srch::IslandOptions& with, srch::Ring* ring) {
    srch::Evaluator ranked(f.sample, {}, 1), whole(f.trace, {}, 1);
    srch::SearchOptions o = small();
    o.generations = generations;
    o.validator = &whole;
    return srch::run_islands(f.grammar, f.sizes, ranked, o, with, ring);
  };
  auto in_two = [&](unsigned generations, const srch::IslandOptions& with) {
    ThreadRing::Shared shared(2);
    std::vector<srch::SearchResult> results(2);
    std::vector<std::thread> processes;
    for (unsigned p = 0; p < 2; ++p)
      processes.emplace_back([&, p] {
        ThreadRing ring(shared, p);
        results[p] = run(generations, with, &ring);
      });
    for (auto& t : processes) t.join();
    return results[0];
  };
  const srch::SearchResult uninterrupted = run(7, io, nullptr);
  std::filesystem::remove(path);
  srch::IslandOptions first = io;
  first.checkpoint = path;
  first.checkpoint_every = 3;
  in_two(4, first);  // the checkpoint is generation 3's: migration 1's migrants are in flight
  const nlohmann::json saved = srch::read_checkpoint(path, slurp(path), io.settings, 7);
  ASSERT_EQ(saved["generation"], 3);
  for (const auto& island : saved["islands"]) EXPECT_EQ(island["emigrants"].size(), io.migrants);
  srch::IslandOptions resume = io;
  resume.resume = &saved;
  resume.resume_path = path;
  expect_same(uninterrupted, in_two(7, resume));
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

TEST(Checkpoint, BadFilesAreErrorsNamingTheFileAndField) {
  const nlohmann::json settings = {{"seed", 7}, {"islands", 1}};
  auto read = [&](const std::string& text, unsigned generations = 10) {
    return error_of([&] { srch::read_checkpoint("ck.json", text, settings, generations); });
  };
  nlohmann::json good = {{"format", "tailor-search-checkpoint"}, {"version", 5}, {"settings", settings},
                         {"generation", 3}, {"islands", nlohmann::json::array({nlohmann::json::object()})}};
  EXPECT_EQ(read(good.dump()), "no error");
  EXPECT_NE(read("{\"format\": \"tailor-search").find("ck.json: not a checkpoint (not JSON"), std::string::npos);
  EXPECT_EQ(read("{\"format\": 1}"), "ck.json: not a checkpoint (field 'format' is not \"tailor-search-checkpoint\")");
  nlohmann::json j = good;
  j["version"] = 9;
  EXPECT_EQ(read(j.dump()), "ck.json: field 'version' is 9, this tailor reads version 5");
  j = good;
  j["settings"]["seed"] = 8;
  EXPECT_EQ(read(j.dump()),
            "ck.json: field 'settings.seed' is 8 in the checkpoint but 7 in this search; resume with the same");
  j = good;
  j["settings"].erase("islands");
  EXPECT_EQ(read(j.dump()), "ck.json: field 'settings.islands' is missing");
  EXPECT_EQ(read(good.dump(), 2), "ck.json: field 'generation' is 3, past --generations 2");
  j = good;
  j["islands"].push_back(nlohmann::json::object());
  EXPECT_EQ(read(j.dump()), "ck.json: field 'islands' does not hold 1 islands");

  // A malformed island: the error names it and its field.
  IslandFixture f;
  srch::Evaluator ev(f.trace, {}, 2);
  srch::SearchOptions o = small();
  o.generations = 2;
  srch::Island island(f.grammar, f.sizes, ev, o);
  island.start();
  nlohmann::json state = island.save();
  state.erase("rng");
  j = good;
  j["islands"][0] = state;
  srch::IslandOptions io;
  io.settings = settings;
  io.resume = &j;
  io.resume_path = "ck.json";
  o.generations = 4;
  EXPECT_EQ(error_of([&] { srch::run_islands(f.grammar, f.sizes, ev, o, io); }),
            "ck.json: field 'islands[0]': missing field 'rng'");
  state = island.save();
  state["population"][0]["genome"] = "xyz";
  j["islands"][0] = state;
  EXPECT_EQ(error_of([&] { srch::run_islands(f.grammar, f.sizes, ev, o, io); }),
            "ck.json: field 'islands[0]': field 'genome' has an odd number of hex digits");
}

}  // namespace
