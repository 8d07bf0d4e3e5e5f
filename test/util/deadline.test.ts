import { abortable, bounded, withinTime } from '../../src/util/deadline.js';

describe('abortable', () => {
  it('rejects cancelled at once for a signal already aborted, and the work it stops waiting for may still fail unobserved', async () => {
    const controller = new AbortController();
    controller.abort();
    let fail!: (error: Error) => void;
    const work = new Promise<never>((_, reject) => {
      fail = reject;
    });
    const seen: unknown[] = [];
    const record = (reason: unknown) => seen.push(reason);
    process.on('unhandledRejection', record);
    try {
      await expect(abortable(work, controller.signal, 'waiting for the server to start', 'echo')).rejects.toMatchObject({ code: 'cancelled', server: 'echo' });
      // A shutdown cuts the start short after the caller gave up on it (a CLI interrupted by Ctrl-C).
      fail(new Error('the manager was shut down'));
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      expect(seen).toEqual([]);
    } finally {
      process.off('unhandledRejection', record);
    }
  });

  it('rejects cancelled when the signal aborts during the wait, and resolves with the work otherwise', async () => {
    const controller = new AbortController();
    const pending = abortable(new Promise(() => undefined), controller.signal, 'waiting');
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: 'cancelled' });
    await expect(abortable(Promise.resolve(7), new AbortController().signal, 'waiting')).resolves.toBe(7);
  });
});

describe('bounded', () => {
  it('rejects with the given error when the time is up, and the work failing later goes unobserved', async () => {
    const seen: unknown[] = [];
    const record = (reason: unknown) => seen.push(reason);
    process.on('unhandledRejection', record);
    try {
      let fail!: (error: Error) => void;
      const work = new Promise<never>((_, reject) => (fail = reject));
      const timedOut = new Error('too slow');
      await expect(bounded(work, { ms: 5, timedOut })).rejects.toBe(timedOut);
      fail(new Error('late'));
      await new Promise((resolve) => setImmediate(resolve));
      expect(seen).toEqual([]);
    } finally {
      process.off('unhandledRejection', record);
    }
  });

  it('settles with the work when it comes first, whichever bounds are set', async () => {
    const controller = new AbortController();
    await expect(bounded(Promise.resolve(7), { ms: 1000, signal: controller.signal, what: 'x' })).resolves.toBe(7);
    await expect(bounded(Promise.reject(new Error('no')), { ms: 1000 })).rejects.toThrow('no');
  });

  it('ends the wait on abort even when a time bound is set too', async () => {
    const controller = new AbortController();
    const pending = bounded(new Promise(() => undefined), { ms: 60_000, timedOut: new Error('never'), signal: controller.signal, what: 'listing tools' });
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: 'cancelled' });
  });
});

describe('withinTime', () => {
  it('is the value within the time, undefined after it or on failure, and never rejects', async () => {
    await expect(withinTime(Promise.resolve('x'), 100)).resolves.toBe('x');
    await expect(withinTime(new Promise(() => undefined), 5)).resolves.toBeUndefined();
    await expect(withinTime(Promise.reject(new Error('no')), 100)).resolves.toBeUndefined();
  });

  it('does not keep the process alive while it waits', async () => {
    const { spawnSync } = await import('node:child_process');
    const { fileURLToPath, pathToFileURL } = await import('node:url');
    const dist = pathToFileURL(fileURLToPath(new URL('../../dist/util/deadline.js', import.meta.url))).href;
    const started = Date.now();
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', `import { withinTime } from ${JSON.stringify(dist)}; withinTime(new Promise(() => {}), 60000);`], { env: { PATH: process.env.PATH ?? '' }, timeout: 20_000 });
    expect(run.status).toBe(0);
    expect(Date.now() - started).toBeLessThan(20_000);
  });
});
