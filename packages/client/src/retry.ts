/** How long to wait before trying again: what Retry-After says, else a backoff that grows. */
const MAX_WAIT_MS = 30_000;

export function retryDelayMs(retryAfter: string | null | undefined, attempt: number): number {
  if (retryAfter !== null && retryAfter !== undefined && /^[0-9]+$/.test(retryAfter)) {
    return Math.min(Number(retryAfter) * 1000, MAX_WAIT_MS);
  }
  return Math.min(100 * 2 ** (attempt - 1), MAX_WAIT_MS);
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
