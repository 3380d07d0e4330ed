#!/usr/bin/python3
"""One LMTP transaction with Python's smtplib.LMTP, as a mail server's delivery agent would make it.

usage: lmtp-client.py HOST PORT SENDER MESSAGE_FILE RECIPIENT...

Prints one JSON object: the LHLO reply and the SIZE it advertises, the MAIL FROM reply (with SIZE=n when the
server advertises SIZE, as smtplib's sendmail does, RFC 1870), each RCPT reply, and after DATA one reply per
accepted recipient (RFC 2033 section 4.2: smtplib reads the first, this script reads the others).
Replies are [code, text]. Debian's /usr/bin/python3 runs it (the standard library only).
"""
import json
import smtplib
import sys


def reply(code, text):
    return [code, text.decode("utf-8", "replace") if isinstance(text, bytes) else text]


def main():
    host, port, sender, message_file = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    recipients = sys.argv[5:]
    with open(message_file, "rb") as handle:
        message = handle.read()
    result = {"lhlo": None, "size": None, "mail": None, "rcpt": [], "data": []}
    client = smtplib.LMTP(host, port, timeout=60)
    try:
        result["lhlo"] = reply(*client.ehlo())
        if client.has_extn("size"):
            result["size"] = int(client.esmtp_features["size"])
        options = ["SIZE=%d" % len(message)] if result["size"] is not None else []
        result["mail"] = reply(*client.mail(sender, options))
        if result["mail"][0] != 250:
            print(json.dumps(result))
            return
        accepted = 0
        for recipient in recipients:
            code, text = client.rcpt(recipient)
            result["rcpt"].append(reply(code, text))
            if code in (250, 251):
                accepted += 1
        if accepted == 0:
            print(json.dumps(result))
            return
        try:
            result["data"].append(reply(*client.data(message)))
        except smtplib.SMTPDataError as error:
            result["data"].append(reply(error.smtp_code, error.smtp_error))
            print(json.dumps(result))
            return
        for _ in range(accepted - 1):
            result["data"].append(reply(*client.getreply()))
        try:
            client.quit()
        except (smtplib.SMTPException, OSError):
            pass  # a server shutting down may close the connection after the replies

    finally:
        client.close()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
