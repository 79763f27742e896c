// ESLint (flat config): typescript-eslint's recommended rules on the sources, tests and benchmarks,
// and lines of at most 120 characters (prettier formats to that width; this catches the comments and
// strings it cannot break). `npm run lint`; `npm test` runs it.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import stylistic from '@stylistic/eslint-plugin';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { '@stylistic': stylistic },
    languageOptions: { ecmaVersion: 2023, sourceType: 'module', globals: globals.node },
    rules: {
      '@stylistic/max-len': ['error', { code: 120, ignoreUrls: true, ignoreRegExpLiterals: true }],
      // `_name` marks a value left unused on purpose (a destructured field dropped, a callback's argument)
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      '@typescript-eslint/no-unused-expressions': ['error', { allowShortCircuit: true, allowTernary: true }],
      // control characters are what some patterns are about: ANSI colours, refused bytes in names and bodies
      'no-control-regex': 'off',
    },
  },
  {
    // the web console's modules run in the browser
    files: ['src/http/console/**/*.js'],
    languageOptions: { globals: globals.browser },
  },
  {
    // the VS Code extension is CommonJS (what VS Code loads), its dependencies required
    files: ['editors/vscode/**/*.js'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // tests and benchmarks read loosely typed JSON and count spaces in expected output
    files: ['test/**', 'bench/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', 'no-regex-spaces': 'off' },
  },
);
