# The two commands of the README: `make run` and `make test`; `make package`.
BUILD ?= build
JOBS ?= $(shell nproc)
RUN_ARGS ?=

.PHONY: all deps configure build run test test-long test-torch test-package bench bench-quick bench-sparse bench-ctr bench-table package clean
all: build

deps:
	@scripts/install-deps

# Ninja when installed (scripts/install-deps): CMake's makefiles spend about
# 55 CPU-s of the 2 cores checking ~180 steps even when there is nothing to
# build (measured), Ninja next to none. A build directory keeps the generator
# it was configured with.
GENERATOR ?= $(if $(shell command -v ninja 2>/dev/null),-G Ninja,)

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(GENERATOR) -DCMAKE_BUILD_TYPE=Release

configure: deps $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/downpour $(RUN_ARGS)

# `make test` leaves out the programs of test/long/ (label `long`: the
# 20000-step job in sync, ssp, as four processes and by the reference trainer;
# the portable package build), so that it stays within 15 minutes on 2 cores;
# `make test-long` runs them (about 10 minutes).
test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 900 -LE long

test-long: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 900 -L long

# The LibTorch adapter (docs/torch.md) in a build of its own: installs
# LibTorch, builds only the adapter's tests and runs them all, the 20000-step
# test_torch_full_job of test/long/ too (about 2 minutes of the CI's run).
TORCH_BUILD ?= build-torch
test-torch:
	scripts/install-deps --with-torch
	cmake -S . -B $(TORCH_BUILD) -DCMAKE_BUILD_TYPE=Release -DDOWNPOUR_WITH_TORCH=ON
	cmake --build $(TORCH_BUILD) -j $(JOBS) --target downpour_torch_tests
	cd $(TORCH_BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 900 -R '^test_torch'

PACKAGE_BUILD_TEST = ^test_package_portable: 
test-package: build
	cd $(BUILD) && ctest --output-on-failure -R '$(PACKAGE_BUILD_TEST)'

# The Debian package, from a build of its own for every x86-64 CPU Debian 12
# runs on (no -march=native): $(PACKAGE_BUILD)/downpour_VERSION_amd64.deb.
PACKAGE_BUILD ?= build-package

$(PACKAGE_BUILD)/CMakeCache.txt:
	cmake -S . -B $(PACKAGE_BUILD) $(GENERATOR) -DCMAKE_BUILD_TYPE=Release -DDOWNPOUR_ARCH=x86-64

package: deps $(PACKAGE_BUILD)/CMakeCache.txt
	cmake --build $(PACKAGE_BUILD) -j $(JOBS) --target downpour downpour_library man
	cd $(PACKAGE_BUILD) && cpack -G DEB

# Speed of the step, the wire format and the runtime, side by side (JSON and
# markdown tables in $(BUILD)/bench/). `make bench` also runs the whole original
# job BENCH_FULL_REPEATS times (about 2 min each); `make bench-quick` leaves that
# out and measures peak memory on a 3000-step job instead.
BENCH_FULL_REPEATS ?= 3
BENCH_OUT = $(BUILD)/bench

bench-quick: build
	cmake --build $(BUILD) -j $(JOBS) --target downpour_bench
	@mkdir -p $(BENCH_OUT)
	$(BUILD)/bench_step --json $(BENCH_OUT)/step.json
	$(BUILD)/bench_serialize --json $(BENCH_OUT)/serialize.json
	$(BUILD)/bench_message --json $(BENCH_OUT)/message.json
	$(BUILD)/bench_cluster --binary=$(BUILD)/downpour --json $(BENCH_OUT)/cluster.json
	$(BUILD)/bench_sync --json $(BENCH_OUT)/sync.json
	$(BUILD)/bench_job --binary=$(BUILD)/downpour --json $(BENCH_OUT)/job.json

bench: bench-quick bench-sparse bench-ctr
	$(BUILD)/bench_job --full --repeats $(BENCH_FULL_REPEATS) --binary=$(BUILD)/downpour \
	  --json $(BENCH_OUT)/job-full.json

# The sparse model (docs/sparse.md): one pass over 4M planted examples for
# N = 2^20 and 2^26, in one process and as 2 ps + 2 worker processes, and the
# streamed input (docs/input.md) on the same data and on Criteo-format lines
# (about 10 minutes, and 1.5 GB of data made once in $(SPARSE_DATA) and
# $(CRITEO_DATA)).
SPARSE_DATA ?= $(BUILD)/sparse-data
CRITEO_DATA ?= $(BUILD)/criteo-data
bench-sparse: build
	cmake --build $(BUILD) -j $(JOBS) --target bench_sparse bench_sparse_cluster bench_input
	@mkdir -p $(BENCH_OUT)
	@test -f $(SPARSE_DATA)/planted.json || $(BUILD)/gen_libsvm --out $(SPARSE_DATA)
	@test -f $(CRITEO_DATA)/planted.json || $(BUILD)/gen_criteo --out $(CRITEO_DATA)
	$(BUILD)/bench_sparse --data $(SPARSE_DATA) --json $(BENCH_OUT)/sparse.json
	$(BUILD)/bench_sparse_cluster --data $(SPARSE_DATA) --binary=$(BUILD)/downpour \
	  --json $(BENCH_OUT)/sparse_cluster.json
	$(BUILD)/bench_input --data=$(SPARSE_DATA) --criteo=$(CRITEO_DATA) \
	  --binary=$(BUILD)/downpour --json $(BENCH_OUT)/input.json

# dlrm and wide_deep in one process against the same models in PyTorch
# (bench/ctr_torch.py, when Debian's python3-torch is installed): examples/s
# and test AUC side by side (about 2 minutes; docs/models.md).
bench-ctr: build
	cmake --build $(BUILD) -j $(JOBS) --target bench_ctr gen_criteo
	@mkdir -p $(BENCH_OUT)
	$(BUILD)/bench_ctr --json $(BENCH_OUT)/ctr.json

# The tables of the last `make bench` as markdown (docs/performance.md).
bench-table:
	@scripts/bench-table $(BUILD)

clean:
	rm -rf $(BUILD) $(PACKAGE_BUILD)
