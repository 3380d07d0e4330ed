internal import CLibFuzzer
import Dispatch
import Synchronization

/// The shared entry point of the fuzz targets: hands the process's arguments and `testOneInput` to
/// libFuzzer's driver and returns its exit status.
///
/// SwiftPM links an executable target with `main` renamed to `<module>_main`, which only a `@main`
/// type provides; so each target has one whose `main()` calls this, instead of relying on the `main`
/// in libFuzzer's own archive. `testOneInput` is the target's `LLVMFuzzerTestOneInput` function.
package func runLibFuzzer(_ testOneInput: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt {
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    return LLVMFuzzerRunDriver(&argc, &argv, testOneInput)
}

/// Runs `body` and waits for its result: libFuzzer calls its targets synchronously.
///
/// The task starts immediately on this thread (SE-0472), so a `body` that never suspends (the fuzz
/// targets' in-process resolvers answer at once) finishes before this returns, allocating and freeing
/// on this thread. That keeps libFuzzer's leak check, which runs a full LeakSanitizer scan after any
/// input whose mallocs and frees do not balance, from firing on every input. A `body` that does
/// suspend is waited for on a semaphore.
package func runBlocking<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let result = Mutex<T?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task.immediate {
        let value = await body()
        result.withLock { $0 = value }
        done.signal()
    }
    done.wait()
    guard let value = result.withLock({ $0 }) else { preconditionFailure("the task finished without a result") }
    return value
}
