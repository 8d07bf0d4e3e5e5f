import { McpError } from '../../src/errors.js';
import { CallBudget } from '../../src/manager/call-budget.js';

describe('CallBudget.explain', () => {
  it('tells a time-out against the bound that ran out: the timeout, or the maxTotalTimeout for "in total"', () => {
    const budget = new CallBudget({ timeout: 600, maxTotalTimeout: 1500 });
    const total = new McpError('timeout', 'server "s": tools/call "slow" timed out after 1480 ms in total; the request was cancelled', { server: 's' });
    const idle = new McpError('timeout', 'server "s": tools/call "slow" timed out after 580 ms; the request was cancelled', { server: 's' });
    expect((budget.explain(total) as Error).message).toBe('server "s": tools/call "slow" timed out after 1500 ms in total; the request was cancelled');
    expect((budget.explain(idle) as Error).message).toBe('server "s": tools/call "slow" timed out after 600 ms; the request was cancelled');
    const other = new McpError('cancelled', 'x');
    expect(budget.explain(other)).toBe(other);
    expect(new CallBudget({ timeout: 600 }).explain(total)).toBe(total);
  });
});
