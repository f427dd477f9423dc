# Entry points for people and CI. Everything goes through CMake + Ninja.
BUILD ?= build
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc)

.PHONY: all deps configure build package demo test test-sanitize test-tsan bench-record bench-sample bench-simulate bench-alloc bench-locality clean

all: build

deps:
	./scripts/install-deps.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)

configure: $(BUILD)/build.ninja

build: deps configure
	ninja -C $(BUILD) -j $(JOBS)

# The Debian packages: $(BUILD)/tailor_<version>_amd64.deb and, with MPI, tailor-mpi_<version>_amd64.deb (packaging/debian.cmake).
package: build
	cd $(BUILD) && cpack -G DEB

# The main job on a bundled workload: record it, then summarize the trace.
demo: build
	./scripts/demo.sh $(BUILD)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The toolkit's own code under AddressSanitizer and UndefinedBehaviorSanitizer
# in one build (they combine; one build and one run instead of two), or one
# of them alone: make test-sanitize SANITIZE=undefined
comma := ,
SANITIZE ?= address,undefined
SANITIZE_BUILD = $(BUILD)-$(subst $(comma),-,$(SANITIZE))
# Line tables only (-g1): the sanitizers' reports name files and lines, and
# the builds take a tenth less time than with full debug information.
SANITIZE_DEBUG_INFO = -DCMAKE_C_FLAGS_DEBUG=-g1 -DCMAKE_CXX_FLAGS_DEBUG=-g1
test-sanitize: deps
	cmake -S . -B $(SANITIZE_BUILD) -G Ninja -DTAILOR_SANITIZE=$(SANITIZE) -DTAILOR_DEBUG=ON -DCMAKE_BUILD_TYPE=Debug $(SANITIZE_DEBUG_INFO) $(CMAKE_FLAGS)
	ninja -C $(SANITIZE_BUILD) -j $(JOBS)
	cd $(SANITIZE_BUILD) && ctest --output-on-failure -j $(JOBS) -LE no_sanitize

# libtailor's core and its multithreaded stress under ThreadSanitizer (the
# allocator tests, not the LD_PRELOAD ones, which TSan cannot run, nor the
# address-space tests, which map more than TSan's application ranges allow),
# and the simulations that follow a loading trace. The runs below go $(JOBS)
# at a time, longest first, each one's output kept together (--output-sync).
TSAN_BIN = $(BUILD)-thread/bin
TSAN_RUNS = tsan-stream tsan-trace tsan-dmm-table4 tsan-secure tsan-dmm-kng tsan-dmm-lea tsan-core tsan-pools
.PHONY: $(TSAN_RUNS)
test-tsan: deps
	cmake -S . -B $(BUILD)-thread -G Ninja -DTAILOR_SANITIZE=thread -DTAILOR_DEBUG=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" $(CMAKE_FLAGS)
	ninja -C $(BUILD)-thread -j $(JOBS) test_alloc_core test_alloc_pools test_simulate_stream test_trace
	$(MAKE) --no-print-directory -j $(JOBS) --output-sync=target $(TSAN_RUNS)

# Simulations that follow a trace while it loads (docs/dmm.md): the builder publishing, readers waiting and decoding for it.
tsan-stream:
	$(TSAN_BIN)/test_simulate_stream
# Chunks decoded by the reader's threads and by threads that help it (Reader::help_decode), with rewinds between.
tsan-trace:
	$(TSAN_BIN)/test_trace --gtest_filter='ParallelRead.SameEvents*:ParallelRead.Helpers*:ParallelRead.Rewind*'
# Call-site pools (docs/pools.md): per-thread pools, cross-thread frees, adoption after thread exit.
tsan-pools:
	$(TSAN_BIN)/test_alloc_pools --gtest_filter='-Pools.ForkWithPoolsActive:Pools.MisuseOfAPooledBlockIsCaught'
tsan-core:
	TAILOR_CONFIG=/dev/null $(TSAN_BIN)/test_alloc_core --gtest_filter='Stress.*:CoreApi.*:SizeClass.*:Config.*:Region.*:ThreadReuse.*'
# Secure mode (TAILOR_SECURE, docs/allocator.md): the thread heaps with their quarantines, frees from any thread, quarantines emptied at thread exit.
tsan-secure:
	TAILOR_CONFIG=/dev/null TAILOR_SECURE=1 $(TSAN_BIN)/test_alloc_core \
	  --gtest_filter='Stress.*:CoreApi.*:-Stress.ThreadsDoNotShareCacheLines'
# The DMM front end (TAILOR_DMM, docs/deploy.md): one DMM for all threads behind its lock. Per-thread
# heaps' own property (no cache line shared between threads) is not a single heap's.
TSAN_DMM_kng = kng
TSAN_DMM_lea = lea
TSAN_DMM_table4 = $(CURDIR)/share/dmm/simulator-paper-table4.json
tsan-dmm-kng tsan-dmm-lea tsan-dmm-table4:
	TAILOR_CONFIG=/dev/null TAILOR_DMM=$(TSAN_DMM_$(@:tsan-dmm-%=%)) $(TSAN_BIN)/test_alloc_core \
	  --gtest_filter='Stress.*:CoreApi.*:-Stress.ThreadsDoNotShareCacheLines'

bench-record: build
	./bench/record_overhead.py --build $(BUILD) --runs 3 --heaptrack-runs 3 --stacks --stacks-libunwind --stacks-fp

# tailor record --sample: cost against the unrecorded program, estimates against an exact recording.
bench-sample: build
	./bench/sample_overhead.py --build $(BUILD) --runs 7

bench-simulate: build
	./bench/simulate_speed.py --build $(BUILD) --dmm $(or $(DMM),kng)

# libtailor against glibc, mimalloc, jemalloc and tcmalloc (docs/BENCHMARKS.md, same heading).
bench-alloc: build
	./bench/alloc_compare.py --build $(BUILD) --runs $(or $(RUNS),3) --scaling

# The Defero paper's list and tree kernels on every allocator configuration, times
# and callgrind cache misses (docs/locality.md; tables in docs/BENCHMARKS.md, "Locality by hints").
bench-locality: build
	./bench/locality_kernels.py --build $(BUILD) --cache

clean:
	rm -rf $(BUILD) $(BUILD)-address-undefined $(BUILD)-address $(BUILD)-undefined $(BUILD)-thread
