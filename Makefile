# Shipyard — the commands a developer and CI use. Every target installs what is missing first.
SHELL := /bin/bash
STAMP := node_modules/.install-stamp

.PHONY: bench-cli install run test lint lint-owasp typecheck codegen check-codegen check-breaking release-contract bench sdk

# npm may run on an older system Node than the Node 24 the project installs and runs on: its
# EBADENGINE warnings (one per package that asks for a newer Node) are left out; everything else,
# errors included, is shown, and a failed install still fails.
$(STAMP): package.json package-lock.json
	@echo "Installing the dependencies (npm ci: half a minute to two on a fresh clone, quiet until it ends)…"
	@set -o pipefail; npm ci --no-audit --no-fund 2>&1 | { grep -v 'EBADENGINE' || true; }
	@node -e 'const m = +process.versions.node.split(".")[0]; if (m < 24) console.log(`npm ran on Node $${process.version}; Shipyard runs on the Node 24 it installed (node_modules/.bin/node).`)'
	@touch $@

install: $(STAMP)

## run: start the service on PORT (3000) with the embedded database under DATA_DIR (.data/),
##      or on PostgreSQL when DATABASE_URL is set; for this machine only unless HOST says otherwise
##      (HOST=0.0.0.0 make run serves the network, as `npm start` does)
run: install
	HOST=$${HOST:-127.0.0.1} npm run --silent start

## test: the test suite on the embedded database, or on PostgreSQL when DATABASE_URL is set
test: install
	npm test

## lint: the bundled contract through Spectral (the house rules) and Redocly (recommended, warnings as errors)
lint: install
	npm run --silent lint

## lint-owasp: Spectral's OWASP API Security Top 10 ruleset (openapi/spectral-owasp.yaml says what it narrows, and why)
lint-owasp: install
	npm run --silent lint-owasp

typecheck: install
	npm run --silent typecheck

## check-breaking: the contract against the released one (openapi/released/v1.json); a breaking change fails
##                 unless docs/api-changes.md accepts it, with a reason, under the new info.version
check-breaking: install
	npm run --silent check-breaking

## release-contract: after check-breaking passes, make the current contract the released one
release-contract: install
	npm run --silent release-contract

## codegen: bundle openapi/ and regenerate types, zod schemas and the SDK under codegen/generated
codegen: install
	npm run --silent codegen

## check-codegen: regenerate and fail if anything under codegen/generated differs from what is committed
check-codegen: codegen
	@if [ -n "$$(git status --porcelain -- codegen/generated)" ]; then \
	  echo "codegen/generated is out of date with openapi/: run 'make codegen' and commit the result" >&2; \
	  git status --porcelain -- codegen/generated >&2; git --no-pager diff --stat -- codegen/generated >&2; exit 1; \
	fi
	@echo "codegen up to date"

## bench: seed a realistic dataset on PostgreSQL (DATABASE_URL, or shipyard_bench on 127.0.0.1:5432)
##        and print requests/s, latencies and ratios to the baselines (BENCH_SOAK=300 for a soak)
bench: install
	@if [ -z "$$DATABASE_URL" ]; then \
	  psql -h 127.0.0.1 -U postgres -d postgres -qc "create database shipyard_bench" 2>/dev/null || true; \
	  export DATABASE_URL=postgres://postgres@127.0.0.1:5432/shipyard_bench; \
	fi; \
	DATABASE_URL=$${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/shipyard_bench} node_modules/.bin/node --import tsx bench/run.ts

## bench-cli: how long each operator CLI command takes (median of five runs; embedded database,
##            or DATABASE_URL)
bench-cli: install
	@node_modules/.bin/node --import tsx bench/cli.ts

## sdk: the generated client as its own npm package (codegen/sdk); prints the packed tarball's path
sdk: install
	@node_modules/.bin/node --import tsx codegen/sdk/build.ts
