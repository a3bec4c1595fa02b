/**
 * `promise`, or a rejection after `ms`: the one bound every wait on PostgreSQL, Redis or the queue
 * engine goes through, so an unanswering server costs a caller a known time, never a hang. The timer
 * is cleared when the promise settles and never keeps the process alive. `timeoutError` makes the
 * rejection (a caller that classifies errors, e.g. as "database unavailable", gives its own type);
 * by default an Error "no answer within <ms> ms". A late rejection of `promise` is handled (ignored).
 * An answer that arrived while the event loop was blocked past `ms` still counts.
 */
export function withTimeout<T>(
  promise: Promise<T>,
  ms: number,
  timeoutError: () => Error = () => new Error(`no answer within ${ms} ms`),
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    // Decided after the I/O already in is read (setImmediate runs after the poll phase): a process whose event
    // loop stalled past `ms` (CPU starved, a long GC) must not take a reply that came meanwhile for no answer.
    timer = setTimeout(() => setImmediate(() => reject(timeoutError())), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
