# horizon — the two commands a new machine needs:
#   make demo   install everything, build horizon, run the demo on the embedded engine
#   make test   run every test (unit, workflow, integration with real OpenCode/git/Temporal)

GO      ?= go
BIN     := bin/horizon
PKGS    := ./...

.PHONY: demo setup build test test-tools test-short vet bench clean

demo: build
	./$(BIN) demo

# Installs the tools horizon drives into ./node_modules (opencode, ast-grep)
# and the Go modules. Needs Go 1.26, Node 20+ with npm, and git.
setup:
	npm install --no-audit --no-fund
	$(GO) mod download

# The applier CLIs (Claude Code, Codex CLI) for the tests that drive them
# against a scripted loopback model. A person who does not use them gets
# neither: they are not in package.json, and --no-save keeps it so.
APPLIERS := @anthropic-ai/claude-code@2.1.328 @openai/codex@0.169.0

# gopls, the Go language server OpenCode runs when its config's `lsp` key
# names it, for the test of the diagnostics in the advisor's review
# (activities/advisor_diagnostics_integration_test.go); into ./bin, not
# onto a person's PATH, and built again only for another version.
GOPLS_VERSION := v0.23.0

test-tools: setup
	npm install --no-save --no-audit --no-fund $(APPLIERS)
	bin/gopls version 2>/dev/null | grep -q '$(GOPLS_VERSION)$$' || GOBIN=$(CURDIR)/bin $(GO) install golang.org/x/tools/gopls@$(GOPLS_VERSION)

build: setup
	GO=$(GO) scripts/build $(BIN)

# The full suite. End-to-end tests build horizon into a temp dir and run it
# with real OpenCode against the scripted model. Packages compile in
# parallel first; tests then run one package at a time (-p 1), and within
# the end-to-end package three tests at a time (-parallel 3): each has its
# own daemon, engine and OpenCode, and spends most of its time waiting on
# heartbeats, timers and scripted outages, not on the 2 cores. A cluster
# test (an engine and several workers, each with an OpenCode) takes all
# three places and runs alone (internal/e2e needsE2EAlone).
#
# go test runs under scripts/slowest, which prints its usual output (the
# ok/FAIL line of each package, failed tests' output), then the 10 slowest
# tests and a closing PASS or FAIL, and exits with go test's status.
test: test-tools
	$(GO) build $(PKGS)
	$(GO) vet $(PKGS)
	$(GO) build -o bin/slowest ./scripts/slowest
	bin/slowest $(GO) test -json -p 1 -parallel 3 -timeout 75m $(PKGS)

test-short:
	$(GO) test -short $(PKGS)

bench: setup
	scripts/bench

clean:
	rm -rf bin .bench
