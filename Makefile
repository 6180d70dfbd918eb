# The README's two commands: `make demo` and `make test`. Both install what is
# missing first (scripts/setup), so they work on a bare Debian machine.

CARGO ?= cargo

.PHONY: setup demo test bench lint eval build

setup:
	@scripts/setup

build: setup
	$(CARGO) build --release

# The main job on the bundled sample: analyse the match video, print the
# scoreboard, then draw the replay (annotated video, diagrams, HTML report).
demo: setup
	$(CARGO) build --release
	mkdir -p out/demo
	target/release/fishtrack analyse -o out/demo/record.json
	target/release/fishtrack replay out/demo/record.json --video samples/demo/match.avi -o out/demo
	@echo "demo: open out/demo/report.html"

# Accuracy of analyse against the simulator's truth on the bundled sample.
eval: setup
	$(CARGO) build --release
	mkdir -p out/eval
	target/release/fishtrack analyse --quiet -o out/eval/demo.record.json
	target/release/fishtrack eval out/eval/demo.record.json samples/demo/truth.json

test: setup
	$(CARGO) test --no-default-features --lib
	$(CARGO) test

bench: setup
	$(CARGO) bench

lint: setup
	$(CARGO) fmt --check
	$(CARGO) clippy --all-targets -- -D warnings
	$(CARGO) clippy --no-default-features --lib -- -D warnings
