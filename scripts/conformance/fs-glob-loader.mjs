// Module-load hook (see register-fs-glob.mjs): rewrites the suite's `import … from "fs"`
// that names `globSync` to import from fs-with-glob.mjs instead.
const shim = new URL('./fs-with-glob.mjs', import.meta.url).href;
const fsImport = /(import\s*\{[^}]*\bglobSync\b[^}]*\}\s*from\s*)(["'])(?:node:)?fs\2/;

export async function load(url, context, nextLoad) {
  const result = await nextLoad(url, context);
  if (!url.includes('/@modelcontextprotocol/conformance/') || result.format !== 'module' || result.source == null) return result;
  const source = typeof result.source === 'string' ? result.source : new TextDecoder().decode(result.source);
  return fsImport.test(source) ? { ...result, source: source.replace(fsImport, (_, head, quote) => `${head}${quote}${shim}${quote}`) } : result;
}
