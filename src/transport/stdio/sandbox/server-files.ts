import { constants } from 'node:fs';
import { access, lstat, open, realpath, stat } from 'node:fs/promises';
import { basename, delimiter, dirname, isAbsolute, join, resolve, sep } from 'node:path';

/** Folders the sandbox shows read-only on every machine (those that exist). */
export const SYSTEM_PATHS: readonly string[] = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc'];

/** What a server needs to see to start: its command, made absolute, and the folders it lives in. */
export interface ServerFiles {
  /** The command as an absolute path (looked up on PATH), so the sandbox runs exactly what the host found. */
  command: string;
  /** Folders (or single files) to show read-only, each at its own path; symlinked ones twice, as given and resolved. */
  read: string[];
}

/** The command cannot be found: the spawn fails as ENOENT would. */
export class CommandNotFound extends Error {
  readonly code = 'ENOENT';
}

/**
 * Finds what a command needs besides the system: the program itself (a Node or Python
 * installed under a home folder, a `node_modules/.bin` shim), the interpreter its `#!`
 * line names, and the script of `node script.mjs` — each as its package folder: the
 * outermost `node_modules` that holds it (so its dependencies resolve), else the
 * nearest folder with a `package.json`, else its own folder. A package folder that
 * would be `/`, the home folder or one above it shrinks to the file alone: the sandbox
 * never shows a whole home because a script sits in it.
 */
export async function serverFiles(command: string, args: readonly string[], cwd: string, pathEnv: string, home: string | undefined): Promise<ServerFiles> {
  const found = command.includes('/') ? resolve(cwd, command) : await onPath(command, pathEnv, cwd);
  if (found === undefined || !(await isExecutableFile(found))) throw new CommandNotFound(`${command} not found`);
  const read = new Set<string>();
  const show = async (file: string, kind: 'program' | 'script') => {
    const real = await realpath(file);
    for (const path of new Set([file, real])) {
      if (isSystem(path)) continue;
      const folder = await packageFolder(path, kind, home);
      read.add(folder);
      // A package whose node_modules is a link (a workspace, a shared install) needs what it points at.
      const modules = join(folder, 'node_modules');
      if ((await lstat(modules).catch(() => undefined))?.isSymbolicLink()) read.add(await realpath(modules).catch(() => modules));
      const folderReal = await realpath(folder);
      if (folderReal !== folder && !isSystem(folderReal)) read.add(folderReal);
    }
  };
  await show(found, 'program');
  const interpreter = await shebangInterpreter(await realpath(found), pathEnv, cwd);
  if (interpreter !== undefined) await show(interpreter, 'program');
  const script = await firstFileArgument(args, cwd);
  if (script !== undefined) await show(script, 'script');
  return { command: found, read: [...read] };
}

/** Whether `path` lies in a folder the sandbox always shows. */
export function isSystem(path: string): boolean {
  return SYSTEM_PATHS.some((root) => isWithin(path, root));
}

/** Whether `path` is `folder` or inside it. */
export function isWithin(path: string, folder: string): boolean {
  return path === folder || folder === '/' || path.startsWith(folder.endsWith(sep) ? folder : folder + sep);
}

async function packageFolder(file: string, kind: 'program' | 'script', home: string | undefined): Promise<string> {
  const dir = dirname(file);
  const parts = dir.split(sep);
  const outermost = parts.indexOf('node_modules');
  let folder: string | undefined;
  if (outermost > 0) folder = parts.slice(0, outermost + 1).join(sep);
  else if (kind === 'program' && basename(dir) === 'bin') folder = dirname(dir);
  else {
    for (let at = dir; ; at = dirname(at)) {
      if (await exists(join(at, 'package.json'))) {
        folder = at;
        break;
      }
      if (at === dirname(at)) break;
    }
  }
  folder ??= dir;
  const tooWide = folder === '/' || (home !== undefined && isWithin(home, folder));
  return tooWide ? file : folder;
}

/** `#!/usr/bin/env node` → node on PATH; `#!/opt/py/bin/python3 -u` → that file. */
async function shebangInterpreter(file: string, pathEnv: string, cwd: string): Promise<string | undefined> {
  let head: string;
  try {
    const handle = await open(file, 'r');
    try {
      const buffer = Buffer.alloc(256);
      const { bytesRead } = await handle.read(buffer, 0, 256, 0);
      head = buffer.subarray(0, bytesRead).toString('latin1');
    } finally {
      await handle.close();
    }
  } catch {
    return undefined;
  }
  if (!head.startsWith('#!')) return undefined;
  const words = head.slice(2).split('\n')[0]!.trim().split(/\s+/);
  const program = words[0];
  if (program === undefined || !isAbsolute(program)) return undefined;
  if (basename(program) !== 'env') return program;
  const name = words.slice(1).find((word) => !word.startsWith('-') && !word.includes('='));
  return name === undefined ? undefined : onPath(name, pathEnv, cwd);
}

/** The script of `node script.mjs`, `python3 -u server.py`: the first argument naming a file. */
async function firstFileArgument(args: readonly string[], cwd: string): Promise<string | undefined> {
  const candidate = args.find((arg) => !arg.startsWith('-'));
  if (candidate === undefined) return undefined;
  const path = resolve(cwd, candidate);
  return (await stat(path).catch(() => undefined))?.isFile() ? path : undefined;
}

async function onPath(name: string, pathEnv: string, cwd: string): Promise<string | undefined> {
  for (const dir of pathEnv.split(delimiter)) {
    if (dir === '') continue;
    const candidate = resolve(cwd, dir, name);
    if (await isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

async function isExecutableFile(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

async function exists(path: string): Promise<boolean> {
  return (await lstat(path).catch(() => undefined)) !== undefined;
}

