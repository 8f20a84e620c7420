// Lint rules, including the architecture's one direction of dependencies:
// server → app → http | store → domain → errors.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const restrict = (patterns) => ({
  'no-restricted-imports': ['error', { patterns }],
});

export default tseslint.config(
  {
    ignores: [
      'node_modules',
      'dist',
      'packages/*/dist',
      'data',
      'bench/results',
      'test-output',
      'public/vendor',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    // The chat page: plain browser modules, no build step.
    files: ['public/**/*.js'],
    languageOptions: {
      sourceType: 'module',
      globals: Object.fromEntries(
        [
          'atob',
          'clearTimeout',
          'crypto',
          'CSS',
          'document',
          'EventSource',
          'fetch',
          'history',
          'localStorage',
          'location',
          'sessionStorage',
          'setTimeout',
          'TextDecoder',
          'URLSearchParams',
          'window',
        ].map((name) => [name, 'readonly']),
      ),
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/config.ts', 'src/server.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'Read settings in src/config.ts only.' },
      ],
    },
  },
  {
    files: ['src/errors.ts', 'src/config.ts'],
    rules: restrict([
      { group: ['./*', '../*'], message: 'errors.ts and config.ts import nothing of ours.' },
    ]),
  },
  {
    files: ['src/domain/**/*.ts'],
    rules: restrict([
      {
        group: ['fastify', '@fastify/*', 'better-sqlite3', 'pg', 'pg-*'],
        message: 'The domain imports no framework and no driver.',
      },
      {
        group: ['../http/*', '../store/*', '../app*', '../server*'],
        message: 'The domain depends on nothing above it.',
      },
    ]),
  },
  {
    files: ['src/http/**/*.ts'],
    rules: restrict([
      {
        group: ['better-sqlite3', 'pg', '../store/*'],
        message: 'HTTP sees the service, never a store or a driver.',
      },
      { group: ['../app*', '../server*'], message: 'Dependencies point down only.' },
    ]),
  },
  {
    files: ['src/store/sqlite/**/*.ts'],
    rules: restrict([
      {
        group: ['fastify', '@fastify/*', 'pg', '../postgres/*', '../../http/*'],
        message: 'An engine folder depends on the domain only.',
      },
    ]),
  },
  {
    files: ['src/store/postgres/**/*.ts'],
    rules: restrict([
      {
        group: ['fastify', '@fastify/*', 'better-sqlite3', '../sqlite/*', '../../http/*'],
        message: 'An engine folder depends on the domain only.',
      },
    ]),
  },
);
