#!/usr/bin/env bash
# Signs the messages in examples/unsigned/ with the example keys, writing examples/*.eml, and
# writes examples/keys.zone with the records a real sender would publish. The keys are for the
# examples only. Run from the repository root after `swift build`.
set -euo pipefail
gateway=${GATEWAY:-.build/debug/gateway}
cd "$(dirname "$0")/.."
sign() {  # file domain selector algorithm canonicalization
    local key="examples/keys/$3.$2.pem"
    if [ ! -f "$key" ]; then
        "$gateway" dkim keygen --domain "$2" --selector "$3" --algorithm "$4" --out "$key" >> examples/keys.zone.new 2>/dev/null
    else
        grep "^$3._domainkey.$2\. " examples/keys.zone >> examples/keys.zone.new
    fi
    "$gateway" dkim sign "examples/unsigned/$1" --domain "$2" --selector "$3" --key "$key" \
        --canonicalization "$5" > "examples/$1"
}
{ echo "; Key records for the example senders, as they would publish them in DNS."; echo "; Use with: gateway dkim verify --keys examples/keys.zone ..."; } > examples/keys.zone.new
sign train-confirmation.eml nordic-rail.example mail2026 rsa relaxed/relaxed
sign restaurant-microdata.eml kokkari.example ed1 ed25519 relaxed/simple
sign flight-two-passengers.eml skyways.example sel1 rsa simple/simple
mv examples/keys.zone.new examples/keys.zone
