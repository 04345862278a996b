# The two commands of the README: `make run` and `make test`.
BUILD ?= build
JOBS ?= $(shell nproc)
RUN_ARGS ?=

.PHONY: all deps configure build run test bench clean
all: build

deps:
	@scripts/install-deps

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release

configure: deps $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/downpour $(RUN_ARGS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 900

# Speed of the step, the wire format and the runtime, side by side (JSON in $(BUILD)/bench/).
bench: build
	@mkdir -p $(BUILD)/bench
	$(BUILD)/bench_step --json $(BUILD)/bench/step.json
	$(BUILD)/bench_serialize --json $(BUILD)/bench/serialize.json
	$(BUILD)/bench_cluster --binary=$(BUILD)/downpour --json $(BUILD)/bench/cluster.json
	$(BUILD)/bench_sync --json $(BUILD)/bench/sync.json

clean:
	rm -rf $(BUILD)
