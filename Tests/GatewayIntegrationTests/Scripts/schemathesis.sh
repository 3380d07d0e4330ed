#!/usr/bin/env bash
# Checks a running `gateway serve` against the OpenAPI document it serves, with schemathesis.
#
#   GATEWAY_ADMIN_TOKEN=... Tests/GatewayIntegrationTests/Scripts/schemathesis.sh http://127.0.0.1:PORT
#
# GATEWAY_ROLE_TOKENS (optional, space-separated secrets: a sender's, an owner's) adds a shorter run with each, so
# the answers other roles get (403, 404, their own scoped data) are checked too.
#
# The tools come from the virtual environment `make test` (target `python-tools`) installs in .build/venv
# (VENV overrides). A bounded run: SCHEMATHESIS_EXAMPLES generated cases per operation (default 25) in the examples,
# coverage and fuzzing phases, one worker, a fixed seed (SCHEMATHESIS_SEED) so a failure reproduces. The checks:
# no 5xx, every status, content type, header and body as documented. Exits non-zero with schemathesis' report
# when any check fails.
#
# DELETE /v1/tokens/{id} runs last, alone: revoking ids 1, 2, ... may revoke the admin token the run uses (after
# another admin token was issued), and every later request would then only see 401.
set -euo pipefail

base="${1:?usage: schemathesis.sh BASE_URL (with GATEWAY_ADMIN_TOKEN set)}"
: "${GATEWAY_ADMIN_TOKEN:?set GATEWAY_ADMIN_TOKEN to an admin token of the server}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
venv="${VENV:-$root/.build/venv}"
examples="${SCHEMATHESIS_EXAMPLES:-25}"
seed="${SCHEMATHESIS_SEED:-20261121}"

for tool in schemathesis openapi-spec-validator; do
	if [ ! -x "$venv/bin/$tool" ]; then
		echo "schemathesis.sh: $venv/bin/$tool is missing: run 'make python-tools' (or 'make test')" >&2
		exit 2
	fi
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The document as served is valid OpenAPI 3.1.
"$venv/bin/python" - "$base/openapi.yaml" "$work/openapi.yaml" <<'PY'
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=30) as response:
    open(sys.argv[2], "wb").write(response.read())
PY
"$venv/bin/openapi-spec-validator" "$work/openapi.yaml"

export SCHEMATHESIS_HOOKS=schemathesis_hooks
export PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}"
# No telemetry, no colours in the test's log.
export SCHEMATHESIS_TELEMETRY=false NO_COLOR=1

# run TOKEN EXAMPLES [schemathesis options]
run() {
	local token="$1" count="$2"
	shift 2
	"$venv/bin/schemathesis" run "$work/openapi.yaml" \
		--url "$base" \
		--header "Authorization: Bearer $token" \
		--checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance \
		--phases examples,coverage,fuzzing \
		--max-examples "$count" \
		--seed "$seed" \
		--workers 1 \
		--request-timeout 30 \
		--no-shrink \
		--output-truncate false \
		--warnings off \
		"$@"
}

# In the temporary directory: schemathesis keeps a cache of past failures (.schemathesis/) and Hypothesis its
# database (.hypothesis/) in the working directory; each run starts afresh and leaves nothing in the checkout.
cd "$work"
status=0
run "$GATEWAY_ADMIN_TOKEN" "$examples" --exclude-operation-id revokeToken || status=$?
for token in ${GATEWAY_ROLE_TOKENS:-}; do
	run "$token" "$(( (examples + 2) / 3 ))" || status=$?
done
run "$GATEWAY_ADMIN_TOKEN" "$examples" --include-operation-id revokeToken || status=$?
exit "$status"
