#ifndef GATEWAY_CLIBFUZZER_SHIM_H
#define GATEWAY_CLIBFUZZER_SHIM_H
#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver (compiler-rt FuzzerInterface.h), linked in by `-sanitize=fuzzer`: parses the
/// libFuzzer flags in argv and runs `callback` on each input. Returns the process exit status.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
