#!/usr/bin/python3
"""An HTTPS server that sends a page and then keeps the connection open without finishing the response.

    holding_server.py CERT KEY PAGE MODE

Listens on 127.0.0.1 (a free port, written to stdout as its first line) with the certificate CERT and key KEY,
reads each request's head and answers with the bytes of the file PAGE, framed by MODE:

    close-delimited  no Content-Length, not chunked: the body ends when the connection does
    short-length     a Content-Length 1000 bytes larger than the page
    open-chunked     one chunk with the page and no last chunk
    complete         close-delimited, then the connection is closed: a complete page (the control case)

In every mode but `complete` the connection is then held open, silent, until the client closes it (at most 60 s),
and the client's TLS close_notify is answered with one.
Runs until killed.
"""
import socket
import ssl
import sys
import threading
import time


def serve(connection, page, mode):
    try:
        request = b""
        while b"\r\n\r\n" not in request:
            data = connection.recv(4096)
            if not data:
                return
            request += data
        head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
        if mode in ("close-delimited", "complete"):
            response = head + b"Connection: close\r\n\r\n" + page
        elif mode == "short-length":
            response = head + b"Content-Length: %d\r\n\r\n" % (len(page) + 1000) + page
        elif mode == "open-chunked":
            response = head + b"Transfer-Encoding: chunked\r\n\r\n" + b"%x\r\n" % len(page) + page + b"\r\n"
        else:
            raise ValueError(mode)
        connection.sendall(response)
        if mode == "complete":
            connection.unwrap()
            return
        # Hold, silent, until the client closes; answer its close_notify with ours, as a well-behaved TLS server
        # does (a clean TLS close ends a body delimited by the connection's close).
        connection.settimeout(60)
        try:
            while connection.recv(4096):
                pass
            connection.unwrap()
        except (OSError, ssl.SSLError):
            pass
    except (OSError, ssl.SSLError):
        pass
    finally:
        connection.close()


def main():
    certificate, key, page_path, mode = sys.argv[1:5]
    with open(page_path, "rb") as file:
        page = file.read()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificate, key)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    print(listener.getsockname()[1], flush=True)
    while True:
        raw, _ = listener.accept()
        try:
            connection = context.wrap_socket(raw, server_side=True)
        except (OSError, ssl.SSLError):
            raw.close()
            continue
        threading.Thread(target=serve, args=(connection, page, mode), daemon=True).start()


if __name__ == "__main__":
    main()
