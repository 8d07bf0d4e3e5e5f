/**
 * `href` as messages and status show it: without its userinfo (`user:password@` becomes
 * `***@`). Works on a URL's text as written, so a template with `***` in it passes too.
 */
export function withoutUserinfo(href: string): string {
  return href.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, '$1***@');
}

/** The scheme and authority of a shown URL (`http://host:port`), or the whole text when it has none. */
export function shownOrigin(shown: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(shown)?.[0] ?? shown;
}
