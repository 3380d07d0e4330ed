#!/usr/bin/python3
"""The independent DKIM peer for the cross-check tests: Debian's python3-dkim (dkimpy).

  dkimpy.py sign KEY.pem SELECTOR DOMAIN ALGORITHM CANONICALIZATION < message > signed
  dkimpy.py verify ZONEFILE < message      prints one line per signature: pass or fail
"""
import base64
import sys

import dkim


def private_key(path, algorithm):
    pem = open(path, "rb").read()
    if algorithm == "ed25519-sha256":
        # dkimpy takes the raw 32-byte Ed25519 seed, base64: the tail of the PKCS#8 DER.
        body = b"".join(line for line in pem.splitlines() if not line.startswith(b"-----"))
        return base64.b64encode(base64.b64decode(body)[-32:])
    return pem


def read_zone(path):
    records = {}
    for line in open(path):
        line = line.strip()
        if not line or line.startswith(";") or " TXT " not in line:
            continue
        name = line.split()[0].rstrip(".").lower()
        strings = line.split('"')[1::2]
        records[name] = "".join(strings).encode()
    return records


def main():
    command = sys.argv[1]
    message = sys.stdin.buffer.read()
    if command == "sign":
        key, selector, domain, algorithm, canonicalization = sys.argv[2:7]
        header, body = canonicalization.encode().split(b"/")
        signature = dkim.sign(message, selector.encode(), domain.encode(), private_key(key, algorithm),
                              canonicalize=(header, body), signature_algorithm=algorithm.encode(),
                              include_headers=[b"from", b"to", b"subject", b"date", b"message-id"])
        sys.stdout.buffer.write(signature + message)
    elif command == "verify":
        zone = read_zone(sys.argv[2])

        def dnsfunc(name, timeout=5):
            return zone.get(name.decode().rstrip(".").lower())

        verifier = dkim.DKIM(message)
        count = sum(1 for line in message.split(b"\n") if line.lower().startswith(b"dkim-signature:"))
        for index in range(count):
            try:
                ok = verifier.verify(idx=index, dnsfunc=dnsfunc)
            except Exception:
                ok = False
            print("pass" if ok else "fail")
    else:
        sys.exit("unknown command " + command)


if __name__ == "__main__":
    main()
