// An unhandled rejection is a bug (a request nobody awaits, a listener that throws): fail the file.
const unhandled: unknown[] = [];
const record = (reason: unknown) => unhandled.push(reason);
process.on('unhandledRejection', record);

afterAll(() => {
  process.off('unhandledRejection', record);
  if (unhandled.length > 0) {
    throw new Error(`unhandled rejection(s) during this file:\n${unhandled.map((r) => (r instanceof Error ? r.stack : String(r))).join('\n')}`);
  }
});
