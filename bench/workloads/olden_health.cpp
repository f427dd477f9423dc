// olden_health: imitates Olden "health" (the Colombian health-care system
// simulation of Lomow et al.).
//
// A 4-ary tree of villages, each with a hospital whose staff grows with the
// level.  Every time step, each village (children first) takes in the
// patients its children send up, discharges treated patients, assesses
// patients (90% are treated locally, 10% are sent up to the parent hospital;
// the root treats everyone), moves waiting patients to assessment when staff
// is free, and may generate a new patient.  Patients live in doubly linked
// lists (waiting, assess, inside, up, returned) exactly as in Olden: each
// list insertion walks to the tail and mallocs a new 24-byte list cell, each
// removal searches the patient and frees the cell.
//
// Allocation behaviour: C style, malloc/free.  One tree of large, long-lived
// village records at start; then a steady stream of 24-byte list cells that
// live a few time steps and 24-byte patient records that live until the end
// (treated patients accumulate in their village's "returned" list), so the
// heap grows slowly while the list cells churn.  Everything is freed at the
// end.  Self-checks: patients are conserved, and every hospital's free staff
// plus patients in assessment and treatment equals its staff.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>

#include "workload_common.h"

namespace {

constexpr const char* kProg = "wl_olden_health";
constexpr int kLevels = 6;  // 1365 villages, as in Olden's larger inputs
constexpr wl::ProgramInfo kInfo{kProg,
                                "Olden health: hierarchical health-care simulation with malloc'd "
                                "patients in linked lists.",
                                "simulated time steps", 500, 1, 1000000};

struct Village;

struct Patient {
  int hosps_visited;
  int time;
  int time_left;
  Village* home_village;
};

struct List {
  Patient* patient;
  List* back;
  List* forward;
};

struct Hosp {
  int personnel;
  int free_personnel;
  int num_waiting_patients;
  List waiting;  // list heads are sentinels embedded in the hospital
  List assess;
  List inside;
  List up;
};

struct Village {
  Village* forward[4];
  Village* back;
  List returned;
  Hosp hosp;
  int label;
  int level;
  wl::Rng rng;
};

std::uint64_t g_patients = 0;
std::uint64_t g_list_cells = 0;

void* xmalloc(std::size_t bytes) { return wl::checked_malloc(kProg, bytes); }

void init_list(List* l) {
  l->patient = nullptr;
  l->back = nullptr;
  l->forward = nullptr;
}

// Olden's addList: walk to the tail, append a new cell.
void add_list(List* list, Patient* patient) {
  List* b = list;
  while (b->forward != nullptr) b = b->forward;
  auto* cell = static_cast<List*>(xmalloc(sizeof(List)));
  ++g_list_cells;
  cell->patient = patient;
  cell->forward = nullptr;
  cell->back = b;
  b->forward = cell;
}

// Olden's removeList: find the patient's cell, unlink and free it.
void remove_list(List* list, Patient* patient) {
  List* l = list->forward;
  while (l != nullptr && l->patient != patient) l = l->forward;
  if (l == nullptr) wl::fail(kProg, "patient not found in the list it should be in");
  l->back->forward = l->forward;
  if (l->forward != nullptr) l->forward->back = l->back;
  std::free(l);
}

std::uint64_t list_length(const List* list) {
  std::uint64_t n = 0;
  for (const List* l = list->forward; l != nullptr; l = l->forward) ++n;
  return n;
}

Village* alloc_tree(int level, int label, Village* back, std::uint64_t seed) {
  if (level == 0) return nullptr;
  auto* v = static_cast<Village*>(xmalloc(sizeof(Village)));
  Village* children[4];
  for (int i = 3; i >= 0; --i) children[i] = alloc_tree(level - 1, label * 4 + i + 1, v, seed);
  v->back = back;
  v->label = label;
  v->level = level;
  new (&v->rng) wl::Rng(seed * 0x100000001b3ULL + static_cast<std::uint64_t>(label));
  v->hosp.personnel = 1 << (level - 1);
  v->hosp.free_personnel = v->hosp.personnel;
  v->hosp.num_waiting_patients = 0;
  init_list(&v->returned);
  init_list(&v->hosp.waiting);
  init_list(&v->hosp.assess);
  init_list(&v->hosp.inside);
  init_list(&v->hosp.up);
  for (int i = 0; i < 4; ++i) v->forward[i] = children[i];
  return v;
}

void put_in_hosp(Hosp* hosp, Patient* patient) {
  patient->hosps_visited++;
  if (hosp->free_personnel > 0) {
    hosp->free_personnel--;
    add_list(&hosp->assess, patient);
    patient->time_left = 3;
    patient->time += 3;
  } else {
    add_list(&hosp->waiting, patient);
  }
}

Patient* generate_patient(Village* village) {
  if (village->rng.below(1000) <= 666) return nullptr;
  auto* p = static_cast<Patient*>(xmalloc(sizeof(Patient)));
  ++g_patients;
  p->hosps_visited = 0;
  p->time = 0;
  p->time_left = 0;
  p->home_village = village;
  return p;
}

void check_patients_inside(Village* village) {
  Hosp* h = &village->hosp;
  List* l = h->inside.forward;
  while (l != nullptr) {
    List* next = l->forward;
    Patient* p = l->patient;
    p->time_left--;
    if (p->time_left == 0) {
      h->free_personnel++;
      remove_list(&h->inside, p);
      add_list(&village->returned, p);
    }
    l = next;
  }
}

List* check_patients_assess(Village* village) {
  Hosp* h = &village->hosp;
  List* l = h->assess.forward;
  while (l != nullptr) {
    List* next = l->forward;
    Patient* p = l->patient;
    p->time_left--;
    if (p->time_left == 0) {
      if (village->rng.below(10) != 0 || village->label == 0) {
        // Treated here.
        remove_list(&h->assess, p);
        add_list(&h->inside, p);
        p->time_left = 10;
        p->time += 10;
      } else {
        // Sent up to the parent's hospital.
        h->free_personnel++;
        remove_list(&h->assess, p);
        add_list(&h->up, p);
      }
    }
    l = next;
  }
  return &h->up;
}

void check_patients_waiting(Village* village) {
  Hosp* h = &village->hosp;
  List* l = h->waiting.forward;
  while (l != nullptr) {
    List* next = l->forward;
    Patient* p = l->patient;
    if (h->free_personnel > 0) {
      h->free_personnel--;
      p->time_left = 3;
      p->time += 3;
      remove_list(&h->waiting, p);
      add_list(&h->assess, p);
    } else {
      p->time++;
    }
    l = next;
  }
}

List* sim(Village* village) {
  if (village == nullptr) return nullptr;
  List* val[4];
  for (int i = 3; i >= 0; --i) val[i] = sim(village->forward[i]);
  Hosp* h = &village->hosp;
  for (int i = 3; i >= 0; --i) {
    List* up = val[i];
    if (up == nullptr) continue;
    List* l = up->forward;
    while (l != nullptr) {
      List* next = l->forward;
      Patient* p = l->patient;
      put_in_hosp(h, p);
      remove_list(up, p);
      l = next;
    }
  }
  check_patients_inside(village);
  List* up = check_patients_assess(village);
  check_patients_waiting(village);
  if (Patient* p = generate_patient(village)) put_in_hosp(h, p);
  return up;
}

struct Results {
  std::uint64_t patients = 0;
  std::uint64_t total_time = 0;
  std::uint64_t total_hosps = 0;
};

void get_results(const Village* v, Results& r) {
  if (v == nullptr) return;
  for (int i = 3; i >= 0; --i) get_results(v->forward[i], r);
  for (const List* l = v->returned.forward; l != nullptr; l = l->forward) {
    r.patients++;
    r.total_time += static_cast<std::uint64_t>(l->patient->time);
    r.total_hosps += static_cast<std::uint64_t>(l->patient->hosps_visited);
  }
}

struct Census {
  std::uint64_t returned = 0, waiting = 0, assess = 0, inside = 0, up = 0;
};

void census(const Village* v, Census& c) {
  if (v == nullptr) return;
  for (int i = 0; i < 4; ++i) census(v->forward[i], c);
  const Hosp& h = v->hosp;
  c.returned += list_length(&v->returned);
  c.waiting += list_length(&h.waiting);
  const std::uint64_t assess = list_length(&h.assess);
  const std::uint64_t inside = list_length(&h.inside);
  c.assess += assess;
  c.inside += inside;
  c.up += list_length(&h.up);
  if (h.free_personnel < 0 ||
      static_cast<std::uint64_t>(h.free_personnel) + assess + inside != static_cast<std::uint64_t>(h.personnel)) {
    wl::fail(kProg, "village %d: %d free staff + %llu assessing + %llu treating != %d staff", v->label,
             h.free_personnel, static_cast<unsigned long long>(assess), static_cast<unsigned long long>(inside),
             h.personnel);
  }
  if (v->label == 0 && list_length(&h.up) != 0) wl::fail(kProg, "the root hospital sent patients up");
}

void free_list(List* list, bool free_patients) {
  List* l = list->forward;
  while (l != nullptr) {
    List* next = l->forward;
    if (free_patients) std::free(l->patient);
    std::free(l);
    l = next;
  }
  list->forward = nullptr;
}

void free_tree(Village* v) {
  if (v == nullptr) return;
  for (int i = 0; i < 4; ++i) free_tree(v->forward[i]);
  free_list(&v->returned, true);
  free_list(&v->hosp.waiting, true);
  free_list(&v->hosp.assess, true);
  free_list(&v->hosp.inside, true);
  free_list(&v->hosp.up, true);
  std::free(v);
}

}  // namespace

int main(int argc, char** argv) {
  const wl::Options opt = wl::parse_args(argc, argv, kInfo);

  Village* top = alloc_tree(kLevels, 0, nullptr, opt.seed);
  const std::uint64_t villages = ((std::uint64_t{1} << (2 * kLevels)) - 1) / 3;
  std::printf("health: %d levels (%llu villages), %llu time steps\n", kLevels,
              static_cast<unsigned long long>(villages), static_cast<unsigned long long>(opt.size));

  for (std::uint64_t t = 0; t < opt.size; ++t) {
    sim(top);
    if (opt.verbose && (t + 1) % 500 == 0) {
      std::fprintf(stderr, "%s: step %llu, %llu patients, %llu list cells so far\n", kProg,
                   static_cast<unsigned long long>(t + 1), static_cast<unsigned long long>(g_patients),
                   static_cast<unsigned long long>(g_list_cells));
    }
  }

  Census c;
  census(top, c);
  const std::uint64_t present = c.returned + c.waiting + c.assess + c.inside + c.up;
  if (present != g_patients) {
    wl::fail(kProg, "%llu patients generated but %llu found in the lists",
             static_cast<unsigned long long>(g_patients), static_cast<unsigned long long>(present));
  }
  Results r;
  get_results(top, r);
  if (r.patients != c.returned) wl::fail(kProg, "result walk disagrees with census");

  std::printf("patients generated: %llu; treated %llu, in treatment %llu, in assessment %llu, waiting %llu\n",
              static_cast<unsigned long long>(g_patients), static_cast<unsigned long long>(c.returned),
              static_cast<unsigned long long>(c.inside), static_cast<unsigned long long>(c.assess),
              static_cast<unsigned long long>(c.waiting));
  const double n = r.patients > 0 ? static_cast<double>(r.patients) : 1.0;
  std::printf("# of people treated: %llu people\n", static_cast<unsigned long long>(r.patients));
  std::printf("average length of stay: %.4f time units\n", static_cast<double>(r.total_time) / n);
  std::printf("average # of hospitals visited: %.4f hospitals\n", static_cast<double>(r.total_hosps) / n);
  if (opt.verbose) {
    std::fprintf(stderr, "%s: %llu patients, %llu list cells allocated\n", kProg,
                 static_cast<unsigned long long>(g_patients), static_cast<unsigned long long>(g_list_cells));
  }
  wl::Checksum check;
  check.add(r.patients);
  check.add(r.total_time);
  check.add(r.total_hosps);
  check.add(c.waiting);
  check.add(c.assess);
  check.add(c.inside);
  free_tree(top);
  wl::print_result_hex(check.value());
  return 0;
}
