import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const { consoleBuildNeeded } = createRequire(import.meta.url)('./console-build.cjs') as {
  consoleBuildNeeded: (buildDir: string, sources: string[]) => string | undefined;
};

describe('whether npm start must build the console', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bd-console-build-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const build = join(dir, 'build');
  const app = join(dir, 'app');
  const css = join(dir, 'console.css');
  const at = (path: string, seconds: number) => utimesSync(path, seconds, seconds);

  it('says missing, then stale when any source (however deep) is newer than the build, else nothing', () => {
    mkdirSync(join(app, 'pages'), { recursive: true });
    writeFileSync(join(app, 'pages/List.tsx'), '');
    writeFileSync(css, '');
    at(join(app, 'pages/List.tsx'), 1_000);
    at(css, 1_000);
    expect(consoleBuildNeeded(build, [app, css])).toBe('missing');

    mkdirSync(build);
    writeFileSync(join(build, 'index.html'), '');
    at(join(build, 'index.html'), 2_000);
    expect(consoleBuildNeeded(build, [app, css])).toBeUndefined();

    at(join(app, 'pages/List.tsx'), 3_000);
    expect(consoleBuildNeeded(build, [app, css])).toBe('stale');
    at(join(app, 'pages/List.tsx'), 1_000);
    at(css, 3_000);
    expect(consoleBuildNeeded(build, [app, css])).toBe('stale');
    // A compiled build has no sources beside it: only a missing build can be told.
    expect(consoleBuildNeeded(build, [join(dir, 'nowhere')])).toBeUndefined();
  });
});
