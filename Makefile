# horizon — the two commands a new machine needs:
#   make demo   install everything, build horizon, run the demo on the embedded engine
#   make test   run every test (unit, workflow, integration with real OpenCode/git/Temporal)

GO      ?= go
BIN     := bin/horizon
PKGS    := ./...

.PHONY: demo setup build test test-short vet bench clean

demo: build
	./$(BIN) demo

# Installs the tools horizon drives into ./node_modules (opencode, ast-grep)
# and the Go modules. Needs Go 1.26, Node 20+ with npm, and git.
setup:
	npm install --no-audit --no-fund
	$(GO) mod download

build: setup
	$(GO) build -o $(BIN) ./cmd/horizon

# The full suite. Integration tests build bin-like copies of horizon into a
# temp dir and run real OpenCode against the scripted model; -p 1 keeps two
# embedded engines from competing for 2 cores.
test: setup
	$(GO) vet $(PKGS)
	$(GO) test -p 1 -timeout 60m $(PKGS)

test-short:
	$(GO) test -short $(PKGS)

bench: setup
	scripts/bench

clean:
	rm -rf bin .bench
