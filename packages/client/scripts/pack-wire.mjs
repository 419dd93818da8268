#!/usr/bin/env node
// Makes the packed @tenure/client self-contained (run by npm's prepack/postpack, see README
// "Packaging"). The wire contract — the error-code catalog and the JSON shapes of the HTTP API — has
// one source, packages/coord-state/src/{errors,api,results}.ts, which import nothing but each other, and
// the backup file reader and checks (snapshot-file.ts, backup-check.ts, snapshot-position.ts,
// packr.ts: Node built-ins and msgpackr, a dependency of the client). In the
// workspace the client reads them from @tenure/coord-state (a dev dependency); for the tarball,
// `vendor` copies their compiled files into dist/wire/ and points dist/contract.{js,d.ts} (the only
// client files that import them) there, and `restore` undoes it after packing. Any other import of
// an @tenure package from dist, or a vendored file importing beyond the two, fails the pack.
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const wireDir = join(dist, 'wire');
const source = join(root, '..', 'coord-state', 'dist');
/** The dependency-free modules of the wire contract, compiled. */
const WIRE_MODULES = [
  'errors',
  'api',
  'results',
  'snapshot-file',
  'packr',
  'snapshot-position',
  'backup-check',
];
/** Packages the wire modules may import (each one a dependency of the client). */
const EXTERNAL = ['msgpackr'];
/** Modules the wire contract's declarations name only as types: their .d.ts ships, no code. */
const TYPE_ONLY_MODULES = ['auth'];
/** The client files that import the wire contract. */
const CONTRACT_FILES = ['contract.js', 'contract.d.ts'];
const PACKAGE = '@tenure/coord-state';
const VENDORED = './wire/index.js';
/** An import or re-export specifier of a module (static `from '…'` or dynamic `import('…')`). */
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*)['"]([^'"]+)['"]/g;

function specifiers(text) {
  return [...text.matchAll(SPECIFIER)].map((m) => m[1]);
}

function files(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return files(path);
    return /\.(js|d\.ts)$/.test(entry.name) ? [path] : [];
  });
}

function rewrite(from, to) {
  for (const name of CONTRACT_FILES) {
    const path = join(dist, name);
    const text = readFileSync(path, 'utf8');
    writeFileSync(path, text.replaceAll(`'${from}'`, `'${to}'`));
  }
}

function vendor() {
  rmSync(wireDir, { recursive: true, force: true });
  mkdirSync(wireDir);
  const copies = [
    ...WIRE_MODULES.flatMap((name) => [
      { name, ext: '.js', allowed: WIRE_MODULES },
      { name, ext: '.d.ts', allowed: [...WIRE_MODULES, ...TYPE_ONLY_MODULES] },
    ]),
    ...TYPE_ONLY_MODULES.map((name) => ({
      name,
      ext: '.d.ts',
      allowed: [...WIRE_MODULES, ...TYPE_ONLY_MODULES],
    })),
  ];
  for (const { name, ext, allowed } of copies) {
    const text = readFileSync(join(source, name + ext), 'utf8');
    for (const spec of specifiers(text))
      assert.ok(
        spec.startsWith('node:') ||
          EXTERNAL.includes(spec) ||
          allowed.some((m) => spec === `./${m}.js`),
        `${name}${ext} imports ${spec}: the wire contract must stay dependency-free`,
      );
    copyFileSync(join(source, name + ext), join(wireDir, name + ext));
  }
  const reexports = WIRE_MODULES.map((m) => `export * from './${m}.js';\n`).join('');
  writeFileSync(join(wireDir, 'index.js'), reexports);
  writeFileSync(join(wireDir, 'index.d.ts'), reexports);
  rewrite(PACKAGE, VENDORED);
  for (const path of files(dist))
    for (const spec of specifiers(readFileSync(path, 'utf8')))
      assert.ok(!spec.startsWith('@tenure/'), `${relative(root, path)} imports ${spec}`);
}

function restore() {
  rewrite(VENDORED, PACKAGE);
  rmSync(wireDir, { recursive: true, force: true });
}

const mode = process.argv[2];
if (mode === 'vendor') vendor();
else if (mode === 'restore') restore();
else throw new Error(`usage: pack-wire.mjs vendor|restore (got ${mode})`);
