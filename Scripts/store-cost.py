"""Sorts `perf script -F comm,tid,ip,sym` samples (with call chains) of gateway-bench's ingest suite, read from
standard input, into the store's writes, its reads, the report and the rest; prints each one's share."""
import collections
import re
import sys

# GRDB runs every write transaction on its writer's dispatch queue (a libdispatch "overcommit" thread); reads run
# in a deferred transaction too, so they are told apart first.
READ = re.compile(r'DatabasePool.*read|registeredDomain|SQLiteStore.*(flag|entry|active)')
WRITE = re.compile(
    r'SQLiteStore.*(ingest|writeBatch|writeIngestions|insert|apply)|GroupCommit|fdatasync|DatabaseWriter.*write'
    r'|inTransaction')
REPORT = re.compile(r'Ingestor.*record_|IngestionReport')

shares = collections.Counter()
total = 0
for sample in sys.stdin.read().split('\n\n'):
    lines = [line for line in sample.split('\n') if line.strip()]
    if not lines:
        continue
    thread, frames = lines[0], '\n'.join(lines[1:])
    total += 1
    if READ.search(frames):
        shares['store reads'] += 1
    elif 'overcommit' in thread or WRITE.search(frames):
        shares['store writes'] += 1
    elif REPORT.search(frames):
        shares['report'] += 1
    elif 'sandbox-' in thread:
        shares['sandbox slot threads'] += 1
    else:
        shares['the rest'] += 1
for name, count in shares.most_common():
    print(f'{name:22s} {100 * count / total:6.2f}% of the gateway process\'s samples')
print(f'{total} samples')
