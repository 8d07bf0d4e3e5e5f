/**
 * `promise`'s value if it settles within `ms`, else `undefined`; never rejects. The timer
 * does not keep the process alive: a bound on a wait must not become a reason to wait.
 */
export async function withinTime<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), Math.max(0, ms)).unref()));
  try {
    return await Promise.race([promise.catch(() => undefined), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
