"""Schemathesis hooks for the gateway's API (loaded through SCHEMATHESIS_HOOKS by schemathesis.sh).

Emails are sent as `message/rfc822`: schemathesis has no serializer for that media type, so the generated
strings go on the wire as UTF-8 text, as `text/plain` bodies do.
"""

import schemathesis

schemathesis.serializer.alias("message/rfc822", "text/plain")
