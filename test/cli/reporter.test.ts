import { Reporter } from '../../src/cli/reporter.js';
import { McpError } from '../../src/index.js';

// What a person sees on stderr; on a terminal this is the start progress.
function reporter(options = { progress: true, verbose: false }) {
  let text = '';
  return { reporter: new Reporter({ write: (chunk: string) => (text += chunk) }, options), text: () => text };
}

describe('Reporter', () => {
  it('reads "starting fs… ready in N ms" on one line when one server starts', () => {
    const { reporter: r, text } = reporter();
    r.stateChanged({ server: 'fs', from: 'idle', to: 'starting' });
    r.stateChanged({ server: 'fs', from: 'starting', to: 'ready' });
    expect(text()).toMatch(/^starting fs… ready in \d+ ms\n$/);
  });

  it('gives each server its own lines when starts overlap or other output comes between', () => {
    const { reporter: r, text } = reporter();
    r.stateChanged({ server: 'a', from: 'idle', to: 'starting' });
    r.stateChanged({ server: 'b', from: 'idle', to: 'starting' });
    r.stateChanged({ server: 'a', from: 'starting', to: 'ready' });
    r.line('[b] hello from stderr');
    r.stateChanged({ server: 'b', from: 'starting', to: 'backoff' });
    expect(text().replace(/\d+ ms/g, 'N ms')).toBe('starting a…\nstarting b…\na ready in N ms\n[b] hello from stderr\nb failed after N ms\n');
  });

  it('shows nothing of starts or progress when progress is off', () => {
    const { reporter: r, text } = reporter({ progress: false, verbose: false });
    r.progress('mcp__a__b', { progress: 1, total: 2 });
    expect(text()).toBe('');
  });

  it('shows call progress', () => {
    const { reporter: r, text } = reporter();
    r.progress('mcp__a__b', { progress: 1, total: 2, message: 'half' });
    r.progress('mcp__a__b', { progress: 7 });
    expect(text()).toBe('mcp__a__b: 1/2 half\nmcp__a__b: 7\n');
  });

  it('reports an error in one line, with details only when verbose', () => {
    const error = new McpError('peer-exited', 'server "x": gone\nfor good', { server: 'x', phase: 'initialize', stderrTail: ['boom'] });
    const quiet = reporter({ progress: false, verbose: false });
    quiet.reporter.error(error);
    expect(quiet.text()).toBe('lazy-mcp: server "x": gone for good\n');
    const verbose = reporter({ progress: false, verbose: true });
    verbose.reporter.error(error);
    expect(verbose.text()).toContain('lazy-mcp: server "x": gone for good\n  code: peer-exited, phase: initialize, server: x\n  stderr: boom\nMcpError: ');
  });
});
