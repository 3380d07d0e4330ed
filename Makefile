# gateway — see README.md. Every target installs or builds what it needs.
SHELL := /bin/bash
SWIFT ?= swift
# Debian packages the build, the tests and the benchmarks need (checked one by one, installed only if missing).
DEB_PACKAGES := pkg-config libssl-dev openssl libxml2-dev libsqlite3-dev libseccomp-dev libidn2-dev publicsuffix dnsmasq-base \
	python3 python3-dkim python3-extruct python3-icalendar libopendkim-dev
GATEWAY := .build/debug/gateway

.PHONY: deps build test run bench clean

deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
		dpkg-query -W -f='$${db:Status-Status}' $$p 2>/dev/null | grep -qx installed || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing; \
	fi

build: deps
	$(SWIFT) build

test: deps
	$(SWIFT) build --build-tests
	# Serial: the timing bounds in the DNS and sandbox tests must not wait behind CPU-heavy parsing tests
	# for one of the two cooperative threads a 2-core machine has.
	$(SWIFT) test --skip-build --no-parallel

# The gateway's main job on the embedded default. Until admission and the store exist, it verifies
# the signed examples against their published keys.
run: build
	$(GATEWAY) dkim verify --keys examples/keys.zone examples/*.eml

# The ingest suite runs the release gateway-worker that sits next to the bench.
bench: deps
	$(SWIFT) build -c release --product gateway-worker
	$(SWIFT) build -c release --product gateway-bench
	.build/release/gateway-bench

clean:
	rm -rf .build
