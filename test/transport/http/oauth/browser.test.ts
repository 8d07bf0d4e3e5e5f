import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { browserCommand, openInBrowser } from '../../../../src/transport/http/oauth/browser.js';
import { waitFor } from '../../../support/fixtures.js';
import { tempDir } from '../../../support/temp-dirs.js';

// What a hostile authorization server might name: shell metacharacters, %VAR% and $(…) that a shell would act on.
const hostile = new URL('https://as.example/authorize|calc.exe|?x=%PATH%&y=$(touch PWNED)&z=`touch PWNED2`;touch PWNED3');

describe('opening the authorization URL in a browser (item 1)', () => {
  it('builds an argument vector, the URL one element of it, on every platform: no cmd, no shell', () => {
    expect(browserCommand('win32', hostile)).toEqual({ command: 'rundll32.exe', args: ['url.dll,FileProtocolHandler', hostile.href] });
    expect(browserCommand('darwin', hostile)).toEqual({ command: 'open', args: [hostile.href] });
    expect(browserCommand('linux', hostile)).toEqual({ command: 'xdg-open', args: [hostile.href] });
    expect(browserCommand('freebsd', hostile)).toEqual({ command: 'xdg-open', args: [hostile.href] });
    // The URL keeps its characters: it is passed as is, never escaped for (or by) a shell.
    expect(hostile.href).toContain('|calc.exe|');
  });

  /** A stand-in `xdg-open` on PATH that writes each argument it got on a line of `record`. */
  function fakeOpener() {
    const dir = tempDir();
    const record = join(dir, 'argv.txt');
    const opener = join(dir, 'xdg-open');
    writeFileSync(opener, `#!/bin/sh\ncd "${dir}"\nfor a in "$@"; do printf '%s\\n' "$a"; done > "${record}"\n`);
    chmodSync(opener, 0o755);
    return { dir, record, env: { PATH: `${dir}:/usr/bin:/bin` } };
  }

  it('runs the opener without a shell: the hostile URL arrives as one argument and nothing in it runs', async () => {
    const { dir, record, env } = fakeOpener();
    expect(openInBrowser(hostile, { platform: 'linux', env })).toBe(true);
    expect(await waitFor(() => existsSync(record) && readFileSync(record, 'utf8').endsWith('\n'), 5000)).toBe(true);
    expect(readFileSync(record, 'utf8')).toBe(`${hostile.href}\n`);
    for (const planted of ['PWNED', 'PWNED2', 'PWNED3']) expect(existsSync(join(dir, planted))).toBe(false);
  });

  it('never hands the opener anything but https (http on loopback)', async () => {
    const { record, env } = fakeOpener();
    for (const url of ['file:///etc/passwd', 'javascript:alert(1)', 'data:text/html,x', 'http://as.example/authorize', 'smb://attacker.example/share']) {
      expect([url, openInBrowser(new URL(url), { platform: 'linux', env })]).toEqual([url, false]);
    }
    expect(openInBrowser(new URL('http://127.0.0.1:9/authorize'), { platform: 'linux', env })).toBe(true);
    expect(await waitFor(() => existsSync(record), 5000)).toBe(true);
  });
});
