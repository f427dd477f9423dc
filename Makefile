# Entry points for people and CI. Everything goes through CMake + Ninja.
BUILD ?= build
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc)

.PHONY: all deps configure build demo test test-sanitize bench-record bench-simulate bench-locality clean

all: build

deps:
	./scripts/install-deps.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)

configure: $(BUILD)/build.ninja

build: deps configure
	ninja -C $(BUILD) -j $(JOBS)

# The main job on a bundled workload: record it, then summarize the trace.
demo: build
	./scripts/demo.sh $(BUILD)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The toolkit's own code under a sanitizer: make test-sanitize SANITIZE=address
SANITIZE ?= address
test-sanitize: deps
	cmake -S . -B $(BUILD)-$(SANITIZE) -G Ninja -DTAILOR_SANITIZE=$(SANITIZE) -DCMAKE_BUILD_TYPE=Debug $(CMAKE_FLAGS)
	ninja -C $(BUILD)-$(SANITIZE) -j $(JOBS)
	cd $(BUILD)-$(SANITIZE) && ctest --output-on-failure -j $(JOBS) -LE no_sanitize

bench-record: build
	./bench/record_overhead.py --build $(BUILD)

bench-simulate: build
	./bench/simulate_speed.py --build $(BUILD) --dmm $(or $(DMM),kng)

# Seed 000's list and tree kernels on every allocator configuration, times
# and callgrind cache misses (docs/issues/06-locality.md).
bench-locality: build
	./bench/locality_kernels.py --build $(BUILD) --cache

clean:
	rm -rf $(BUILD) $(BUILD)-address $(BUILD)-undefined $(BUILD)-thread
