// Apart from the HTTP listener so that \`serve\` can check its options without loading
// node:http and the listener (a stdio \`serve\` needs neither).

/** Whether `host` (a bind address) is reachable from this machine only: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return bare === 'localhost' || bare === '::1' || /^127(\.\d{1,3}){3}$/.test(bare);
}
