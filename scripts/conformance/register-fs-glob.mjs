// `node --import ./scripts/conformance/register-fs-glob.mjs …`: the conformance suite imports
// `globSync` from `fs`, which Node 20 lacks (it came in 22). On such a Node this hook points
// that one import of the suite at a module that adds it; elsewhere it does nothing.
import * as fs from 'node:fs';
import { register } from 'node:module';

if (typeof fs.globSync !== 'function') register('./fs-glob-loader.mjs', import.meta.url);
