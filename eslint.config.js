// One lint configuration for the whole monorepo (typescript-eslint). Three layers:
//  1. syntax rules (js + typescript-eslint recommended) for every .ts file;
//  2. type-aware rules that catch real bugs (unhandled promises, non-exhaustive switches) for
//     source files, which each belong to a package's tsconfig (parserOptions.projectService);
//  3. purity: the Raft core and the coordination state machine are deterministic functions of
//     their inputs (docs/architecture.md), so clocks, timers, randomness, the process, disk,
//     sockets and logging libraries are banned there by rule, not by habit.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * Source files whose types come from a package tsconfig. Test files are left out: tap's
 * `t.test(...)` returns a promise that tap itself awaits, so no-floating-promises would flag every
 * subtest, and the files under packages/*\/test belong to no tsconfig.
 */
const TYPED_FILES = ['packages/*/src/**/*.ts', 'test/src/**/*.ts'];
const TYPED_EXEMPT = ['**/*.test.ts'];

/** The deterministic code: only (state, input) may decide what it does. */
const PURE_FILES = ['packages/raft/src/core/**/*.ts', 'packages/coord-state/src/**/*.ts'];
const PURE_EXEMPT = ['packages/coord-state/src/bench/**'];

const PURE_WHY =
  'is not deterministic: the Raft core and coord-state take time and randomness as inputs (docs/architecture.md)';

const impureGlobals = [
  'setTimeout',
  'clearTimeout',
  'setInterval',
  'clearInterval',
  'setImmediate',
  'clearImmediate',
  'queueMicrotask',
  'Date',
  'performance',
  'process',
].map((name) => ({ name, message: `${name} ${PURE_WHY}` }));

const impureModules = [
  'fs',
  'node:fs',
  'fs/promises',
  'node:fs/promises',
  'net',
  'node:net',
  'dgram',
  'node:dgram',
  'timers',
  'node:timers',
  'timers/promises',
  'node:timers/promises',
  'pino',
  'level',
].map((name) => ({ name, message: `${name} ${PURE_WHY}` }));

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/.dist-*/**',
      '**/node_modules/**',
      'data/**',
      'chaos-runs/**',
      'bench-results/**',
      '.tap/**',
      'coverage/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        clearImmediate: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        fetch: 'readonly',
        performance: 'readonly',
        structuredClone: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
        queueMicrotask: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/no-non-null-assertion': 'off',
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    files: TYPED_FILES,
    ignores: TYPED_EXEMPT,
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: true },
      ],
    },
  },
  {
    // The Raft runtime logs through its own Logger interface (packages/raft/src/logger.ts); only the
    // bench's demo process picks pino as the implementation.
    files: ['packages/raft/src/**/*.ts'],
    ignores: ['packages/raft/src/bench/**', ...PURE_FILES],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: [{ name: 'pino', message: 'log through Logger (packages/raft/src/logger.ts)' }] },
      ],
    },
  },
  {
    files: PURE_FILES,
    ignores: PURE_EXEMPT,
    rules: {
      'no-restricted-globals': ['error', ...impureGlobals],
      'no-restricted-imports': ['error', { paths: impureModules }],
      'no-restricted-properties': [
        'error',
        { object: 'Math', property: 'random', message: `Math.random ${PURE_WHY}` },
        { object: 'globalThis', property: 'setTimeout', message: `setTimeout ${PURE_WHY}` },
        { object: 'globalThis', property: 'Date', message: `Date ${PURE_WHY}` },
        { object: 'globalThis', property: 'process', message: `process ${PURE_WHY}` },
        { object: 'globalThis', property: 'performance', message: `performance ${PURE_WHY}` },
      ],
    },
  },
);
