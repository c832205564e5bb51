import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { COLLECTOR_NODE_FLAGS } from './node-flags.js';

describe("the collector's Node flags", () => {
  it('are the ones npm run collector launches it with', () => {
    const scripts = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).scripts as Record<string, string>;
    expect(scripts.collector).toBe(`tsx ${COLLECTOR_NODE_FLAGS.join(' ')} tools/collector/cli.ts`);
  });
});
