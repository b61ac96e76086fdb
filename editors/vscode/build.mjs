// Bundles with esbuild (tsc only type-checks): the extension (Node, `vscode` external), the
// chat page (browser), and the unit tests (Node; `vscode` resolves to test/vscode-mock).
import * as esbuild from 'esbuild';
import { readdirSync } from 'fs';

const common = { bundle: true, logLevel: 'warning', sourcemap: false };
await esbuild.build({
  ...common,
  entryPoints: ['src/extension.ts'],
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: ['vscode'],
  outfile: 'dist/extension.js',
});
await esbuild.build({
  ...common,
  entryPoints: ['src/webview/main.ts'],
  platform: 'browser',
  format: 'iife',
  target: 'es2022',
  outfile: 'dist/chat.js',
});
if (!process.argv.includes('--no-tests')) {
  await esbuild.build({
    ...common,
    entryPoints: [
      'test/setup.ts',
      'test/vscode-mock.ts',
      ...readdirSync('test').filter((f) => f.endsWith('.test.ts')).map((f) => `test/${f}`),
    ],
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
    outdir: 'out/test',
  });
}
