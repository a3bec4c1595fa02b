/**
 * `promise`, or a rejection after `ms`: the one bound every wait on PostgreSQL, Redis or the queue
 * engine goes through, so an unanswering server costs a caller a known time, never a hang. The timer
 * is cleared when the promise settles and never keeps the process alive.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
