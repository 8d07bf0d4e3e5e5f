import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { procStat } from './leftover-processes.mjs';

const root = resolve(import.meta.dirname, '../..');

export default function globalSetup() {
  // Only server processes started from now on, by this run, are this run's to answer for.
  process.env.LAZY_MCP_RUN_SINCE = String(procStat(process.pid)?.start ?? 0);
  // Tests that run a host or the CLI as a child process use the built package, bundles and all.
  execFileSync(process.execPath, [resolve(root, 'scripts/build.mjs')], { stdio: 'inherit' });
}
