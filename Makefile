# The README's two commands: `make demo` and `make test`. Both install what is
# missing first (scripts/setup), so they work on a bare Debian machine.

CARGO ?= cargo

.PHONY: setup demo test bench lint eval build

setup:
	@scripts/setup

build: setup
	$(CARGO) build --release

# The main job on the bundled sample.
demo: setup
	$(CARGO) run --release -- score samples/demo/record.json

test: setup
	$(CARGO) test --no-default-features --lib
	$(CARGO) test

bench: setup
	$(CARGO) bench

lint: setup
	$(CARGO) fmt --check
	$(CARGO) clippy --all-targets -- -D warnings
	$(CARGO) clippy --no-default-features --lib -- -D warnings
