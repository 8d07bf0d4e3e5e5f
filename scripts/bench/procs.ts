import { readFileSync } from 'node:fs';

/** A process's resident memory in KiB (`VmRSS` of /proc/<pid>/status); 0 if unknown. */
export function rssKiB(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

/** CPU time a process has used so far, user + system, in ms (/proc/<pid>/stat; clock ticks of 10 ms); NaN if unknown. */
export function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}

/** Whether `pid` is gone (a zombie counts as gone: it only waits to be reaped). */
export function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

/** Runs a full collection if the host was started with --expose-gc; says whether it could. */
export function collect(): boolean {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) return false;
  gc();
  gc();
  return true;
}

export function hostRss(): number {
  return process.memoryUsage().rss;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
