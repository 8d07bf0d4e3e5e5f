import { abortable } from '../../src/util/abortable.js';

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
