import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeDir } from '../../util/make-dir.js';
import type { CallToolResult } from '../../protocol/types.js';
import type { SavedResult } from '../../model/result-limits.js';
import { sanitize } from '../catalog/tool-names.js';
import { randomHex } from '../../util/lazy-builtins.js';

/**
 * Saves a whole tool result under `<stateDir>/results/`, private to the user (folder 0700,
 * file 0600), and says where. A result that is one text block is saved as that text
 * (`.txt`, so a model's file tools can read and grep it); anything else as its JSON.
 * Never throws: a failure is reported in the returned value.
 */
export async function saveResult(stateDir: string, server: string, tool: string, result: CallToolResult): Promise<SavedResult> {
  const dir = join(stateDir, 'results');
  const plain = result.content.length === 1 && result.content[0].type === 'text' && result.structuredContent === undefined;
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  const file = join(dir, `${stamp}-${sanitize(server).slice(0, 40)}-${sanitize(tool).slice(0, 60)}-${randomHex(4)}.${plain ? 'txt' : 'json'}`);
  try {
    await makeDir(dir, 0o700);
    await chmod(dir, 0o700);
    await writeFile(file, plain ? (result.content[0] as { text: string }).text : JSON.stringify(result, null, 2), { mode: 0o600, flag: 'wx' });
    return { path: file };
  } catch (error) {
    return { error: (error as Error).message };
  }
}
