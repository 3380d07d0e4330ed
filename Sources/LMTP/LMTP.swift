/// The LMTP target: see LMTPServer.
