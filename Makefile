# gateway — see README.md. Every target installs or builds what it needs.
SHELL := /bin/bash
SWIFT ?= swift
# Debian packages the build, the tests and the benchmarks need (checked one by one, installed only if missing).
# chromium, chromium-driver and python3-selenium: the console's browser tests (ConsoleBrowserTests).
DEB_PACKAGES := pkg-config libssl-dev openssl libxml2-dev libsqlite3-dev libseccomp-dev libidn2-dev publicsuffix dnsmasq-base \
	python3 python3-dkim python3-extruct python3-icalendar nginx-light libopendkim-dev python3-venv swaks curl postgresql \
	postfix chromium chromium-driver python3-selenium
GATEWAY := .build/debug/gateway

.PHONY: deps python-tools build test run bench certs fuzz clean

# Installs what is missing; a policy-rc.d keeps Debian from starting the services it installs
# (nginx, postgresql, postfix): the tests start and stop their own servers (Postfix as an instance
# of its own, its configuration and queue in a temporary directory: /etc/postfix is never changed).
# Before postgresql is installed, `create_main_cluster = false` keeps it from making a system cluster
# (the tests initdb their own, as an unprivileged user); the file is kept when postgresql-common
# arrives (--force-confold). apt waits up to five minutes for a lock another apt-get holds instead of
# failing.
APT_OPTIONS := -o DPkg::Lock::Timeout=300 -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold
deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
		dpkg-query -W -f='$${db:Status-Status}' $$p 2>/dev/null | grep -qx installed || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		if echo " $$missing " | grep -q " postgresql "; then \
			conf=/etc/postgresql-common/createcluster.conf; $$SUDO mkdir -p /etc/postgresql-common; \
			if grep -qs '^[[:space:]]*create_main_cluster' $$conf; then \
				$$SUDO sed -i 's/^[[:space:]]*create_main_cluster.*/create_main_cluster = false/' $$conf; \
			else echo 'create_main_cluster = false' | $$SUDO tee -a $$conf >/dev/null; fi; \
		fi; \
		printf '#!/bin/sh\nexit 101\n' | $$SUDO tee /usr/sbin/policy-rc.d >/dev/null && $$SUDO chmod +x /usr/sbin/policy-rc.d; \
		$$SUDO apt-get $(APT_OPTIONS) update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get $(APT_OPTIONS) install -y -qq --no-install-recommends $$missing; \
		status=$$?; $$SUDO rm -f /usr/sbin/policy-rc.d; [ $$status = 0 ] || exit $$status; \
	fi

# The Python tools the API tests run (schemathesis checks `gateway serve` against its OpenAPI document; see
# Tests/GatewayIntegrationTests/Scripts/schemathesis.sh), pinned, in a virtual environment under .build: made
# again when the pins change.
PYTHON_TOOLS := schemathesis==4.32.5 openapi-spec-validator==0.9.0 standardwebhooks==1.1.0 cloudevents==2.2.0
VENV := .build/venv
python-tools: deps
	@if [ "$$(cat $(VENV)/.tools 2>/dev/null)" != "$(PYTHON_TOOLS)" ]; then \
		echo "installing into $(VENV): $(PYTHON_TOOLS)"; \
		rm -rf $(VENV) && /usr/bin/python3 -m venv $(VENV) && \
		$(VENV)/bin/pip install --quiet --disable-pip-version-check $(PYTHON_TOOLS) && \
		echo "$(PYTHON_TOOLS)" > $(VENV)/.tools; \
	fi

build: deps
	$(SWIFT) build

test: deps python-tools
	$(SWIFT) build --build-tests
	# Serial: the timing bounds in the DNS and sandbox tests must not wait behind CPU-heavy parsing tests
	# for one of the two cooperative threads a 2-core machine has.
	$(SWIFT) test --skip-build --no-parallel

# The gateway as a service on the embedded default (SQLite at var/gateway.sqlite, development policy), on
# 127.0.0.1: first the example senders are registered and their signed confirmations ingested (keys from
# examples/keys.zone, markup parsed in the sandbox), then `gateway serve` runs the HTTP API and LMTP until Ctrl-C.
# The admin token below is for this development run only; set your own with GATEWAY_ADMIN_TOKEN=... make run.
EXAMPLE_DOMAINS := nordic-rail.example kokkari.example skyways.example
HTTP ?= 127.0.0.1:8080
LMTP ?= 127.0.0.1:2424
GATEWAY_ADMIN_TOKEN ?= dev-admin-token-for-make-run
run: build
	@for domain in $(EXAMPLE_DOMAINS); do $(GATEWAY) register $$domain --contact markup@$$domain; done
	$(GATEWAY) ingest email --keys examples/keys.zone examples/*.eml
	$(GATEWAY) reservations list
	@echo "admin token for this run: $(GATEWAY_ADMIN_TOKEN)"
	@echo "then:  curl -s -H 'Authorization: Bearer $(GATEWAY_ADMIN_TOKEN)' http://$(HTTP)/v1/domains"
	GATEWAY_ADMIN_TOKEN=$(GATEWAY_ADMIN_TOKEN) exec $(GATEWAY) serve --http $(HTTP) --lmtp $(LMTP) --keys examples/keys.zone

# The ingest suite runs the release gateway-worker that sits next to the bench; the serve suite runs the
# release gateway (serve) beside it.
bench: deps
	$(SWIFT) build -c release --product gateway-bench
	$(SWIFT) build -c release --product gateway-worker
	$(SWIFT) build -c release --product gateway
	.build/release/gateway-bench

# The development CA and the local test site's certificates (kept when present; see certs/README.md).
certs:
	$(MAKE) -C certs

# libFuzzer targets (Fuzz/README.md), FUZZ_SECONDS each (default 60); crashes go to .build-fuzz/crashes/.
# Not part of `make test`. `make fuzz FUZZ_TARGETS=fuzz-mime` runs only the named targets.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=
fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) SWIFT=$(SWIFT) Scripts/fuzz.sh $(FUZZ_TARGETS)

clean:
	rm -rf .build .build-fuzz
