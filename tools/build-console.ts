/**
 * The console app (src/console/app) type-checked and built by Vite into build/console/ (or
 * --out-dir): index.html and content-hashed assets, which src/console/console.ts serves. Run by
 * `npm run build` (into dist/build/console), by `npm start` when the build is missing or older
 * than its sources (src/console/console-build.cjs), and before the tests (test/kit/global-setup.ts).
 * Prints each file's size and gzipped size.
 *
 *   npx tsx tools/build-console.ts [--out-dir DIR]
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import react from '@vitejs/plugin-react';
import { build } from 'vite';

const root = fileURLToPath(new URL('..', import.meta.url));
const APP = join(root, 'src/console/app');
const require = createRequire(import.meta.url);
const { BUILD_DIR } = require('../src/console/console-build.cjs') as { BUILD_DIR: string };

export interface BuiltFile {
  file: string;
  bytes: number;
  gzipBytes: number;
}

/** Runs `work` with NODE_ENV=production, putting the caller's value back afterwards. */
async function inProduction<T>(work: () => Promise<T>): Promise<T> {
  const callerNodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  try {
    return await work();
  } finally {
    if (callerNodeEnv === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = callerNodeEnv;
  }
}

/** Type-checks the app, builds it into `outDir`, and returns what it wrote. */
export async function buildConsole(outDir = BUILD_DIR): Promise<BuiltFile[]> {
  const tsc = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', join(APP, 'tsconfig.json')], { stdio: 'inherit' });
  if (tsc.status !== 0) throw new Error('build-console: the console app does not type-check');
  // Vite and the React plugin pick React's development build whenever NODE_ENV says anything but
  // production (vitest sets `test`): twice the size, slower, and not what is served. The build
  // runs with NODE_ENV=production, and the caller's value is put back afterwards.
  const output = await inProduction(() =>
    build({
      root: APP,
      base: '/console/',
      configFile: false,
      logLevel: 'warn',
      mode: 'production',
      plugins: [react()],
      build: {
        outDir,
        emptyOutDir: true,
        assetsDir: 'assets',
        // The page's one script: no inline module-preload helper, which the CSP (script-src 'self') would refuse.
        modulePreload: { polyfill: false },
        target: 'es2022',
        reportCompressedSize: false,
        // ECharts (about 540 KB, 185 KB gzipped) is one chunk of its own, loaded only with the pages that draw charts.
        chunkSizeWarningLimit: 600,
        rollupOptions: {
          output: { manualChunks: (id) => (id.includes('/node_modules/echarts/') || id.includes('/node_modules/zrender/') ? 'charts' : undefined) },
        },
      },
    }),
  );
  const results = Array.isArray(output) ? output : [output];
  return results.flatMap((result) =>
    'output' in result
      ? result.output.map((item) => {
          const body = item.type === 'chunk' ? item.code : item.source;
          return { file: item.fileName, bytes: Buffer.byteLength(body), gzipBytes: gzipSync(body).length };
        })
      : [],
  );
}

const isMain = process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  const { values } = parseArgs({ options: { 'out-dir': { type: 'string' } } });
  const outDir = values['out-dir'] ? resolve(values['out-dir']) : BUILD_DIR;
  const started = Date.now();
  const files = await buildConsole(outDir).catch((error: Error) => {
    console.error(error.message);
    process.exit(1);
  });
  for (const f of files)
    console.log(`  ${f.file.padEnd(40)} ${(f.bytes / 1024).toFixed(1).padStart(8)} KB  gzip ${(f.gzipBytes / 1024).toFixed(1).padStart(7)} KB`);
  console.log(`build-console: ${relative(process.cwd(), outDir) || '.'} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
