#!/usr/bin/env python3
"""A webhook receiver for the tests, written the way a consumer of the gateway would write one: HTTPS (a certificate of
the development CA), every request verified with the `standardwebhooks` library (the Standard Webhooks reference
implementation) and parsed with the `cloudevents` library (the CloudEvents Python SDK), both from PyPI, independent of
the gateway's own code.

    webhook_receiver.py --cert PEM --key PEM --secret-file FILE --out FILE --port-file FILE
                        [--port N] [--fail-first N] [--fail-while FILE]

Listens on 127.0.0.1 (--port, or a free port), written to --port-file. Each request is one JSON line in --out:
{"id", "timestamp", "status", "verified", "error"?, "type", "subject", "time", "data"}. The answer: 400 when the
signature or the event does not verify, 503 for the first N requests or while the --fail-while file exists (a
receiver that fails, then recovers), 204 otherwise. Runs until killed.
"""
import argparse
import http.server
import json
import os
import ssl
import threading

from cloudevents.core.bindings import http as cloudevents_http
from standardwebhooks import Webhook


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--secret-file", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--fail-first", type=int, default=0)
    parser.add_argument("--fail-while")
    options = parser.parse_args()

    lock = threading.Lock()
    state = {"requests": 0}

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            headers = {name.lower(): value for name, value in self.headers.items()}
            record = {"id": headers.get("webhook-id"), "timestamp": headers.get("webhook-timestamp")}
            try:
                # The secret is shown when the subscription is made, after this receiver started: read it each time.
                with open(options.secret_file) as f:
                    verifier = Webhook(f.read().strip())
                # Raises unless webhook-signature is a valid v1 HMAC of id.timestamp.body within 5 minutes.
                verifier.verify(body, headers)
                event = cloudevents_http.from_http_event(cloudevents_http.HTTPMessage(headers=headers, body=body))
                record.update(
                    verified=True, specversion=event.get_specversion(), type=event.get_type(),
                    source=event.get_source(), eventid=event.get_id(), subject=event.get_subject(),
                    time=event.get_time().isoformat(), datacontenttype=event.get_datacontenttype(),
                    data=event.get_data())
                status = 204
            except Exception as error:  # anything that does not verify or parse is refused
                record.update(verified=False, error=f"{type(error).__name__}: {error}")
                status = 400
            with lock:
                state["requests"] += 1
                failing = state["requests"] <= options.fail_first or (
                    options.fail_while is not None and os.path.exists(options.fail_while))
                if status == 204 and failing:
                    status = 503
                record["status"] = status
                with open(options.out, "a") as out:
                    out.write(json.dumps(record, sort_keys=True) + "\n")
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", options.port), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(options.cert, options.key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    with open(options.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(options.port_file + ".tmp", options.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
