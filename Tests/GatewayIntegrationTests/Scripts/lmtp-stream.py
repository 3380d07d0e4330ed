#!/usr/bin/python3
"""A stream of LMTP transactions over one connection, as a mail server's delivery agent sends a queue.

usage: lmtp-stream.py HOST PORT SENDER PAUSE FILE=RECIPIENT...

Each FILE is delivered to its RECIPIENT in a transaction of its own (MAIL, RCPT, DATA), PAUSE seconds apart. Prints
one JSON line per message, flushed at once: {"file", "rcpt", "code", "text"} with the reply after DATA (or the
refusal of MAIL or RCPT), or {"file", "rcpt", "error"} when the connection failed: such a message was not
acknowledged, and the caller delivers it elsewhere as an MTA would. After a failure it connects again for the next
message. Debian's /usr/bin/python3 runs it (the standard library only).
"""
import json
import smtplib
import sys
import time


def text(value):
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def main():
    host, port, sender, pause = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
    client = None
    for item in sys.argv[5:]:
        path, recipient = item.rsplit("=", 1)
        with open(path, "rb") as handle:
            message = handle.read()
        line = {"file": path, "rcpt": recipient}
        try:
            if client is None:
                client = smtplib.LMTP(host, port, timeout=60)
                client.ehlo()
            code, reply = client.mail(sender)
            if code == 250:
                code, reply = client.rcpt(recipient)
            if code in (250, 251):
                try:
                    code, reply = client.data(message)
                except smtplib.SMTPDataError as error:
                    code, reply = error.smtp_code, error.smtp_error
            else:
                client.rset()
            line["code"], line["text"] = code, text(reply)
        except (smtplib.SMTPException, OSError) as error:
            line["error"] = "%s: %s" % (type(error).__name__, error)
            if client is not None:
                try:
                    client.close()
                except OSError:
                    pass
            client = None
        print(json.dumps(line), flush=True)
        if pause > 0:
            time.sleep(pause)
    if client is not None:
        try:
            client.quit()
        except (smtplib.SMTPException, OSError):
            pass


if __name__ == "__main__":
    main()
