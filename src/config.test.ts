import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES } from './config.js';

describe('configuration', () => {
  it('documents every environment variable it reads in the README', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    expect(CONFIG_VARIABLES.length).toBeGreaterThan(20);
    expect(CONFIG_VARIABLES.filter((name) => !readme.includes(`\`${name}\``))).toEqual([]);
  });
});
