import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { serverProcesses } from './leftover-processes.mjs';

const root = resolve(import.meta.dirname, '../..');

export default function globalSetup() {
  // Processes from before this run (another run, a demo) are not this run's to judge.
  process.env.LAZY_MCP_PREEXISTING = serverProcesses().map((p) => p.pid).join(',');
  // Tests that run a host or the CLI as a child process use the built package.
  execFileSync(process.execPath, [resolve(root, 'node_modules/typescript/bin/tsc'), '-p', resolve(root, 'tsconfig.build.json')], {
    stdio: 'inherit',
  });
}
