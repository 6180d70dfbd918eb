# The README's two commands: `make demo` and `make test`. Both install what is
# missing first (scripts/setup), so they work on a bare Debian machine.

CARGO ?= cargo
# Where cargo puts the binary (a CARGO_TARGET_DIR set in the environment moves it).
BIN := $(or $(CARGO_TARGET_DIR),target)/release/fishtrack

.PHONY: setup demo test bench lint eval eval-foreign build

setup:
	@scripts/setup

build: setup
	$(CARGO) build --release

# The main job on the bundled sample: analyse the match video, print the
# scoreboard, then draw the replay (annotated video, diagrams, HTML report).
demo: setup
	$(CARGO) build --release
	mkdir -p out/demo
	$(BIN) analyse -o out/demo/record.json
	$(BIN) replay out/demo/record.json --video samples/demo/match.avi -o out/demo
	@echo "demo: open out/demo/report.html"

# Accuracy of analyse against the simulator's truth on the evaluation set
# (eval/suite.json, 1280x720): each clip is simulated into out/eval (once; kept
# while the simulator plays the same truth), analysed and compared; one table with
# every figure per clip and the pooled totals. EVAL_ARGS passes more options,
# e.g. EVAL_ARGS="--only match-2p,stacking" or "--json" or "--fresh"; EVAL_WORK
# puts the clips elsewhere than out/eval. EVAL_CALIBRATION=table analyses each clip
# with the table calibration fishtrack makes itself from a render of the clip's empty
# table (with the true camera.json), EVAL_CALIBRATION=no-chessboard with the lens found
# from the table too, and prints how far each is from the truth (default: truth).
EVAL_WORK ?= out/eval
EVAL_CALIBRATION ?= truth
eval: setup
	$(CARGO) build --release
	$(BIN) eval --suite eval/suite.json --work $(EVAL_WORK) --calibration $(EVAL_CALIBRATION) $(EVAL_ARGS)

# The eye on footage it was not built beside: the clips of another renderer in
# ../shared/foreign (FOREIGN=… to point elsewhere), analysed with the release
# binary and scored by that set's own judge.py, printed as a table (a row a clip,
# then the pooled figures). Records and the judge's JSON lines go to out/foreign.
FOREIGN ?= ../shared/foreign
eval-foreign: setup
	mkdir -p out/foreign
	$(CARGO) build --release
	@test -f $(FOREIGN)/judge.py || { echo "eval-foreign: no judge.py in $(FOREIGN) (set FOREIGN=path/to/foreign)" >&2; exit 1; }
	JUDGE_RECORDS=out/foreign python3 $(FOREIGN)/judge.py run $(BIN) > out/foreign/judge.jsonl; scripts/foreign-table < out/foreign/judge.jsonl

# Domain randomisation: SWEEP_N random clips (whole matches of 2-4 players with
# 1-3 moves each, 30 or 60 fps, hand on or off, each in a random look: table and
# floor materials, light colour and shadows, camera drift, H.264 or MJPG; see
# src/sim/look.rs) simulated and analysed into out/sweep; a row a clip, the pooled
# figures, and the worst clips with the command that renders each again.
# SWEEP_SEED repeats a run (default: drawn, and printed first). N=40 took 17
# minutes on 2 cores shared with two other builds; SWEEP_N=8 takes about 4, for a quick look.
SWEEP_N ?= 40
SWEEP_SEED ?=
SWEEP_WORK ?= out/sweep
.PHONY: eval-sweep
eval-sweep: setup
	$(CARGO) build --release
	$(BIN) eval --sweep $(SWEEP_N) $(if $(SWEEP_SEED),--seed $(SWEEP_SEED)) --work $(SWEEP_WORK) $(EVAL_ARGS)

# The pure core (geometry, rules, tracking, shots) must build without OpenCV, its
# unit tests too: checked without code generation (seconds); the tests themselves
# run once, in `cargo test`, which holds them all.
test: setup
	$(CARGO) check --no-default-features --lib --profile test
	$(CARGO) test

bench: setup
	$(CARGO) bench

lint: setup
	$(CARGO) fmt --check
	$(CARGO) clippy --all-targets -- -D warnings
	$(CARGO) clippy --no-default-features --lib -- -D warnings

# Mutation fuzzing (tests/it/hostile_fuzz.rs): every parser (record, state, game,
# items, camera, table, scenario, suite), the rules engine on arbitrary shots and the
# detector on arbitrary outlines and images, each for FUZZ_SECS seconds, inputs
# mutated from the bundled samples (FUZZ_SEED repeats a run). Each target's counts
# (cases, accepted, refused, panics, hangs) go to out/fuzz/counts.txt. A short pass
# of the same targets runs inside `make test`.
FUZZ_SECS ?= 60
FUZZ_SEED ?= 16
.PHONY: fuzz
fuzz: setup
	mkdir -p out/fuzz
	rm -f out/fuzz/counts.txt
	FUZZ_SECS=$(FUZZ_SECS) FUZZ_SEED=$(FUZZ_SEED) FUZZ_OUT=$(CURDIR)/out/fuzz/counts.txt $(CARGO) test --test it hostile_fuzz -- --test-threads 2
	@cat out/fuzz/counts.txt

# Issue 16's damaged-video run: the bundled demo analysed clean, then DAMAGED_N ways
# with 20 bytes flipped in random frames (DAMAGED_SEED repeats a run) and the fixed
# cases of scripts/damaged-videos (cuts, a dropped frame, a zeroed frame, a wrong
# container, an empty file), two at a time, each with a 300 s limit: no panic, abort,
# hang or raw decoder line, an allowed exit code, and every shot untouched by damage
# scored as in the clean video. Prints a line per failure and `N passed, M failed`.
DAMAGED_N ?= 1000
DAMAGED_SEED ?= 16
.PHONY: damaged
damaged: setup
	$(CARGO) build --release
	scripts/damaged-run --flips $(DAMAGED_N) --seed $(DAMAGED_SEED) --bin $(BIN)
