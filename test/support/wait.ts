type Truthy<T> = Exclude<T, false | null | undefined | 0 | ''>;

/**
 * Polls `condition` until it returns something truthy (which is returned) or the time is up, so a
 * test waits exactly as long as the thing it waits for takes, never a guessed fixed sleep. On
 * timeout it throws with the `what` description and the last value or error seen.
 */
export async function waitFor<T>(
  condition: () => T | Promise<T>,
  options: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<Truthy<T>> {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const intervalMs = options.intervalMs ?? 10;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await condition();
      if (value) return value as Truthy<T>;
      last = value;
    } catch (error) {
      last = error;
    }
    if (Date.now() >= deadline) {
      const seen = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${options.what ?? 'a condition'} (last: ${seen})`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
