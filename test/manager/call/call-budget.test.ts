import { CallBudget } from '../../../src/manager/call/call-budget.js';

describe('CallBudget.rest', () => {
  it('hands the request the call’s own time-outs, counted from when the call began', () => {
    const options = { timeout: 600, maxTotalTimeout: 1500 };
    const before = performance.now();
    const rest = new CallBudget(options).rest();
    expect(rest).toMatchObject({ timeout: 600, maxTotalTimeout: 1500 });
    expect(rest.startedAt).toBeGreaterThanOrEqual(before);
    expect(rest.startedAt).toBeLessThanOrEqual(performance.now());
  });

  it('counts a budget made within another from the outer call’s start', () => {
    const outer = new CallBudget({ timeout: 600 }).rest();
    const inner = new CallBudget(outer);
    expect(inner.rest()).toBe(outer);
    expect(inner.leftMs).toBeLessThanOrEqual(600);
  });

  it('leaves options without a bound as they are', () => {
    const options = { onProgress: () => undefined };
    expect(new CallBudget(options).rest()).toBe(options);
  });
});
